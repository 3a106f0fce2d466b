// The options every axon command takes (docs/tools.md, "Global options").
#pragma once

#include <cstdint>

#include "axon/result.hpp"

namespace axon::tools {

struct GlobalOptions {
  /// The domain the command looks at: --domain, else AXON_DOMAIN, else 0 (as Node::create picks it).
  std::uint32_t domain_id = 0;
  /// Print one JSON document instead of text.
  bool json = false;
};

/// The domain an AXON_DOMAIN value names, read as Node::create reads it: null or empty is domain 0; anything
/// but a decimal integer 0..4294967295 is kInvalidArgument with a message that names the value.
[[nodiscard]] Result<std::uint32_t> domain_from_environment(const char* value);

}  // namespace axon::tools
