#include "transports/shm/chunk_reservation.hpp"

#include <fmt/format.h>

namespace axon::shm {

Result<void> ChunkReservation::reserve(ChunkPool& pool, std::size_t payload_bytes, std::uint32_t count,
                                       std::uint16_t block, std::string_view topic, std::string_view node) {
  if (count > kMaxChunks) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("topic '{}': PublisherQos::reserved_chunks is {}; a publisher reserves at most {} "
                             "chunks (reserved_chunks in the config)",
                             topic, count, kMaxChunks));
  }
  const std::uint32_t cls = pool.class_for(payload_bytes);
  if (cls == pool.class_count()) {
    return Error(ErrorCode::kPayloadTooLarge,
                 fmt::format("topic '{}': cannot reserve chunks for {} B messages, the largest chunk class of node "
                             "'{}' holds {} B; add a larger class to NodeOptions::chunk_classes",
                             topic, payload_bytes, node, pool.largest_payload()));
  }
  const ChunkFallback own_class_only{.max_classes = 0, .max_ratio = 0};
  for (std::uint32_t i = 0; i < count; ++i) {
    ChunkHeader* chunk = pool.allocate(payload_bytes, own_class_only);
    if (chunk == nullptr) {
      const std::uint32_t got = count_;
      release_all(pool);
      const SizeClass& sc = pool.size_class(cls);
      return Error(ErrorCode::kNoSpace,
                   fmt::format("topic '{}': cannot reserve {} chunks of the {} B class of node '{}': only {} of its "
                               "{} are free (node->pool_stats() says which topics hold them); lower "
                               "reserved_chunks or add chunks to that class (NodeOptions::chunk_classes, "
                               "pool.chunk_classes)",
                               topic, count, sc.payload_capacity, node, got, sc.chunk_count));
    }
    // Relaxed: the chunk is ours alone until published through a ring (release).
    chunk->publisher_block.store(block, std::memory_order_relaxed);
    chunk->cached.store(kReservedMark, std::memory_order_relaxed);  // statistics only
    chunks_[count_] = chunk;
    parked_ |= std::uint64_t{1} << count_;
    ++count_;
  }
  size_class_ = cls;
  capacity_bytes_ = pool.size_class(cls).payload_capacity;
  return {};
}

ChunkHeader* ChunkReservation::take() noexcept {
  for (std::uint32_t k = 0; k < count_; ++k) {
    const std::uint32_t i = (cursor_ + k) % count_;
    if ((parked_ & (std::uint64_t{1} << i)) == 0) {
      continue;
    }
    // Acquire pairs with each subscriber's release when it cleared its bit:
    // their reads of the old message are done before we write a new one.
    if (!ChunkPool::only_loan_left(chunks_[i])) {
      continue;
    }
    parked_ &= ~(std::uint64_t{1} << i);
    cursor_ = (i + 1) % count_;
    chunks_[i]->cached.store(kReservedLoanedMark, std::memory_order_relaxed);  // statistics only
    return chunks_[i];
  }
  return nullptr;
}

bool ChunkReservation::give_back(ChunkHeader* chunk) noexcept {
  if (count_ == 0 || chunk->cached.load(std::memory_order_relaxed) < kReservedMark) {
    return false;
  }
  // The mark is in shared memory (another process could have written it):
  // only our own list decides.
  for (std::uint32_t i = 0; i < count_; ++i) {
    if (chunks_[i] == chunk) {
      parked_ |= std::uint64_t{1} << i;
      chunks_[i]->cached.store(kReservedMark, std::memory_order_relaxed);  // statistics only
      return true;
    }
  }
  return false;
}

void ChunkReservation::release_all(ChunkPool& pool) noexcept {
  for (std::uint32_t i = 0; i < count_; ++i) {
    chunks_[i]->cached.store(0, std::memory_order_relaxed);  // statistics only
    pool.drop_holders(chunks_[i], kLoanBit);                 // the last holder frees it
    chunks_[i] = nullptr;
  }
  count_ = 0;
  parked_ = 0;
  cursor_ = 0;
}

std::uint32_t ChunkReservation::busy() const noexcept {
  std::uint32_t busy = 0;
  for (std::uint32_t i = 0; i < count_; ++i) {
    const bool parked = (parked_ & (std::uint64_t{1} << i)) != 0;
    // Acquire: a snapshot for a message, seeing the subscribers' releases.
    busy += !parked || !ChunkPool::only_loan_left(chunks_[i]) ? 1 : 0;
  }
  return busy;
}

}  // namespace axon::shm
