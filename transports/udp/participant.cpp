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

#include "src/clock.hpp"
#include "src/log.hpp"

namespace axon::udp {
namespace {

constexpr std::int64_t kMs = 1'000'000;
/// The smallest datagram every IPv4 host must accept (also the config's minimum).
constexpr std::uint32_t kMinMtu = 576;
/// Receive batches per loop turn before the timers get their turn.
constexpr int kBatchesPerTurn = 16;

std::uint64_t random_sender_id() noexcept {
  std::uint64_t id = 0;
  while (id == 0) {
    if (::getrandom(&id, sizeof(id), 0) != sizeof(id)) {
      id = static_cast<std::uint64_t>(monotonic_now_ns()) ^ (static_cast<std::uint64_t>(::getpid()) << 32U);
    }
  }
  return id;
}

std::uint32_t fragment_bytes_for(std::uint32_t mtu) noexcept {
  return mtu - 28 - static_cast<std::uint32_t>(kDataHeaderBytes);  // IPv4 + UDP headers, then ours
}

bool types_match(const TypeIdentity& mine, bool my_evolution, const AnnounceEntry& theirs) noexcept {
  if (mine.hash == theirs.type_hash) {
    return true;
  }
  return my_evolution && (theirs.flags & kEntryEvolution) != 0 && detail::fnv1a(mine.name) == theirs.type_name_hash;
}

}  // namespace

std::uint64_t topic_id_of(std::string_view topic_name) noexcept { return detail::fnv1a(topic_name); }

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
  std::optional<UdpSocket> discovery;
  if (config.static_peers.empty()) {
    auto group = parse_ipv4(config.udp.multicast_group);
    if (!group) {
      return group.error();
    }
    if (auto ok = data->send_multicast_through(config.host_ipv4); !ok) {
      return ok.error();
    }
    auto socket = UdpSocket::open(
        SocketOptions{.bind = Endpoint{.ipv4 = 0, .port = config.udp.discovery_port}, .reuse_address = true});
    if (!socket) {
      return socket.error();
    }
    if (auto ok = socket->join_multicast(*group, config.host_ipv4); !ok) {
      return ok.error();
    }
    discovery = std::move(*socket);
  }
  auto participant = std::shared_ptr<Participant>(
      new Participant(std::move(config), std::move(shm), std::move(*data), std::move(discovery)));
  if (auto ok = participant->start(); !ok) {
    return ok.error();
  }
  return participant;
}

Participant::Participant(ParticipantConfig config, std::shared_ptr<shm::ShmTransport> shm, UdpSocket data_socket,
                         std::optional<UdpSocket> discovery_socket)
    : config_(std::move(config)),
      shm_(std::move(shm)),
      sender_id_(random_sender_id()),
      data_socket_(std::move(data_socket)),
      discovery_socket_(std::move(discovery_socket)),
      limits_{.max_message_bytes = config_.udp.max_message_bytes,
              .max_fragment_bytes = fragment_bytes_for(config_.udp.mtu),
              .require_checksum = false},
      nack_ranges_(std::min<std::size_t>(kMaxNackRanges, (config_.udp.mtu - 28 - kNackHeaderBytes) / kNackRangeBytes)),
      announce_entries_(std::min<std::size_t>(kMaxAnnounceEntries,
                                              (config_.udp.mtu - 28 - kAnnounceHeaderBytes) / kAnnounceEntryBytes)),
      period_ns_(static_cast<std::int64_t>(config_.udp.heartbeat_period_ms) * kMs),
      liveliness_ns_(static_cast<std::int64_t>(config_.udp.liveliness_timeout_ms) * kMs) {}

Result<void> Participant::start() {
  const std::uint32_t fragment_bytes = fragment_bytes_for(config_.udp.mtu);
  ReassemblyConfig reassembly{.max_message_bytes = config_.udp.max_message_bytes,
                              .max_fragments_per_message = static_cast<std::uint32_t>(
                                  fragment_count_for(config_.udp.max_message_bytes, fragment_bytes)),
                              .max_messages_in_flight = 64,
                              .max_messages_per_sender = 32,
                              .completed_history = 1024,
                              .timeout_ns = static_cast<std::uint64_t>(config_.udp.reassembly_timeout_ms) * kMs,
                              .when_full = WhenFull::kEvictOldest};
  auto created = Reassembler::create(reassembly, *this);
  if (!created) {
    return created.error();
  }
  reassembler_.emplace(std::move(*created));
  loans_.resize(reassembly.max_messages_in_flight + 2);
  for (std::uint64_t i = loans_.size(); i > 0; --i) {
    free_loans_.push_back(i - 1);
  }
  datagram_buffer_bytes_ = std::min<std::size_t>(config_.udp.mtu - 28 + 64, kMaxDatagramBytes + 1);
  receive_.emplace(UdpSocket::kMaxBatch, datagram_buffer_bytes_);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    return Error(ErrorCode::kSystem, fmt::format("udp: eventfd failed: {}", std::strerror(errno)));  // NOLINT
  }
  thread_ = std::thread([this] { run(); });
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
  remote_writers_.clear();
  reassembler_.reset();  // gives in-flight loans back through release()
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
                                                   const TopicDescriptor& topic) {
  std::lock_guard guard(mutex_);
  const SendContext context{.socket = &data_socket_,
                            .sender_id = sender_id_,
                            .counters = &counters_,
                            .checksum = false,
                            .fragment_bytes = fragment_bytes_for(config_.udp.mtu),
                            .max_message_bytes = config_.udp.max_message_bytes};
  auto writer = std::make_shared<UdpWriter>(context, std::move(local), topic_id_of(topic.name), next_writer_id_++,
                                            config_.udp.history_depth);
  writers_.push_back(WriterEntry{
      .writer = writer, .topic_name = topic.name, .type = topic.type, .evolution = topic.allow_compatible_evolution});
  update_destinations();
  return writer;
}

void Participant::remove_writer(const UdpWriter* writer) {
  std::lock_guard guard(mutex_);
  std::erase_if(writers_, [&](const WriterEntry& entry) { return entry.writer.get() == writer; });
}

void Participant::add_subscription(const TopicDescriptor& topic, bool reliable) {
  {
    std::lock_guard guard(mutex_);
    LocalTopic& local = topics_[topic_id_of(topic.name)];
    if (local.subscriptions == 0) {
      local.descriptor = topic;
    }
    ++local.subscriptions;
    local.reliable += reliable ? 1 : 0;
    if (!local.receiver) {
      local.receiver = ReceiverLock::try_acquire(config_.domain_id, config_.host, topic_id_of(topic.name));
    }
  }
  announce_now_.store(true, std::memory_order_relaxed);  // the eventfd write orders it
  wake();
}

void Participant::remove_subscription(std::string_view topic_name, bool reliable) {
  {
    std::lock_guard guard(mutex_);
    const auto found = topics_.find(topic_id_of(topic_name));
    if (found == topics_.end()) {
      return;
    }
    --found->second.subscriptions;
    found->second.reliable -= reliable ? 1 : 0;
    if (found->second.subscriptions == 0) {
      topics_.erase(found);  // lets the receiver lock go: another participant of this host takes over
    }
  }
  announce_now_.store(true, std::memory_order_relaxed);
  wake();
}

std::vector<TopicRoute> Participant::remote_routes(std::string_view topic_name) const {
  const std::uint64_t topic = topic_id_of(topic_name);
  std::lock_guard guard(mutex_);
  std::map<std::string, TopicRoute> by_host;
  for (const auto& [id, remote] : remote_) {
    for (const AnnounceEntry& entry : remote.entries) {
      if (entry.topic_id != topic) {
        continue;
      }
      TopicRoute& route = by_host[remote.host];
      route.host = remote.host;
      route.transport = TransportKind::kUdp;
      route.subscribers += entry.subscribers;
      route.reliable = route.reliable || (entry.flags & kEntryReliable) != 0;
    }
  }
  std::vector<TopicRoute> routes;
  routes.reserve(by_host.size());
  for (auto& [host, route] : by_host) {
    routes.push_back(std::move(route));
  }
  return routes;
}

// ---- The participant thread ----

void Participant::run() noexcept {
  std::int64_t next_announce = 0;
  // udp.receive_poll_us: after data, poll without sleeping until then, so the
  // next datagram of a steady stream finds this thread awake (udp-transport.md,
  // "Polling after data"). Yields between polls: on a CPU shared with the
  // subscriber this thread just woke, the subscriber runs first.
  const std::int64_t receive_poll_ns = std::int64_t{config_.udp.receive_poll_us} * 1000;
  std::int64_t poll_until = 0;
  std::unique_lock receiving(receive_mutex_, std::defer_lock);
  while (!stopping_.load(std::memory_order_relaxed)) {
    receiving.lock();
    const std::int64_t now = monotonic_now_ns();
    if (now >= next_announce || announce_now_.exchange(false, std::memory_order_relaxed)) {
      retry_ownerships();
      announce();
      {
        std::lock_guard guard(mutex_);
        for (const WriterEntry& entry : writers_) {
          entry.writer->send_heartbeats();
        }
      }
      check_liveliness(now);
      next_announce = now + period_ns_;
    }
    reassembler_->expire(static_cast<std::uint64_t>(now));
    send_nacks(now);
    const ReassemblyCounters& r = reassembler_->counters();
    counters_.messages_incomplete.store(r.messages_timed_out + r.messages_evicted + r.messages_dropped_sender,
                                        std::memory_order_relaxed);  // a statistic; only this thread writes it

    std::int64_t wait_ns = next_announce - monotonic_now_ns();
    if (!remote_writers_.empty()) {
      wait_ns = std::min(wait_ns, kNackIntervalNs);  // NACK rounds while a reliable stream may miss something
    }
    if (const auto deadline = reassembler_->next_deadline_ns()) {
      wait_ns = std::min(wait_ns, static_cast<std::int64_t>(*deadline) - now);
    }
    // While subscriber threads wait on the data socket themselves, leave it
    // to them; look again every millisecond (the waiters may have gone).
    // Relaxed: a stale view costs one needless wake-up or a millisecond.
    const bool leased = socket_waiters_.load(std::memory_order_relaxed) > 0 ||
                        now < socket_lease_until_ns_.load(std::memory_order_relaxed);
    if (leased) {
      wait_ns = std::min(wait_ns, kMs);
    }
    std::array<pollfd, 3> fds{
        pollfd{.fd = leased ? -1 : data_socket_.fd(), .events = POLLIN, .revents = 0},
        pollfd{.fd = wake_fd_, .events = POLLIN, .revents = 0},
        pollfd{.fd = discovery_socket_ ? discovery_socket_->fd() : -1, .events = POLLIN, .revents = 0}};
    const bool polling = now < poll_until;
    const int timeout_ms = polling ? 0 : static_cast<int>(std::clamp<std::int64_t>((wait_ns + kMs - 1) / kMs, 0, 1000));
    receiving.unlock();
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    receiving.lock();
    if (ready <= 0) {
      receiving.unlock();
      if (polling) {
        ::sched_yield();
      }
      continue;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      std::uint64_t value = 0;
      (void)!::read(wake_fd_, &value, sizeof(value));
    }
    if ((fds[0].revents & POLLIN) != 0) {
      drain(data_socket_, false);
      poll_until = receive_poll_ns > 0 ? monotonic_now_ns() + receive_poll_ns : 0;
    }
    if (discovery_socket_ && (fds[2].revents & POLLIN) != 0) {
      drain(*discovery_socket_, true);
    }
    receiving.unlock();
  }
}

// ---- Waiting subscriber threads (SocketReceiver) ----

namespace {
/// How long the data socket stays with the waiters after the last one woke:
/// long enough for a callback and the next wait, short enough that a busy
/// waiter does not hold up other topics' messages for long.
constexpr std::int64_t kSocketLeaseNs = kMs;
}  // namespace

void Participant::begin_wait() noexcept {
  // Relaxed: the participant thread's view only decides whether it polls the
  // socket too; both reading it is correct (receive_mutex_ serializes them).
  socket_waiters_.fetch_add(1, std::memory_order_relaxed);
}

void Participant::end_wait() noexcept {
  socket_lease_until_ns_.store(monotonic_now_ns() + kSocketLeaseNs, std::memory_order_relaxed);
  socket_waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void Participant::receive_ready() noexcept {
  const std::unique_lock receiving(receive_mutex_, std::try_to_lock);
  if (!receiving.owns_lock()) {
    return;  // another thread is receiving: it delivers, and the futex wakes us
  }
  NetworkCounterCells::add(counters_.receives_on_waiting_threads);
  drain(data_socket_, false);
}

void Participant::receive_datagrams(std::span<const ReceivedDatagram> datagrams, bool all_read) noexcept {
  // Waits for the UDP thread's turn if need be: these datagrams left the socket already.
  const std::lock_guard receiving(receive_mutex_);
  NetworkCounterCells::add(counters_.receives_on_waiting_threads);
  NetworkCounterCells::add(counters_.datagrams_received, datagrams.size());
  for (const ReceivedDatagram& d : datagrams) {
    if (d.size > d.bytes.size()) {
      NetworkCounterCells::add(counters_.datagrams_refused);  // longer than any datagram we accept
      continue;
    }
    on_datagram(d.bytes, Endpoint{.ipv4 = d.from_ipv4, .port = d.from_port}, false);
  }
  if (all_read && reassembler_->in_flight_count() > 0) {
    drain(data_socket_, false);  // the rest of a long message, straight into its chunk
  } else {
    store_reassembly_counters();
  }
}

void Participant::drain(UdpSocket& socket, bool discovery) noexcept {
  for (int turn = 0; turn < kBatchesPerTurn; ++turn) {
    // Fragments of the message arriving are read straight into its chunk
    // (docs/design/udp.md, "Receiving in place"); discovery has none.
    const std::span<IncomingDatagram> batch = receive_->prepare(discovery ? nullptr : &*reassembler_);
    const std::size_t n = socket.receive_batch(batch);
    NetworkCounterCells::add(counters_.datagrams_received, n);
    receive_->settle(n, limits_);  // before any datagram of the batch is handled
    for (std::size_t i = 0; i < n; ++i) {
      const Arrival arrival = receive_->arrival(i, *reassembler_);
      switch (arrival.kind) {
        case Arrival::Kind::kTooLong:  // longer than any datagram we accept
          NetworkCounterCells::add(counters_.datagrams_refused);
          break;
        case Arrival::Kind::kContiguous: on_datagram(arrival.bytes, arrival.from, discovery); break;
        case Arrival::Kind::kInPlace: on_parsed(*arrival.parsed, {}, arrival.from, discovery); break;
        case Arrival::Kind::kStale: NetworkCounterCells::add(counters_.fragments_stale); break;
      }
    }
    store_reassembly_counters();
    if (n < batch.size()) {
      return;
    }
  }
}

void Participant::store_reassembly_counters() noexcept {
  const ReassemblyCounters& r = reassembler_->counters();
  // Statistics; only the thread holding receive_mutex_ writes them.
  counters_.fragments_in_place.store(r.fragments_in_place, std::memory_order_relaxed);
  counters_.fragments_copied.store(r.fragments_copied, std::memory_order_relaxed);
}

void Participant::on_datagram(std::span<const std::byte> bytes, Endpoint from, bool discovery) noexcept {
  ParsedDatagram datagram;
  if (parse_datagram(bytes, limits_, datagram) != ParseError::kOk) {
    NetworkCounterCells::add(counters_.datagrams_refused);
    return;
  }
  on_parsed(datagram, bytes, from, discovery);
}

void Participant::on_parsed(const ParsedDatagram& datagram, std::span<const std::byte> bytes, Endpoint from,
                            bool discovery) noexcept {
  if (datagram.header.type == DatagramType::kAnnounce) {
    on_announce(datagram, bytes, discovery);
    return;
  }
  // Everything else must come from where its sender said it receives: a
  // datagram with a known sender id from elsewhere is spoofed or stale.
  {
    std::lock_guard guard(mutex_);
    const auto sender = remote_.find(datagram.header.sender_id);
    if (sender == remote_.end() || sender->second.endpoint != from) {
      NetworkCounterCells::add(counters_.datagrams_refused);
      return;
    }
    sender->second.last_heard_ns = monotonic_now_ns();
  }
  switch (datagram.header.type) {
    case DatagramType::kData: on_data(datagram); break;
    case DatagramType::kHeartbeat: on_heartbeat(datagram); break;
    case DatagramType::kGap: on_gap(datagram); break;
    case DatagramType::kNack: on_nack(datagram, from); break;
    case DatagramType::kAnnounce: break;
  }
}

void Participant::on_announce(const ParsedDatagram& datagram, std::span<const std::byte> bytes,
                              bool discovery) noexcept {
  const Announce& a = datagram.announce;
  const std::uint64_t sender = datagram.header.sender_id;
  if (a.domain_id != config_.domain_id || sender == sender_id_) {
    return;  // another domain shares the group, or our own announcement looped back
  }
  const std::int64_t now = monotonic_now_ns();
  const Endpoint endpoint{.ipv4 = a.ipv4, .port = a.port};
  if (a.host_name() == config_.host) {
    if (discovery && !config_.static_peers.empty()) {
      local_peers_[sender] = LocalPeer{.endpoint = endpoint, .last_heard_ns = now};
    }
    return;  // this host's participants meet through shared memory
  }
  if (discovery && !config_.static_peers.empty() && (datagram.header.flags & kFlagRelayed) == 0) {
    // We own this host's discovery port: pass the announcement on to the
    // other participants here, which cannot bind the port themselves.
    std::array<std::byte, kAnnounceHeaderBytes + kMaxAnnounceEntries * kAnnounceEntryBytes> copy{};
    std::memcpy(copy.data(), bytes.data(), bytes.size());
    const std::span<std::byte> relayed(copy.data(), bytes.size());
    set_relayed_flag(relayed);
    for (const auto& [id, peer] : local_peers_) {
      (void)data_socket_.send(relayed, peer.endpoint);
    }
  }
  std::lock_guard guard(mutex_);
  auto [it, inserted] = remote_.try_emplace(sender);
  RemoteParticipant& remote = it->second;
  if (inserted) {
    remote.host = std::string(a.host_name());
    remote.endpoint = endpoint;
    const bool new_host = std::none_of(remote_.begin(), remote_.end(), [&](const auto& other) {
      return other.first != sender && other.second.host == remote.host;
    });
    if (new_host) {
      NetworkCounterCells::add(counters_.hosts_discovered);
      logger().info("udp: node '{}' found host '{}' at {}", config_.node_name, remote.host, endpoint.to_string());
    }
    // Announce ourselves now, not at the next period: our writers may send to
    // the newcomer at once, and it refuses datagrams of senders it does not know.
    announce_now_.store(true, std::memory_order_relaxed);
    wake();
  } else if (remote.endpoint != endpoint || remote.host != a.host_name()) {
    NetworkCounterCells::add(counters_.datagrams_refused);  // an id reused from elsewhere: spoofed
    return;
  }
  remote.last_heard_ns = now;
  const bool resized = remote.pages.size() != a.page_count;  // a page gone takes its entries with it
  if (resized) {
    remote.pages.resize(a.page_count);
  }
  std::vector<AnnounceEntry> page;
  page.reserve(a.entry_count);
  for (std::size_t i = 0; i < a.entry_count; ++i) {
    page.push_back(a.entry(i));
  }
  const bool changed = remote.pages[a.page].size() != page.size() ||
                       !std::equal(page.begin(), page.end(), remote.pages[a.page].begin(),
                                   [](const AnnounceEntry& x, const AnnounceEntry& y) {
                                     return x.topic_id == y.topic_id && x.type_hash == y.type_hash &&
                                            x.flags == y.flags && x.subscribers == y.subscribers;
                                   });
  if (changed || inserted || resized) {
    remote.pages[a.page] = std::move(page);
    remote.entries.clear();  // keeps its capacity
    for (const auto& each : remote.pages) {
      remote.entries.insert(remote.entries.end(), each.begin(), each.end());
    }
    update_destinations();
  }
}

void Participant::update_destinations() noexcept {
  for (const WriterEntry& entry : writers_) {
    const std::uint64_t topic = entry.writer->topic_id();
    std::map<std::string, WriterDestination> by_host;
    std::map<std::string, bool> reliable_host;
    for (const auto& [id, remote] : remote_) {
      for (const AnnounceEntry& e : remote.entries) {
        if (e.topic_id != topic) {
          continue;
        }
        if (!types_match(entry.type, entry.evolution, e)) {
          if (mismatch_reported_.emplace(id, topic).second) {
            NetworkCounterCells::add(counters_.type_mismatches);
            logger().error(
                "udp: topic '{}': host '{}' subscribes with another message type than '{}' published by "
                "node '{}' (type hash {:#x} vs {:#x}); it gets nothing until both use the same type",
                entry.topic_name, remote.host, entry.type.name, config_.node_name, e.type_hash, entry.type.hash);
          }
          continue;
        }
        reliable_host[remote.host] = reliable_host[remote.host] || (e.flags & kEntryReliable) != 0;
        WriterDestination& d = by_host[remote.host];
        d.subscribers += e.subscribers;
        if ((e.flags & kEntryReceiver) != 0) {
          d.participant = id;
          d.host = remote.host;
          d.to = remote.endpoint;
        }
      }
    }
    std::vector<WriterDestination> destinations;
    for (auto& [host, d] : by_host) {
      if (d.participant != 0) {  // a host whose receiver is not elected yet gets the stream once it is
        d.reliable = reliable_host[host];
        destinations.push_back(d);
      }
    }
    entry.writer->set_destinations(std::move(destinations));
  }
}

const std::shared_ptr<RemoteWriter>* Participant::remote_writer(std::uint64_t sender_id, std::uint32_t writer_id,
                                                                std::uint64_t topic_id) noexcept {
  const WriterKey key{sender_id, writer_id};
  if (const auto found = remote_writers_.find(key); found != remote_writers_.end()) {
    return found->second->topic_id() == topic_id ? &found->second : nullptr;
  }
  TopicDescriptor descriptor;
  {
    std::lock_guard guard(mutex_);
    const auto topic = topics_.find(topic_id);
    if (topic == topics_.end() || !topic->second.receiver) {
      return nullptr;  // not ours to receive (another participant of this host does)
    }
    descriptor = topic->second.descriptor;
  }
  // The mirror: a local publisher standing for the remote one, so every
  // subscriber of this host gets its messages through shared memory.
  auto port = shm_->advertise(descriptor, PublisherQos{});
  if (!port) {
    logger().error("udp: cannot mirror a remote publisher of topic '{}' on this host: {}", descriptor.name,
                   port.error().message());
    return nullptr;
  }
  auto mirror = std::static_pointer_cast<shm::ShmPublisherPort>(std::move(*port));
  auto writer = std::make_shared<RemoteWriter>(std::move(mirror), sender_id, writer_id, topic_id, counters_);
  return &remote_writers_.emplace(key, std::move(writer)).first->second;
}

void Participant::on_data(const ParsedDatagram& datagram) noexcept {
  const DataFragment& fragment = datagram.data;
  const std::shared_ptr<RemoteWriter>* writer =
      remote_writer(datagram.header.sender_id, fragment.writer_id, fragment.topic_id);
  if (writer == nullptr) {
    return;
  }
  const std::int64_t now = monotonic_now_ns();
  (*writer)->on_data(fragment.sequence, (datagram.header.flags & kFlagReliable) != 0, now);
  feeding_ = writer;  // the map entry outlives on_fragment(): nothing removes writers meanwhile
  const FeedResult result =
      reassembler_->on_fragment(datagram.header.sender_id, fragment, static_cast<std::uint64_t>(now));
  feeding_ = nullptr;
  switch (result.outcome) {
    case FeedOutcome::kCompleted: {
      last_message_datagrams_.store(fragment.fragment_count, std::memory_order_relaxed);
      auto loan = take_loan(result.message.destination.token);
      if (loan) {
        loan->writer->complete(result.message.key.sequence, loan->chunk, result.message.total_bytes);
      }
      break;
    }
    case FeedOutcome::kDuplicate:
    case FeedOutcome::kLate: NetworkCounterCells::add(counters_.duplicates); break;
    default: break;
  }
}

void Participant::on_heartbeat(const ParsedDatagram& datagram) noexcept {
  const Heartbeat& h = datagram.heartbeat;
  if (h.writer_id == 0) {
    return;  // the participant itself: last_heard_ns is already updated
  }
  if (const std::shared_ptr<RemoteWriter>* writer = remote_writer(datagram.header.sender_id, h.writer_id, h.topic_id)) {
    (*writer)->on_heartbeat(h.first_sequence, h.last_sequence, (datagram.header.flags & kFlagReliable) != 0,
                            monotonic_now_ns());
  }
}

void Participant::on_gap(const ParsedDatagram& datagram) noexcept {
  const Gap& g = datagram.gap;
  const auto found = remote_writers_.find({datagram.header.sender_id, g.writer_id});
  if (found != remote_writers_.end() && found->second->topic_id() == g.topic_id) {
    found->second->on_gap(g.first_sequence, g.end_sequence);
  }
}

void Participant::on_nack(const ParsedDatagram& datagram, Endpoint from) noexcept {
  const Nack& n = datagram.nack;
  if (n.target_sender_id != sender_id_) {
    NetworkCounterCells::add(counters_.datagrams_refused);
    return;
  }
  NetworkCounterCells::add(counters_.nacks_received);
  std::shared_ptr<UdpWriter> writer;
  {
    std::lock_guard guard(mutex_);
    for (const WriterEntry& entry : writers_) {
      if (entry.writer->writer_id() == n.writer_id && entry.writer->topic_id() == n.topic_id) {
        writer = entry.writer;
      }
    }
  }
  if (writer) {
    writer->on_nack(n, from);
  }
}

// ---- Timers ----

void Participant::announce() noexcept {
  std::vector<AnnounceEntry> entries;
  {
    std::lock_guard guard(mutex_);
    for (const auto& [id, topic] : topics_) {
      entries.push_back(AnnounceEntry{.topic_id = id,
                                      .type_hash = topic.descriptor.type.hash,
                                      .type_name_hash = detail::fnv1a(topic.descriptor.type.name),
                                      .flags = (topic.reliable > 0 ? kEntryReliable : 0U) |
                                               (topic.receiver ? kEntryReceiver : 0U) |
                                               (topic.descriptor.allow_compatible_evolution ? kEntryEvolution : 0U),
                                      .subscribers = topic.subscriptions});
    }
  }
  Announce a;
  a.domain_id = config_.domain_id;
  a.ipv4 = data_socket_.local().ipv4;
  a.port = data_socket_.local().port;
  a.period_ms = config_.udp.heartbeat_period_ms;
  const std::size_t host_length = std::min(config_.host.size(), kAnnounceHostBytes - 1);
  std::memcpy(a.host.data(), config_.host.data(), host_length);
  const std::size_t pages = std::max<std::size_t>(1, (entries.size() + announce_entries_ - 1) / announce_entries_);
  if (pages > kMaxAnnouncePages) {
    logger().error("udp: node '{}' subscribes to {} topics; announcements carry at most {}", config_.node_name,
                   entries.size(), kMaxAnnouncePages * announce_entries_);
    return;
  }
  std::vector<Endpoint> targets;
  if (config_.static_peers.empty()) {
    targets.push_back(
        Endpoint{.ipv4 = parse_ipv4(config_.udp.multicast_group).value(), .port = config_.udp.discovery_port});
  } else {
    for (const std::uint32_t peer : config_.static_peers) {
      targets.push_back(Endpoint{.ipv4 = peer, .port = config_.udp.discovery_port});
    }
    if (!discovery_socket_) {  // the owner of this host's discovery port relays to us
      targets.push_back(Endpoint{.ipv4 = config_.host_ipv4, .port = config_.udp.discovery_port});
    }
  }
  a.page_count = static_cast<std::uint8_t>(pages);
  std::array<std::byte, kAnnounceHeaderBytes + kMaxAnnounceEntries * kAnnounceEntryBytes> bytes{};
  for (std::size_t page = 0; page < pages; ++page) {
    a.page = static_cast<std::uint8_t>(page);
    const std::size_t first = page * announce_entries_;
    const std::size_t count = std::min(announce_entries_, entries.size() - std::min(first, entries.size()));
    const std::size_t size =
        encode_announce(bytes, sender_id_, a, std::span(entries).subspan(std::min(first, entries.size()), count));
    for (const Endpoint& to : targets) {
      if (size != 0 && data_socket_.send(std::span(bytes).first(size), to)) {
        NetworkCounterCells::add(counters_.datagrams_sent);
      }
    }
  }
}

void Participant::retry_ownerships() noexcept {
  {
    std::lock_guard guard(mutex_);
    for (auto& [id, topic] : topics_) {
      if (!topic.receiver) {
        topic.receiver = ReceiverLock::try_acquire(config_.domain_id, config_.host, id);
        if (topic.receiver) {
          logger().info("udp: node '{}' now receives topic '{}' for host '{}'", config_.node_name,
                        topic.descriptor.name, config_.host);
        }
      }
    }
  }
  if (!config_.static_peers.empty() && !discovery_socket_) {
    // Static discovery: the first participant of a host to bind the port
    // hears the others' announcements and relays them.
    auto socket = UdpSocket::open(SocketOptions{
        .bind = Endpoint{.ipv4 = config_.host_ipv4, .port = config_.udp.discovery_port}, .reuse_address = false});
    if (socket) {
      discovery_socket_ = std::move(*socket);
    }
  }
}

void Participant::check_liveliness(std::int64_t now_ns) noexcept {
  std::vector<std::uint64_t> lost;
  {
    std::lock_guard guard(mutex_);
    for (const auto& [id, remote] : remote_) {
      if (now_ns - remote.last_heard_ns > liveliness_ns_) {
        lost.push_back(id);
      }
    }
  }
  for (const std::uint64_t id : lost) {
    lose_participant(id, "heartbeats stopped");
  }
  std::erase_if(local_peers_, [&](const auto& peer) { return now_ns - peer.second.last_heard_ns > liveliness_ns_; });
  // A remote publisher that went away (its host lives on): drop its mirror,
  // so local subscribers see the publisher leave.
  std::erase_if(remote_writers_,
                [&](const auto& entry) { return now_ns - entry.second->last_heard_ns() > liveliness_ns_; });
}

void Participant::lose_participant(std::uint64_t sender_id, const char* why) noexcept {
  std::string host;
  {
    std::lock_guard guard(mutex_);
    const auto found = remote_.find(sender_id);
    if (found == remote_.end()) {
      return;
    }
    host = found->second.host;
    remote_.erase(found);
    std::erase_if(mismatch_reported_, [&](const auto& key) { return key.first == sender_id; });
    const bool host_gone =
        std::none_of(remote_.begin(), remote_.end(), [&](const auto& other) { return other.second.host == host; });
    if (host_gone) {
      NetworkCounterCells::add(counters_.hosts_lost);
      logger().warn("udp: node '{}' lost host '{}' ({}): its publishers are gone for local subscribers",
                    config_.node_name, host, why);
    }
    update_destinations();
  }
  reassembler_->drop_sender(sender_id);
  // Destroying the mirrors tells local subscribers their publishers left.
  std::erase_if(remote_writers_, [&](const auto& entry) { return entry.first.first == sender_id; });
}

void Participant::send_nacks(std::int64_t now_ns) noexcept {
  std::optional<bool> backlog;  // asked of the socket once per round, and only when a stream is due
  for (auto& [key, writer] : remote_writers_) {
    if (nack_due(*writer, now_ns)) {
      if (!backlog) {
        backlog = data_socket_.has_pending();
      }
      nack(*writer, NackRound{.now_ns = now_ns, .backlog = *backlog, .max_ranges = nack_ranges_});
    }
  }
}

void Participant::nack(RemoteWriter& writer, const NackRound& round) noexcept {
  std::array<NackRange, kMaxNackRanges> ranges{};
  const std::size_t count = plan_nack(writer, *reassembler_, round, ranges);
  if (count == 0) {
    return;
  }
  Endpoint to;
  {
    std::lock_guard guard(mutex_);
    const auto found = remote_.find(writer.sender_id());
    if (found == remote_.end()) {
      return;
    }
    to = found->second.endpoint;
  }
  std::array<std::byte, kNackHeaderBytes + kMaxNackRanges * kNackRangeBytes> bytes{};
  const std::size_t size = encode_nack(bytes, sender_id_, writer.sender_id(), writer.topic_id(), writer.writer_id(),
                                       std::span(ranges).first(count));
  if (size != 0 && data_socket_.send(std::span(bytes).first(size), to)) {
    NetworkCounterCells::add(counters_.datagrams_sent);
    NetworkCounterCells::add(counters_.nacks_sent);
  }
}

// ---- DestinationProvider ----

std::optional<Destination> Participant::acquire(const MessageKey& key, std::uint64_t /*topic_id*/,
                                                std::uint32_t total_bytes) noexcept {
  if (feeding_ == nullptr || !(*feeding_)->wants(key.sequence) || free_loans_.empty()) {
    return std::nullopt;
  }
  auto chunk = (*feeding_)->loan(std::max<std::uint32_t>(total_bytes, 1));
  if (!chunk) {
    NetworkCounterCells::add(counters_.pool_exhausted);
    return std::nullopt;
  }
  const std::uint64_t token = free_loans_.back();
  free_loans_.pop_back();
  loans_[token] = Loan{.writer = *feeding_, .chunk = *chunk};
  return Destination{.bytes = std::span<std::byte>(chunk->payload, chunk->capacity_bytes), .token = token};
}

void Participant::release(const MessageKey& /*key*/, const Destination& destination) noexcept {
  if (auto loan = take_loan(destination.token)) {
    loan->writer->discard(loan->chunk);
  }
}

std::optional<Participant::Loan> Participant::take_loan(std::uint64_t token) noexcept {
  if (token >= loans_.size() || !loans_[token].writer) {
    return std::nullopt;
  }
  Loan loan = std::move(loans_[token]);
  loans_[token] = Loan{};
  free_loans_.push_back(token);
  return loan;
}

}  // namespace axon::udp
