// The receive side's table of the chunks one queue pair's peer may write
// into (docs/design/rdma-transport.md, "The immediate value", "Streams and
// credits"). The receiver grants a chunk (loaned by a stream's mirror) in a
// slot of its class; the peer's WRITE WITH IMMEDIATE names that slot
// ([class : 4][slot : 28 - L][length : L], immediate.hpp); the table turns the
// immediate back into the chunk and its stream, after checking every field,
// because the immediate comes from another host.
//
// A slot is free, granted (the peer may write it), or written (resolve()
// accepted a write into it: the caller now delivers the chunk, then calls
// release()). Per class the table has min(max_grant_slots(capacity), chunks
// of the class) slots, fixed at construction; free slots are handed out
// oldest-freed first, so a slot number is reused as late as possible.
//
// Thread safety: none. One queue pair's table is used by one thread, the
// participant's RDMA thread (it grants, polls the receive completions and
// handles the faults). create() allocates; nothing else allocates, locks or
// makes a system call.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "axon/result.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::rdma {

/// One chunk class of the receiving pool, as the table needs it.
struct GrantClass {
  std::uint32_t capacity_bytes = 0;  ///< The class's payload capacity.
  std::uint32_t chunk_count = 0;     ///< Chunks of the class in the pool.
};

/// Names one slot of one class.
struct GrantRef {
  std::uint32_t size_class = 0;
  std::uint32_t slot = 0;
  friend bool operator==(const GrantRef&, const GrantRef&) = default;
};

enum class GrantStatus : std::uint8_t {
  kGranted = 0,        ///< `slot` is the chunk's slot, granted now.
  kFull,               ///< Every slot of the class is out (an outcome: grant later).
  kClassNotGrantable,  ///< No such class, or it has no slot (256 MiB or more, or no chunks).
  kZeroStreamId,       ///< Stream ids are never 0 (the caller's mistake).
};

struct GrantResult {
  GrantStatus status = GrantStatus::kFull;
  std::uint32_t slot = 0;
};

/// Why a write's immediate was refused; each is a broken peer (count it,
/// tear the queue pair down). Refusals change nothing in the table.
enum class WriteRefusal : std::uint8_t {
  kNone = 0,
  kNoSuchClass,          ///< Class number >= the pool's class count.
  kClassNotReceivable,   ///< A class of 256 MiB or more: no slot bits.
  kLengthAboveCapacity,  ///< The immediate's length exceeds the class's capacity.
  kSlotNotGranted,       ///< The slot is not granted now (beyond the class's slots, or free).
  kSlotAlreadyWritten,   ///< A second write into a slot not yet released.
  kChainTooLong,         ///< The length needs more writes than a chain has at the peer's max_msg_sz.
  kByteLenMismatch,      ///< The completion's byte_len is not the chain's last part (write_chain_tail_bytes()).
  kCount,
};

/// "rdma write: the immediate names a slot that is not granted" (static text).
[[nodiscard]] std::string_view to_string(WriteRefusal refusal) noexcept;

/// What resolve() found: the chunk a write filled, or why it was refused.
struct ResolvedWrite {
  WriteRefusal refusal = WriteRefusal::kNone;
  std::uint32_t size_class = 0;
  std::uint32_t slot = 0;
  std::uint32_t chunk_index = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t length = 0;
  [[nodiscard]] bool accepted() const noexcept { return refusal == WriteRefusal::kNone; }
};

/// A granted, unwritten chunk given back by a reclaim.
struct ReclaimedChunk {
  std::uint32_t size_class = 0;
  std::uint32_t slot = 0;
  std::uint32_t chunk_index = 0;
  std::uint32_t stream_id = 0;
};

class GrantTable {
 public:
  /// A table for a pool of `classes` (at most kMaxSizeClasses, each with a
  /// nonzero capacity), written by a peer whose port's largest message is
  /// `peer_max_message_bytes` (nonzero; its connect private data's
  /// max_msg_sz). Allocates one entry and one free-list word per slot.
  [[nodiscard]] static Result<GrantTable> create(std::span<const GrantClass> classes,
                                                 std::uint32_t peer_max_message_bytes);

  [[nodiscard]] std::uint32_t class_count() const noexcept { return class_count_; }
  /// Slots of `size_class` (0 for a class that is not grantable).
  [[nodiscard]] std::uint32_t slots(std::uint32_t size_class) const noexcept;
  /// Slots of `size_class` granted or written now.
  [[nodiscard]] std::uint32_t outstanding(std::uint32_t size_class) const noexcept;

  /// Grants the pool's chunk `chunk_index` (stored, not interpreted: the
  /// caller's ChunkHeader::chunk_index) of `size_class` to `stream_id`.
  [[nodiscard]] GrantResult grant(std::uint32_t size_class, std::uint32_t chunk_index,
                                  std::uint32_t stream_id) noexcept;

  /// Checks a receive completion's immediate and byte_len, both from the peer,
  /// before any of it is used. byte_len is the last write's of the message's
  /// chain at the peer's max_msg_sz (write_chain_tail_bytes()), the whole
  /// length only when the message is one write. Accepted: the slot becomes written and the
  /// caller owns delivering its chunk, then release(). Refused: nothing
  /// changes (a granted slot stays granted, so a reclaim gives its chunk back).
  [[nodiscard]] ResolvedWrite resolve(std::uint32_t immediate, std::uint32_t byte_len) noexcept;

  /// Frees a written slot after its chunk was delivered (or discarded); false
  /// when `ref` is not written (the caller's mistake; nothing changes).
  bool release(GrantRef ref) noexcept;

  /// Gives back every granted, unwritten chunk of `stream_id` (the stream was
  /// closed) once each through `on_chunk(const ReclaimedChunk&)` and frees
  /// its slot; written slots stay the caller's (it releases them). Returns
  /// how many. A scan of every slot: for closes and faults, not the data path.
  template <class OnChunk>
  std::uint32_t reclaim_stream(std::uint32_t stream_id, OnChunk&& on_chunk) noexcept {
    return reclaim_if([stream_id](const Entry& e) { return e.stream_id == stream_id; }, on_chunk);
  }

  /// Every granted, unwritten chunk of every stream (a fault: the queue pair
  /// is in the error state, so no more writes land), as reclaim_stream().
  template <class OnChunk>
  std::uint32_t reclaim_all(OnChunk&& on_chunk) noexcept {
    return reclaim_if([](const Entry&) { return true; }, on_chunk);
  }

 private:
  enum class SlotState : std::uint8_t { kFree, kGranted, kWritten };
  struct Entry {
    std::uint32_t chunk_index = 0;
    std::uint32_t stream_id = 0;
    SlotState state = SlotState::kFree;
  };
  /// One class: its slots are entries_[first, first + slot_count), its free
  /// slot numbers a ring in free_[first, first + slot_count).
  struct ClassSlots {
    std::uint32_t capacity_bytes = 0;
    std::uint32_t length_bits = 0;
    std::uint32_t slot_count = 0;
    std::uint32_t first = 0;
    std::uint32_t free_head = 0;
    std::uint32_t free_count = 0;
  };

  GrantTable() = default;
  void push_free(ClassSlots& cls, std::uint32_t slot) noexcept;

  template <class Match, class OnChunk>
  std::uint32_t reclaim_if(Match match, OnChunk& on_chunk) noexcept {
    std::uint32_t reclaimed = 0;
    for (std::uint32_t c = 0; c < class_count_; ++c) {
      ClassSlots& cls = classes_[c];
      for (std::uint32_t slot = 0; slot < cls.slot_count; ++slot) {
        Entry& e = entries_[cls.first + slot];
        if (e.state != SlotState::kGranted || !match(e)) {
          continue;
        }
        on_chunk(ReclaimedChunk{.size_class = c, .slot = slot, .chunk_index = e.chunk_index, .stream_id = e.stream_id});
        e = Entry{};
        push_free(cls, slot);
        ++reclaimed;
      }
    }
    return reclaimed;
  }

  std::array<ClassSlots, shm::kMaxSizeClasses> classes_{};
  std::uint32_t class_count_ = 0;
  std::uint32_t peer_max_message_bytes_ = 0;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_;
};

}  // namespace axon::rdma
