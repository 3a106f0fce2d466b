// The text of an errno value, thread-safe (strerror is not).
#pragma once

#include <cstring>  // GNU strerror_r
#include <string>

namespace axon::mcap {

inline std::string errno_text(int error_number) {
  char buffer[128];
  // GNU strerror_r: returns the text, in `buffer` or a static string.
  return ::strerror_r(error_number, buffer, sizeof(buffer));
}

}  // namespace axon::mcap
