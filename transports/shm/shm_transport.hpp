// The shared-memory transport: a node's membership of a domain, its own
// pool, the pools of its peers and the service thread, composed behind the
// Transport plug. Each part has its own file; this one ties them together
// and makes the ports.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "axon/options.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "transports/shm/chunk_area.hpp"
#include "transports/shm/domain_membership.hpp"
#include "transports/shm/durable_publishers.hpp"
#include "transports/shm/endpoint_stats.hpp"
#include "transports/shm/fd_channel.hpp"
#include "transports/shm/mapped_pool.hpp"
#include "transports/shm/own_pool.hpp"
#include "transports/shm/peer_pools.hpp"
#include "transports/shm/service_thread.hpp"
#include "transports/shm/service_wake.hpp"
#include "transports/shm/shm_config.hpp"
#include "transports/shm/shm_graph.hpp"

namespace axon::shm {

class ShmPublisherPort;

/// Thread safety: advertise()/subscribe() from any thread. The internal
/// service thread serves descriptors and runs liveness checks.
class ShmTransport final : public Transport, public std::enable_shared_from_this<ShmTransport> {
 public:
  static Result<std::shared_ptr<ShmTransport>> create(ShmConfig config);
  ~ShmTransport() override;
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;

  [[nodiscard]] std::string_view name() const noexcept override { return "shm"; }
  Result<std::shared_ptr<PublisherPort>> advertise(const TopicDescriptor& topic, const PublisherQos& qos) override;
  Result<std::shared_ptr<SubscriberPort>> subscribe(const TopicDescriptor& topic, const SubscriberQos& qos) override;

  /// Free and total chunks per class of this participant's pool.
  [[nodiscard]] std::vector<PoolClassStats> pool_stats() const override;
  /// `topic`'s type as registered and the schema its first endpoint with
  /// one stored (docs/design/schemas.md).
  Result<TopicRecord> find_topic(std::string_view topic) override;
  /// The domain's graph, from the registry (docs/design/graph-events.md).
  [[nodiscard]] GraphSource* graph() noexcept override { return &graph_; }
  /// The same, for a wrapping transport that adds endpoints of its own (udp::UdpGraph).
  [[nodiscard]] ShmGraph& shm_graph() noexcept { return graph_; }
  [[nodiscard]] std::uint32_t domain_id() const noexcept { return config_.domain_id; }
  /// Where this node's own pool's chunks lie in this process (the chunks
  /// only: never the publisher blocks, connections or rings before them),
  /// for the composition root to register them for RDMA
  /// (docs/design/rdma-transport.md, "Memory registration"). Valid while
  /// the transport lives.
  [[nodiscard]] ChunkArea own_chunk_area() const noexcept { return chunk_area_of(own_->pool()->pool); }
  /// This participant's statistics segment, for the composition root to add
  /// what it refreshes besides the endpoints (the network counters).
  [[nodiscard]] EndpointStats& endpoint_stats() noexcept { return *stats_; }
  /// Runs one liveness round now (tests; normally the service thread does).
  void check_liveness_now();

 private:
  explicit ShmTransport(ShmConfig config);
  Result<void> join();
  /// Under the lock, in advertise(): claims a publisher block and connects
  /// the topic's subscribers; the nodes to hand our pool to are appended to
  /// `subscriber_nodes`.
  Result<std::shared_ptr<ShmPublisherPort>> add_publisher(const DomainLockGuard& held, const TopicDescriptor& topic,
                                                          const PublisherQos& qos,
                                                          std::vector<SlotRef>& subscriber_nodes);

  ShmConfig config_;
  DomainMembership domain_;
  ShmGraph graph_{domain_};
  /// The parts below exist once join() succeeded.
  std::unique_ptr<OwnPool> own_;
  /// This participant's statistics segment (docs/design/live-stats.md).
  std::unique_ptr<EndpointStats> stats_;
  FdServer fd_server_;
  ServiceWake wake_;
  std::unique_ptr<PeerPools> peers_;
  DurablePublishers durable_;
  std::unique_ptr<ServiceThread> service_;
};

}  // namespace axon::shm
