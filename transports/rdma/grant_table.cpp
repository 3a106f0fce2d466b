#include "transports/rdma/grant_table.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "transports/rdma/immediate.hpp"
#include "transports/rdma/write_chain.hpp"

namespace axon::rdma {

std::string_view to_string(WriteRefusal refusal) noexcept {
  switch (refusal) {
    case WriteRefusal::kNone: return "rdma write: accepted";
    case WriteRefusal::kNoSuchClass: return "rdma write: the immediate names a size class the pool does not have";
    case WriteRefusal::kClassNotReceivable:
      return "rdma write: the immediate names a size class of 256 MiB or more, which is never granted";
    case WriteRefusal::kLengthAboveCapacity:
      return "rdma write: the immediate's length exceeds its class's payload capacity";
    case WriteRefusal::kSlotNotGranted: return "rdma write: the immediate names a grant slot that is not granted";
    case WriteRefusal::kSlotAlreadyWritten:
      return "rdma write: a second write into a grant slot before its chunk was delivered";
    case WriteRefusal::kChainTooLong:
      return "rdma write: the immediate's length needs more writes than a chain may have at the peer's port "
             "max_msg_sz";
    case WriteRefusal::kByteLenMismatch:
      return "rdma write: the completion's byte_len differs from the length of the last write of the "
             "immediate's message";
    case WriteRefusal::kCount: break;
  }
  return "rdma write: unknown refusal";
}

Result<GrantTable> GrantTable::create(std::span<const GrantClass> classes, std::uint32_t peer_max_message_bytes) {
  if (peer_max_message_bytes == 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "rdma grant table: the peer's port has a largest message (max_msg_sz) of 0 bytes");
  }
  if (classes.size() > shm::kMaxSizeClasses) {
    return Error(ErrorCode::kInvalidArgument, "rdma grant table: the pool has " + std::to_string(classes.size()) +
                                                  " chunk classes, at most " + std::to_string(shm::kMaxSizeClasses) +
                                                  " are possible");
  }
  GrantTable table;
  table.class_count_ = static_cast<std::uint32_t>(classes.size());
  table.peer_max_message_bytes_ = peer_max_message_bytes;
  std::uint64_t total = 0;
  for (std::uint32_t c = 0; c < table.class_count_; ++c) {
    const GrantClass& given = classes[c];
    if (given.capacity_bytes == 0) {
      return Error(ErrorCode::kInvalidArgument,
                   "rdma grant table: chunk class " + std::to_string(c) + " has a payload capacity of 0 bytes");
    }
    ClassSlots& cls = table.classes_[c];
    cls.capacity_bytes = given.capacity_bytes;
    const auto split = immediate_split(given.capacity_bytes);
    cls.length_bits = split ? split->length_bits : 0;
    cls.slot_count = std::min(max_grant_slots(given.capacity_bytes), given.chunk_count);
    cls.first = static_cast<std::uint32_t>(total);
    cls.free_count = cls.slot_count;
    total += cls.slot_count;
    if (total > std::numeric_limits<std::uint32_t>::max()) {
      return Error(ErrorCode::kInvalidArgument,
                   "rdma grant table: the pool's chunk classes have more than 2^32 "
                   "grant slots in all; make nodes[].pool.chunk_classes smaller");
    }
  }
  table.entries_.resize(total);
  table.free_.resize(total);
  for (std::uint32_t c = 0; c < table.class_count_; ++c) {
    const ClassSlots& cls = table.classes_[c];
    for (std::uint32_t slot = 0; slot < cls.slot_count; ++slot) {
      table.free_[cls.first + slot] = slot;
    }
  }
  return table;
}

std::uint32_t GrantTable::slots(std::uint32_t size_class) const noexcept {
  return size_class < class_count_ ? classes_[size_class].slot_count : 0;
}

std::uint32_t GrantTable::outstanding(std::uint32_t size_class) const noexcept {
  if (size_class >= class_count_) {
    return 0;
  }
  const ClassSlots& cls = classes_[size_class];
  return cls.slot_count - cls.free_count;
}

GrantResult GrantTable::grant(std::uint32_t size_class, std::uint32_t chunk_index, std::uint32_t stream_id) noexcept {
  if (stream_id == 0) {
    return {.status = GrantStatus::kZeroStreamId};
  }
  if (size_class >= class_count_ || classes_[size_class].slot_count == 0) {
    return {.status = GrantStatus::kClassNotGrantable};
  }
  ClassSlots& cls = classes_[size_class];
  if (cls.free_count == 0) {
    return {.status = GrantStatus::kFull};
  }
  const std::uint32_t slot = free_[cls.first + cls.free_head];
  cls.free_head = cls.free_head + 1 == cls.slot_count ? 0 : cls.free_head + 1;
  --cls.free_count;
  entries_[cls.first + slot] = Entry{.chunk_index = chunk_index, .stream_id = stream_id, .state = SlotState::kGranted};
  return {.status = GrantStatus::kGranted, .slot = slot};
}

ResolvedWrite GrantTable::resolve(std::uint32_t immediate, std::uint32_t byte_len) noexcept {
  // Each field is checked before it is used as an index or a size.
  const std::uint32_t size_class = immediate >> kSlotAndLengthBits;
  if (size_class >= class_count_) {
    return {.refusal = WriteRefusal::kNoSuchClass};
  }
  const ClassSlots& cls = classes_[size_class];
  if (!immediate_split(cls.capacity_bytes)) {
    return {.refusal = WriteRefusal::kClassNotReceivable};
  }
  const std::uint32_t rest = immediate & ((std::uint32_t{1} << kSlotAndLengthBits) - 1);
  const std::uint32_t length = rest & ((std::uint32_t{1} << cls.length_bits) - 1);
  const std::uint32_t slot = rest >> cls.length_bits;
  if (length > cls.capacity_bytes) {
    return {.refusal = WriteRefusal::kLengthAboveCapacity};
  }
  if (slot >= cls.slot_count) {
    return {.refusal = WriteRefusal::kSlotNotGranted};
  }
  Entry& e = entries_[cls.first + slot];
  if (e.state == SlotState::kFree) {
    return {.refusal = WriteRefusal::kSlotNotGranted};
  }
  if (e.state == SlotState::kWritten) {
    return {.refusal = WriteRefusal::kSlotAlreadyWritten};
  }
  // Above the peer's max_msg_sz the message came as a chain of writes, and
  // the completion reports only the last (the WRITE_WITH_IMM).
  if (write_chain_parts(length, peer_max_message_bytes_) == 0) {
    return {.refusal = WriteRefusal::kChainTooLong};
  }
  if (byte_len != write_chain_tail_bytes(length, peer_max_message_bytes_)) {
    return {.refusal = WriteRefusal::kByteLenMismatch};
  }
  e.state = SlotState::kWritten;
  return {.refusal = WriteRefusal::kNone,
          .size_class = size_class,
          .slot = slot,
          .chunk_index = e.chunk_index,
          .stream_id = e.stream_id,
          .length = length};
}

bool GrantTable::release(GrantRef ref) noexcept {
  if (ref.size_class >= class_count_ || ref.slot >= classes_[ref.size_class].slot_count) {
    return false;
  }
  ClassSlots& cls = classes_[ref.size_class];
  Entry& e = entries_[cls.first + ref.slot];
  if (e.state != SlotState::kWritten) {
    return false;
  }
  e = Entry{};
  push_free(cls, ref.slot);
  return true;
}

void GrantTable::push_free(ClassSlots& cls, std::uint32_t slot) noexcept {
  // free_count < slot_count here: the slot was out, so the ring has room.
  std::uint32_t tail = cls.free_head + cls.free_count;
  if (tail >= cls.slot_count) {
    tail -= cls.slot_count;
  }
  free_[cls.first + tail] = slot;
  ++cls.free_count;
}

}  // namespace axon::rdma
