// Pieces shared by the worker processes of `axon-bench latency`: topics,
// pool sizing, and the busy-poll loops around loan() and take(). Internal to
// latency_cases.cpp and the *_workers.hpp headers it includes.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "latency_cases.hpp"
#include "pair_runner.hpp"
#include <axon/axon.hpp>

namespace axon_bench::workers {

inline constexpr std::string_view kOneWayTopic = "axon_bench/oneway";
inline constexpr std::string_view kPingTopic = "axon_bench/ping";
inline constexpr std::string_view kPongTopic = "axon_bench/pong";
inline constexpr auto kConnectTimeout = std::chrono::seconds(10);
inline constexpr std::int64_t kMissing = -1;  ///< A latency slot whose message was dropped.
/// `ack` value meaning "the receiving worker is through".
inline constexpr std::uint64_t kFinished = ~std::uint64_t{0};
/// Each node's pool gets about this much room for the payload's class.
inline constexpr std::uint64_t kPoolBudgetBytes = 64ULL << 20;
inline constexpr std::uint32_t kMaxDepth = 1024;

/// One class sized for the payload: enough chunks for any queue depth we
/// configure, without filling memory for the large sizes.
inline std::vector<axon::ChunkClassConfig> chunk_classes_for(std::size_t payload_bytes) {
  const auto count =
      static_cast<std::uint32_t>(std::clamp<std::uint64_t>(kPoolBudgetBytes / payload_bytes, 16, kMaxDepth));
  return {{.payload_bytes = static_cast<std::uint32_t>(payload_bytes), .count = count}};
}

/// Queue depth: everything the pool can have in flight (rate mode), at most
/// the ring's capacity.
inline std::uint32_t depth_for(std::size_t payload_bytes) {
  return std::min<std::uint32_t>(chunk_classes_for(payload_bytes).front().count, 256);
}

inline axon::NodeOptions node_options(const LatencyCase& c, bool publishes) {
  axon::NodeOptions options;
  options.domain_id = c.domain_id;
  options.chunk_classes = publishes ? chunk_classes_for(c.payload_bytes)
                                    : std::vector<axon::ChunkClassConfig>{{.payload_bytes = 256, .count = 16}};
  return options;
}

template <class R>
int fail_with(PairControl& control, int side, std::string_view what, const R& result) {
  return fail(control, side, std::string(what) + ": " + std::string(result.error().message()));
}

template <class Condition>
bool wait_until(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + kConnectTimeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

inline void wait_for_finished(const PairControl& control) {
  // Acquire pairs with the receiver's release store of kFinished.
  while (control.ack.load(std::memory_order_acquire) != kFinished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the parent's timeout bounds this
  }
}

inline std::int64_t period_ns(const LatencyCase& c) { return c.rate_hz > 0 ? std::llround(1e9 / c.rate_hz) : 0; }

inline void keep(std::uint64_t value) { asm volatile("" : : "r"(value)); }

/// Loans a chunk, waiting while the pool is exhausted (the peer gives
/// chunks back as it drops samples).
template <class T>
axon::LoanResult<axon::Loan<T>> loan_waiting(axon::Publisher<T>& pub) {
  auto loan = pub.loan();
  while (loan.exhausted()) {
    cpu_relax();
    loan = pub.loan();
  }
  return loan;
}

/// Busy-polls take() until a sample (or a real error) arrives.
template <class T>
axon::TakeResult<axon::Sample<T>> take_spinning(axon::Subscriber<T>& sub) {
  auto sample = sub.take();
  while (sample.empty()) {
    cpu_relax();
    sample = sub.take();
  }
  return sample;
}

}  // namespace axon_bench::workers
