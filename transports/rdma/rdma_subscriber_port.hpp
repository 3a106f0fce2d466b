// The port of a subscriber whose topic comes from other hosts by RDMA: the
// UDP transport's port (shared memory on this host, announced by the UDP
// participant, which also receives the topic from hosts without RDMA) with
// RdmaWaitSource as its wait source, so that a busy-spinning waiter polls
// the node's completion queue itself.
#pragma once

#include <memory>

#include "axon/transport.hpp"
#include "transports/rdma/completion_turn.hpp"
#include "transports/rdma/rdma_wait_source.hpp"

namespace axon::rdma {

class RdmaSubscriberPort final : public SubscriberPort {
 public:
  RdmaSubscriberPort(std::shared_ptr<SubscriberPort> network, std::shared_ptr<CompletionTurn> turn) noexcept
      : network_(std::move(network)), source_(network_->wait_source(), std::move(turn)) {}

  TakeResult<ReceivedChunk> take() noexcept override { return network_->take(); }
  void release(const ReceivedChunk& chunk) noexcept override { network_->release(chunk); }
  void reject(const ReceivedChunk& chunk, std::string_view reason) noexcept override {
    network_->reject(chunk, reason);
  }
  [[nodiscard]] SubscriberCounters counters() const noexcept override { return network_->counters(); }
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept override { return network_->publishers_lost(); }
  [[nodiscard]] std::uint32_t publisher_count() noexcept override { return network_->publisher_count(); }
  [[nodiscard]] bool has_data() noexcept override { return network_->has_data(); }
  [[nodiscard]] WakeWord* wake_word() noexcept override { return network_->wake_word(); }
  [[nodiscard]] WaitSource* wait_source() noexcept override { return &source_; }

 private:
  std::shared_ptr<SubscriberPort> network_;  ///< Declared first: source_ uses its wait source.
  RdmaWaitSource source_;
};

}  // namespace axon::rdma
