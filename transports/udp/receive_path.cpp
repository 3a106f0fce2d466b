#include "transports/udp/receive_path.hpp"

#include <algorithm>

#include "src/base/clock.hpp"
#include "src/base/log.hpp"

namespace axon::udp {
namespace {

constexpr std::int64_t kMs = 1'000'000;
/// Receive batches per drain() before the timers get their turn.
constexpr int kBatchesPerTurn = 16;

}  // namespace

Result<std::unique_ptr<ReceivePath>> ReceivePath::create(const ReceiveSetup& setup, Parts parts) {
  std::unique_ptr<ReceivePath> path(new ReceivePath(setup, std::move(parts)));
  auto created = Reassembler::create(setup.reassembly, path->mirrors_);
  if (!created) {
    return created.error();
  }
  path->reassembler_.emplace(std::move(*created));
  path->receive_.emplace(UdpSocket::kMaxBatch, setup.datagram_buffer_bytes, path->guard_.envelope_bytes());
  return path;
}

ReceivePath::ReceivePath(const ReceiveSetup& setup, Parts parts)
    : sender_id_(setup.sender_id),
      limits_(setup.limits),
      nack_ranges_(setup.nack_ranges),
      data_socket_(parts.data_socket),
      counters_(parts.counters),
      hosts_(parts.hosts),
      writers_(parts.writers),
      announces_(parts.announces),
      wait_source_(parts.data_socket.fd(), setup.datagram_buffer_bytes, static_cast<WaitingReceiver&>(*this)),
      guard_(std::move(parts.opener), std::move(parts.allow), parts.counters),
      mirrors_(std::move(parts.shm), parts.topics, parts.counters, setup.reassembly.max_messages_in_flight + 2) {}

ReceivePath::~ReceivePath() {
  mirrors_.clear();
  reassembler_.reset();  // gives in-flight loans back through Mirrors::release()
}

void ReceivePath::tick(const ReceiveTurn& /*turn*/, std::int64_t now_ns) noexcept {
  reassembler_->expire(static_cast<std::uint64_t>(now_ns));
  send_nacks(now_ns);
  const ReassemblyCounters& r = reassembler_->counters();
  counters_.messages_incomplete.store(r.messages_timed_out + r.messages_evicted + r.messages_dropped_sender,
                                      std::memory_order_relaxed);  // a statistic; only the turn's holder writes it
}

std::int64_t ReceivePath::wait_ns(const ReceiveTurn& /*turn*/, std::int64_t now_ns,
                                  std::int64_t until_ns) const noexcept {
  std::int64_t wait = until_ns - now_ns;
  if (!mirrors_.empty()) {
    wait = std::min(wait, kNackIntervalNs);  // NACK rounds while a reliable stream may miss something
  }
  if (ack_pending_) {
    wait = std::min(wait, RemoteWriter::kAckIntervalNs);  // its writer may be waiting for room
  }
  if (const auto deadline = reassembler_->next_deadline_ns()) {
    wait = std::min(wait, static_cast<std::int64_t>(*deadline) - now_ns);
  }
  return wait;
}

void ReceivePath::drop_sender(const ReceiveTurn& /*turn*/, std::uint64_t sender_id) noexcept {
  reassembler_->drop_sender(sender_id);
  mirrors_.drop_sender(sender_id);  // destroying the mirrors tells local subscribers their publishers left
}

void ReceivePath::drop_silent_writers(const ReceiveTurn& /*turn*/, std::int64_t now_ns,
                                      std::int64_t timeout_ns) noexcept {
  mirrors_.drop_silent(now_ns, timeout_ns);
}

// ---- WaitingReceiver (threads waiting on wait_source_) ----

void ReceivePath::receive_ready() noexcept {
  std::unique_lock receiving(receive_mutex_, std::try_to_lock);
  if (!receiving.owns_lock()) {
    return;  // another thread is receiving: it delivers, and the futex wakes us
  }
  const ReceiveTurn turn(std::move(receiving));
  NetworkCounterCells::add(counters_.receives_on_waiting_threads);
  drain(turn, data_socket_, false);
}

void ReceivePath::receive_datagrams(std::span<const ReceivedDatagram> datagrams, bool all_read) noexcept {
  // Waits for the UDP thread's turn if need be: these datagrams left the socket already.
  const ReceiveTurn turn = this->turn();
  NetworkCounterCells::add(counters_.receives_on_waiting_threads);
  NetworkCounterCells::add(counters_.datagrams_received, datagrams.size());
  for (const ReceivedDatagram& d : datagrams) {
    if (d.size > d.bytes.size()) {
      NetworkCounterCells::add(counters_.datagrams_refused);  // longer than any datagram we accept
      continue;
    }
    const Endpoint from{.ipv4 = d.from_ipv4, .port = d.from_port};
    if (guard_.active() && !guard_.admit(DatagramPieces{.pieces = {d.bytes, {}, {}}, .size = d.size}, from)) {
      continue;  // counted by the guard
    }
    on_datagram(turn, d.bytes.subspan(guard_.envelope_bytes()), from, false);
  }
  report_protection_mismatch();
  if (all_read && reassembler_->in_flight_count() > 0) {
    drain(turn, data_socket_, false);  // the rest of a long message, straight into its chunk
  } else {
    store_reassembly_counters();
  }
}

// ---- end of WaitingReceiver ----

void ReceivePath::drain(const ReceiveTurn& turn, UdpSocket& socket, bool discovery) noexcept {
  for (int round = 0; round < kBatchesPerTurn; ++round) {
    // Fragments of the message arriving are read straight into its chunk
    // (docs/design/udp.md, "Receiving in place"); discovery has none.
    const std::span<IncomingDatagram> batch = receive_->prepare(discovery ? nullptr : &*reassembler_);
    const std::size_t n = socket.receive_batch(batch);
    NetworkCounterCells::add(counters_.datagrams_received, n);
    receive_->settle(n, limits_, &guard_);  // before any datagram of the batch is handled
    report_protection_mismatch();
    for (std::size_t i = 0; i < n; ++i) {
      const Arrival arrival = receive_->arrival(i, *reassembler_);
      switch (arrival.kind) {
        case Arrival::Kind::kTooLong:  // longer than any datagram we accept
          NetworkCounterCells::add(counters_.datagrams_refused);
          break;
        case Arrival::Kind::kContiguous: on_datagram(turn, arrival.bytes, arrival.from, discovery); break;
        case Arrival::Kind::kInPlace: on_parsed(turn, *arrival.parsed, {}, arrival.from, discovery); break;
        case Arrival::Kind::kStale: NetworkCounterCells::add(counters_.fragments_stale); break;
        case Arrival::Kind::kRefused: break;  // counted by the guard
      }
    }
    store_reassembly_counters();
    if (n < batch.size()) {
      return;
    }
  }
}

void ReceivePath::report_protection_mismatch() noexcept {
  const std::optional<ProtectionMismatch> mismatch = guard_.take_mismatch();
  if (!mismatch) {
    return;  // the usual case: one branch per batch
  }
  // Once per kind and participant (the guard notes only the first): what is wrong and the fix.
  if (mismatch->outcome == OpenOutcome::kUnexpectedlyEncrypted) {
    logger().warn(
        "udp security: refused an encrypted datagram from {}: that host has the key and sets udp: security: "
        "encrypt: true, this node does not. Both hosts must set the same encrypt: add encrypt: true to this "
        "node's udp: security: or remove it there (refused datagrams are counted in unexpectedly_encrypted)",
        mismatch->from.to_string());
  } else {
    logger().warn(
        "udp security: refused an authenticated but unencrypted datagram from {}: that host has the key but does "
        "not set udp: security: encrypt: true, this node does and accepts no downgrade. Both hosts must set the "
        "same encrypt: add encrypt: true to that host's udp: security: or remove it here (refused datagrams are "
        "counted in not_encrypted)",
        mismatch->from.to_string());
  }
}

void ReceivePath::store_reassembly_counters() noexcept {
  const ReassemblyCounters& r = reassembler_->counters();
  // Statistics; only the thread holding receive_mutex_ writes them.
  counters_.fragments_in_place.store(r.fragments_in_place, std::memory_order_relaxed);
  counters_.fragments_copied.store(r.fragments_copied, std::memory_order_relaxed);
}

void ReceivePath::on_datagram(const ReceiveTurn& turn, std::span<const std::byte> bytes, Endpoint from,
                              bool discovery) noexcept {
  ParsedDatagram datagram;
  if (parse_datagram(bytes, limits_, datagram) != ParseError::kOk) {
    NetworkCounterCells::add(counters_.datagrams_refused);
    return;
  }
  on_parsed(turn, datagram, bytes, from, discovery);
}

void ReceivePath::on_parsed(const ReceiveTurn& turn, const ParsedDatagram& datagram, std::span<const std::byte> bytes,
                            Endpoint from, bool discovery) noexcept {
  if (datagram.header.type == DatagramType::kAnnounce) {
    announces_.on_announce(turn, datagram, bytes, discovery);
    return;
  }
  // Everything else must come from where its sender said it receives: a
  // datagram with a known sender id from elsewhere is spoofed or stale.
  if (!hosts_.heard(datagram.header.sender_id, from, monotonic_now_ns())) {
    NetworkCounterCells::add(counters_.datagrams_refused);
    return;
  }
  switch (datagram.header.type) {
    case DatagramType::kData: on_data(datagram); break;
    case DatagramType::kHeartbeat: on_heartbeat(datagram); break;
    case DatagramType::kGap: on_gap(datagram); break;
    case DatagramType::kNack: on_nack(datagram, from); break;
    case DatagramType::kAck: on_ack(datagram); break;
    case DatagramType::kAnnounce: break;
  }
}

void ReceivePath::on_data(const ParsedDatagram& datagram) noexcept {
  const DataFragment& fragment = datagram.data;
  const std::shared_ptr<RemoteWriter>* writer =
      mirrors_.find_or_add(datagram.header.sender_id, fragment.writer_id, fragment.topic_id);
  if (writer == nullptr) {
    return;
  }
  const std::int64_t now = monotonic_now_ns();
  (*writer)->on_data(fragment.sequence, (datagram.header.flags & kFlagReliable) != 0, now);
  mirrors_.set_feeding(writer);
  const FeedResult result =
      reassembler_->on_fragment(datagram.header.sender_id, fragment, static_cast<std::uint64_t>(now));
  mirrors_.set_feeding(nullptr);
  switch (result.outcome) {
    case FeedOutcome::kCompleted:
      wait_source_.note_message_datagrams(fragment.fragment_count);
      mirrors_.complete(result.message);
      break;
    case FeedOutcome::kDuplicate:
    case FeedOutcome::kLate: NetworkCounterCells::add(counters_.duplicates); break;
    default: break;
  }
}

void ReceivePath::on_heartbeat(const ParsedDatagram& datagram) noexcept {
  const Heartbeat& h = datagram.heartbeat;
  if (h.writer_id == 0) {
    return;  // the participant itself: RemoteHosts::heard() noted it
  }
  if (const std::shared_ptr<RemoteWriter>* writer =
          mirrors_.find_or_add(datagram.header.sender_id, h.writer_id, h.topic_id)) {
    (*writer)->on_heartbeat(h.first_sequence, h.last_sequence, (datagram.header.flags & kFlagReliable) != 0,
                            monotonic_now_ns());
  }
}

void ReceivePath::on_gap(const ParsedDatagram& datagram) noexcept {
  const Gap& g = datagram.gap;
  if (RemoteWriter* writer = mirrors_.find(datagram.header.sender_id, g.writer_id, g.topic_id)) {
    writer->on_gap(g.first_sequence, g.end_sequence);
  }
}

void ReceivePath::on_nack(const ParsedDatagram& datagram, Endpoint from) noexcept {
  const Nack& n = datagram.nack;
  if (n.target_sender_id != sender_id_) {
    NetworkCounterCells::add(counters_.datagrams_refused);
    return;
  }
  NetworkCounterCells::add(counters_.nacks_received);
  if (const std::shared_ptr<UdpWriter> writer = writers_.find(n.writer_id, n.topic_id)) {
    writer->on_nack(n, from);
  }
}

void ReceivePath::on_ack(const ParsedDatagram& datagram) noexcept {
  const Ack& a = datagram.ack;
  if (a.target_sender_id != sender_id_) {
    NetworkCounterCells::add(counters_.datagrams_refused);
    return;
  }
  // The writer checks next_sequence against what it sent; the sender id is
  // the one RemoteHosts::heard() tied to the datagram's source endpoint.
  if (const std::shared_ptr<UdpWriter> writer = writers_.find(a.writer_id, a.topic_id)) {
    writer->on_ack(datagram.header.sender_id, a.next_sequence);
  }
}

void ReceivePath::send_nacks(std::int64_t now_ns) noexcept {
  std::optional<bool> backlog;  // asked of the socket once per round, and only when a stream is due
  ack_pending_ = false;
  mirrors_.for_each([&](RemoteWriter& writer) {
    if (nack_due(writer, now_ns)) {
      if (!backlog) {
        backlog = data_socket_.has_pending();
      }
      nack(writer, NackRound{.now_ns = now_ns, .backlog = *backlog, .max_ranges = nack_ranges_});
    }
    if (writer.ack_due(now_ns)) {
      ack(writer, now_ns);
    }
    ack_pending_ = ack_pending_ || writer.ack_pending();
  });
}

void ReceivePath::ack(RemoteWriter& writer, std::int64_t now_ns) noexcept {
  const std::optional<Endpoint> to = hosts_.endpoint_of(writer.sender_id());
  if (!to) {
    return;
  }
  const Ack a{.target_sender_id = writer.sender_id(),
              .topic_id = writer.topic_id(),
              .next_sequence = writer.expected(),
              .writer_id = writer.writer_id()};
  std::array<std::byte, kAckBytes> bytes{};
  if (encode_ack(bytes, sender_id_, a) != 0 && data_socket_.send(bytes, *to)) {
    NetworkCounterCells::add(counters_.datagrams_sent);
    writer.acked(now_ns);
  }
}

void ReceivePath::nack(RemoteWriter& writer, const NackRound& round) noexcept {
  std::array<NackRange, kMaxNackRanges> ranges{};
  const std::size_t count = plan_nack(writer, *reassembler_, round, ranges);
  if (count == 0) {
    return;
  }
  const std::optional<Endpoint> to = hosts_.endpoint_of(writer.sender_id());
  if (!to) {
    return;
  }
  std::array<std::byte, kNackHeaderBytes + kMaxNackRanges * kNackRangeBytes> bytes{};
  const std::size_t size = encode_nack(bytes, sender_id_, writer.sender_id(), writer.topic_id(), writer.writer_id(),
                                       std::span(ranges).first(count));
  if (size != 0 && data_socket_.send(std::span(bytes).first(size), *to)) {
    NetworkCounterCells::add(counters_.datagrams_sent);
    NetworkCounterCells::add(counters_.nacks_sent);
  }
}

}  // namespace axon::udp
