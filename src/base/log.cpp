#include "src/base/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <memory>

namespace axon {

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto log = std::make_shared<spdlog::logger>("axon", sink);
    const char* level = std::getenv("AXON_LOG_LEVEL");  // NOLINT(concurrency-mt-unsafe): once
    log->set_level(level != nullptr ? spdlog::level::from_str(level) : spdlog::level::warn);
    log->set_pattern("[%H:%M:%S.%e] [axon] [%l] %v");
    return log;
  }();
  return *instance;
}

}  // namespace axon
