// The transport of a node whose host reaches others by RDMA and UDP: the
// topics the config sends by RDMA (`transport: rdma`) get an RdmaPublisherPort,
// everything else is the UDP transport's (which is shared memory on this host
// and UDP between hosts). Subscribers are the UDP transport's in every case:
// they are announced the same way, and a peer's RDMA stream of their topic
// reaches them through the node's InboundStreams; those of RDMA topics wait
// through RdmaWaitSource (rdma_subscriber_port.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "axon/transport.hpp"
#include "transports/rdma/completion_turn.hpp"
#include "transports/rdma/outbound_streams.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/udp_transport.hpp"

namespace axon::rdma {

class RdmaHostsTransport final : public Transport {
 public:
  /// `by_rdma(topic)`: the topic goes between hosts by RDMA. `outbound`:
  /// the send half of the node's RDMA links; `turn`: its participant's turn
  /// at the completion queue, which spinning subscribers of RDMA topics
  /// take. `credits`: each writer's credit FIFO per destination (the
  /// receivers' rdma.credits).
  RdmaHostsTransport(std::shared_ptr<shm::ShmTransport> shm, std::shared_ptr<udp::UdpTransport> udp,
                     std::shared_ptr<OutboundStreams> outbound, std::shared_ptr<CompletionTurn> turn,
                     std::function<bool(std::string_view)> by_rdma, std::uint32_t credits) noexcept
      : shm_(std::move(shm)),
        udp_(std::move(udp)),
        outbound_(std::move(outbound)),
        turn_(std::move(turn)),
        by_rdma_(std::move(by_rdma)),
        credits_(credits) {}

  [[nodiscard]] std::string_view name() const noexcept override { return "shm+udp+rdma"; }
  Result<std::shared_ptr<PublisherPort>> advertise(const TopicDescriptor& topic, const PublisherQos& qos) override;
  /// The UDP transport's subscriber; for a topic received by RDMA, with
  /// RdmaWaitSource as its wait source (a spinning waiter polls the CQ).
  Result<std::shared_ptr<SubscriberPort>> subscribe(const TopicDescriptor& topic, const SubscriberQos& qos) override;
  [[nodiscard]] std::vector<PoolClassStats> pool_stats() const override { return udp_->pool_stats(); }
  [[nodiscard]] GraphSource* graph() noexcept override { return udp_->graph(); }

 private:
  std::shared_ptr<shm::ShmTransport> shm_;
  std::shared_ptr<udp::UdpTransport> udp_;
  std::shared_ptr<OutboundStreams> outbound_;
  std::shared_ptr<CompletionTurn> turn_;
  std::function<bool(std::string_view)> by_rdma_;
  std::uint32_t credits_;
  std::atomic<std::uint32_t> next_writer_id_{1};  ///< Relaxed: only unique.
};

}  // namespace axon::rdma
