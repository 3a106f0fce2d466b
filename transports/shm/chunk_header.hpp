// The header in front of every chunk's payload, in shared memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "transports/shm/holder_bits.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

/// Bit 63 of `ChunkHeader::holders`: the publisher still holds the chunk (loaned
/// or in the middle of publish). Bits 0..60: connection c of the publisher's
/// block holds it (queued in that connection's ring or taken as a sample);
/// bits 61 and 62 below.
inline constexpr std::uint64_t kLoanBit = std::uint64_t{1} << 63;
/// Held while the chunk is in its publisher's transient-local history.
inline constexpr std::uint64_t kHistoryBit = std::uint64_t{1} << 62;
/// Held while a network writer may still resend the chunk (publish_pinned()).
inline constexpr std::uint64_t kNetworkBit = std::uint64_t{1} << 61;

/// One cache line. The holder mask is the ledger of who holds the chunk: a
/// holder gives the chunk back by clearing its own bit, which is idempotent,
/// so a survivor can clear the bits of a dead subscriber without ever freeing
/// a chunk twice; whoever clears the last bit returns the chunk to its free
/// list (exactly one thread can see the mask go from its own bit to zero).
///
/// The wide ledger (connections 61..188 of a publisher with more than 61
/// subscribers) is two more words on the same line, `wide`, and a count,
/// `wide_holders`: 0 while the chunk has no wide holder in this life (word 0
/// alone decides, as above), else the number of bits set in `wide` plus one
/// for word 0 while word 0 is not zero. A wide holder clears its bit (still
/// naming who holds what, so a dead subscriber's bit is reclaimed exactly)
/// and, when it did clear it, decrements the count; whoever turns word 0 to
/// zero decrements it once for word 0; whoever brings the count to zero frees
/// the chunk. The count only rises from zero while the chunk is the
/// publisher's alone (publish()) or while its history bit keeps word 0 set
/// (a late joiner's adoption, by the publisher's thread), so it never rises
/// from zero while someone may be freeing.
///
/// Only what someone reads is here. What a subscriber needs of a message
/// (size, offset, sequence, publish time) travels in its RingEntry, and the
/// publisher's identity in the subscriber's link, so the data path never
/// reads this line for them. The publish time stays for the pool inspector
/// of issue 17 (`axon pool`: the age of the oldest held chunk, next to
/// `holders` and `publisher_block` for who holds it and who published it).
struct alignas(kCacheLine) ChunkHeader {
  std::atomic<std::uint64_t> holders{0};
  /// CLOCK_MONOTONIC at the last publish of the chunk. Written by its
  /// publisher (relaxed: a tool reads it from another process, racing a
  /// republish, and takes it as an estimate); not read on the data path.
  std::atomic<std::int64_t> publish_time_ns{0};
  std::uint32_t capacity_bytes = 0;  ///< Payload capacity of the chunk's class.
  std::uint32_t chunk_index = 0;     ///< Index over all chunks of the pool.
  std::uint16_t size_class = 0;
  /// Block of the publisher that loaned it. Atomic because a reclaimer may
  /// read it while another publisher loans the chunk (see reclaim_connection).
  std::atomic<std::uint16_t> publisher_block{0};
  std::atomic<std::uint32_t> next_free{0};  ///< Free-list link while free.
  /// 1 while the chunk sits in its publisher's reuse cache (statistics only:
  /// such a chunk is as good as free once only the loan bit is left).
  std::atomic<std::uint32_t> cached{0};
  /// The wide ledger's count (see above). Raised by the publisher's thread
  /// only, lowered by any holder (acq_rel, like the bits).
  std::atomic<std::uint32_t> wide_holders{0};
  /// Connections 61..124 (wide[0]) and 125..188 (wide[1]).
  std::atomic<std::uint64_t> wide[kHolderWords - 1] = {};

  /// Word `w` of the ledger (0: `holders`); w < kHolderWords.
  [[nodiscard]] std::atomic<std::uint64_t>& holder_word(std::uint32_t w) noexcept {
    return w == 0 ? holders : wide[w - 1];
  }
  [[nodiscard]] const std::atomic<std::uint64_t>& holder_word(std::uint32_t w) const noexcept {
    return w == 0 ? holders : wide[w - 1];
  }
};

static_assert(sizeof(ChunkHeader) == kCacheLine, "a chunk header is one cache line");
static_assert(offsetof(ChunkHeader, publish_time_ns) == 8, "tools read the publish time at this offset");
static_assert(offsetof(ChunkHeader, wide) + sizeof(ChunkHeader::wide) <= kCacheLine,
              "the wide ledger shares the holder mask's line: a holder touches one line");
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "a lock-free publish time, readable across processes");
static_assert(std::is_standard_layout_v<ChunkHeader>, "shared-memory layout must be standard");
static_assert(std::is_trivially_destructible_v<ChunkHeader>, "nothing to destroy in shared memory");

}  // namespace axon::shm
