#include "transports/udp/participant.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "src/base/clock.hpp"
#include "src/base/log.hpp"
#include "src/base/thread_name.hpp"

namespace axon::udp {
namespace {

constexpr std::int64_t kMs = 1'000'000;
/// The smallest datagram every IPv4 host must accept (also the config's minimum).
constexpr std::uint32_t kMinMtu = 576;

std::uint64_t random_sender_id() noexcept {
  std::uint64_t id = 0;
  while (id == 0) {
    if (::getrandom(&id, sizeof(id), 0) != sizeof(id)) {
      id = static_cast<std::uint64_t>(monotonic_now_ns()) ^ (static_cast<std::uint64_t>(::getpid()) << 32U);
    }
  }
  return id;
}

/// Bytes of a datagram that fit one IP packet: the MTU less the IPv4 and UDP
/// headers and the envelope, when datagrams are authenticated.
std::uint32_t datagram_room(const UdpSettings& udp) noexcept {
  const std::uint32_t envelope = udp.security.key_file.empty() ? 0 : static_cast<std::uint32_t>(kEnvelopeBytes);
  return udp.mtu - 28 - envelope;
}

std::uint32_t fragment_bytes_for(const UdpSettings& udp) noexcept {
  return datagram_room(udp) - static_cast<std::uint32_t>(kDataHeaderBytes);
}

/// A RELIABLE writer's flow-control window: half the receive buffer (a
/// datagram takes about twice its payload there, sk_buff overhead). The
/// readers' sockets are not known here; they are set from the same deployment
/// config on hosts of the same kind, so this socket's buffer stands for theirs.
std::size_t reliable_window_bytes(const UdpSocket& socket) noexcept { return socket.receive_buffer_bytes() / 2; }

ReceiveSetup receive_setup(const UdpSettings& udp, std::uint64_t sender_id) {
  const std::uint32_t fragment_bytes = fragment_bytes_for(udp);
  return ReceiveSetup{
      .sender_id = sender_id,
      .limits = WireLimits{.max_message_bytes = udp.max_message_bytes,
                           .max_fragment_bytes = fragment_bytes,
                           .require_checksum = false},
      .nack_ranges = std::min<std::size_t>(kMaxNackRanges, (datagram_room(udp) - kNackHeaderBytes) / kNackRangeBytes),
      .datagram_buffer_bytes = std::min<std::size_t>(udp.mtu - 28 + 64, kMaxDatagramBytes + 1),
      .reassembly = ReassemblyConfig{.max_message_bytes = udp.max_message_bytes,
                                     .max_fragments_per_message = static_cast<std::uint32_t>(
                                         fragment_count_for(udp.max_message_bytes, fragment_bytes)),
                                     .max_messages_in_flight = 64,
                                     .max_messages_per_sender = 32,
                                     .completed_history = 1024,
                                     .timeout_ns = std::uint64_t{udp.reassembly_timeout_ms} * kMs,
                                     .when_full = WhenFull::kEvictOldest}};
}

Result<std::optional<UdpSocket>> open_discovery_socket(const ParticipantConfig& config, UdpSocket& data) {
  if (!config.static_peers.empty()) {
    return std::optional<UdpSocket>{};  // claimed later by the first participant of the host (Discovery)
  }
  if (auto ok = data.send_multicast_through(config.host_ipv4); !ok) {
    return ok.error();
  }
  auto socket = UdpSocket::open(
      SocketOptions{.bind = Endpoint{.ipv4 = 0, .port = config.udp.discovery_port}, .reuse_address = true});
  if (!socket) {
    return socket.error();
  }
  if (auto ok = socket->join_multicast(config.udp.multicast_group, config.host_ipv4); !ok) {
    return ok.error();
  }
  return std::optional<UdpSocket>(std::move(*socket));
}

}  // namespace

Result<std::shared_ptr<Participant>> Participant::create(ParticipantConfig config,
                                                         std::shared_ptr<shm::ShmTransport> shm) {
  if (config.udp.mtu < kMinMtu || config.udp.mtu > 65535) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("udp.mtu is {}; it must be {}..65535", config.udp.mtu, kMinMtu));
  }
  auto data = UdpSocket::open(SocketOptions{.bind = Endpoint{.ipv4 = config.host_ipv4, .port = 0},
                                            .reuse_address = false,
                                            .send_buffer_bytes = config.udp.send_buffer_bytes,
                                            .receive_buffer_bytes = config.udp.receive_buffer_bytes});
  if (!data) {
    return Error(data.error().code(),
                 fmt::format("node '{}' on host '{}': {}", config.node_name, config.host, data.error().message()));
  }
  SecuritySettings security_settings = config.udp.security;
  if (!security_settings.allow.empty()) {
    // This host's own address: other participants here relay and loop back discovery from it.
    security_settings.allow.push_back(AddressRange{.network = config.host_ipv4, .prefix_bits = 32});
  }
  auto security = DatagramSecurity::create(security_settings);
  if (!security) {
    return Error(security.error().code(),
                 fmt::format("node '{}' on host '{}': {}", config.node_name, config.host, security.error().message()));
  }
  data->seal_with(security->sealer);
  auto discovery = open_discovery_socket(config, *data);
  if (!discovery) {
    return discovery.error();
  }
  auto participant = std::shared_ptr<Participant>(new Participant(std::move(config), std::move(shm), std::move(*data)));
  if (auto ok = participant->start(std::move(*discovery), std::move(*security)); !ok) {
    return ok.error();
  }
  return participant;
}

Participant::Participant(ParticipantConfig config, std::shared_ptr<shm::ShmTransport> shm, UdpSocket data_socket)
    : config_(std::move(config)),
      shm_(std::move(shm)),
      sender_id_(random_sender_id()),
      data_socket_(std::move(data_socket)),
      period_ns_(static_cast<std::int64_t>(config_.udp.heartbeat_period_ms) * kMs),
      liveliness_ns_(static_cast<std::int64_t>(config_.udp.liveliness_timeout_ms) * kMs),
      topics_(config_.domain_id, config_.host) {}

Result<void> Participant::start(std::optional<UdpSocket> discovery_socket, DatagramSecurity security) {
  auto receive = ReceivePath::create(receive_setup(config_.udp, sender_id_),
                                     ReceivePath::Parts{.data_socket = data_socket_,
                                                        .counters = counters_,
                                                        .hosts = hosts_,
                                                        .topics = topics_,
                                                        .writers = writers_,
                                                        .announces = *this,
                                                        .shm = shm_,
                                                        .opener = std::move(security.opener),
                                                        .allow = std::move(security.allow)});
  if (!receive) {
    return receive.error();
  }
  receive_ = std::move(*receive);
  discovery_.emplace(Discovery::Parts{.config = config_,
                                      .sender_id = sender_id_,
                                      .data_socket = data_socket_,
                                      .counters = counters_,
                                      .hosts = hosts_},
                     std::move(discovery_socket));
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    return Error(ErrorCode::kSystem, fmt::format("udp: eventfd failed: {}", std::strerror(errno)));  // NOLINT
  }
  thread_ = std::thread([this] {
    axon::detail::name_this_thread("axon-udp");
    run();
  });
  logger().info("udp: node '{}' on host '{}' receives at {} ({} discovery)", config_.node_name, config_.host,
                data_socket_.local().to_string(), config_.static_peers.empty() ? "multicast" : "static-peer");
  return {};
}

Participant::~Participant() {
  stopping_.store(true, std::memory_order_relaxed);  // the eventfd write below wakes and orders
  wake();
  if (thread_.joinable()) {
    thread_.join();
  }
  receive_.reset();  // its mirrors and in-flight loans go first
  if (wake_fd_ >= 0) {
    ::close(wake_fd_);
  }
}

void Participant::wake() noexcept {
  const std::uint64_t one = 1;
  if (wake_fd_ >= 0) {
    (void)!::write(wake_fd_, &one, sizeof(one));
  }
}

// ---- Local endpoints (any thread) ----

std::shared_ptr<UdpWriter> Participant::add_writer(std::shared_ptr<shm::ShmPublisherPort> local,
                                                   const TopicDescriptor& topic,
                                                   UdpWriter::DestinationListener carried_by,
                                                   UdpWriter::CarriedHost carried_to) {
  const SendContext context{.socket = &data_socket_,
                            .sender_id = sender_id_,
                            .counters = &counters_,
                            .checksum = false,
                            .fragment_bytes = fragment_bytes_for(config_.udp),
                            .max_message_bytes = config_.udp.max_message_bytes,
                            .window_bytes = reliable_window_bytes(data_socket_)};
  const std::lock_guard matching(matching_mutex_);
  WriterEntry entry = writers_.add(context, std::move(local),
                                   WriterTopic{.topic_id = topic_id_of(topic.name),
                                               .topic_name = topic.name,
                                               .type = topic.type,
                                               .evolution = topic.allow_compatible_evolution},
                                   config_.udp.history_depth);
  if (carried_by) {
    entry.writer->carry_elsewhere(std::move(carried_by), std::move(carried_to));  // before its first destinations
  }
  // After the table has it: a concurrent announcement either sees the new
  // writer or changed RemoteHosts before this computes (the generation orders both).
  update_destinations({entry});
  announce_now_.store(true, std::memory_order_relaxed);  // remote graphs learn of the publisher
  wake();
  return entry.writer;
}

void Participant::remove_writer(const UdpWriter* writer) {
  writers_.remove(writer);
  announce_now_.store(true, std::memory_order_relaxed);
  wake();
}

void Participant::add_subscription(const TopicDescriptor& topic, const SubscriptionQos& qos) {
  topics_.add(topic, qos);
  announce_now_.store(true, std::memory_order_relaxed);  // the eventfd write orders it
  wake();
}

void Participant::remove_subscription(std::string_view topic_name, const SubscriptionQos& qos) {
  topics_.remove(topic_name, qos);
  announce_now_.store(true, std::memory_order_relaxed);
  wake();
}

Result<void> Participant::set_rdma_reachability(RdmaReachability rdma) {
  if (!rdma.valid()) {
    return Error(ErrorCode::kInvalidArgument,
                 rdma.reachable ? fmt::format("node '{}': RDMA reachability announced without an rdma_cm port; pass "
                                              "the port the listener bound (rdma.cm_port)",
                                              config_.node_name)
                                : fmt::format("node '{}': rdma_cm port {} announced while not reachable by RDMA; "
                                              "announce port 0 when RDMA is off",
                                              config_.node_name, rdma.cm_port));
  }
  {
    const ReceiveTurn turn = receive_->turn();  // Discovery's methods are the turn holder's
    discovery_->set_rdma(turn, rdma);
  }
  announce_now_.store(true, std::memory_order_relaxed);  // the eventfd write orders it
  wake();
  return {};
}

std::vector<RemoteRoute> Participant::remote_routes(std::string_view topic_name) const {
  // Not while an announcement is between RemoteHosts and the writers: a route
  // reported here is in the writers' destinations (see matching_mutex_).
  const std::lock_guard matching(matching_mutex_);
  return hosts_.routes(topic_id_of(topic_name));
}

std::vector<RemoteEndpoints> Participant::remote_endpoints(std::string_view topic_name) const {
  return hosts_.endpoints_of(topic_id_of(topic_name), config_.host);
}

void Participant::graph_moved() noexcept { shm_->shm_graph().notify_changed(); }

void Participant::update_destinations(const std::vector<WriterEntry>& writers) noexcept {
  for (const WriterEntry& entry : writers) {
    RemoteHosts::Destinations d = hosts_.destinations_for(entry.topic);
    for (const TypeMismatch& mismatch : d.new_mismatches) {
      NetworkCounterCells::add(counters_.type_mismatches);
      logger().error(
          "udp: topic '{}': host '{}' subscribes with another message type than '{}' published by "
          "node '{}' (type hash {:#x} vs {:#x}); it gets nothing until both use the same type",
          entry.topic.topic_name, mismatch.host, entry.topic.type.name, config_.node_name, mismatch.their_type_hash,
          entry.topic.type.hash);
    }
    entry.writer->set_destinations(std::move(d.destinations), d.generation);
  }
}

// ---- The participant thread ----

void Participant::on_announce(const ReceiveTurn& turn, const ParsedDatagram& datagram, std::span<const std::byte> bytes,
                              bool discovery) noexcept {
  const std::lock_guard matching(matching_mutex_);
  const RemoteHosts::AnnounceOutcome outcome = discovery_->on_announce(turn, datagram, bytes, discovery);
  if (outcome.new_participant) {
    // Announce ourselves now, not at the next period: our writers may send to
    // the newcomer at once, and it refuses datagrams of senders it does not know.
    announce_now_.store(true, std::memory_order_relaxed);
    wake();
  }
  if (outcome.changed) {
    update_destinations(writers_.all());
  }
  if (outcome.changed || outcome.new_participant) {
    graph_moved();  // remote publishers or subscribers may have come or gone
  }
}

void Participant::on_period(const ReceiveTurn& turn, std::int64_t now_ns) noexcept {
  for (const std::string& topic : topics_.acquire_receivers()) {
    logger().info("udp: node '{}' now receives topic '{}' for host '{}'", config_.node_name, topic, config_.host);
  }
  discovery_->claim_discovery_port(turn);
  std::vector<AnnounceEntry> entries = topics_.announce_entries();
  const std::vector<AnnounceEntry> publishers = writers_.announce_entries();
  entries.insert(entries.end(), publishers.begin(), publishers.end());
  discovery_->announce(turn, entries);
  for (const WriterEntry& entry : writers_.all()) {
    entry.writer->send_heartbeats();
  }
  for (const std::uint64_t id : hosts_.silent(now_ns, liveliness_ns_)) {
    lose_participant(turn, id, "heartbeats stopped");
  }
  discovery_->forget_silent_local_peers(turn, now_ns, liveliness_ns_);
  // A remote publisher that went away (its host lives on): drop its mirror,
  // so local subscribers see the publisher leave.
  receive_->drop_silent_writers(turn, now_ns, liveliness_ns_);
}

void Participant::lose_participant(const ReceiveTurn& turn, std::uint64_t sender_id, const char* why) noexcept {
  std::unique_lock matching(matching_mutex_);
  const std::optional<RemoteHosts::Removed> removed = hosts_.remove(sender_id);
  if (!removed) {
    return;
  }
  if (removed->host_gone) {
    NetworkCounterCells::add(counters_.hosts_lost);
    logger().warn("udp: node '{}' lost host '{}' ({}): its publishers are gone for local subscribers",
                  config_.node_name, removed->host, why);
  }
  update_destinations(writers_.all());
  matching.unlock();
  graph_moved();  // its publishers and subscribers left
  receive_->drop_sender(turn, sender_id);
}

void Participant::run() noexcept {
  std::int64_t next_period = 0;
  // udp.receive_poll_us: after data, poll without sleeping until then, so the
  // next datagram of a steady stream finds this thread awake (udp-transport.md,
  // "Polling after data"). Yields between polls: on a CPU shared with the
  // subscriber this thread just woke, the subscriber runs first.
  const std::int64_t receive_poll_ns = std::int64_t{config_.udp.receive_poll_us} * 1000;
  std::int64_t poll_until = 0;
  while (!stopping_.load(std::memory_order_relaxed)) {
    std::array<pollfd, 3> fds{};
    bool polling = false;
    int timeout_ms = 0;
    {
      const ReceiveTurn turn = receive_->turn();
      const std::int64_t now = monotonic_now_ns();
      if (now >= next_period || announce_now_.exchange(false, std::memory_order_relaxed)) {
        on_period(turn, now);
        next_period = now + period_ns_;
      }
      receive_->tick(turn, now);
      std::int64_t wait_ns = receive_->wait_ns(turn, monotonic_now_ns(), next_period);
      // While subscriber threads wait on the data socket themselves, leave it
      // to them; look again every millisecond (the waiters may have gone).
      const bool leased = receive_->leased(now);
      if (leased) {
        wait_ns = std::min(wait_ns, kMs);
      }
      UdpSocket* discovery = discovery_->discovery_socket();
      fds = {pollfd{.fd = leased ? -1 : data_socket_.fd(), .events = POLLIN, .revents = 0},
             pollfd{.fd = wake_fd_, .events = POLLIN, .revents = 0},
             pollfd{.fd = discovery != nullptr ? discovery->fd() : -1, .events = POLLIN, .revents = 0}};
      polling = now < poll_until;
      timeout_ms = polling ? 0 : static_cast<int>(std::clamp<std::int64_t>((wait_ns + kMs - 1) / kMs, 0, 1000));
    }
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready <= 0) {
      if (polling) {
        ::sched_yield();
      }
      continue;
    }
    const ReceiveTurn turn = receive_->turn();
    if ((fds[1].revents & POLLIN) != 0) {
      std::uint64_t value = 0;
      (void)!::read(wake_fd_, &value, sizeof(value));
    }
    if ((fds[0].revents & POLLIN) != 0) {
      receive_->drain(turn, data_socket_, false);
      poll_until = receive_poll_ns > 0 ? monotonic_now_ns() + receive_poll_ns : 0;
    }
    if (UdpSocket* discovery = discovery_->discovery_socket(); discovery != nullptr && (fds[2].revents & POLLIN) != 0) {
      receive_->drain(turn, *discovery, true);
    }
  }
}

}  // namespace axon::udp
