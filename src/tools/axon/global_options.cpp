#include "src/tools/axon/global_options.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

namespace axon::tools {

Result<std::uint32_t> domain_from_environment(const char* value) {
  if (value == nullptr || *value == '\0') {
    return 0U;
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long parsed = std::strtoull(value, &end, 10);
  // strtoull accepts a sign and leading spaces; a domain id is digits only.
  if (*value < '0' || *value > '9' || *end != '\0' || errno == ERANGE || parsed > 0xFFFFFFFFULL) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("AXON_DOMAIN='{}' is not a domain id (an integer 0..4294967295): fix or unset it, or "
                             "pass --domain N",
                             value));
  }
  return static_cast<std::uint32_t>(parsed);
}

}  // namespace axon::tools
