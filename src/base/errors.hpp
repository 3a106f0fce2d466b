// Helpers that turn system failures into axon::Error values.
#pragma once

#include <string>
#include <string_view>

#include "axon/result.hpp"

namespace axon {

/// An Error of kind kSystem: "<what> failed: <description of err>".
Error system_error(int err, std::string_view what);

/// The description of errno value `err` (thread-safe, unlike strerror).
std::string errno_text(int err);

}  // namespace axon
