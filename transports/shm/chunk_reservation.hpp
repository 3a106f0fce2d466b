// The chunks one publisher keeps for itself (PublisherQos::reserved_chunks):
// taken from its class's free list once, at advertise(), and never given
// back to it while the publisher lives, so no other topic of the node can
// take them. A layer on top of the chunk pool: the pool's free lists and the
// holder-bit ledger are unchanged (docs/design/shm-core.md, "Reserved chunks").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "axon/result.hpp"
#include "transports/shm/chunk_pool.hpp"

namespace axon::shm {

/// A reserved chunk keeps its publisher's loan bit (kLoanBit) from
/// reserve() to release_all(): while its subscribers hold it, the bit keeps
/// it out of the free list; when only the bit is left, take() hands it to the
/// next loan, as the reuse cache does with published chunks. Its header's
/// `cached` reads kReservedMark while parked and kReservedLoanedMark while
/// loaned (pool statistics count neither as free).
///
/// Thread safety: used by its publisher's thread only (loan, publish,
/// discard), like the port that owns it. take() and give_back() make no
/// system call, take no lock and do not allocate; take() scans at most
/// kMaxChunks entries.
class ChunkReservation {
 public:
  static constexpr std::uint32_t kMaxChunks = 64;
  /// ChunkHeader::cached of a reserved chunk, parked or loaned (statistics:
  /// a parked one whose mask is the loan bit alone is neither free nor in use).
  static constexpr std::uint32_t kReservedMark = 2;
  static constexpr std::uint32_t kReservedLoanedMark = 3;

  /// Takes `count` chunks of the smallest class that fits `payload_bytes`
  /// (that class only) and marks them as loaned by `block`. kNoSpace when
  /// the class has fewer free (nothing stays taken then); `topic` and `node`
  /// name them in the message.
  Result<void> reserve(ChunkPool& pool, std::size_t payload_bytes, std::uint32_t count, std::uint16_t block,
                       std::string_view topic, std::string_view node);

  /// A reserved chunk that is not loaned and that no subscriber holds any
  /// more (only the loan bit left), or nullptr. The oldest parked one first,
  /// so subscribers get the most time to let go.
  ChunkHeader* take() noexcept;

  /// When `chunk` is one of ours: parks it again (still with its loan bit and
  /// whatever subscribers hold) and returns true. Else false.
  bool give_back(ChunkHeader* chunk) noexcept;

  /// Drops the loan bit of every reserved chunk (the last holder frees each).
  /// Only when none is loaned (the port's destructor).
  void release_all(ChunkPool& pool) noexcept;

  [[nodiscard]] std::uint32_t count() const noexcept { return count_; }
  [[nodiscard]] std::uint32_t capacity_bytes() const noexcept { return capacity_bytes_; }
  [[nodiscard]] std::uint32_t size_class() const noexcept { return size_class_; }
  /// Whether a loan of `payload_bytes` may use the reservation.
  [[nodiscard]] bool serves(std::size_t payload_bytes) const noexcept {
    return count_ > 0 && payload_bytes <= capacity_bytes_;
  }
  /// Reserved chunks loaned or held by subscribers (explain_exhausted()).
  [[nodiscard]] std::uint32_t busy() const noexcept;

 private:
  std::array<ChunkHeader*, kMaxChunks> chunks_{};
  std::uint64_t parked_ = 0;  ///< Bit i: chunks_[i] is not loaned (subscribers may still hold it).
  std::uint32_t count_ = 0;
  std::uint32_t cursor_ = 0;  ///< Where take() looks first: after the one it took last.
  std::uint32_t capacity_bytes_ = 0;
  std::uint32_t size_class_ = 0;
};

}  // namespace axon::shm
