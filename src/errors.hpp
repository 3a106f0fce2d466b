// Helpers that turn system failures into axon::Error values.
#pragma once

#include <string_view>

#include "axon/result.hpp"

namespace axon {

/// An Error of kind kSystem: "<what> failed: <strerror(err)>".
Error system_error(int err, std::string_view what);

}  // namespace axon
