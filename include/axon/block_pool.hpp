// A fixed-block memory pool for user code: a few size classes of equal
// blocks, each a lock-free free list, reserved once at creation. The std
// allocator over it is axon/pool_allocator.hpp; docs/design/block-pool.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "axon/result.hpp"

namespace axon {

/// One size class: `blocks` blocks of at least `block_bytes` bytes each.
struct BlockClass {
  std::size_t block_bytes = 0;
  std::size_t blocks = 0;
};

/// What BlockPool::create() builds. A pool per topic or per QoS level keeps
/// one stream's allocations from starving another's.
struct BlockPoolOptions {
  /// Names the pool in refusals and stats ("cmd_vel", "reliable").
  std::string name;
  /// At least one class; up to kMaxBlockClasses. Order does not matter.
  std::vector<BlockClass> classes;
  /// When the smallest class that fits is empty, take a block of a larger
  /// class instead of refusing.
  bool fall_through = true;
  /// Write every page at creation so that no allocation takes a page fault.
  bool prefault = true;
};

/// What a class holds now (exact when no thread allocates meanwhile).
struct BlockClassStats {
  std::size_t block_bytes = 0;  ///< Usable bytes of one block (the stride).
  std::size_t alignment = 0;    ///< Every block's address is a multiple of this.
  std::uint32_t blocks = 0;
  std::uint32_t in_use = 0;
  std::uint32_t high_water = 0;  ///< Most blocks in use at once so far.
  std::uint64_t refused = 0;     ///< Requests that fit this class but found no free block.
};

struct BlockPoolStats {
  std::string name;
  std::vector<BlockClassStats> classes;
  std::uint64_t refused_too_large = 0;  ///< Requests no class fits (size or alignment).
};

/// Why PoolAllocator<T>::allocate() threw.
enum class BlockRefusal : std::uint8_t {
  kExhausted,  ///< Classes fit, but none that may serve it has a free block.
  kTooLarge,   ///< No class is large (or aligned) enough.
};

/// The std::bad_alloc that PoolAllocator throws. Its what() names the pool,
/// the request and the class that ran out; building it allocates nothing.
class BlockPoolExhausted : public std::bad_alloc {
 public:
  BlockPoolExhausted(BlockRefusal refusal, const char* message) noexcept;
  [[nodiscard]] const char* what() const noexcept override { return message_; }
  [[nodiscard]] BlockRefusal refusal() const noexcept { return refusal_; }

 private:
  BlockRefusal refusal_;
  char message_[240];
};

/// The pool. Create it with create(); share it between the allocators and
/// threads that use it (PoolAllocator holds a shared_ptr, so the pool lives as
/// long as any container or shared_ptr that allocated from it).
///
/// Thread safety: try_allocate(), deallocate(), owns() and stats() may be
/// called from any thread, concurrently. try_allocate() and deallocate() are
/// lock-free (one compare-and-swap on the class's tagged free-list head, plus
/// relaxed counters), never allocate and make no system call.
class BlockPool {
 public:
  static constexpr std::size_t kMaxBlockClasses = 16;
  /// Blocks never guarantee more alignment than this (their stride's lowest
  /// power of two, at most a cache line).
  static constexpr std::size_t kMaxAlignment = 64;

  /// Reserves (and by default touches) the memory of every class. Errors
  /// (kInvalidArgument, kNoSpace) name the pool and what to change.
  static Result<std::shared_ptr<BlockPool>> create(BlockPoolOptions options);

  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool();

  /// A block of at least `bytes` bytes whose address is a multiple of
  /// `alignment`, from the smallest class that fits (larger ones when it is
  /// empty and fall_through is set); nullptr when none is free or none fits.
  /// Lock-free; does not allocate.
  [[nodiscard]] void* try_allocate(std::size_t bytes, std::size_t alignment) noexcept;

  /// Gives a block back. `block` must come from this pool's try_allocate()
  /// and not be given back yet: a pointer the pool does not own aborts with a
  /// message (it would corrupt the free list). Lock-free; does not allocate.
  void deallocate(void* block) noexcept;

  /// Throws the BlockPoolExhausted that explains why try_allocate(bytes,
  /// alignment) just returned nullptr. Cold path: formats into the exception.
  [[noreturn]] void throw_refusal(std::size_t bytes, std::size_t alignment) const;

  /// Whether `p` points at a block of this pool (address only).
  [[nodiscard]] bool owns(const void* p) const noexcept;

  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  [[nodiscard]] std::size_t largest_block() const noexcept;
  /// A snapshot of every class. Allocates (the returned vector).
  [[nodiscard]] BlockPoolStats stats() const;

  struct ClassState;  // the free list of one class (src/block_pool.cpp)

 private:
  BlockPool() = default;

  std::string name_;
  bool fall_through_ = true;
  std::size_t class_count_ = 0;
  std::unique_ptr<ClassState[]> classes_;  // sorted by block size
  std::byte* storage_ = nullptr;           // every class's blocks, one aligned allocation
  std::size_t storage_bytes_ = 0;
  std::atomic<std::uint64_t> refused_too_large_{0};  // relaxed: a statistic, orders nothing
};

}  // namespace axon
