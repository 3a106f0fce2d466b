#include "src/base/errors.hpp"

#include <fmt/format.h>

#include <cstring>

namespace axon {

std::string errno_text(int err) {
  char buffer[256];
  // GNU strerror_r: returns the text, in `buffer` or a static string.
  return ::strerror_r(err, buffer, sizeof(buffer));
}

Error system_error(int err, std::string_view what) {
  return {ErrorCode::kSystem, fmt::format("{} failed: {} (errno {})", what, errno_text(err), err)};
}

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kTooManySamples: return "too_many_samples";
    case ErrorCode::kPayloadTooLarge: return "payload_too_large";
    case ErrorCode::kTypeMismatch: return "type_mismatch";
    case ErrorCode::kLimitReached: return "limit_reached";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNoSpace: return "no_space";
    case ErrorCode::kIncompatible: return "incompatible";
    case ErrorCode::kSystem: return "system";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kClosed: return "closed";
    case ErrorCode::kMalformed: return "malformed";
    case ErrorCode::kRequirementNotMet: return "requirement_not_met";
    case ErrorCode::kNoServer: return "no_server";
    case ErrorCode::kInUse: return "in_use";
    case ErrorCode::kNotFound: return "not_found";
  }
  return "unknown";
}

}  // namespace axon
