// The network side of one publisher: sends each message once per remote host
// that subscribes, keeps a bounded history of pinned chunks for RELIABLE
// streams, answers NACKs with resends or GAPs, and sends heartbeats.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "axon/transport.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/udp/send_context.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

/// A remote host's receiver of the writer's topic.
struct WriterDestination {
  std::uint64_t participant = 0;  ///< Its sender id.
  std::string host;
  Endpoint to;
  bool reliable = false;
  std::uint32_t subscribers = 0;
  std::uint64_t first_sequence = 0;  ///< First message it gets (set by the writer when it is added).
};

/// Thread safety: publish(), loan() and discard() from the publishing thread;
/// set_destinations(), on_nack() and send_heartbeats() from the participant
/// thread. A mutex orders the two: it is held for a network publish (which
/// makes system calls anyway) and never by a publish without destinations.
class UdpWriter {
 public:
  UdpWriter(SendContext context, std::shared_ptr<shm::ShmPublisherPort> local, std::uint64_t topic_id,
            std::uint32_t writer_id, std::uint32_t history_depth);
  ~UdpWriter();
  UdpWriter(const UdpWriter&) = delete;
  UdpWriter& operator=(const UdpWriter&) = delete;

  LoanResult<LoanedChunk> loan(std::size_t payload_bytes) noexcept;
  PublishResult publish(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset) noexcept;

  /// Replaces the destinations; new ones get a heartbeat at once (it tells
  /// them where their stream starts).
  void set_destinations(std::vector<WriterDestination> destinations);
  [[nodiscard]] std::vector<WriterDestination> destinations() const;
  void on_nack(const Nack& nack, Endpoint from) noexcept;
  void send_heartbeats() noexcept;

  [[nodiscard]] std::uint64_t topic_id() const noexcept { return topic_id_; }
  [[nodiscard]] std::uint32_t writer_id() const noexcept { return writer_id_; }

 private:
  struct Kept {
    std::uint64_t sequence = 0;
    void* handle = nullptr;
    std::span<const std::byte> payload;
  };

  /// Sends fragments [first, end) of `message` to `to`; the caller holds mutex_.
  void send_fragments(std::uint64_t sequence, std::span<const std::byte> message, std::uint32_t first,
                      std::uint32_t end, std::span<const WriterDestination* const> to) noexcept;
  void send_heartbeat(const WriterDestination& destination) noexcept;
  [[nodiscard]] const Kept* find_kept(std::uint64_t sequence) const noexcept;
  [[nodiscard]] std::uint64_t oldest_kept() const noexcept;
  void drop_oldest_kept() noexcept;

  SendContext context_;
  std::shared_ptr<shm::ShmPublisherPort> local_;
  std::uint64_t topic_id_;
  std::uint32_t writer_id_;

  mutable std::mutex mutex_;
  std::vector<WriterDestination> destinations_;  ///< Guarded by mutex_.
  /// Relaxed: publish() skips the mutex when there is no destination; a
  /// destination added meanwhile starts with the next message anyway.
  std::atomic<bool> has_destinations_{false};
  std::uint64_t sequence_ = 0;    ///< Last sequence sent on the network; guarded by mutex_.
  std::vector<Kept> history_;     ///< Ring, capacity history_depth; guarded by mutex_.
  std::size_t history_head_ = 0;  ///< Oldest entry.
  std::size_t history_count_ = 0;
  // Scratch for one batch of headers (two variants: best effort, reliable)
  // and its datagrams; guarded by mutex_.
  static constexpr std::size_t kBatch = UdpSocket::kMaxBatch;
  std::array<std::array<std::byte, kDataHeaderBytes>, 2 * kBatch> headers_{};
  std::vector<OutgoingDatagram> outgoing_;
};

}  // namespace axon::udp
