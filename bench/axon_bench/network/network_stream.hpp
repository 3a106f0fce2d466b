// The receiving side of a throughput case of `axon-bench network`, shared by
// the raw UDP and the axon stream: counts complete messages over a fixed time
// after a warm-up and tells the sender when to stop; and the results both
// kinds of case make. Internal to network_*_cases.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "harness/pair_runner.hpp"
#include "network/network_cases.hpp"

namespace axon_bench {

/// Written by the receiving worker only, read by the parent after both
/// workers exited (waitpid orders it).
struct StreamTally {
  std::int64_t begin_ns = 0;  ///< When the first counted message arrived ...
  std::int64_t end_ns = 0;    ///< ... and the last.
  std::uint64_t messages = 0;
  std::uint64_t lost = 0;  ///< Messages the receiver knows it missed.
};

class StreamCounter {
 public:
  StreamCounter(const NetworkCase& c, StreamTally& tally, PairControl& control)
      : case_(c), tally_(tally), control_(control) {}

  /// A complete message arrived.
  void delivered() noexcept {
    const std::int64_t now = now_ns();
    if (++seen_ == case_.warmup) {
      tally_.begin_ns = now;
      control_.side[1].measure_begin = CpuTimes::now();
      return;
    }
    if (seen_ <= case_.warmup) {
      return;
    }
    ++tally_.messages;
    tally_.end_ns = now;
    control_.progress.store(tally_.messages, std::memory_order_relaxed);  // display only
    if (static_cast<double>(now - tally_.begin_ns) >= case_.duration_s * 1e9) {
      control_.side[1].measure_end = CpuTimes::now();
      control_.done.store(1, std::memory_order_release);  // pairs with the sender's acquire loads
    }
  }
  /// A message is known to be missing.
  void lost() noexcept {
    if (seen_ >= case_.warmup) {
      ++tally_.lost;
    }
  }
  [[nodiscard]] bool finished() const noexcept { return control_.done.load(std::memory_order_relaxed) != 0; }

 private:
  const NetworkCase& case_;
  StreamTally& tally_;
  PairControl& control_;
  std::uint64_t seen_ = 0;
};

/// The throughput CaseResult of a finished stream.
CaseResult stream_result(const NetworkCase& c, const StreamTally& tally, const PairControl& control);

/// The ping-pong CaseResult of `round_trips` (stored one way, as every
/// ping-pong), with rates and CPU from side 0's measured phase.
CaseResult pingpong_result(const NetworkCase& c, std::span<std::int64_t> round_trips, const PairControl& control);

}  // namespace axon_bench
