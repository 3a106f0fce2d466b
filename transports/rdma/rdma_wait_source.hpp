// RDMA's WaitSource (include/axon/transport.hpp, "Wait sources";
// docs/design/rdma-transport.md, "Completions: busy polling"): what a thread
// waiting for a subscriber of a topic received by RDMA watches. Spinning,
// it polls the node's completion queue itself when the RDMA thread's turn is
// free (CompletionTurn::poll(), no system call); sleeping, it sleeps as the
// UDP transport's waiters do (the node's UDP participant also receives the
// topic from hosts without RDMA), and the RDMA thread, woken by the
// completion channel, publishes what arrives, which wakes it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "axon/transport.hpp"
#include "transports/rdma/completion_turn.hpp"

namespace axon::rdma {

/// Thread safety: any threads at once (as the sources it joins).
class RdmaWaitSource final : public WaitSource {
 public:
  /// `network`: the UDP participant's source (may be null); valid as long as
  /// this one is. `turn`: the node's RDMA participant's.
  RdmaWaitSource(WaitSource* network, std::shared_ptr<CompletionTurn> turn) noexcept
      : network_(network), turn_(std::move(turn)) {}

  Slept sleep(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen,
              std::int64_t timeout_ns) noexcept override {
    return network_ != nullptr ? network_->sleep(words, seen, timeout_ns) : Slept::kDidNotSleep;
  }
  void after_sleep() noexcept override {
    if (network_ != nullptr) {
      network_->after_sleep();
    }
  }
  bool poll() noexcept override {
    const bool completions = turn_->poll();
    return (network_ != nullptr && network_->poll()) || completions;
  }

 private:
  WaitSource* network_;
  std::shared_ptr<CompletionTurn> turn_;
};

}  // namespace axon::rdma
