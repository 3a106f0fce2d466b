// RdmaWriter's streams side (called by OutboundStreams under its mutex):
// destinations opened and closed, GRANTs turned into credits or into the
// write of a pending message, the receiver's QoS, a lost link.
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <limits>
#include <mutex>
#include <utility>

#include "src/base/clock.hpp"
#include "src/base/futex.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/rdma/rdma_writer.hpp"
#include "transports/rdma/rdma_writer_destination.hpp"

namespace axon::rdma {

namespace {

std::string_view refusal(OfferStatus status) noexcept {
  switch (status) {
    case OfferStatus::kDuplicateSlot:
      return "rdma stream: the peer granted a slot that is still outstanding (a duplicate grant)";
    case OfferStatus::kFifoFull: return "rdma stream: the peer granted a stream more credits than rdma.credits";
    case OfferStatus::kTooManyOutstanding:
      return "rdma stream: the peer has more grants outstanding on the link than its grant budget";
    case OfferStatus::kInvalidSlotName: return "rdma stream: a grant names a size class or slot outside the immediate";
    case OfferStatus::kAccepted: break;
  }
  return {};
}

std::string_view refusal(ClaimStatus status) noexcept {
  switch (status) {
    case ClaimStatus::kDuplicate: return refusal(OfferStatus::kDuplicateSlot);
    case ClaimStatus::kFull: return refusal(OfferStatus::kTooManyOutstanding);
    case ClaimStatus::kInvalidSlotName: return refusal(OfferStatus::kInvalidSlotName);
    case ClaimStatus::kClaimed: break;
  }
  return {};
}

}  // namespace

RdmaWriter::RdmaWriter(std::shared_ptr<shm::ShmPublisherPort> local, const RdmaWriterFields& fields,
                       std::uint32_t credits)
    : local_(std::move(local)), fields_(fields), credits_(std::max<std::uint32_t>(credits, 1)) {}

RdmaWriter::~RdmaWriter() {
  for (std::uint32_t i = 0; i < kMaxRdmaDestinations; ++i) {
    if (owned_[i] != nullptr) {
      retire(i, true);
    }
  }
}

Result<void> RdmaWriter::add_destination(LinkPort& link, std::uint32_t stream_id) {
  const auto free_slot = std::find(owned_.begin(), owned_.end(), nullptr);
  if (free_slot == owned_.end()) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("rdma: writer {} of topic {:#x} already sends to {} hosts over RDMA; the host of "
                             "participant {:#x} gets it by another transport",
                             fields_.writer_id, fields_.topic_id, kMaxRdmaDestinations, link.peer()));
  }
  auto destination = std::make_unique<Destination>(link, stream_id, credits_, monotonic_now_ns() + kOpenAnswerWaitNs);
  std::array<std::byte, kOpenBytes> message{};
  const std::size_t bytes = encode_open(message, stream_id,
                                        OpenFields{.topic_id = fields_.topic_id,
                                                   .type_hash = fields_.type_hash,
                                                   .writer_id = fields_.writer_id,
                                                   .largest_message_bytes = fields_.largest_message_bytes});
  if (bytes == 0) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("rdma: stream id {} cannot be encoded", stream_id));
  }
  const Result<SendOutcome> sent = link.send_control(std::span(message).first(bytes));
  if (!sent.ok()) {
    return sent.error();
  }
  if (*sent != SendOutcome::kPosted) {
    return Error(ErrorCode::kLimitReached,
                 fmt::format("rdma: no control send slot free on the link to participant {:#x} for the OPEN of "
                             "writer {}; the stream is not opened",
                             link.peer(), fields_.writer_id));
  }
  const auto index = static_cast<std::uint32_t>(free_slot - owned_.begin());
  // Release pairs with publish()'s acquire load: the destination is built.
  slots_[index].destination.store(destination.get(), std::memory_order_release);
  owned_[index] = std::move(destination);
  if (slot_limit_.load(std::memory_order_relaxed) <= index) {  // relaxed: this side is its only writer
    // Release: after the slot's pointer, pairing with publish()'s acquire.
    slot_limit_.store(index + 1, std::memory_order_release);
  }
  return {};
}

std::int32_t RdmaWriter::find(const LinkPort& link, std::uint32_t stream_id) const noexcept {
  for (std::uint32_t i = 0; i < kMaxRdmaDestinations; ++i) {
    if (owned_[i] != nullptr && owned_[i]->link == &link && owned_[i]->stream_id == stream_id) {
      return static_cast<std::int32_t>(i);
    }
  }
  return -1;
}

void RdmaWriter::set_unreached_peers(std::uint32_t count, std::int64_t wait_until_ns) noexcept {
  // Relaxed stores, ordered before the waiter count's load by wake_waiters()'s
  // fence (see unreached_peers_).
  unreached_wait_until_ns_.store(wait_until_ns, std::memory_order_relaxed);
  if (unreached_peers_.exchange(count, std::memory_order_relaxed) != count) {
    wake_waiters();
  }
}

void RdmaWriter::wake_waiters() noexcept {
  // Orders the caller's offers (or the generation bump) before the load of
  // the waiter count, pairing with futex::Waiter's seq_cst increment.
  futex::full_fence();
  futex::notify_if_waiting(credit_word_);
}

void RdmaWriter::wait_for_publisher() const noexcept {
  // seq_cst: after the generation bump in retire() (see the header). An even
  // epoch: no section runs, and any later one sees the bump.
  const std::uint64_t seen = epoch_.load(std::memory_order_seq_cst);
  if (seen % 2 == 0) {
    return;
  }
  // Acquire pairs with leave()'s release: the section's uses are done. A
  // section holds no lock and never sleeps: this waits for a post at most.
  while (epoch_.load(std::memory_order_acquire) == seen) {
    ::sched_yield();
  }
}

void RdmaWriter::retire(std::uint32_t index, bool send_close) noexcept {
  Destination& d = *owned_[index];
  // seq_cst: before wait_for_publisher()'s epoch load (see the header).
  slots_[index].generation.fetch_add(1, std::memory_order_seq_cst);
  slots_[index].destination.store(nullptr, std::memory_order_seq_cst);
  wake_waiters();  // a publisher waiting for this destination gives it up
  wait_for_publisher();
  if (send_close) {
    std::array<std::byte, kCloseBytes> message{};
    const std::size_t bytes = encode_close(message, d.stream_id);
    // Not sent (no slot, a broken link): the receiver reclaims the stream
    // when the link ends.
    (void)d.link->send_control(std::span(message).first(bytes));
  }
  // No publisher uses the FIFO any more: this thread is its consumer now.
  (void)d.credits.forget_all();
  {
    const std::lock_guard<SpinFlag> guard(d.pending_flag);
    if (d.pending.handle != nullptr) {
      local_->unpin(d.pending.handle);
      d.pending = {};
      note(counters_.pending_dropped);
    }
  }
  owned_[index].reset();
}

bool RdmaWriter::remove_destination(LinkPort& link, std::uint32_t stream_id, bool send_close) noexcept {
  const std::int32_t index = find(link, stream_id);
  if (index < 0) {
    return false;
  }
  retire(static_cast<std::uint32_t>(index), send_close);
  return true;
}

void RdmaWriter::on_link_lost(LinkPort& link) noexcept {
  for (std::uint32_t i = 0; i < kMaxRdmaDestinations; ++i) {
    if (owned_[i] != nullptr && owned_[i]->link == &link) {
      retire(i, false);
    }
  }
}

bool RdmaWriter::post_pending(Destination& d, const GrantEntry& grant) noexcept {
  const Destination::Pending pending = std::exchange(d.pending, {});
  const auto immediate =
      encode_immediate(ImmediateFields{.size_class = grant.size_class, .slot = grant.slot, .length = pending.length},
                       grant.capacity_bytes);
  if (!immediate) {  // the caller checked that it fits
    local_->unpin(pending.handle);
    note(counters_.send_failures);
    return false;
  }
  const LinkWrite write{
      .local = pending.local, .length = pending.length, .remote_address = grant.address, .immediate = *immediate};
  SentChunk pinned{.port = local_, .handle = pending.handle};
  const Result<WriteOutcome> posted = d.link->post_write(write, pinned);
  if (posted.ok() && *posted == WriteOutcome::kPosted) {
    note(counters_.messages_written);
    note(counters_.bytes_written, pending.length);
    return true;
  }
  note(counters_.send_failures);
  if (posted.ok()) {
    local_->unpin(pending.handle);  // not posted: the pin is ours
  }
  return false;
}

std::string_view RdmaWriter::on_grant(LinkPort& link, std::uint32_t stream_id, const GrantList& grants) noexcept {
  const std::int32_t index = find(link, stream_id);
  if (index < 0) {
    return {};  // closed by this side; the receiver reclaims what it granted
  }
  Destination& d = *owned_[static_cast<std::uint32_t>(index)];
  d.want_sent.store(false, std::memory_order_relaxed);  // relaxed: see Destination
  std::string_view why;
  {
    const std::lock_guard<SpinFlag> guard(d.pending_flag);
    for (std::uint32_t k = 0; k < grants.count && why.empty(); ++k) {
      const GrantEntry grant = grants.entry(k);  // a copy: the buffer is reposted
      if (d.pending.handle != nullptr && grant.capacity_bytes >= d.pending.length) {
        // Used at once, as if offered and taken: the same duplicate check.
        const SlotClaim claim = link.granted_slots().claim(grant.size_class, grant.slot);
        if (claim.status != ClaimStatus::kClaimed) {
          why = refusal(claim.status);
          break;
        }
        link.granted_slots().unclaim(claim.cell);
        if (!post_pending(d, grant)) {
          why = refusal(d.credits.offer(grant));  // not posted: the credit stays
        }
        continue;
      }
      why = refusal(d.credits.offer(grant));
    }
  }
  wake_waiters();
  return why;
}

bool RdmaWriter::on_open_answer(LinkPort& link, std::uint32_t stream_id, const OpenFields& answer) noexcept {
  const std::int32_t index = find(link, stream_id);
  if (index < 0) {
    return false;
  }
  Destination& d = *owned_[static_cast<std::uint32_t>(index)];
  // The timeout first (relaxed), then the policy (release, see Destination).
  // The parser bounds the timeout by INT64_MAX.
  d.block_timeout_ns.store(static_cast<std::int64_t>(std::min<std::uint64_t>(answer.block_timeout_ns,
                                                                             std::numeric_limits<std::int64_t>::max())),
                           std::memory_order_relaxed);
  d.policy.store(no_credit_policy(answer), std::memory_order_release);
  wake_waiters();  // a publisher waiting for the answer follows it now
  return true;
}

std::uint32_t RdmaWriter::credits_of(const LinkPort& link, std::uint32_t stream_id) const noexcept {
  const std::int32_t index = find(link, stream_id);
  return index < 0 ? 0 : owned_[static_cast<std::uint32_t>(index)]->credits.credits();
}

RdmaWriterCounters RdmaWriter::counters() const noexcept {
  // Relaxed: statistics.
  return RdmaWriterCounters{
      .messages_written = counters_.messages_written.load(std::memory_order_relaxed),
      .bytes_written = counters_.bytes_written.load(std::memory_order_relaxed),
      .credit_drops = counters_.credit_drops.load(std::memory_order_relaxed),
      .evicted = counters_.evicted.load(std::memory_order_relaxed),
      .timed_out = counters_.timed_out.load(std::memory_order_relaxed),
      .wants_sent = counters_.wants_sent.load(std::memory_order_relaxed),
      .send_failures = counters_.send_failures.load(std::memory_order_relaxed),
      .pending_dropped = counters_.pending_dropped.load(std::memory_order_relaxed),
      .no_stream_drops = counters_.no_stream_drops.load(std::memory_order_relaxed),
  };
}

}  // namespace axon::rdma
