// The statistics `axon topic hz` and `bw` print: over the last N messages (the window), the rate and the
// period's mean, min, max and standard deviation (like `ros2 topic hz`), and the bytes per second and the
// message sizes. Times are the messages' publish times (SampleInfo::publish_time_ns, CLOCK_MONOTONIC of the
// same host), so the figures are the publisher's and not how promptly this tool was scheduled.
//
// Thread safety: none. add() does not allocate once the window is full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace axon::tools {

struct WindowFigures {
  std::uint64_t messages = 0;  ///< In the window.
  double rate_hz = 0;          ///< (messages - 1) / the time from the first to the last; 0 below two messages.
  double period_mean_s = 0;
  double period_min_s = 0;
  double period_max_s = 0;
  double period_std_s = 0;  ///< Population standard deviation of the periods.
  double bytes_per_s = 0;   ///< Bytes of all but the first message / the time from the first to the last.
  double size_mean_bytes = 0;
  std::uint64_t size_min_bytes = 0;
  std::uint64_t size_max_bytes = 0;
};

class WindowStats {
 public:
  /// Keeps the last `window` messages (at least 2).
  explicit WindowStats(std::size_t window);

  void add(std::int64_t publish_time_ns, std::uint64_t payload_bytes);
  [[nodiscard]] WindowFigures figures() const;
  /// Messages added since construction (the window keeps fewer).
  [[nodiscard]] std::uint64_t total_messages() const noexcept { return total_messages_; }
  [[nodiscard]] std::uint64_t total_bytes() const noexcept { return total_bytes_; }

 private:
  struct Entry {
    std::int64_t time_ns;
    std::uint64_t bytes;
  };
  std::size_t window_;
  std::deque<Entry> entries_;
  std::uint64_t total_messages_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace axon::tools
