// The library's logger: spdlog, level from AXON_LOG_LEVEL (default "warn").
#pragma once

#include <spdlog/spdlog.h>

namespace axon {

/// Thread-safe; the first call creates the logger (slow path only).
spdlog::logger& logger();

}  // namespace axon
