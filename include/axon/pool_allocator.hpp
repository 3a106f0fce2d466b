// A std-compatible allocator over an axon::BlockPool, for std containers and
// std::allocate_shared (docs/design/block-pool.md):
//
//   auto pool = axon::BlockPool::create({.name = "cmd_vel", .classes = {{.block_bytes = 64, .blocks = 1024}}});
//   std::list<Command, axon::PoolAllocator<Command>> queue{axon::PoolAllocator<Command>(*pool)};
//   auto cmd = std::allocate_shared<Command>(axon::PoolAllocator<Command>(*pool));
#pragma once

#include <cassert>
#include <cstddef>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "axon/block_pool.hpp"

namespace axon {

/// Allocates `n` objects of T as one block of a BlockPool class that holds
/// n * sizeof(T) bytes aligned for T. A request no class fits, or one whose
/// classes are all taken, throws BlockPoolExhausted (a std::bad_alloc whose
/// what() names the pool): never a smaller block.
///
/// A stateful allocator: two compare equal when they use the same pool, and
/// memory from one may be given back through the other (rebound copies too).
/// Propagation: a container keeps its pool on copy assignment (the copy is
/// built in the pool the container was made for), and takes the other's pool
/// on move assignment and swap, so those stay O(1), never allocate and never
/// free a block into a pool that does not own it.
///
/// Thread safety: as BlockPool; copies may be used from any thread. allocate()
/// and deallocate() take no lock and do not touch the heap; copying the
/// allocator bumps the pool's shared_ptr count (containers do it at
/// construction, not per element).
template <class T>
class PoolAllocator {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_copy_assignment = std::false_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;
  template <class U>
  struct rebind {
    using other = PoolAllocator<U>;
  };

  /// `pool` must not be null.
  explicit PoolAllocator(std::shared_ptr<BlockPool> pool) noexcept : pool_(std::move(pool)) {
    assert(pool_ != nullptr && "axon::PoolAllocator needs a pool");
  }
  // Copying only, no move: the standard wants a moved-from allocator to stay
  // equal to the one made from it (a moved-from container still allocates).
  PoolAllocator(const PoolAllocator& other) noexcept = default;
  PoolAllocator& operator=(const PoolAllocator& other) noexcept = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>& other) noexcept  // NOLINT(google-explicit-constructor): rebinding
      : pool_(other.shared_pool()) {}
  ~PoolAllocator() = default;

  /// One block for n objects of T. Throws BlockPoolExhausted when the pool
  /// has none: the message names the pool and the class that ran out.
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
      pool_->throw_refusal(std::numeric_limits<std::size_t>::max(), alignof(T));
    }
    void* block = pool_->try_allocate(n * sizeof(T), alignof(T));
    if (block == nullptr) {
      pool_->throw_refusal(n * sizeof(T), alignof(T));
    }
    return static_cast<T*>(block);
  }

  /// Gives back what allocate(n) returned (through this allocator or one
  /// equal to it).
  void deallocate(T* p, std::size_t /*n*/) noexcept { pool_->deallocate(p); }

  [[nodiscard]] BlockPool& pool() const noexcept { return *pool_; }
  [[nodiscard]] const std::shared_ptr<BlockPool>& shared_pool() const noexcept { return pool_; }

 private:
  std::shared_ptr<BlockPool> pool_;
};

/// Equal when they use the same pool (whatever their value types).
template <class T, class U>
bool operator==(const PoolAllocator<T>& a, const PoolAllocator<U>& b) noexcept {
  return &a.pool() == &b.pool();
}

}  // namespace axon
