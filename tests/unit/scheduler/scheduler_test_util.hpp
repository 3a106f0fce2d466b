// Helpers of the scheduler tests: nodes on private domains, bounded waits.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"

namespace axon::test {

struct Tick {
  static constexpr std::string_view kAxonTypeName = "axon_sched_test::Tick";
  std::uint64_t sequence = 0;
  std::uint32_t source = 0;
};

inline NodeOptions scheduler_node_options(std::uint32_t domain) {
  NodeOptions options;
  options.domain_id = domain;
  options.chunk_classes = {{.payload_bytes = 256, .count = 1024}};
  return options;
}

/// Publishes one Tick; retries briefly while the pool is exhausted.
inline bool publish_tick(Publisher<Tick>& pub, std::uint64_t sequence, std::uint32_t source = 0) {
  for (int attempt = 0; attempt < 10'000; ++attempt) {
    auto loan = pub.loan();
    if (loan) {
      loan->sequence = sequence;
      loan->source = source;
      return pub.publish(std::move(*loan)).ok();
    }
    if (loan.failed()) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return false;
}

}  // namespace axon::test
