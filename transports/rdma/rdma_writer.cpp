// RdmaWriter's publish path: credits taken, the local publish with its pins,
// the writes posted, and what a destination without credit gets.
#include "transports/rdma/rdma_writer.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "src/base/clock.hpp"
#include "src/base/futex.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/rdma/rdma_writer_destination.hpp"

namespace axon::rdma {

NoCreditPolicy no_credit_policy(const OpenFields& receiver_qos) noexcept {
  switch (receiver_qos.overflow) {
    case WireOverflow::kDropOldest:
    case WireOverflow::kLatestOnly: return NoCreditPolicy::kKeepLast;
    case WireOverflow::kBlockPublisher: return NoCreditPolicy::kBlock;
    case WireOverflow::kRejectNewest: return NoCreditPolicy::kDrop;
    case WireOverflow::kDefault: break;
  }
  return receiver_qos.reliability == WireReliability::kReliable ? NoCreditPolicy::kBlock : NoCreditPolicy::kDrop;
}

void RdmaWriter::enter() noexcept {
  // The publisher is the epoch's only writer. seq_cst: ordered before the
  // generation loads of the section (see the header).
  epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
}

void RdmaWriter::leave() noexcept {
  // Release pairs with wait_for_publisher()'s load: the section's uses of a
  // destination happen before it is destroyed.
  epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

bool RdmaWriter::still_there(const Plan& p) const noexcept {
  // seq_cst: after enter()'s store (see the header).
  return slots_[p.slot].generation.load(std::memory_order_seq_cst) == p.generation;
}

bool RdmaWriter::take(Destination& d, std::uint32_t length, GrantEntry& grant) noexcept {
  if (d.has_spare && d.spare.capacity_bytes >= length) {
    grant = d.spare;
    d.has_spare = false;
    return true;
  }
  const CreditTake taken = d.credits.take_fitting(length);
  if (taken.status != TakeStatus::kTaken) {
    return false;
  }
  grant = taken.grant;
  return true;
}

PublishResult RdmaWriter::publish(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset,
                                  LocalPublish* beside) noexcept {
  if (payload_offset > chunk.capacity_bytes || payload_bytes > chunk.capacity_bytes - payload_offset) {
    return local_->publish(chunk, payload_bytes, payload_offset);  // refuses it, naming why
  }
  const auto length = static_cast<std::uint32_t>(payload_bytes);  // within a chunk's u32 capacity
  std::array<Plan, kMaxRdmaDestinations> plans;
  std::uint32_t count = 0;
  PublishStatus rdma;
  std::int64_t now_ns = -1;  // read once, only when a destination waits
  const auto now = [&now_ns] {
    if (now_ns < 0) {
      now_ns = monotonic_now_ns();
    }
    return now_ns;
  };

  // Relaxed: see unreached_peers_. Zero in the steady state: no wait, no clock.
  if (unreached_peers_.load(std::memory_order_relaxed) != 0) {
    wait_for_streams();
  }
  // Acquire pairs with add_destination()'s release: the slots below it are set up.
  const std::uint32_t limit = slot_limit_.load(std::memory_order_acquire);
  enter();
  for (std::uint32_t i = 0; i < limit; ++i) {
    Plan p;
    p.slot = i;
    p.generation = slots_[i].generation.load(std::memory_order_seq_cst);  // see the header
    // Acquire pairs with add_destination()'s release store: the destination is built.
    p.destination = slots_[i].destination.load(std::memory_order_acquire);
    if (p.destination == nullptr) {
      continue;
    }
    Destination& d = *p.destination;
    if (take(d, length, p.grant)) {
      p.kind = Plan::Kind::kWrite;
      plans[count++] = p;
      continue;
    }
    say_want(d);
    switch (d.policy.load(std::memory_order_acquire)) {  // acquire: see Destination
      case NoCreditPolicy::kDrop:
        ++rdma.dropped;
        note(counters_.credit_drops);
        continue;
      case NoCreditPolicy::kKeepLast: p.kind = Plan::Kind::kPending; break;
      case NoCreditPolicy::kBlock:
        p.kind = Plan::Kind::kWait;
        p.deadline_ns = block_deadline(d, now());
        break;
      case NoCreditPolicy::kAwaitAnswer:
        // The stream is opening: its answer brings the first grants.
        if (now() >= d.answer_deadline_ns) {
          ++rdma.dropped;
          note(counters_.credit_drops);
          continue;
        }
        p.kind = Plan::Kind::kWait;
        p.deadline_ns = d.answer_deadline_ns;
        p.awaits_answer = true;
        p.since_ns = now();
        break;
    }
    plans[count++] = p;
  }
  leave();
  // Relaxed: see unreached_peers_. No stream, so no pin: counted here.
  if (const std::uint32_t unreached = unreached_peers_.load(std::memory_order_relaxed); unreached != 0) {
    rdma.dropped += unreached;
    note(counters_.no_stream_drops, unreached);
  }

  // One pin per write about to be posted, pending or waited for: each ends
  // with its write's completion or with an unpin() of its own below.
  // (pins 0 is a plain publish.)
  auto local = beside != nullptr ? beside->publish_pinned(chunk, payload_bytes, payload_offset, count)
                                 : local_->publish_pinned(chunk, payload_bytes, payload_offset, count);
  if (local.failed()) {
    // Nothing was pinned: the credits taken stay for the next message.
    enter();
    for (std::uint32_t k = 0; k < count; ++k) {
      Plan& p = plans[k];
      if (p.kind == Plan::Kind::kWrite && still_there(p) && !p.destination->has_spare) {
        p.destination->spare = p.grant;
        p.destination->has_spare = true;
      }
    }
    leave();
    return local;
  }

  const std::byte* bytes = chunk.payload + payload_offset;
  bool waits = false;
  enter();
  for (std::uint32_t k = 0; k < count; ++k) {
    Plan& p = plans[k];
    if (!still_there(p)) {  // closed or lost since the plan
      local_->unpin(chunk.handle);
      ++rdma.dropped;
      note(counters_.send_failures);
      p.done = true;
      continue;
    }
    Destination& d = *p.destination;
    GrantEntry grant = p.grant;
    if (p.kind == Plan::Kind::kWrite || (p.kind == Plan::Kind::kWait && take(d, length, grant))) {
      evict_pending(d, rdma);
      post(d, grant, bytes, length, chunk.handle, rdma);
      p.done = true;
    } else if (p.kind == Plan::Kind::kPending) {
      keep_pending(d, bytes, length, chunk.handle, rdma);
      p.done = true;
    } else {
      waits = true;
    }
  }
  leave();
  if (waits) {
    wait_for_credit(plans.data(), count, bytes, length, chunk.handle, rdma);
  }

  PublishStatus status = local.status();
  status.delivered += rdma.delivered;
  status.dropped += rdma.dropped;
  status.evicted += rdma.evicted;
  status.timed_out += rdma.timed_out;
  return status;
}

void RdmaWriter::post(Destination& d, const GrantEntry& grant, const std::byte* local, std::uint32_t length,
                      void* handle, PublishStatus& status) noexcept {
  const auto immediate = encode_immediate(
      ImmediateFields{.size_class = grant.size_class, .slot = grant.slot, .length = length}, grant.capacity_bytes);
  if (!immediate) {  // take() checked the length; the parser checked class and slot
    local_->unpin(handle);
    ++status.dropped;
    note(counters_.send_failures);
    return;
  }
  const LinkWrite write{.local = local, .length = length, .remote_address = grant.address, .immediate = *immediate};
  SentChunk pinned{.port = local_, .handle = handle};
  const Result<WriteOutcome> posted = d.link->post_write(write, pinned);
  if (posted.ok() && *posted == WriteOutcome::kPosted) {
    ++status.delivered;
    note(counters_.messages_written);
    note(counters_.bytes_written, length);
    return;
  }
  ++status.dropped;
  note(counters_.send_failures);
  if (!posted.ok()) {
    return;  // the link took the pin and ends
  }
  // Send queue full, or a chain longer than the port allows: nothing was
  // posted; the pin is ours and the credit still names a free chunk of the
  // receiver (one is kept; another would stay granted until the stream closes).
  local_->unpin(handle);
  if (!d.has_spare) {
    d.spare = grant;
    d.has_spare = true;
  }
}

void RdmaWriter::say_want(Destination& d) noexcept {
  if (d.want_sent.exchange(true, std::memory_order_relaxed)) {  // relaxed: see Destination
    return;
  }
  // Every policy says so, a dropping one too: a receiver that stopped
  // granting (its subscribers' chunks all held) polls for room only while
  // its sender wants credit.
  std::array<std::byte, kWantBytes> message{};
  const std::size_t bytes = encode_want(message, d.stream_id, 1);
  const Result<SendOutcome> sent = d.link->send_control(std::span(message).first(bytes));
  if (sent.ok() && *sent == SendOutcome::kPosted) {
    note(counters_.wants_sent);
  } else {
    d.want_sent.store(false, std::memory_order_relaxed);  // the next message without credit tries again
  }
}

void RdmaWriter::evict_pending(Destination& d, PublishStatus& status) noexcept {
  if (!d.pending_left) {
    return;
  }
  const std::lock_guard<SpinFlag> guard(d.pending_flag);
  d.pending_left = false;
  if (d.pending.handle != nullptr) {  // older than this message: written after it would reorder the stream
    local_->unpin(d.pending.handle);
    d.pending = {};
    ++status.evicted;
    note(counters_.evicted);
  }
}

void RdmaWriter::keep_pending(Destination& d, const std::byte* local, std::uint32_t length, void* handle,
                              PublishStatus& status) noexcept {
  const std::lock_guard<SpinFlag> guard(d.pending_flag);
  GrantEntry grant;
  if (take(d, length, grant)) {  // a GRANT came since the plan (on_grant() offers under the flag)
    if (d.pending.handle != nullptr) {
      local_->unpin(d.pending.handle);
      d.pending = {};
      ++status.evicted;
      note(counters_.evicted);
    }
    post(d, grant, local, length, handle, status);
    return;
  }
  if (d.pending.handle != nullptr) {
    local_->unpin(d.pending.handle);
    ++status.evicted;
    note(counters_.evicted);
  }
  d.pending = Destination::Pending{.handle = handle, .local = local, .length = length};
  d.pending_left = true;
}

std::int64_t RdmaWriter::block_deadline(const Destination& d, std::int64_t since_ns) noexcept {
  // Relaxed: ordered by the policy's acquire (see Destination). Saturates.
  return since_ns + std::min(d.block_timeout_ns.load(std::memory_order_relaxed),
                             std::numeric_limits<std::int64_t>::max() - since_ns);
}

bool RdmaWriter::replan_after_answer(Plan& p, const std::byte* local, std::uint32_t length, void* handle,
                                     PublishStatus& status) noexcept {
  Destination& d = *p.destination;
  // Acquire: see Destination. Still kAwaitAnswer: no answer yet.
  switch (d.policy.load(std::memory_order_acquire)) {
    case NoCreditPolicy::kAwaitAnswer: return false;
    case NoCreditPolicy::kDrop:
      local_->unpin(handle);
      ++status.dropped;
      note(counters_.credit_drops);
      p.done = true;
      return true;
    case NoCreditPolicy::kKeepLast:
      keep_pending(d, local, length, handle, status);
      p.done = true;
      return true;
    case NoCreditPolicy::kBlock:
      // The receiver's block timeout, counted from when the publish began.
      p.awaits_answer = false;
      p.deadline_ns = block_deadline(d, p.since_ns);
      return false;
  }
  return false;
}

void RdmaWriter::wait_for_streams() noexcept {
  for (;;) {
    std::array<WakeWord*, 1> words{&credit_word_};
    futex::Waiter waiter(words);  // counted (seq_cst) before the looks below
    // seq_cst: see unreached_peers_.
    if (unreached_peers_.load(std::memory_order_seq_cst) == 0) {
      return;
    }
    const std::int64_t remaining_ns = unreached_wait_until_ns_.load(std::memory_order_seq_cst) - monotonic_now_ns();
    if (remaining_ns <= 0) {
      return;  // counted as no_stream_drops by publish()
    }
    (void)waiter.wait(remaining_ns);
  }
}

void RdmaWriter::wait_for_credit(Plan* plans, std::uint32_t count, const std::byte* local, std::uint32_t length,
                                 void* handle, PublishStatus& status) noexcept {
  for (;;) {
    std::array<WakeWord*, 1> words{&credit_word_};
    // Counts this waiter (seq_cst) and reads the word before the credits are
    // looked at: a GRANT offered after the look sees the waiter and wakes it
    // (on_grant(): full_fence(), then notify_if_waiting()).
    futex::Waiter waiter(words);
    enter();
    const std::int64_t now_ns = monotonic_now_ns();
    std::int64_t next_deadline_ns = std::numeric_limits<std::int64_t>::max();
    bool waiting = false;
    for (std::uint32_t k = 0; k < count; ++k) {
      Plan& p = plans[k];
      if (p.done || p.kind != Plan::Kind::kWait) {
        continue;
      }
      GrantEntry grant;
      if (!still_there(p)) {
        local_->unpin(handle);
        ++status.dropped;
        note(counters_.send_failures);
        p.done = true;
      } else if (take(*p.destination, length, grant)) {
        evict_pending(*p.destination, status);
        post(*p.destination, grant, local, length, handle, status);
        p.done = true;
      } else if (p.awaits_answer && replan_after_answer(p, local, length, handle, status)) {
        // The answer came without credit: dropped or left pending as it says.
      } else if (now_ns >= p.deadline_ns) {
        local_->unpin(handle);
        ++status.dropped;
        // No answer came: dropped for want of credit, as the messages after
        // the wait are; else the receiver's block timeout ran out.
        if (p.awaits_answer) {
          note(counters_.credit_drops);
        } else {
          ++status.timed_out;
          note(counters_.timed_out);
        }
        p.done = true;
      } else {
        next_deadline_ns = std::min(next_deadline_ns, p.deadline_ns);
        waiting = true;
      }
    }
    leave();
    if (!waiting) {
      return;
    }
    (void)waiter.wait(next_deadline_ns - now_ns);  // woken, timed out or interrupted: look again
  }
}

}  // namespace axon::rdma
