// Two LinkPorts connected in one process, for host tests of the streams
// (transports/rdma/link_port.hpp) without a device: a write is a memcpy from
// the local chunk into the granted chunk of the other node's pool (both pools
// are mapped by the test process, so the grant's address is valid here), a
// control message is a copy; pump() hands the other side what arrived, in
// order, and this side its send completions (which unpin the sent chunks),
// as a link on the RDMA thread would. Thread safety: post_write() and
// send_control() from any thread; pump(), up() and lose() from the test's
// "RDMA thread".
#pragma once

#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "transports/rdma/control_message.hpp"
#include "transports/rdma/link_port.hpp"
#include "transports/shm/chunk_area.hpp"

namespace axon::rdma::testing {

class LoopbackLink final : public LinkPort {
 public:
  /// The two ends: `a` connected (active), `b` accepted. Each end's grant
  /// table describes its own node's pool (`a_area`, `b_area`).
  static std::pair<std::unique_ptr<LoopbackLink>, std::unique_ptr<LoopbackLink>> make_pair(const shm::ChunkArea& a_area,
                                                                                           std::uint64_t a_id,
                                                                                           const shm::ChunkArea& b_area,
                                                                                           std::uint64_t b_id) {
    std::unique_ptr<LoopbackLink> a(new LoopbackLink(a_area, b_id, true));
    std::unique_ptr<LoopbackLink> b(new LoopbackLink(b_area, a_id, false));
    a->other_ = b.get();
    b->other_ = a.get();
    return {std::move(a), std::move(b)};
  }

  void set_handler(LinkHandler* handler) noexcept { handler_ = handler; }
  /// Both ends' handlers hear on_link_up().
  void up() {
    handler_->on_link_up(*this);
    other_->handler_->on_link_up(*other_);
  }
  /// Delivers what the other end sent and this end's send completions;
  /// returns how many events. A fail() ends the pump (the test calls lose()).
  std::size_t pump() {
    std::deque<Event> events;
    std::vector<SentChunk> done;
    {
      const std::lock_guard lock(inbox_mutex_);
      events.swap(inbox_);
    }
    std::size_t handled = pump_completions_only();
    for (Event& e : events) {
      if (!failed_.empty()) {
        break;
      }
      ++handled;
      if (e.is_write) {
        const ResolvedWrite write = grants_.resolve(e.immediate, e.byte_len);
        if (!write.accepted()) {
          fail(to_string(write.refusal));
          continue;
        }
        handler_->on_write(*this, write);
        continue;
      }
      ControlMessage message;
      const ControlError error = parse_control(e.bytes, other_->own_region(), message);
      if (error != ControlError::kOk) {
        fail("control message refused");
        continue;
      }
      handler_->on_control(*this, message);
    }
    return handled;
  }
  /// Ends the link on both sides: pins given back, then on_link_lost().
  void lose() {
    for (LoopbackLink* end : {this, other_}) {
      end->pump_completions_only();
      end->handler_->on_link_lost(*end);
    }
  }

  // Test knobs and what happened.
  void set_send_room(std::size_t writes) {
    const std::lock_guard lock(mutex_);
    send_room_ = writes;
  }
  /// Control messages send_control() takes before it says kSendQueueFull.
  void set_control_room(std::size_t messages) {
    const std::lock_guard lock(mutex_);
    control_room_ = messages;
  }
  [[nodiscard]] const std::string& failure() const noexcept { return failed_; }
  [[nodiscard]] std::size_t writes_posted() const {
    const std::lock_guard lock(mutex_);
    return writes_posted_;
  }
  [[nodiscard]] std::size_t controls_sent() const {
    const std::lock_guard lock(mutex_);
    return controls_sent_;
  }

  // LinkPort
  [[nodiscard]] std::uint64_t peer() const noexcept override { return peer_; }
  [[nodiscard]] bool active() const noexcept override { return active_; }
  [[nodiscard]] PeerRegion peer_region() const noexcept override { return other_->own_region(); }
  [[nodiscard]] Result<SendOutcome> send_control(std::span<const std::byte> message) noexcept override {
    const std::lock_guard lock(mutex_);
    if (control_room_ == 0) {
      return SendOutcome::kSendQueueFull;
    }
    --control_room_;
    Event e;
    e.bytes.assign(message.begin(), message.end());
    other_->push(std::move(e));
    ++controls_sent_;
    return SendOutcome::kPosted;
  }
  [[nodiscard]] Result<WriteOutcome> post_write(const LinkWrite& write, SentChunk& pinned) noexcept override {
    const std::lock_guard lock(mutex_);
    if (send_room_ == 0) {
      return WriteOutcome::kSendQueueFull;
    }
    --send_room_;
    std::memcpy(reinterpret_cast<void*>(write.remote_address), write.local, write.length);
    Event e;
    e.is_write = true;
    e.immediate = write.immediate;
    e.byte_len = write.length;
    other_->push(std::move(e));
    completed_.push_back(std::move(pinned));
    pinned = SentChunk{};
    ++writes_posted_;
    return WriteOutcome::kPosted;
  }
  [[nodiscard]] GrantTable& grants() noexcept override { return grants_; }
  [[nodiscard]] GrantedSlots& granted_slots() noexcept override { return slots_; }
  void fail(std::string_view why) noexcept override {
    if (failed_.empty()) {
      failed_ = std::string(why);
    }
  }

 private:
  struct Event {
    bool is_write = false;
    std::vector<std::byte> bytes;
    std::uint32_t immediate = 0;
    std::uint32_t byte_len = 0;
  };

  static GrantTable table_of(const shm::ChunkArea& area) {
    std::vector<GrantClass> classes;
    for (const shm::ChunkClassExtent& c : area.class_list()) {
      classes.push_back(GrantClass{.capacity_bytes = c.payload_capacity, .chunk_count = c.chunk_count});
    }
    return GrantTable::create(classes, std::uint32_t{1} << 30).value();
  }

  LoopbackLink(const shm::ChunkArea& area, std::uint64_t peer, bool active)
      : area_(area), peer_(peer), active_(active), grants_(table_of(area)), slots_(kLinkGrantBudget) {}

  [[nodiscard]] PeerRegion own_region() const noexcept {
    return PeerRegion{.base = reinterpret_cast<std::uintptr_t>(area_.base), .length = area_.bytes};
  }
  // A sender holds its own mutex_ and takes the receiver's inbox_mutex_,
  // which nothing holds while taking another lock.
  void push(Event e) {
    const std::lock_guard lock(inbox_mutex_);
    inbox_.push_back(std::move(e));
  }
  std::size_t pump_completions_only() {
    std::vector<SentChunk> done;
    {
      const std::lock_guard lock(mutex_);
      done.swap(completed_);
    }
    for (SentChunk& chunk : done) {
      chunk.port->unpin(chunk.handle);
    }
    return done.size();
  }

  shm::ChunkArea area_;
  std::uint64_t peer_;
  bool active_;
  GrantTable grants_;
  GrantedSlots slots_;
  LinkHandler* handler_ = nullptr;
  LoopbackLink* other_ = nullptr;
  mutable std::mutex mutex_;  // completed_, counters, send_room_, control_room_
  std::mutex inbox_mutex_;    // inbox_, taken last
  std::deque<Event> inbox_;
  std::vector<SentChunk> completed_;
  std::size_t send_room_ = static_cast<std::size_t>(-1);
  std::size_t control_room_ = static_cast<std::size_t>(-1);
  std::size_t writes_posted_ = 0;
  std::size_t controls_sent_ = 0;
  std::string failed_;
};

}  // namespace axon::rdma::testing
