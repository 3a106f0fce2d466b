#include "transports/rdma/rdma_link.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cassert>
#include <cstring>
#include <utility>

#include "transports/rdma/write_chain.hpp"

namespace axon::rdma {

Result<std::unique_ptr<RdmaLink>> RdmaLink::create(const PoolRegistration& registration, std::uint64_t peer, ibv_qp* qp,
                                                   std::uint32_t own_max_message_bytes, LinkHandler* handler,
                                                   LinkFaultCounters& faults, int wake_fd) {
  auto ring = ControlRing::create(registration.pd(), kLinkGrantBudget + kLinkControlReceives, kLinkControlSends);
  if (!ring.ok()) {
    return ring.error();
  }
  std::unique_ptr<RdmaLink> link(
      new RdmaLink(registration, peer, qp, own_max_message_bytes, handler, faults, wake_fd, std::move(ring.value())));
  if (auto posted = link->ring_.post_all_receives(qp); !posted.ok()) {
    return posted.error();
  }
  return link;
}

RdmaLink::RdmaLink(const PoolRegistration& registration, std::uint64_t peer, ibv_qp* qp,
                   std::uint32_t own_max_message_bytes, LinkHandler* handler, LinkFaultCounters& faults, int wake_fd,
                   ControlRing ring)
    : registration_(registration),
      peer_(peer),
      qp_(qp),
      qp_num_(qp->qp_num),
      own_max_message_bytes_(own_max_message_bytes),
      handler_(handler),
      faults_(faults),
      wake_fd_(wake_fd),
      granted_slots_(kLinkGrantBudget),
      ring_(std::move(ring)),
      budget_(kLinkSendDepth),
      ledger_(kLinkSendDepth) {
  early_.reserve(ring_.receive_slots());
}

Result<void> RdmaLink::up(const ConnectPrivateData& peer_data, bool active) {
  std::vector<GrantClass> classes;
  for (const shm::ChunkClassExtent& c : registration_.area().class_list()) {
    classes.push_back(GrantClass{.capacity_bytes = c.payload_capacity, .chunk_count = c.chunk_count});
  }
  auto table = GrantTable::create(classes, peer_data.max_message_bytes);
  if (!table.ok()) {
    return table.error();
  }
  active_ = active;
  peer_region_ = PeerRegion{.base = peer_data.base, .length = peer_data.length};
  peer_rkey_ = peer_data.rkey;
  grants_.emplace(std::move(table.value()));
  return {};
}

void RdmaLink::deliver_early_receives() noexcept {
  for (const Completion& c : early_) {
    handle_receive(c);
  }
  early_.clear();
}

void RdmaLink::handle(const Completion& c) noexcept {
  switch (c.kind) {
    case CompletionKind::kControlReceived:
    case CompletionKind::kWriteReceived:
      if (!is_up()) {
        early_.push_back(c);  // at most one per receive slot: reserved
        return;
      }
      handle_receive(c);
      return;
    case CompletionKind::kSendCompleted: handle_send(c); return;
    case CompletionKind::kFailed:
      faults_.completion_errors.fetch_add(1, std::memory_order_relaxed);
      if (c.work.kind != WorkKind::kReceive) {
        handle_send(c);  // a flushed write is done with its chunk too
      }
      fail(fmt::format("a work completion failed ({}, wr_id {:#x})", c.status_words, c.wr_id));
      return;
    case CompletionKind::kUnexpected:
      faults_.completion_errors.fetch_add(1, std::memory_order_relaxed);
      fail(fmt::format("an unexpected work completion (wr_id {:#x})", c.wr_id));
      return;
  }
}

void RdmaLink::handle_receive(const Completion& c) noexcept {
  if (failed()) {
    return;  // torn down next: nothing more for the handler
  }
  if (c.kind == CompletionKind::kControlReceived) {
    const auto bytes = ring_.received(c.slot(), c.byte_len);
    ControlMessage message;
    const ControlError error = bytes ? parse_control(*bytes, peer_region_, message) : ControlError::kLongerThanSlot;
    if (error != ControlError::kOk) {
      faults_.control_refusals.fetch_add(1, std::memory_order_relaxed);
      fail(to_string(error));
      return;
    }
    if (handler_ != nullptr) {
      handler_->on_control(*this, message);
    }
  } else {
    const ResolvedWrite write = grants_->resolve(c.immediate, c.byte_len);
    if (!write.accepted()) {
      faults_.write_refusals.fetch_add(1, std::memory_order_relaxed);
      fail(to_string(write.refusal));
      return;
    }
    if (handler_ != nullptr) {
      handler_->on_write(*this, write);
    } else {
      (void)grants_->release(GrantRef{.size_class = write.size_class, .slot = write.slot});
    }
  }
  repost(c.slot());
}

void RdmaLink::repost(std::uint32_t slot) noexcept {
  const std::lock_guard lock(mutex_);
  if (!failure_.empty()) {
    return;
  }
  if (auto posted = ring_.repost_receive(qp_, slot); !posted.ok()) {
    fail_locked(posted.error().message());
  }
}

void RdmaLink::handle_send(const Completion& c) noexcept {
  const std::uint64_t sequence = c.work.sequence;
  {
    const std::lock_guard lock(mutex_);
    budget_.retire(sequence);
    if (c.work.kind == WorkKind::kControlSend) {
      (void)ring_.send_completed(c.slot());
    }
  }
  // One chunk per lock: unpin() (the pool's holder word) runs without it.
  for (;;) {
    SentChunk done;
    {
      const std::lock_guard lock(mutex_);
      done = ledger_.take_done(sequence);
    }
    if (done.empty()) {
      return;
    }
    done.port->unpin(done.handle);
  }
}

std::uint32_t RdmaLink::release_all() noexcept {
  std::uint32_t released = 0;
  for (;;) {
    SentChunk chunk;
    {
      const std::lock_guard lock(mutex_);
      chunk = ledger_.take_any();
    }
    if (chunk.empty()) {
      return released;
    }
    chunk.port->unpin(chunk.handle);
    ++released;
  }
}

bool RdmaLink::failed() const noexcept {
  const std::lock_guard lock(mutex_);
  return !failure_.empty();
}

std::string RdmaLink::failure() const {
  const std::lock_guard lock(mutex_);
  return failure_;
}

std::uint32_t RdmaLink::writes_in_flight() const {
  const std::lock_guard lock(mutex_);
  return ledger_.size();
}

void RdmaLink::fail(std::string_view why) noexcept {
  const std::lock_guard lock(mutex_);
  fail_locked(why);
}

void RdmaLink::close() noexcept {
  const std::lock_guard lock(mutex_);
  if (failure_.empty()) {
    failure_ = "its queue pair is destroyed";
  }
}

void RdmaLink::fail_locked(std::string_view why) noexcept {
  if (!failure_.empty()) {
    return;
  }
  failure_ = why.empty() ? std::string("failed") : std::string(why);
  if (wake_fd_ >= 0) {
    const std::uint64_t one = 1;
    (void)::write(wake_fd_, &one, sizeof one);  // an eventfd: never blocks, counts up to 2^64 - 2
  }
}

Error RdmaLink::closed_error() const {
  return {ErrorCode::kClosed,
          fmt::format("the RDMA link to participant {:016x} failed ({}): it is being torn down", peer_, failure_)};
}

Result<SendOutcome> RdmaLink::send_control(std::span<const std::byte> message) noexcept {
  if (message.empty() || message.size() > kControlSlotBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("an RDMA control message is 1 to {} bytes, not {}", kControlSlotBytes, message.size()));
  }
  const std::lock_guard lock(mutex_);
  if (!failure_.empty()) {
    return closed_error();
  }
  const auto slot = ring_.try_take_send_slot();
  if (!slot) {
    return SendOutcome::kSendQueueFull;
  }
  std::memcpy(slot->bytes.data(), message.data(), message.size());
  auto posted = ring_.post_send(qp_, budget_, slot->slot, message.size());
  if (!posted.ok() || posted.value() != SendOutcome::kPosted) {
    (void)ring_.send_completed(slot->slot);  // not posted: the slot is free again
  }
  if (!posted.ok()) {
    fail_locked(posted.error().message());
    return posted.error();
  }
  return posted.value();
}

void RdmaLink::record(std::uint64_t sequence, SentChunk& pinned) noexcept {
  // The ledger has a place for every work request of the send queue, and a
  // write that ibv_post_send took (even in part) had room in the budget.
  [[maybe_unused]] const bool recorded = ledger_.record(sequence, pinned);
  assert(recorded && "rdma link: more writes in flight than the send queue's depth");
}

Result<WriteOutcome> RdmaLink::post_write(const LinkWrite& write, SentChunk& pinned) noexcept {
  SentChunk refused;  // taken but never given to the card: unpinned at once, without the lock
  Result<WriteOutcome> outcome = WriteOutcome::kPosted;
  {
    const std::lock_guard lock(mutex_);
    if (!failure_.empty()) {
      outcome = closed_error();
      refused = std::exchange(pinned, SentChunk{});
    } else if (!registration_.contains(write.local, write.length)) {
      outcome =
          Error(ErrorCode::kInvalidArgument, "an RDMA write's local bytes are not in this node's registered pool");
      refused = std::exchange(pinned, SentChunk{});
    } else {
      const WriteWithImm request{.local_address = reinterpret_cast<std::uintptr_t>(write.local),
                                 .lkey = registration_.lkey(),
                                 .length = write.length,
                                 .remote_address = write.remote_address,
                                 .rkey = peer_rkey_,
                                 .immediate = write.immediate,
                                 .signalled = true,
                                 .tag = ledger_.next_tag()};
      const std::uint64_t would_be = budget_.sequence_after(write_chain_parts(write.length, own_max_message_bytes_));
      auto posted = post_write_with_imm(qp_, budget_, request, own_max_message_bytes_);
      if (!posted.ok()) {
        // Part of the chain may be posted: the card may read the chunk until the QP is gone.
        record(would_be, pinned);
        fail_locked(posted.error().message());
        outcome = posted.error();
      } else if (posted->outcome == WriteOutcome::kPosted) {
        record(posted->sequence, pinned);
      } else {
        outcome = posted->outcome;  // kSendQueueFull, kTooManyParts: the caller keeps the pin
      }
    }
  }
  if (!refused.empty()) {
    refused.port->unpin(refused.handle);
  }
  return outcome;
}

}  // namespace axon::rdma
