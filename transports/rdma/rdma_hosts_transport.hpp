// The transport of a node whose host reaches others by RDMA and UDP: a
// topic the config sends to some other host by RDMA (`transport: rdma`, or
// `auto` toward a host with a device) gets an RdmaPublisherPort, which also
// sends by UDP to the hosts it reaches that way; everything else is the UDP
// transport's (which is shared memory on this host and UDP between hosts).
// Subscribers are the UDP transport's in every case:
// they are announced the same way, and a peer's RDMA stream of their topic
// reaches them through the node's InboundStreams; those of RDMA topics wait
// through RdmaWaitSource (rdma_subscriber_port.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "axon/transport.hpp"
#include "transports/rdma/completion_turn.hpp"
#include "transports/rdma/outbound_streams.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/udp_transport.hpp"

namespace axon::rdma {

class RdmaHostsTransport final : public Transport {
 public:
  /// Which hosts a topic reaches by RDMA from this host (the config's rule,
  /// transport_between()); the others of `other_hosts` it reaches by UDP.
  struct Reach {
    std::function<bool(std::string_view topic, std::string_view to_host)> by_rdma;
    std::vector<std::string> other_hosts;  ///< The config's hosts but this one.
  };
  /// `outbound`: the send half of the node's RDMA links; `turn`: its
  /// participant's turn at the completion queue, which spinning subscribers
  /// of RDMA topics take. `credits`: each writer's credit FIFO per
  /// destination (the receivers' rdma.credits).
  RdmaHostsTransport(std::shared_ptr<shm::ShmTransport> shm, std::shared_ptr<udp::UdpTransport> udp,
                     std::shared_ptr<OutboundStreams> outbound, std::shared_ptr<CompletionTurn> turn, Reach reach,
                     std::uint32_t credits) noexcept
      : shm_(std::move(shm)),
        udp_(std::move(udp)),
        outbound_(std::move(outbound)),
        turn_(std::move(turn)),
        reach_(std::move(reach)),
        credits_(credits) {}

  [[nodiscard]] std::string_view name() const noexcept override { return "shm+udp+rdma"; }
  Result<std::shared_ptr<PublisherPort>> advertise(const TopicDescriptor& topic, const PublisherQos& qos) override;
  /// The UDP transport's subscriber; for a topic received by RDMA from some
  /// other host (per pair, the rule is symmetric), with RdmaWaitSource as its
  /// wait source (a spinning waiter polls the CQ).
  Result<std::shared_ptr<SubscriberPort>> subscribe(const TopicDescriptor& topic, const SubscriberQos& qos) override;
  [[nodiscard]] std::vector<PoolClassStats> pool_stats() const override { return udp_->pool_stats(); }
  /// This host's record of the topic (schemas do not cross hosts).
  Result<TopicRecord> find_topic(std::string_view topic) override { return udp_->find_topic(topic); }
  [[nodiscard]] GraphSource* graph() noexcept override { return udp_->graph(); }

 private:
  std::shared_ptr<shm::ShmTransport> shm_;
  std::shared_ptr<udp::UdpTransport> udp_;
  std::shared_ptr<OutboundStreams> outbound_;
  std::shared_ptr<CompletionTurn> turn_;
  /// Whether `topic` reaches some other host by RDMA, and some by UDP.
  struct TopicReach {
    bool by_rdma = false;
    bool by_udp = false;
  };
  [[nodiscard]] TopicReach reach_of(std::string_view topic) const;

  Reach reach_;
  std::uint32_t credits_;
  std::atomic<std::uint32_t> next_writer_id_{1};  ///< Relaxed: only unique.
};

}  // namespace axon::rdma
