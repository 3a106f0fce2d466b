#include "transports/udp/udp_writer.hpp"

#include <algorithm>
#include <ctime>

#include "src/base/clock.hpp"
#include "src/base/log.hpp"

namespace axon::udp {

UdpWriter::UdpWriter(SendContext context, std::shared_ptr<shm::ShmPublisherPort> local, std::uint64_t topic_id,
                     std::uint32_t writer_id, std::uint32_t history_depth)
    : context_(context),
      local_(std::move(local)),
      topic_id_(topic_id),
      writer_id_(writer_id),
      history_(std::max<std::uint32_t>(history_depth, 1)) {
  outgoing_.reserve(kBatch * 4);
}

UdpWriter::~UdpWriter() {
  std::lock_guard guard(mutex_);
  while (history_count_ > 0) {
    drop_oldest_kept();
  }
}

LoanResult<LoanedChunk> UdpWriter::loan(std::size_t payload_bytes) noexcept {
  auto chunk = local_->loan(payload_bytes);
  if (!chunk.exhausted()) {
    return chunk;
  }
  // The resend history may hold the chunks: those every reader acknowledged
  // go back at once, the others when their readers acknowledge them (or are
  // lost). Until then: back-pressure, never a message given up.
  wait_for_acks([&] {
    chunk = local_->loan(payload_bytes);
    return !chunk.exhausted() || history_count_ == 0;
  });
  return chunk;
}

PublishResult UdpWriter::publish(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset,
                                 std::uint32_t other_pins) noexcept {
  // pins 0 is a plain publish (ShmPublisherPort::publish_pinned()).
  if (!has_destinations_.load(std::memory_order_relaxed)) {
    return local_->publish_pinned(chunk, payload_bytes, payload_offset, other_pins);
  }
  if (!wait_for_pacer(payload_bytes)) {
    wait_for_acks([&] { return window_open(payload_bytes); });
  }
  const Hold guard(*this);
  const bool reliable =
      std::any_of(destinations_.begin(), destinations_.end(), [](const WriterDestination& d) { return d.reliable; });
  const bool fits = payload_bytes <= context_.max_message_bytes;
  if (destinations_.empty() || !fits) {
    if (!fits) {
      logger().error(
          "udp: a message of {} B on topic {:#x} is larger than udp.max_message_bytes ({} B): delivered "
          "on this host only; raise max_message_bytes in the deployment config",
          payload_bytes, topic_id_, context_.max_message_bytes);
    }
    return local_->publish_pinned(chunk, payload_bytes, payload_offset, other_pins);
  }
  apply_acks();
  if (reliable && history_count_ == history_.size()) {
    // The window stayed full for kAckTimeoutNs: this host only, and the
    // status says who did not get it (no sequence is used: nothing to GAP).
    auto local = local_->publish_pinned(chunk, payload_bytes, payload_offset, other_pins);
    if (local.failed()) {
      return local;
    }
    PublishStatus status = local.status();
    status.timed_out += lagging();
    status.dropped += static_cast<std::uint32_t>(destinations_.size());
    return status;
  }
  // A window still closed in bytes (no ACK for kAckTimeoutNs, room left in
  // the history): this one goes anyway, kept, so a reader that resumes still
  // gets it. The next publish waits again: a reader that is only slow is
  // never sent more than one message beyond what its buffer holds.
  auto status = local_->publish_pinned(chunk, payload_bytes, payload_offset, other_pins + (reliable ? 1 : 0));
  // A local subscriber that timed out is an outcome in the status: the
  // message was published; a failure means it was not.
  if (status.failed()) {
    return status;
  }
  const std::span<const std::byte> message(chunk.payload + payload_offset, payload_bytes);
  const std::uint64_t sequence = ++sequence_;
  std::array<const WriterDestination*, 64> targets{};
  const std::size_t count = std::min(destinations_.size(), targets.size());
  for (std::size_t i = 0; i < count; ++i) {
    targets[i] = &destinations_[i];
  }
  send_message(sequence, message, std::span(targets).first(count));
  NetworkCounterCells::add(context_.counters->messages_sent, count);
  if (reliable) {  // room: checked above
    history_[(history_head_ + history_count_) % history_.size()] =
        Kept{.sequence = sequence, .handle = chunk.handle, .payload = message};
    ++history_count_;
    kept_bytes_ += message.size();
  }
  return status;
}

namespace {
constexpr std::uint64_t pack_progress(std::uint64_t sequence, std::uint32_t fragments) noexcept {
  return (sequence << 32U) | fragments;  // the sequence's low half: see UdpWriter::on_nack()
}
}  // namespace

bool UdpWriter::window_open(std::size_t bytes) const noexcept {
  if (history_count_ == history_.size()) {
    return false;
  }
  // At least one message is always in flight, however large.
  return kept_bytes_ == 0 || context_.window_bytes == 0 || kept_bytes_ + bytes <= context_.window_bytes;
}

bool UdpWriter::wait_for_pacer(std::size_t bytes) noexcept {
  std::int64_t wait = 0;
  bool room = true;
  {
    const Hold guard(*this);
    apply_acks();
    room = window_open(bytes);
    wait = room ? pacer_.delay_ns(monotonic_now_ns()) : 0;
  }
  if (wait > 0) {
    // Without the mutex: NACKs are answered meanwhile, heartbeats go out.
    const timespec duration{.tv_sec = wait / 1'000'000'000, .tv_nsec = static_cast<long>(wait % 1'000'000'000)};
    ::nanosleep(&duration, nullptr);
  }
  return room;
}

template <class Ready>
void UdpWriter::wait_for_acks(Ready&& ready) noexcept {
  const std::int64_t start = monotonic_now_ns();
  std::int64_t next_prompt = start;
  for (;;) {
    WakeWord* const words[] = {&acks_.word()};
    // Counted as a waiter before the check: an ACK queued after it wakes the wait.
    futex::Waiter waiter(words);
    const std::int64_t now = monotonic_now_ns();
    {
      const Hold guard(*this);
      apply_acks();
      if (ready() || now - start >= kAckTimeoutNs) {
        return;
      }
      if (now >= next_prompt) {
        // A heartbeat asks for an ACK: the last one may have been lost.
        const std::uint64_t oldest = oldest_kept();
        for (const WriterDestination& d : destinations_) {
          if (d.reliable && d.acked <= oldest) {
            send_heartbeat(d);
          }
        }
        next_prompt = now + kAckPromptNs;
      }
    }
    (void)waiter.wait(std::min(next_prompt, start + kAckTimeoutNs) - now);
  }
}

void UdpWriter::apply_acks() noexcept {
  acks_.drain([this](const AckInbox::Entry& ack) {
    if (ack.next_sequence > sequence_ + 1) {
      NetworkCounterCells::add(context_.counters->datagrams_refused);  // acknowledges what was never sent
      return;
    }
    for (WriterDestination& d : destinations_) {
      if (d.reliable && d.participant == ack.participant) {
        d.acked = std::max(d.acked, ack.next_sequence);
      }
    }
  });
  // Without RELIABLE destinations nobody needs the history.
  std::uint64_t needed = sequence_ + 1;
  for (const WriterDestination& d : destinations_) {
    if (d.reliable) {
      needed = std::min(needed, d.acked);
    }
  }
  while (history_count_ > 0 && oldest_kept() < needed) {
    drop_oldest_kept();
  }
}

std::uint32_t UdpWriter::lagging() const noexcept {
  const std::uint64_t oldest = history_count_ > 0 ? oldest_kept() : sequence_ + 1;
  return static_cast<std::uint32_t>(std::count_if(destinations_.begin(), destinations_.end(),
                                                  [&](const auto& d) { return d.reliable && d.acked <= oldest; }));
}

void UdpWriter::send_message(std::uint64_t sequence, std::span<const std::byte> message,
                             std::span<const WriterDestination* const> to) noexcept {
  const auto fragments = static_cast<std::uint32_t>(fragment_count_for(message.size(), context_.fragment_bytes));
  for (std::uint32_t first = 0; first < fragments; first += kBatch) {
    const std::uint32_t end = std::min<std::uint32_t>(fragments, first + kBatch);
    const std::size_t bytes = (std::size_t{end - first} * (context_.fragment_bytes + kDataHeaderBytes)) * to.size();
    // Release, before the datagrams leave: a NACK that saw them missing
    // arrives after this store (through the kernel) and its acquire load sees it.
    progress_.store(pack_progress(sequence, end), std::memory_order_release);
    send_fragments(sequence, message, first, end, to);
    pacer_.sent(monotonic_now_ns(), bytes);
  }
}

void UdpWriter::send_fragments(std::uint64_t sequence, std::span<const std::byte> message, std::uint32_t first,
                               std::uint32_t end, std::span<const WriterDestination* const> to) noexcept {
  for (std::uint32_t batch_first = first; batch_first < end; batch_first += kBatch) {
    const auto batch_end = static_cast<std::uint32_t>(std::min<std::uint64_t>(end, batch_first + kBatch));
    outgoing_.clear();
    // Headers are encoded once per reliability variant, then gathered with
    // the payload straight from the chunk for every destination, one
    // destination after the other: a destination's datagrams of the batch
    // are one run, which the socket sends as a few segmented messages.
    for (std::uint32_t index = batch_first; index < batch_end; ++index) {
      const DataFragment fragment =
          make_fragment(topic_id_, writer_id_, sequence, message, context_.fragment_bytes, index);
      const std::size_t slot = index - batch_first;
      for (int variant = 0; variant < 2; ++variant) {
        auto& header = headers_[2 * slot + static_cast<std::size_t>(variant)];
        (void)encode_data_header(header, context_.sender_id, fragment, context_.checksum, variant == 1);
      }
      payloads_[slot] = fragment.payload;
    }
    for (const WriterDestination* d : to) {
      for (std::size_t slot = 0; slot < batch_end - batch_first; ++slot) {
        outgoing_.push_back(OutgoingDatagram{
            .header = headers_[2 * slot + (d->reliable ? 1 : 0)], .payload = payloads_[slot], .to = d->to});
      }
    }
    const std::size_t sent = context_.socket->send_batch(outgoing_);
    NetworkCounterCells::add(context_.counters->datagrams_sent, sent);
  }
}

void UdpWriter::set_destinations(std::vector<WriterDestination> destinations, std::uint64_t generation) {
  std::vector<std::uint64_t> participants;
  {
    const Hold guard(*this);
    if (generation < destinations_generation_) {
      return;  // computed from an older state than the destinations in place
    }
    destinations_generation_ = generation;
    const bool carries = static_cast<bool>(carried_);
    participants = split_carried(destinations);
    apply_destinations(std::move(destinations));
    if (!carries) {
      return;
    }
  }
  // Outside mutex_ (a leaf): the listener takes the other transport's locks.
  const std::lock_guard listening(listener_mutex_);
  if (listener_ && generation >= listened_generation_) {
    listened_generation_ = generation;
    listener_(std::move(participants));
  }
}

void UdpWriter::apply_destinations(std::vector<WriterDestination> destinations) {
  for (WriterDestination& d : destinations) {
    const auto old = std::find_if(destinations_.begin(), destinations_.end(), [&](const WriterDestination& o) {
      return o.participant == d.participant && o.reliable == d.reliable;
    });
    const bool is_new = old == destinations_.end();
    d.first_sequence = is_new ? sequence_ + 1 : old->first_sequence;
    d.acked = is_new ? d.first_sequence : old->acked;
    if (is_new) {
      send_heartbeat(d);
    }
  }
  destinations_ = std::move(destinations);
  outgoing_.reserve(kBatch * std::max<std::size_t>(destinations_.size(), 1));
  // Relaxed: see has_destinations_.
  has_destinations_.store(!destinations_.empty(), std::memory_order_relaxed);
  apply_acks();  // a destination that left held nothing back any more
  acks_.wake();  // a publish waiting for it looks again
}

std::vector<std::uint64_t> UdpWriter::split_carried(std::vector<WriterDestination>& destinations) const {
  std::vector<std::uint64_t> participants;
  if (!carried_) {
    return participants;
  }
  std::erase_if(destinations, [&](const WriterDestination& d) {
    if (!carried_(d.host)) {
      return false;
    }
    participants.push_back(d.participant);
    return true;
  });
  return participants;
}

void UdpWriter::carry_elsewhere(DestinationListener listener, CarriedHost carried) {
  std::vector<std::uint64_t> participants;
  std::uint64_t generation = 0;
  {
    const Hold guard(*this);
    carried_ = std::move(carried);
    std::vector<WriterDestination> own = destinations_;
    participants = split_carried(own);
    apply_destinations(std::move(own));
    generation = destinations_generation_;
  }
  const std::lock_guard listening(listener_mutex_);
  listener_ = std::move(listener);
  listened_generation_ = generation;
  if (listener_ && !participants.empty()) {
    listener_(std::move(participants));
  }
}

void UdpWriter::stop_listening() {
  const std::lock_guard listening(listener_mutex_);
  listener_ = nullptr;
}

std::vector<WriterDestination> UdpWriter::destinations() const {
  // Not a Hold: a NACK deferred meanwhile waits for the next publish or heartbeat.
  std::lock_guard guard(mutex_);
  return destinations_;
}

void UdpWriter::send_heartbeats() noexcept {
  const Hold guard(*this);
  // ACKs that came after the last publish: without this the history would keep their chunks pinned until the
  // next publish (for good, after a publisher's last message), and its pool would never read all free.
  apply_acks();
  for (const WriterDestination& d : destinations_) {  // those carried elsewhere hear from the other transport
    send_heartbeat(d);
  }
}

void UdpWriter::send_heartbeat(const WriterDestination& destination) noexcept {
  // `first` is where the destination's stream starts, not the oldest message
  // held: a reader that missed the first heartbeats still learns what it
  // missed, NACKs it, and gets resends or a GAP (counted as lost).
  const std::uint64_t first = destination.first_sequence;
  const Heartbeat heartbeat{
      .topic_id = topic_id_, .first_sequence = first, .last_sequence = sequence_, .writer_id = writer_id_};
  std::array<std::byte, kHeartbeatBytes> bytes{};
  if (encode_heartbeat(bytes, context_.sender_id, heartbeat, context_.checksum, destination.reliable) != 0 &&
      context_.socket->send(bytes, destination.to)) {
    NetworkCounterCells::add(context_.counters->datagrams_sent);
  }
}

void UdpWriter::on_nack(const Nack& nack, Endpoint from) noexcept {
  // Read before waiting for a publish() in progress to finish (see progress_).
  const std::uint64_t progress = progress_.load(std::memory_order_acquire);
  DeferredNack request{.ranges = {},
                       .count = std::min<std::size_t>(nack.range_count, kMaxNackRanges),
                       .from = from,
                       .progress = progress};
  for (std::size_t i = 0; i < request.count; ++i) {
    request.ranges[i] = nack.range(i);
  }
  Hold guard(*this, std::try_to_lock);
  if (!guard.owns_lock()) {
    // A publish is in progress: leave the NACK to it rather than wait for the
    // whole message (the receive thread has more to read meanwhile, and a
    // second NACK read after the message went out would resend what was
    // only not sent yet).
    if (defer(request)) {
      return;
    }
    guard.lock();  // the queue is full: wait, as before
  }
  answer(request);  // deferred ones queued meanwhile follow when `guard` goes
}

bool UdpWriter::defer(const DeferredNack& request) noexcept {
  {
    std::lock_guard queue(deferred_mutex_);
    if (deferred_count_ == deferred_.size()) {
      return false;
    }
    deferred_[deferred_count_++] = request;
  }
  has_deferred_.store(true, std::memory_order_seq_cst);
  // The holder of mutex_ looks for deferred NACKs after it unlocks; if it
  // unlocked before it could see this one, the lock is free now: answer it here.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  answer_deferred();
  return true;
}

void UdpWriter::answer_deferred() noexcept {
  // Whoever unlocks mutex_ looks here (Hold), and defer() looks after it
  // queued: with the fences one of them sees the other, so nothing stays queued.
  while (has_deferred_.load(std::memory_order_seq_cst)) {
    std::unique_lock guard(mutex_, std::try_to_lock);
    if (!guard.owns_lock()) {
      return;  // its holder answers them after it unlocks
    }
    has_deferred_.store(false, std::memory_order_seq_cst);
    std::array<DeferredNack, kDeferredNacks> taken;
    std::size_t count = 0;
    {
      std::lock_guard queue(deferred_mutex_);
      count = deferred_count_;
      std::copy_n(deferred_.begin(), count, taken.begin());
      deferred_count_ = 0;
    }
    for (std::size_t i = 0; i < count; ++i) {
      answer(taken[i]);
    }
    guard.unlock();
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

void UdpWriter::answer(const DeferredNack& request) noexcept {
  const std::uint64_t progress = request.progress;
  const Endpoint from = request.from;
  // The full sequence progress_ names: the newest whose low half matches
  // (sequence_ moved on by at most a few publishes since the load).
  const std::uint64_t sending = sequence_ - ((sequence_ - (progress >> 32U)) & 0xFFFFFFFFU);
  const auto sent_fragments = static_cast<std::uint32_t>(progress & 0xFFFFFFFFU);
  WriterDestination reply;
  reply.to = from;
  reply.reliable = true;
  const WriterDestination* const target[] = {&reply};
  std::uint64_t gap_sent_until = 0;
  for (std::size_t i = 0; i < request.count; ++i) {
    const NackRange& range = request.ranges[i];
    if (range.sequence > sending || range.sequence < gap_sent_until) {
      continue;  // not sent when the NACK came (or a confused or spoofed reader), or covered by the GAP just sent
    }
    if (const Kept* kept = find_kept(range.sequence)) {
      const auto count = static_cast<std::uint32_t>(fragment_count_for(kept->payload.size(), context_.fragment_bytes));
      // Fragments of the message being sent when the NACK came that had not
      // gone out yet: they went out after it, not lost.
      const std::uint32_t sent = range.sequence == sending ? std::min(count, sent_fragments) : count;
      const std::uint32_t end = std::min(range.end_fragment, sent);
      if (range.first_fragment < end) {
        send_fragments(range.sequence, kept->payload, range.first_fragment, end, target);
        NetworkCounterCells::add(context_.counters->fragments_resent, end - range.first_fragment);
        // The receiver lost these: it reads slower than we send.
        const std::int64_t now = monotonic_now_ns();
        pacer_.on_loss(now, range.sequence, sequence_);
        pacer_.sent(now, std::size_t{end - range.first_fragment} * (context_.fragment_bytes + kDataHeaderBytes));
      }
      continue;
    }
    // Gone from the history: say so, up to the oldest message still held.
    const std::uint64_t oldest = history_count_ > 0 ? oldest_kept() : sequence_ + 1;
    const std::uint64_t end = oldest > range.sequence ? oldest : range.sequence + 1;
    const Gap gap{
        .topic_id = topic_id_, .first_sequence = range.sequence, .end_sequence = end, .writer_id = writer_id_};
    std::array<std::byte, kGapBytes> bytes{};
    if (encode_gap(bytes, context_.sender_id, gap, context_.checksum) != 0 && context_.socket->send(bytes, from)) {
      NetworkCounterCells::add(context_.counters->datagrams_sent);
      NetworkCounterCells::add(context_.counters->gaps_sent);
    }
    pacer_.on_history_overrun(monotonic_now_ns());
    gap_sent_until = end;
  }
}

const UdpWriter::Kept* UdpWriter::find_kept(std::uint64_t sequence) const noexcept {
  if (history_count_ == 0) {
    return nullptr;
  }
  // Sequences in the history only grow, but need not be contiguous (messages
  // published while no reliable destination existed are not kept).
  for (std::size_t i = 0; i < history_count_; ++i) {
    const Kept& kept = history_[(history_head_ + i) % history_.size()];
    if (kept.sequence == sequence) {
      return &kept;
    }
    if (kept.sequence > sequence) {
      return nullptr;
    }
  }
  return nullptr;
}

std::uint64_t UdpWriter::oldest_kept() const noexcept { return history_[history_head_].sequence; }

void UdpWriter::drop_oldest_kept() noexcept {
  local_->unpin(history_[history_head_].handle);
  kept_bytes_ -= history_[history_head_].payload.size();
  history_[history_head_] = Kept{};
  history_head_ = (history_head_ + 1) % history_.size();
  --history_count_;
}

}  // namespace axon::udp
