#include "transports/shm/shm_transport.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "src/base/clock.hpp"
#include "src/base/log.hpp"
#include "transports/shm/connections.hpp"
#include "transports/shm/endpoint_limits.hpp"
#include "transports/shm/liveness.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/shm/topic_schemas.hpp"

namespace axon::shm {
namespace {

/// What the registry records of how an endpoint's messages leave this host (EndpointEntry::transport).
std::string_view transport_word(const TopicDescriptor& topic) noexcept {
  return topic.carried_by.empty() ? std::string_view("shm") : std::string_view(topic.carried_by);
}

/// subscribe() waits this long (outside the domain lock) for the pools of
/// live publishers being fetched, so that it normally returns connected to
/// all of them; a stopped peer delays it by no more.
constexpr std::int64_t kSubscribeWaitNs = 20'000'000;

/// The QoS advertise() refuses, before it takes the domain lock.
Result<void> check_publisher_qos(const TopicDescriptor& topic, const PublisherQos& qos, const MappedPool& own,
                                 const std::string& node_name) {
  if (qos.durability == Durability::kTransientLocal &&
      (qos.durability_depth == 0 || qos.durability_depth > kMaxDurabilityDepth)) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("topic '{}': PublisherQos::durability_depth is {}; a transient-local publisher keeps "
                             "1..{} messages",
                             topic.name, qos.durability_depth, kMaxDurabilityDepth));
  }
  if (qos.high_water_percent == 0 || qos.high_water_percent > 100) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("topic '{}': PublisherQos::high_water_percent is {}; it must be 1..100", topic.name,
                             qos.high_water_percent));
  }
  const std::uint64_t max_payload = qos.max_payload_bytes != 0 ? qos.max_payload_bytes : topic.max_payload_bytes;
  if (max_payload > own.pool.largest_payload()) {
    return Error(ErrorCode::kPayloadTooLarge,
                 fmt::format("topic '{}' needs {} B chunks, the largest chunk class of node '{}' holds {} B; "
                             "add a larger class to NodeOptions::chunk_classes",
                             topic.name, max_payload, node_name, own.pool.largest_payload()));
  }
  return {};
}

}  // namespace

ShmTransport::ShmTransport(ShmConfig config) : config_(std::move(config)), domain_(config_) {}

Result<std::shared_ptr<ShmTransport>> ShmTransport::create(ShmConfig config) {
  if (config.chunk_classes.empty()) {
    config.chunk_classes = default_chunk_classes();
  }
  std::shared_ptr<ShmTransport> transport(new ShmTransport(std::move(config)));
  if (auto joined = transport->join(); !joined) {
    return joined.error();
  }
  return transport;
}

Result<void> ShmTransport::join() {
  // Before the lock: a refused node leaves no lock file behind.
  if (config_.limits && !config_.limits->in_range()) {
    return Error(ErrorCode::kInvalidArgument, limits_range_message(*config_.limits));
  }
  auto group = group_id(config_.group);
  if (!group) {
    return group.error();
  }
  auto held = domain_.lock().lock();
  if (!held) {
    return held.error();
  }
  if (auto joined = domain_.join(*held); !joined) {
    return joined.error();
  }
  auto fail = [&](Error error) -> Result<void> {
    domain_.remove_self(*held);
    return error;
  };
  auto pool = create_own_pool(config_, domain_.self(), domain_.incarnation());
  if (!pool) {
    return fail(pool.error());
  }
  own_ = std::make_unique<OwnPool>(domain_, *pool);
  const SlotRef self = domain_.self();
  auto stats =
      EndpointStats::create(stats_path(config_.shm_dir, config_.domain_id, self.slot, self.generation),
                            StatsOwner{.domain_id = config_.domain_id,
                                       .participant_slot = self.slot,
                                       .participant_generation = self.generation,
                                       .process = self_identity(),
                                       .node_name = config_.node_name},
                            (*pool)->block_count(), domain_.limits().subscribers, config_.file_mode, config_.group);
  if (!stats) {
    return fail(stats.error());
  }
  stats_ = std::move(*stats);
  auto server = FdServer::listen(domain_.socket_path(self.slot, self.generation), config_.file_mode,
                                 (*pool)->mapping.fd(), *group);
  if (!server) {
    return fail(server.error());
  }
  fd_server_ = std::move(*server);
  if (auto opened = wake_.open(); !opened) {
    return fail(opened.error());
  }
  peers_ = std::make_unique<PeerPools>(domain_, *pool, wake_);
  service_ = std::make_unique<ServiceThread>(ServiceParts{.domain = domain_,
                                                          .own = *own_,
                                                          .server = fd_server_,
                                                          .peers = *peers_,
                                                          .durable = durable_,
                                                          .wake = wake_,
                                                          .stats = *stats_});
  logger().debug("node '{}' joined domain {} as participant {}", config_.node_name, config_.domain_id, self.slot);
  return {};
}

ShmTransport::~ShmTransport() {
  service_.reset();  // stops and joins the service thread first
  if (stats_) {
    stats_->remove();  // before we leave: a reader never finds it without its participant
  }
  domain_.leave(fd_server_);
}

void ShmTransport::check_liveness_now() {
  // Never block here: the service thread also serves descriptors and takes
  // deposits, which must not wait behind whoever holds the lock.
  domain_.lock().with_lock_if_free([&](const DomainLockGuard& held) { liveness_round(held, domain_, *own_); });
}

Result<std::shared_ptr<PublisherPort>> ShmTransport::advertise(const TopicDescriptor& topic, const PublisherQos& qos) {
  if (auto ok = check_publisher_qos(topic, qos, *own_->pool(), config_.node_name); !ok) {
    return ok.error();
  }
  if (auto ok = check_schema_size(topic); !ok) {
    return ok.error();
  }
  std::vector<SlotRef> subscriber_nodes;
  std::shared_ptr<ShmPublisherPort> port;
  {
    // Released before the deposits below: they address other processes.
    auto held = domain_.lock().lock();
    if (!held) {
      return held.error();
    }
    auto added = add_publisher(*held, topic, qos, subscriber_nodes);
    if (!added) {
      return added.error();
    }
    port = std::move(*added);
  }
  // Lock-free pops from our own pool: no need for the domain lock. A failure
  // destroys the port, which retires its block.
  const std::uint64_t max_payload = qos.max_payload_bytes != 0 ? qos.max_payload_bytes : topic.max_payload_bytes;
  if (auto reserved = port->reserve(max_payload, qos); !reserved) {
    return reserved.error();
  }
  // Before the first publish: the nodes of the subscribers we just connected
  // hold our pool from now on, even if they never took anything and we exit.
  peers_->deposit_own_pool(subscriber_nodes);
  wake_.wake();  // the service thread watches the processes of the peers we connected
  return std::shared_ptr<PublisherPort>(std::move(port));
}

Result<std::shared_ptr<ShmPublisherPort>> ShmTransport::add_publisher(const DomainLockGuard& held,
                                                                      const TopicDescriptor& topic,
                                                                      const PublisherQos& qos,
                                                                      std::vector<SlotRef>& subscriber_nodes) {
  if (!domain_.registry_intact(held)) {
    return domain_.damaged_registry_error(topic.name);
  }
  Registry& registry = domain_.registry(held);
  const SlotRef self = domain_.self();
  auto topic_slot = registry.find_or_add_topic(held, topic);
  if (!topic_slot) {
    return topic_slot.error();
  }
  // A topic this call created goes again when the call fails (with the schema file it may have written).
  auto fail = [&](Error error) -> Result<std::shared_ptr<ShmPublisherPort>> {
    registry.release_topic_if_unused(held, *topic_slot);
    return error;
  };
  // Refused now rather than accepted and never connected to some subscriber.
  if (auto room = check_advertise_limits(held, registry, *topic_slot, topic.name, self.slot, config_.node_name);
      !room) {
    return fail(room.error());
  }
  const std::uint32_t block_index = own_->free_block(held);
  if (block_index == kNoBlock) {
    return fail(Error(ErrorCode::kLimitReached,
                      fmt::format("node '{}' already has {} publishers, its pool.publishers: raise pool.publishers of "
                                  "node '{}' in the config (or NodeOptions::pool_publishers, at most {}) or advertise "
                                  "'{}' from another node",
                                  config_.node_name, own_->pool()->block_count(), config_.node_name,
                                  kMaxPublishersPerNode, topic.name)));
  }
  if (auto stored = store_topic_schema(held, registry, domain_, *topic_slot, topic.schema); !stored) {
    return fail(stored.error());
  }
  auto pub = registry.add_publisher(held, *topic_slot, self, block_index, transport_word(topic));
  if (!pub) {
    return fail(pub.error());
  }
  MappedPool& own = *own_->pool();
  PublisherBlock& block = own.block(block_index);
  block.publisher_slot = pub->slot;
  block.publisher_generation = pub->generation;
  block.topic = *topic_slot;
  block.history_depth = qos.durability == Durability::kTransientLocal ? qos.durability_depth : 0;
  for (std::uint32_t w = 0; w < kHolderWords; ++w) {
    block.active_bits[w].store(0, std::memory_order_relaxed);  // the block is ours alone until kActive
    block.joining_bits[w].store(0, std::memory_order_relaxed);
    block.allocated_bits[w].store(0, std::memory_order_relaxed);
  }
  block.state.store(BlockState::kActive, std::memory_order_release);
  // Connect the subscribers that exist now, so nothing published from here
  // on is missed while they discover us.
  for (std::uint32_t s = 0; s < registry.limits().subscribers; ++s) {
    const EndpointEntry& sub = registry.subscriber(held, s);
    if (sub.state == EntryState::kActive && sub.topic == *topic_slot) {
      // The history is empty yet: nothing to hand over, connect directly.
      if (auto conn =
              create_connection(held, registry, config_.domain_id, own, block_index, {s, sub.generation}, false);
          !conn) {
        logger().warn("topic '{}': {}", topic.name, conn.error().message());
        continue;
      }
      const SlotRef node{sub.participant, sub.participant_generation};
      if (node != self && std::ranges::find(subscriber_nodes, node) == subscriber_nodes.end()) {
        subscriber_nodes.push_back(node);
      }
    }
  }
  auto port = std::make_shared<ShmPublisherPort>(ShmPublisherPort::NodeParts{.owner = shared_from_this(),
                                                                             .domain = domain_,
                                                                             .pool = own_->pool(),
                                                                             .busy = own_->busy(block_index),
                                                                             .durable = durable_,
                                                                             .own = *own_,
                                                                             .stats = *stats_},
                                                 block_index, *pub, *topic_slot, topic.name, qos);
  if (block.history_depth > 0) {
    durable_.add(port.get());  // until its destructor calls forget()
  }
  return port;
}

Result<std::shared_ptr<SubscriberPort>> ShmTransport::subscribe(const TopicDescriptor& topic,
                                                                const SubscriberQos& qos) {
  auto queue = effective_queue(qos);
  if (!queue) {
    return Error(queue.error().code(), fmt::format("topic '{}': {}", topic.name, queue.error().message()));
  }
  static_assert(kRingCapacity == 256, "effective_queue() checks depth against 256");
  if (auto ok = check_schema_size(topic); !ok) {
    return ok.error();
  }
  // Read first: a fetch that ends after it wakes the wait below.
  std::uint64_t events = peers_->fetch_events();
  std::shared_ptr<ShmSubscriberPort> port;
  {
    auto held = domain_.lock().lock();
    if (!held) {
      return held.error();
    }
    if (!domain_.registry_intact(*held)) {
      return domain_.damaged_registry_error(topic.name);
    }
    Registry& registry = domain_.registry(*held);
    auto topic_slot = registry.find_or_add_topic(*held, topic);
    if (!topic_slot) {
      return topic_slot.error();
    }
    // Refused now rather than accepted and never connected to some publisher.
    if (auto room = check_subscribe_limits(*held, registry, *topic_slot, topic.name, queue->depth); !room) {
      registry.release_topic_if_unused(*held, *topic_slot);  // when this call created it
      return room.error();
    }
    if (auto room = registry.subscriber_room(*held); !room) {
      registry.release_topic_if_unused(*held, *topic_slot);  // when this call created it
      return room.error();
    }
    // As a publisher does: the first endpoint with a schema stores it (docs/design/schemas.md).
    if (auto stored = store_topic_schema(*held, registry, domain_, *topic_slot, topic.schema); !stored) {
      registry.release_topic_if_unused(*held, *topic_slot);
      return stored.error();
    }
    auto stats_slot = stats_->reserve_subscriber();
    if (!stats_slot) {
      registry.release_topic_if_unused(*held, *topic_slot);
      return Error(stats_slot.error().code(), fmt::format("topic '{}': {}", topic.name, stats_slot.error().message()));
    }
    auto sub =
        registry.add_subscriber(*held, *topic_slot, domain_.self(), qos, *queue, *stats_slot, transport_word(topic));
    if (!sub) {
      stats_->close_subscriber(*stats_slot);
      registry.release_topic_if_unused(*held, *topic_slot);
      return sub.error();
    }
    // The port opens the statistics entry and frees it when destroyed.
    port = std::make_shared<ShmSubscriberPort>(
        ShmSubscriberPort::NodeParts{
            .owner = shared_from_this(), .domain = domain_, .peers = PeerPoolsForPorts(*peers_), .stats = *stats_},
        *sub, *topic_slot, topic.name, qos, *stats_slot);
    port->rescan(*held);
  }
  // Pools of publishers this process has not mapped yet are being fetched by
  // the service thread; wait a little for them, outside the lock, so that
  // normally we return connected to every live publisher. A stopped one
  // costs at most kSubscribeWaitNs; take() links it once it answers.
  const std::int64_t deadline = monotonic_now_ns() + kSubscribeWaitNs;
  while (port->missing_pools() && monotonic_now_ns() < deadline) {
    events = peers_->wait_for_fetch(events, deadline);
    port->rescan();
  }
  wake_.wake();  // the service thread watches the processes of the peers we connected
  return std::shared_ptr<SubscriberPort>(port);
}

std::vector<PoolClassStats> ShmTransport::pool_stats() const { return own_->stats(); }

Result<TopicRecord> ShmTransport::find_topic(std::string_view topic) { return read_topic_record(domain_, topic); }

}  // namespace axon::shm
