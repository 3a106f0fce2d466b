// The composition root: the transports a node uses, from its options and
// the deployment config: shared memory always, UDP when the file names other
// hosts, and the RDMA registration of the node's pool when its host names an
// rdma_device, with its RDMA participant linking to the peers discovery
// finds when there is UDP too; its links carry the topics the config sends
// by RDMA to each peer host (`transport: rdma`, or `auto` between two hosts
// with devices) both ways (rdma::RdmaHostsTransport for the publishers,
// InboundStreams for what peers write into this node's pool).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>

#include "axon/detail/transport_factories.hpp"
#include "src/base/clock.hpp"
#include "src/base/log.hpp"
#include "src/config/transport_choice.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/participant.hpp"
#include "transports/udp/udp_settings.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/udp_transport.hpp"
#ifdef AXON_HAVE_RDMA
#include <arpa/inet.h>

#include <chrono>

#include "transports/rdma/inbound_streams.hpp"
#include "transports/rdma/link_streams.hpp"
#include "transports/rdma/outbound_streams.hpp"
#include "transports/rdma/pool_registration.hpp"
#include "transports/rdma/rdma_hosts_transport.hpp"
#include "transports/rdma/rdma_participant.hpp"
#include "transports/shm/abi_hash.hpp"
#endif

namespace axon::detail {
namespace {

// One set of numbers: the API's (DomainLimits) and the registry's.
static_assert(DomainLimits{}.nodes == shm::kDefaultParticipants && DomainLimits{}.topics == shm::kDefaultTopics &&
              DomainLimits{}.publishers == shm::kDefaultPublishers &&
              DomainLimits{}.subscribers == shm::kDefaultSubscribers &&
              DomainLimits{}.publishers_per_topic == shm::kDefaultPublishersPerTopic);
static_assert(DomainLimits::kMaxNodes == shm::kMaxParticipantsLimit &&
              DomainLimits::kMaxTopics == shm::kMaxTopicsLimit &&
              DomainLimits::kMaxPublishers == shm::kMaxPublishersLimit &&
              DomainLimits::kMaxSubscribers == shm::kMaxSubscribersLimit &&
              DomainLimits::kMaxPublishersPerTopic == shm::kMaxPublishersPerTopicLimit);

std::optional<shm::RegistryLimits> registry_limits(const std::optional<DomainLimits>& limits) {
  if (!limits) {
    return std::nullopt;
  }
  return shm::RegistryLimits{.participants = limits->nodes,
                             .topics = limits->topics,
                             .publishers = limits->publishers,
                             .subscribers = limits->subscribers,
                             .publishers_per_topic = limits->publishers_per_topic};
}

#ifdef AXON_HAVE_RDMA
/// The node's RDMA participant and the streams its links carry: both halves
/// and the handler dispatching to them are declared first, so the
/// participant (whose thread calls them) goes before them.
struct RdmaNode {
  std::unique_ptr<rdma::InboundStreams> inbound;
  std::shared_ptr<rdma::OutboundStreams> outbound;  ///< Shared with the RDMA publishers' ports.
  std::unique_ptr<rdma::LinkStreams> streams;
  std::unique_ptr<rdma::RdmaParticipant> participant;
};
#endif

/// Copies a node's network counters into its statistics segment each time
/// the service thread refreshes it (once a second), where `axon network`
/// reads them. Registered from construction to destruction.
class NetworkStatsWriter final : public shm::StatsSource {
 public:
  NetworkStatsWriter(std::shared_ptr<shm::ShmTransport> shm, const NetworkView& view)
      : shm_(std::move(shm)), view_(view) {
    shm_->endpoint_stats().add_source(this);
  }
  ~NetworkStatsWriter() { shm_->endpoint_stats().remove_source(this); }  // waits for a refresh under way
  NetworkStatsWriter(const NetworkStatsWriter&) = delete;
  NetworkStatsWriter& operator=(const NetworkStatsWriter&) = delete;

  void refresh_stats() noexcept override {
    shm_->endpoint_stats().write_network(view_.network_counters(), monotonic_now_ns());
  }

 private:
  std::shared_ptr<shm::ShmTransport> shm_;
  const NetworkView& view_;
};

/// The node's view of its UDP participant: the transport's own routes and
/// counters in the API's types (axon/network.hpp).
class UdpNetworkView final : public NetworkView {
 public:
  using KindTo = std::function<TransportKind(std::string_view topic, std::string_view host)>;
  /// `kind_of(topic, host)`: how the topic goes from this host to `host` (UDP or RDMA).
  UdpNetworkView(std::shared_ptr<udp::Participant> participant, KindTo kind_of) noexcept
      : participant_(std::move(participant)), kind_of_(std::move(kind_of)) {}
#ifdef AXON_HAVE_RDMA
  /// With the node's RDMA participant: it goes with the view, before the UDP
  /// participant its peer source reads.
  UdpNetworkView(std::shared_ptr<udp::Participant> participant, KindTo kind_of, std::unique_ptr<RdmaNode> rdma) noexcept
      : participant_(std::move(participant)), kind_of_(std::move(kind_of)), rdma_(std::move(rdma)) {}
#endif

  [[nodiscard]] std::vector<TopicRoute> remote_routes(std::string_view topic) const override {
    std::vector<TopicRoute> routes;
    for (udp::RemoteRoute& route : participant_->remote_routes(topic)) {
      const TransportKind kind = kind_of_(topic, route.host);
      routes.push_back(TopicRoute{.host = std::move(route.host),
                                  .transport = kind,
                                  .subscribers = route.subscribers,
                                  .reliable = route.reliable});
    }
    return routes;
  }

  [[nodiscard]] NetworkCounters network_counters() const noexcept override {
    const udp::UdpCounters c = participant_->counters();
    NetworkCounters counters{.datagrams_sent = c.datagrams_sent,
                             .datagrams_received = c.datagrams_received,
                             .datagrams_refused = c.datagrams_refused,
                             .messages_sent = c.messages_sent,
                             .messages_received = c.messages_received,
                             .messages_incomplete = c.messages_incomplete,
                             .messages_out_of_order = c.messages_out_of_order,
                             .duplicates = c.duplicates,
                             .fragments_in_place = c.fragments_in_place,
                             .fragments_copied = c.fragments_copied,
                             .fragments_stale = c.fragments_stale,
                             .nacks_sent = c.nacks_sent,
                             .nacks_received = c.nacks_received,
                             .fragments_resent = c.fragments_resent,
                             .gaps_sent = c.gaps_sent,
                             .messages_lost = c.messages_lost,
                             .hosts_discovered = c.hosts_discovered,
                             .hosts_lost = c.hosts_lost,
                             .type_mismatches = c.type_mismatches,
                             .pool_exhausted = c.pool_exhausted,
                             .receives_on_waiting_threads = c.receives_on_waiting_threads,
                             .auth_failures = c.auth_failures,
                             .replays = c.replays,
                             .not_allowed = c.not_allowed,
                             .unauthenticated = c.unauthenticated,
                             .not_encrypted = c.not_encrypted,
                             .unexpectedly_encrypted = c.unexpectedly_encrypted};
#ifdef AXON_HAVE_RDMA
    if (rdma_ != nullptr && rdma_->participant != nullptr) {
      const rdma::RdmaLinkCounters links = rdma_->participant->counters();
      counters.rdma_links_up = links.links_up;
      counters.rdma_link_losses = links.link_losses;
      counters.rdma_completions_on_waiting_threads = links.completions_on_waiting_threads;
      counters.rdma_port_errors = links.port_errors;
      const rdma::InboundCountersSnapshot inbound = rdma_->inbound->counters();
      counters.rdma_streams_received = inbound.streams_opened;
      counters.rdma_streams_refused = inbound.streams_refused;
      counters.rdma_messages_received = inbound.messages_delivered;
      counters.rdma_loans_exhausted = inbound.loans_exhausted;
      const rdma::OutboundCounters outbound = rdma_->outbound->counters();
      counters.rdma_streams_sent = outbound.streams_opened;
      counters.rdma_streams_sent_refused = outbound.streams_refused;
      const rdma::RdmaWriterCounters written = rdma_->outbound->writer_totals();
      counters.rdma_messages_sent = written.messages_written;
      counters.rdma_bytes_sent = written.bytes_written;
      counters.rdma_credit_drops = written.credit_drops;
      counters.rdma_credit_evictions = written.evicted;
      counters.rdma_credit_timeouts = written.timed_out;
      counters.rdma_send_failures = written.send_failures + written.pending_dropped;
      counters.rdma_no_stream_drops = written.no_stream_drops;
    }
#endif
    return counters;
  }

  /// From now on the counters are copied into `shm`'s statistics segment.
  void write_counters_into(std::shared_ptr<shm::ShmTransport> shm) {
    stats_writer_ = std::make_unique<NetworkStatsWriter>(std::move(shm), *this);
  }

 private:
  std::shared_ptr<udp::Participant> participant_;
  KindTo kind_of_;
#ifdef AXON_HAVE_RDMA
  std::unique_ptr<RdmaNode> rdma_;  ///< Declared after participant_: destroyed first.
#endif
  std::unique_ptr<NetworkStatsWriter> stats_writer_;  ///< Last: stops reading the counters before they go.
};

/// A key file named in `config_file`: a relative path is taken from the file's directory.
std::string key_path(const std::string& path, const std::string& config_file) {
  if (path.empty() || path.front() == '/' || config_file.empty()) {
    return path;
  }
  return (std::filesystem::path(config_file).parent_path() / path).string();
}

/// The `udp: security:` section as the transport's settings (the key files are read when the participant starts).
Result<udp::SecuritySettings> security_settings(const UdpConfig::Security& security, const std::string& config_file) {
  udp::SecuritySettings settings{.key_file = key_path(security.key_file, config_file),
                                 .previous_key_file = key_path(security.previous_key_file, config_file),
                                 .allow = {},
                                 .encrypt = security.encrypt};
  for (const std::string& entry : security.allow) {
    auto range = udp::parse_address_range(entry);
    if (!range) {
      return Error(range.error().code(), fmt::format("security allow: {}", range.error().message()));
    }
    settings.allow.push_back(*range);
  }
  return settings;
}

/// The deployment config's `udp:` section as the transport's settings.
Result<udp::UdpSettings> udp_settings(const UdpConfig& udp, const std::string& config_file) {
  auto group = udp::parse_ipv4(udp.multicast_group);
  if (!group) {
    return group.error();
  }
  auto security = security_settings(udp.security, config_file);
  if (!security) {
    return security.error();
  }
  return udp::UdpSettings{.multicast_group = *group,
                          .discovery_port = udp.discovery_port,
                          .heartbeat_period_ms = udp.heartbeat_period_ms,
                          .liveliness_timeout_ms = udp.liveliness_timeout_ms,
                          .send_buffer_bytes = udp.send_buffer_bytes,
                          .receive_buffer_bytes = udp.receive_buffer_bytes,
                          .max_message_bytes = udp.max_message_bytes,
                          .mtu = udp.mtu,
                          .history_depth = udp.history_depth,
                          .reassembly_timeout_ms = udp.reassembly_timeout_ms,
                          .receive_poll_us = udp.receive_poll_us,
                          .security = std::move(*security)};
}

/// UDP is needed when the file names another host to reach.
bool spans_hosts(const DeploymentConfig* deployment, const std::string& host) {
  return deployment != nullptr && !host.empty() &&
         (deployment->hosts.size() > 1 || !deployment->udp.static_peers.empty());
}

Result<std::uint32_t> address_of(const DeploymentConfig& deployment, const std::string& name_or_address) {
  if (const HostConfig* entry = deployment.find_host(name_or_address)) {
    return udp::parse_ipv4(entry->address.empty() ? std::string("127.0.0.1") : entry->address);
  }
  return udp::parse_ipv4(name_or_address);
}

Result<std::shared_ptr<udp::Participant>> create_participant(const std::string& node_name, std::uint32_t domain_id,
                                                             const DeploymentConfig& deployment,
                                                             const std::string& host,
                                                             std::shared_ptr<shm::ShmTransport> shm) {
  auto own = address_of(deployment, host);
  if (!own) {
    return Error(own.error().code(), fmt::format("{}: host '{}': {}", deployment.file, host, own.error().message()));
  }
  auto settings = udp_settings(deployment.udp, deployment.file);
  if (!settings) {
    return Error(settings.error().code(), fmt::format("{}: udp: {}", deployment.file, settings.error().message()));
  }
  udp::ParticipantConfig config{.domain_id = domain_id,
                                .node_name = node_name,
                                .host = host,
                                .host_ipv4 = *own,
                                .udp = *settings,
                                .static_peers = {}};
  for (const std::string& peer : deployment.udp.static_peers) {
    if (peer == host) {
      continue;
    }
    auto address = address_of(deployment, peer);
    if (!address) {
      return Error(address.error().code(),
                   fmt::format("{}: udp static peer '{}': {}", deployment.file, peer, address.error().message()));
    }
    config.static_peers.push_back(*address);
  }
  return udp::Participant::create(std::move(config), std::move(shm));
}

/// "FILE:LINE:COLUMN: " of a host entry, to begin the start-up errors of its
/// rdma_device ("FILE: " without a position, nothing for a config built in code).
std::string host_prefix(const DeploymentConfig& deployment, const HostConfig& entry) {
  if (deployment.file.empty()) {
    return {};
  }
  if (entry.location.line == 0) {
    return deployment.file + ": ";
  }
  return fmt::format("{}:{}:{}: ", deployment.file, entry.location.line, entry.location.column);
}

#ifdef AXON_HAVE_RDMA
/// The host's IPv4 address in host order, for the GID `auto` picks; 0 when
/// it has none (IPv6, or none given).
std::uint32_t ipv4_of(const HostConfig& entry) {
  in_addr address{};
  return ::inet_pton(AF_INET, entry.address.c_str(), &address) == 1 ? ntohl(address.s_addr) : 0;
}

/// "32.5 KiB", "61.3 MiB": the registered bytes in the start-up log.
std::string readable_size(std::size_t bytes) {
  constexpr double kKiB = 1024.0;
  const auto value = static_cast<double>(bytes);
  return value < kKiB * kKiB ? fmt::format("{:.1f} KiB", value / kKiB) : fmt::format("{:.1f} MiB", value / kKiB / kKiB);
}

/// A shared-memory transport and the RDMA registration of its pool: the
/// registration goes first (the region is deregistered while the pool is
/// still mapped).
struct RegisteredShm {
  std::shared_ptr<shm::ShmTransport> shm;
  rdma::PoolRegistration registration;
};
#endif

/// The node's shared-memory transport, and the RDMA registration of its pool
/// (null when its host names no rdma_device), which keeps the transport alive.
struct PoolTransport {
  std::shared_ptr<shm::ShmTransport> shm;
#ifdef AXON_HAVE_RDMA
  std::shared_ptr<const rdma::PoolRegistration> registration;
#endif
};

/// `shm` as it is when the node's host names no rdma_device (no verbs call
/// at all); else `shm` holding the registration of its pool with the host's
/// device (pinned once, here, and kept as long as anything holds the
/// transport), or the reason it cannot be registered.
Result<PoolTransport> register_pool_for_rdma(std::shared_ptr<shm::ShmTransport> shm, const std::string& node_name,
                                             const DeploymentConfig* deployment, const std::string& host) {
  const HostConfig* entry = deployment != nullptr && !host.empty() ? deployment->find_host(host) : nullptr;
  if (entry == nullptr || entry->rdma_device.empty()) {
    PoolTransport plain;
    plain.shm = std::move(shm);  // no registration
    return plain;
  }
#ifndef AXON_HAVE_RDMA
  (void)node_name;
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("{}host '{}' names rdma_device '{}', but this build has no RDMA transport "
                           "(libibverbs-dev/librdmacm-dev missing at build time): install them and rebuild axon, "
                           "or remove rdma_device from the host",
                           host_prefix(*deployment, *entry), host, entry->rdma_device));
#else
  const rdma::DeviceRequest request{.host = host,
                                    .device = entry->rdma_device,
                                    .port = deployment->rdma.port,
                                    .gid_index = deployment->rdma.gid_index,
                                    .ipv4 = ipv4_of(*entry)};
  auto registration = rdma::PoolRegistration::create(request, shm->own_chunk_area(), node_name);
  if (!registration) {
    return Error(registration.error().code(),
                 fmt::format("{}{}", host_prefix(*deployment, *entry), registration.error().message()));
  }
  const rdma::DeviceChoice& device = registration->device();
  logger().info(
      "node '{}': RDMA device {} port {} GID index {} ({}, {}): registered the pool's {} ({} bytes) for remote "
      "writes (transport: rdma topics)",
      node_name, device.device, device.port, device.gid.index, rdma::to_string(device.gid.type),
      rdma::gid_text(device.gid.gid), readable_size(registration->length()), registration->length());
  auto held =
      std::make_shared<RegisteredShm>(RegisteredShm{.shm = std::move(shm), .registration = std::move(*registration)});
  shm::ShmTransport* transport = held->shm.get();
  const rdma::PoolRegistration* registered = &held->registration;
  return PoolTransport{.shm = std::shared_ptr<shm::ShmTransport>(held, transport),
                       .registration = std::shared_ptr<const rdma::PoolRegistration>(held, registered)};
#endif
}

#ifdef AXON_HAVE_RDMA
/// A local subscription's QoS as an RDMA stream's OPEN answer carries it.
rdma::InboundTopic inbound_topic_of(udp::ReceivedTopic topic) noexcept {
  rdma::InboundTopic inbound{.descriptor = std::move(topic.descriptor)};
  inbound.reliability = topic.qos.reliability == Reliability::kReliable ? rdma::WireReliability::kReliable
                                                                        : rdma::WireReliability::kBestEffort;
  switch (topic.qos.overflow) {
    case Overflow::kDefault: inbound.overflow = rdma::WireOverflow::kDefault; break;
    case Overflow::kDropOldest: inbound.overflow = rdma::WireOverflow::kDropOldest; break;
    case Overflow::kRejectNewest: inbound.overflow = rdma::WireOverflow::kRejectNewest; break;
    case Overflow::kLatestOnly: inbound.overflow = rdma::WireOverflow::kLatestOnly; break;
    case Overflow::kBlockPublisher: inbound.overflow = rdma::WireOverflow::kBlockPublisher; break;
  }
  inbound.block_timeout_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(topic.qos.block_timeout_ns, 0));
  return inbound;
}

/// The node's RDMA participant, linking to the remote participants that
/// `participant` hears announce RDMA reachability, with its links' streams:
/// a peer's stream of a topic is received when `participant` receives that
/// topic for this host (the same receiver lock as for datagrams), into
/// `shm`'s pool; once it listens, the node's own ANNOUNCE says where. Null
/// without a registration.
Result<std::unique_ptr<RdmaNode>> start_rdma_participant(const std::string& node_name,
                                                         const DeploymentConfig& deployment, const std::string& host,
                                                         std::shared_ptr<const rdma::PoolRegistration> registration,
                                                         std::shared_ptr<shm::ShmTransport> shm,
                                                         const std::shared_ptr<udp::Participant>& participant) {
  if (registration == nullptr) {
    return std::unique_ptr<RdmaNode>{};
  }
  const HostConfig& entry = *deployment.find_host(host);
  auto node = std::make_unique<RdmaNode>();
  auto lookup = [participant](std::uint64_t topic_id) -> std::optional<rdma::InboundTopic> {
    std::optional<udp::ReceivedTopic> topic = participant->received_topic(topic_id);
    if (!topic) {
      return std::nullopt;  // not subscribed here, or another participant of this host receives it
    }
    return inbound_topic_of(std::move(*topic));
  };
  auto inbound = rdma::InboundStreams::create(std::move(shm), std::move(lookup), rdma::InboundSettings{});
  if (!inbound) {
    return Error(inbound.error().code(),
                 fmt::format("{}{}", host_prefix(deployment, entry), inbound.error().message()));
  }
  node->inbound = std::move(*inbound);
  node->outbound = std::make_shared<rdma::OutboundStreams>();
  node->streams = std::make_unique<rdma::LinkStreams>(*node->inbound, *node->outbound);
  auto peers = [participant, own_host = host,
                found = std::vector<udp::RdmaReachablePeer>{}](std::vector<rdma::RdmaPeer>& out) mutable {
    participant->rdma_reachable(found);
    out.clear();
    for (const udp::RdmaReachablePeer& peer : found) {
      if (peer.host != own_host) {  // the same host's nodes share memory
        out.push_back(
            rdma::RdmaPeer{.sender_id = peer.participant, .at = {.address = peer.ipv4, .port = peer.cm_port}});
      }
    }
  };
  const auto incarnation =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
  auto started = rdma::RdmaParticipant::start(
      std::move(registration),
      rdma::RdmaParticipantOptions{.node_name = node_name,
                                   .own = {.address = ipv4_of(entry), .port = deployment.rdma.cm_port},
                                   .sender_id = participant->sender_id(),
                                   .incarnation = static_cast<std::uint64_t>(incarnation.count()),
                                   .abi_hash = shm::layout_abi_hash(),
                                   .peers = std::move(peers),
                                   .handler = node->streams.get(),
                                   .tick = [inbound = node->inbound.get()] { return inbound->tick(); },
                                   .tick_period = node->inbound->refill_period()});
  if (!started) {
    return Error(started.error().code(),
                 fmt::format("{}{}", host_prefix(deployment, entry), started.error().message()));
  }
  node->participant = std::move(*started);
  const std::uint16_t port = node->participant->cm_port();
  if (auto announced = participant->set_rdma_reachability(udp::RdmaReachability{.cm_port = port, .reachable = true});
      !announced) {
    return announced.error();
  }
  logger().info(
      "node '{}': RDMA participant listening on {} (rdma.cm_port {}); it links to the participants of other hosts "
      "that announce RDMA; its transport: rdma topics go over those links",
      node_name, rdma::to_string(rdma::Ipv4Endpoint{.address = ipv4_of(entry), .port = port}), deployment.rdma.cm_port);
  return node;
}
#endif

}  // namespace

Result<NodeTransport> create_node_transport(const std::string& node_name, const NodeOptions& options,
                                            std::uint32_t domain_id, const DeploymentConfig* deployment,
                                            const std::string& host) {
  shm::ShmConfig config{.domain_id = domain_id,
                        .node_name = node_name,
                        .shm_dir = options.shm_dir,
                        .file_mode = options.file_mode,
                        .group = options.group,
                        .chunk_classes = options.chunk_classes,
                        .chunk_fallback = options.chunk_fallback.value_or(ChunkFallback{}),
                        .liveness_period_ms = options.liveness_period_ms,
                        .limits = registry_limits(options.domain_limits),
                        .publisher_blocks = options.pool_publishers.value_or(shm::kDefaultPublishersPerNode),
                        .connections = options.pool_connections.value_or(shm::kDefaultConnectionsPerNode),
                        .queue_slots = options.pool_queue_slots.value_or(shm::kDefaultQueueSlotsPerNode),
                        .prefault_memory = options.prefault_memory,
                        .lock_memory = options.lock_memory,
                        .huge_pages = options.huge_pages};
  auto created = shm::ShmTransport::create(std::move(config));
  if (!created) {
    return created.error();
  }
  auto pool = register_pool_for_rdma(std::move(*created), node_name, deployment, host);
  if (!pool) {
    return pool.error();
  }
  if (!spans_hosts(deployment, host)) {
    return NodeTransport{.transport = std::move(pool->shm), .network = nullptr};
  }
  auto participant = create_participant(node_name, domain_id, *deployment, host, pool->shm);
  if (!participant) {
    return participant.error();
  }
#ifdef AXON_HAVE_RDMA
  auto rdma =
      start_rdma_participant(node_name, *deployment, host, std::move(pool->registration), pool->shm, *participant);
  if (!rdma) {
    return rdma.error();
  }
#endif
  // How a topic goes from this host to another (per pair: `auto` is RDMA
  // only between two hosts that both name an rdma_device).
  auto kind_to = [config = std::make_shared<const DeploymentConfig>(*deployment), host](std::string_view topic,
                                                                                        std::string_view to_host) {
    return transport_between(config.get(), topic, host, to_host);
  };
  auto stays_local = [kind_to](std::string_view topic) {
    return !kind_to(topic, std::string_view{}).has_value();  // `transport: shm`, whatever the other host
  };
  auto remote_kind = [kind_to](std::string_view topic, std::string_view to_host) {
    return kind_to(topic, to_host).value_or(TransportKind::kUdp);
  };
  const std::shared_ptr<shm::ShmTransport> shm = pool->shm;
  auto udp_transport = std::make_shared<udp::UdpTransport>(pool->shm, *participant, std::move(stays_local));
  std::shared_ptr<Transport> transport = udp_transport;
#ifdef AXON_HAVE_RDMA
  if (*rdma != nullptr) {
    std::vector<std::string> other_hosts;
    for (const HostConfig& other : deployment->hosts) {
      if (other.name != host) {
        other_hosts.push_back(other.name);
      }
    }
    transport = std::make_shared<rdma::RdmaHostsTransport>(
        std::move(pool->shm), std::move(udp_transport), (*rdma)->outbound, (*rdma)->participant->completion_turn(),
        rdma::RdmaHostsTransport::Reach{
            .by_rdma = [kind_to](std::string_view topic,
                                 std::string_view to_host) { return kind_to(topic, to_host) == TransportKind::kRdma; },
            .other_hosts = std::move(other_hosts)},
        rdma::InboundSettings{}.credits);
  }
  auto network = std::make_shared<UdpNetworkView>(std::move(*participant), std::move(remote_kind), std::move(*rdma));
#else
  auto network = std::make_shared<UdpNetworkView>(std::move(*participant), std::move(remote_kind));
#endif
  network->write_counters_into(shm);
  return NodeTransport{.transport = std::move(transport), .network = std::move(network)};
}

}  // namespace axon::detail
