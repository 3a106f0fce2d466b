// The receiving side of one remote writer: its local mirror publisher (which
// hands messages to every subscriber of this host through shared memory),
// in-order delivery of a RELIABLE stream, and what is missing from it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "axon/transport.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/udp/nack_planner.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/send_context.hpp"

namespace axon::udp {

/// Thread safety: the participant thread only.
class RemoteWriter {
 public:
  /// Completed messages a RELIABLE stream holds back while an older one is missing.
  static constexpr std::uint64_t kWindow = 64;
  /// RELIABLE: an ACK goes out at most this often per stream when the
  /// stream moved on since the last one; at once when a heartbeat asked.
  static constexpr std::int64_t kAckIntervalNs = 1'000'000;

  RemoteWriter(std::shared_ptr<shm::ShmPublisherPort> mirror, std::uint64_t sender_id, std::uint32_t writer_id,
               std::uint64_t topic_id, NetworkCounterCells& counters) noexcept;
  ~RemoteWriter();
  RemoteWriter(const RemoteWriter&) = delete;
  RemoteWriter& operator=(const RemoteWriter&) = delete;

  /// Whether a new message `sequence` should be assembled at all (not a
  /// duplicate, not stale, fits the reorder window).
  [[nodiscard]] bool wants(std::uint64_t sequence) const noexcept;
  /// A loan for a new message from the mirror's pool.
  LoanResult<LoanedChunk> loan(std::size_t bytes) noexcept { return mirror_->loan(bytes); }
  void discard(const LoanedChunk& chunk) noexcept { mirror_->discard(chunk); }
  /// A complete message: delivered now, or held until the older ones came.
  void complete(std::uint64_t sequence, const LoanedChunk& chunk, std::uint32_t bytes) noexcept;

  /// A heartbeat: the writer holds [first, last] for resends.
  void on_heartbeat(std::uint64_t first, std::uint64_t last, bool reliable, std::int64_t now_ns) noexcept;
  /// A GAP: [first, end) will never come.
  void on_gap(std::uint64_t first, std::uint64_t end) noexcept;
  /// A DATA fragment of `sequence` arrived.
  void on_data(std::uint64_t sequence, bool reliable, std::int64_t now_ns) noexcept;

  /// RELIABLE: the sequences a NACK should ask for, [expected, newest known],
  /// except those held; calls `missing(sequence)` for each (at most `limit`).
  template <class F>
  void for_each_missing(std::size_t limit, F&& missing) const {
    if (!reliable_ || !synced_) {
      return;
    }
    const std::uint64_t newest = std::max(newest_seen_, newest_announced_);
    for (std::uint64_t s = expected_; s <= newest && limit > 0; ++s) {
      if (!held_[s % kWindow].valid || held_[s % kWindow].sequence != s) {
        missing(s, s < newest_seen_);
        --limit;
      }
    }
  }

  /// RELIABLE: whether an ACK of everything before expected() is owed
  /// (the stream moved on since the last one, or a heartbeat asked) ...
  [[nodiscard]] bool ack_pending() const noexcept {
    return reliable_ && synced_ && (expected_ != acked_ || ack_asked_);
  }
  /// ... and may go out at `now_ns` (at once when a heartbeat asked: its
  /// writer may wait for room in its window).
  [[nodiscard]] bool ack_due(std::int64_t now_ns) const noexcept {
    return ack_pending() && (ack_asked_ || now_ns - last_ack_ns_ >= kAckIntervalNs);
  }
  /// An ACK of everything before expected() went out at `now_ns`.
  void acked(std::int64_t now_ns) noexcept {
    acked_ = expected_;
    ack_asked_ = false;
    last_ack_ns_ = now_ns;
  }

  [[nodiscard]] bool reliable() const noexcept { return reliable_; }
  /// RELIABLE: the next sequence to deliver.
  [[nodiscard]] std::uint64_t expected() const noexcept { return expected_; }
  [[nodiscard]] std::uint64_t topic_id() const noexcept { return topic_id_; }
  [[nodiscard]] std::uint64_t sender_id() const noexcept { return sender_id_; }
  [[nodiscard]] std::uint32_t writer_id() const noexcept { return writer_id_; }
  [[nodiscard]] std::int64_t last_heard_ns() const noexcept { return last_heard_ns_; }
  [[nodiscard]] std::int64_t last_data_ns() const noexcept { return last_data_ns_; }
  NackHistory nacks;  ///< What the receiver's NACKs asked for (nack_planner.hpp).

 private:
  struct Held {
    bool valid = false;
    std::uint64_t sequence = 0;
    LoanedChunk chunk;
    std::uint32_t bytes = 0;
  };

  void deliver(const LoanedChunk& chunk, std::uint32_t bytes) noexcept;
  /// Delivers held messages from expected_ on, in order.
  void flush() noexcept;
  /// Gives back held messages older than expected_.
  void drop_held_before_expected() noexcept;

  std::shared_ptr<shm::ShmPublisherPort> mirror_;
  std::uint64_t sender_id_;
  std::uint32_t writer_id_;
  std::uint64_t topic_id_;
  NetworkCounterCells& counters_;
  bool reliable_ = false;
  bool synced_ = false;               ///< RELIABLE: a heartbeat said where the stream starts.
  std::uint64_t expected_ = 1;        ///< RELIABLE: next sequence to deliver.
  std::uint64_t last_delivered_ = 0;  ///< BEST_EFFORT: newest delivered.
  std::uint64_t newest_seen_ = 0;
  std::uint64_t newest_announced_ = 0;
  std::int64_t last_heard_ns_ = 0;
  std::int64_t last_data_ns_ = 0;
  std::uint64_t acked_ = 0;  ///< RELIABLE: expected_ as the last ACK said.
  std::int64_t last_ack_ns_ = 0;
  bool ack_asked_ = false;  ///< A heartbeat came since the last ACK.
  std::array<Held, kWindow> held_{};
};

}  // namespace axon::udp
