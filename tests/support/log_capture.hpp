// What axon logs while a LogCapture lives, for tests that assert on log lines.
#pragma once

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

#include "src/base/log.hpp"

namespace axon::test {

/// Captures axon's log lines of `at_least` and above (more, if the level
/// already set, by AXON_LOG_LEVEL say, is lower); restores the level after.
class LogCapture {
 public:
  explicit LogCapture(spdlog::level::level_enum at_least) : level_(logger().level()) {
    logger().sinks().push_back(sink_);
    logger().set_level(std::min(level_, at_least));
  }
  ~LogCapture() {
    logger().set_level(level_);
    auto& sinks = logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  [[nodiscard]] std::string text() const { return text_.str(); }

 private:
  spdlog::level::level_enum level_;
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
};

}  // namespace axon::test
