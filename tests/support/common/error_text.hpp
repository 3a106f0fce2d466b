// strerror() without its shared buffer (clang-tidy's concurrency-mt-unsafe):
// the text of an errno value, for error messages of the test support code.
#pragma once

#include <cstring>
#include <string>

namespace axon::test {

inline std::string error_text(int err) {
  char buffer[128];
  return ::strerror_r(err, buffer, sizeof(buffer));  // the GNU variant: returns the text
}

}  // namespace axon::test
