#include "transports/shm/mapped_pool.hpp"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <new>

#include "transports/shm/abi_hash.hpp"
#include "transports/shm/memory_options.hpp"

namespace axon::shm {
namespace {

/// Pools owned by nodes of this process, so that another node of the same
/// process uses the owner's mapping instead of mapping the memfd again (one
/// address per chunk keeps ThreadSanitizer's view exact and saves a mapping).
struct LocalPools {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<MappedPool>> pools;

  static LocalPools& instance() {
    static LocalPools local;
    return local;
  }
  static std::string key(const ShmConfig& config, std::uint64_t incarnation, std::uint32_t slot,
                         std::uint32_t generation) {
    return fmt::format("{}/{}/{:x}/{}/{}", config.shm_dir, config.domain_id, incarnation, slot, generation);
  }
};

}  // namespace

Result<std::shared_ptr<MappedPool>> create_own_pool(const ShmConfig& config, SlotRef self, std::uint64_t incarnation) {
  auto chunk_bytes = ChunkPool::bytes_needed(config.chunk_classes);
  if (!chunk_bytes) {
    return chunk_bytes.error();
  }
  if (config.publisher_blocks < 1 || config.publisher_blocks > kMaxPublishersPerNode) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("node '{}': pool.publishers is {}, allowed 1..{} (publishers the node may have at "
                             "once, {} bytes of shared memory each): set pool.publishers (or "
                             "NodeOptions::pool_publishers) within range",
                             config.node_name, config.publisher_blocks, kMaxPublishersPerNode, sizeof(PublisherBlock)));
  }
  if (!PoolLayout::counts_in_range(config.publisher_blocks, config.connections, config.queue_slots)) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("node '{}': pool.connections is {} (1..{}) and pool.queue_slots {} (1..{}): set them "
                             "within range",
                             config.node_name, config.connections, kMaxConnectionsPerNode, config.queue_slots,
                             kMaxQueueSlotsPerNode));
  }
  const PoolLayout layout = PoolLayout::of(config.publisher_blocks, config.connections, config.queue_slots);
  std::size_t bytes = layout.segment_bytes(*chunk_bytes);
  if (config.huge_pages) {
    bytes = round_up_to_huge_pages(bytes);
  }
  auto mapping = create_memfd_segment(fmt::format("axon_pool_d{}_{}", config.domain_id, config.node_name), bytes,
                                      config.huge_pages);
  if (!mapping) {
    return mapping.error();
  }
  const MemoryOptions memory{.prefault = config.prefault_memory, .lock = config.lock_memory};
  if (auto ok = apply_memory_options(memory, mapping->base(), bytes, "the chunk pool"); !ok) {
    return ok.error();
  }
  auto pool = std::make_shared<MappedPool>();
  pool->mapping = std::move(*mapping);
  auto* segment = new (pool->mapping.base()) PoolSegment();
  init_header(segment->header, SegmentKind::kPool, layout_abi_hash(), bytes);
  segment->owner_participant = self.slot;
  segment->owner_generation = self.generation;
  segment->connection_count = layout.connections;
  segment->queue_slot_count = layout.queue_slots;
  segment->publisher_block_count = layout.publisher_blocks;
  pool->segment = segment;
  pool->layout = layout;
  pool->blocks = std::launder(reinterpret_cast<PublisherBlock*>(pool->mapping.base() + layout.blocks_offset));
  // The memfd is zero, and zero is each connection's and slot's initial state
  // (kFree, turn 0): constructing them would only touch their pages.
  for (std::uint32_t b = 0; b < layout.publisher_blocks; ++b) {
    auto* block = new (&pool->blocks[b]) PublisherBlock();
    for (auto& bit : block->connection_of_bit) {
      bit.store(kNoConnection, std::memory_order_relaxed);  // published by `ready`
    }
  }
  pool->connections = std::launder(reinterpret_cast<Connection*>(pool->mapping.base() + layout.connections_offset));
  pool->queue_slots = {std::launder(reinterpret_cast<QueueSlot*>(pool->mapping.base() + layout.queue_slots_offset)),
                       layout.queue_slots};
  pool->pool = ChunkPool::format(pool->mapping.base() + layout.chunk_area_offset, config.chunk_classes);
  pool->owner = self;
  pool->owner_is_local = true;
  // Release: peers that map the pool check `ready` with acquire.
  segment->header.ready.store(1, std::memory_order_release);
  LocalPools& local = LocalPools::instance();
  std::lock_guard<std::mutex> local_guard(local.mutex);
  std::erase_if(local.pools, [](const auto& entry) { return entry.second.expired(); });
  local.pools[LocalPools::key(config, incarnation, self.slot, self.generation)] = pool;
  return pool;
}

std::shared_ptr<MappedPool> local_pool(const ShmConfig& config, std::uint64_t incarnation, SlotRef owner) {
  LocalPools& local = LocalPools::instance();
  std::lock_guard<std::mutex> local_guard(local.mutex);
  if (auto it = local.pools.find(LocalPools::key(config, incarnation, owner.slot, owner.generation));
      it != local.pools.end()) {
    return it->second.lock();
  }
  return nullptr;
}

Result<std::shared_ptr<MappedPool>> map_peer_pool(const ShmConfig& config, SlotRef owner, int fd,
                                                  const std::string& path) {
  const std::uint32_t participant = owner.slot;
  const std::uint32_t generation = owner.generation;
  auto mapping = map_received_segment(fd, fmt::format("pool of participant {}", participant));
  if (!mapping) {
    return mapping.error();
  }
  const auto* header = std::launder(reinterpret_cast<SegmentHeader*>(mapping->base()));
  if (header->ready.load(std::memory_order_acquire) != 1) {  // pairs with create_own_pool()
    return Error(ErrorCode::kIncompatible, fmt::format("the pool behind {} is not initialized", path));
  }
  if (auto ok = check_header(*header, SegmentKind::kPool, layout_abi_hash(), mapping->bytes(), path); !ok) {
    return ok.error();
  }
  // This node's options cover the peer pools it maps as well.
  const MemoryOptions memory{.prefault = config.prefault_memory, .lock = config.lock_memory};
  if (auto ok = apply_memory_options(memory, mapping->base(), mapping->bytes(),
                                     fmt::format("the pool of participant {}", participant));
      !ok) {
    return ok.error();
  }
  auto pool = std::make_shared<MappedPool>();
  pool->mapping = std::move(*mapping);
  pool->segment = std::launder(reinterpret_cast<PoolSegment*>(pool->mapping.base()));
  if (pool->segment->owner_participant != participant || pool->segment->owner_generation != generation) {
    return Error(ErrorCode::kIncompatible, fmt::format("{} handed out another participant's pool", path));
  }
  // The owner wrote the counts: checked before they place anything. Read
  // once: the checked copy in `layout` is what bounds every index later.
  const std::uint32_t blocks = pool->segment->publisher_block_count;
  const std::uint32_t connections = pool->segment->connection_count;
  const std::uint32_t queue_slots = pool->segment->queue_slot_count;
  const PoolLayout layout = PoolLayout::of(blocks, connections, queue_slots);
  if (!PoolLayout::counts_in_range(blocks, connections, queue_slots) ||
      layout.chunk_area_offset > pool->mapping.bytes()) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} has a corrupt table size ({} publisher blocks, {} connections, {} queue slots in {} "
                             "bytes)",
                             path, blocks, connections, queue_slots, pool->mapping.bytes()));
  }
  pool->layout = layout;
  pool->blocks = std::launder(reinterpret_cast<PublisherBlock*>(pool->mapping.base() + layout.blocks_offset));
  pool->connections = std::launder(reinterpret_cast<Connection*>(pool->mapping.base() + layout.connections_offset));
  pool->queue_slots = {std::launder(reinterpret_cast<QueueSlot*>(pool->mapping.base() + layout.queue_slots_offset)),
                       layout.queue_slots};
  auto chunks = ChunkPool::attach(pool->mapping.base() + layout.chunk_area_offset,
                                  pool->mapping.bytes() - layout.chunk_area_offset);
  if (!chunks) {
    return chunks.error();
  }
  pool->pool = *chunks;
  pool->owner = {participant, generation};
  return pool;
}

}  // namespace axon::shm
