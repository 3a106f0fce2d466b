// BlockPool: creation, the lock-free free lists, refusals and stats
// (docs/design/block-pool.md).
#include "axon/block_pool.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

namespace axon {

/// One size class: `count` blocks of `stride` bytes from `first`, and a
/// free list over them.
///
/// Memory ordering: `head` is a tagged index, (version << 32) | index of the
/// first free block (kNil: empty). Every successful compare-and-swap bumps the
/// version, so a pop that read a `next` which changed meanwhile fails instead
/// of installing it (ABA would need exactly 2^32 successful CAS between one
/// thread's load and its CAS). `next[i]` is the block after i on the list; it
/// lives outside the block so that the user's writes to a block never race
/// with a stale pop reading its link. A push writes next[i] (relaxed) and
/// publishes it with the release CAS on `head`; a pop reads `head` with
/// acquire, which makes that next[i] (and the user's last writes to the block)
/// visible. The counters are relaxed statistics: they order nothing.
struct alignas(BlockPool::kMaxAlignment) BlockPool::ClassState {
  static constexpr std::uint32_t kNil = 0xFFFFFFFFU;

  std::atomic<std::uint64_t> head{0};
  std::atomic<std::uint32_t> in_use{0};
  std::atomic<std::uint32_t> high_water{0};
  std::atomic<std::uint64_t> refused{0};
  std::unique_ptr<std::atomic<std::uint32_t>[]> next;
  std::byte* first = nullptr;
  std::size_t stride = 0;
  std::size_t alignment = 0;
  std::uint32_t count = 0;

  [[nodiscard]] bool fits(std::size_t bytes, std::size_t align) const noexcept {
    return stride >= bytes && alignment >= align;
  }
  [[nodiscard]] bool holds(const std::byte* p) const noexcept { return p >= first && p < first + stride * count; }

  std::byte* pop() noexcept {
    std::uint64_t seen = head.load(std::memory_order_acquire);  // pairs with the release CAS in push()
    // 1. Empty: nothing to pop.
    // 2. `head` still equals `seen`: the CAS installs next[index] and the block is ours.
    // 3. Another thread pushed or popped since `seen` was read (its version differs, even if the index is the
    //    same again): the CAS fails, reloads `seen` with acquire, and the loop starts over.
    for (;;) {
      const auto index = static_cast<std::uint32_t>(seen);
      if (index == kNil) {
        return nullptr;
      }
      // Relaxed: the acquire on `seen` made the push's store visible; a newer value means the block was popped
      // since, and then case 3 fails the CAS.
      const std::uint32_t after = next[index].load(std::memory_order_relaxed);
      const std::uint64_t desired = (((seen >> 32) + 1) << 32) | after;
      if (head.compare_exchange_weak(seen, desired, std::memory_order_acquire, std::memory_order_acquire)) {
        count_taken();
        return first + stride * index;
      }
    }
  }

  void push(std::uint32_t index) noexcept {
    in_use.fetch_sub(1, std::memory_order_relaxed);  // statistic; before the block is free, so never an overcount
    std::uint64_t seen = head.load(std::memory_order_relaxed);  // only a guess: the CAS checks it
    // 1. `head` still equals `seen`: the CAS links the block in front of it and publishes next[index].
    // 2. Another thread changed `head`: the CAS fails, reloads `seen`, and the link is written again.
    for (;;) {
      next[index].store(static_cast<std::uint32_t>(seen), std::memory_order_relaxed);  // published by the CAS
      const std::uint64_t desired = (((seen >> 32) + 1) << 32) | index;
      if (head.compare_exchange_weak(seen, desired, std::memory_order_release, std::memory_order_relaxed)) {
        return;
      }
    }
  }

  void count_taken() noexcept {
    const std::uint32_t now = in_use.fetch_add(1, std::memory_order_relaxed) + 1;  // statistic
    std::uint32_t peak = high_water.load(std::memory_order_relaxed);
    while (now > peak && !high_water.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
};

namespace {

constexpr std::size_t kMinStride = 16;  // alignof(std::max_align_t) on x86-64 and aarch64

std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

Error invalid(const std::string& pool, const std::string& what) {
  return {ErrorCode::kInvalidArgument, "axon block pool '" + pool + "': " + what};
}

Result<void> check_options(const BlockPoolOptions& options) {
  if (options.name.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "axon block pool: BlockPoolOptions::name is empty; give the pool a name (it names the pool in "
                 "errors and stats)");
  }
  if (options.classes.empty() || options.classes.size() > BlockPool::kMaxBlockClasses) {
    return invalid(options.name, "has " + std::to_string(options.classes.size()) + " classes; give 1 to " +
                                     std::to_string(BlockPool::kMaxBlockClasses) + " BlockClass entries");
  }
  for (std::size_t i = 0; i < options.classes.size(); ++i) {
    const BlockClass& c = options.classes[i];
    const std::string which = "class " + std::to_string(i) + " (block_bytes " + std::to_string(c.block_bytes) +
                              ", blocks " + std::to_string(c.blocks) + ")";
    if (c.block_bytes == 0 || c.block_bytes > (std::size_t{1} << 32)) {
      return invalid(options.name, which + ": block_bytes must be 1 to 4 GiB");
    }
    if (c.blocks == 0 || c.blocks >= BlockPool::ClassState::kNil) {
      return invalid(options.name, which + ": blocks must be 1 to " + std::to_string(BlockPool::ClassState::kNil - 1));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (round_up(options.classes[j].block_bytes, kMinStride) == round_up(c.block_bytes, kMinStride)) {
        return invalid(options.name, which + " has the block size of class " + std::to_string(j) +
                                         " (both round up to " + std::to_string(round_up(c.block_bytes, kMinStride)) +
                                         " bytes); merge them into one class");
      }
    }
    if (c.blocks > std::numeric_limits<std::size_t>::max() / 2 / round_up(c.block_bytes, kMinStride)) {
      return invalid(options.name, which + ": the class's size overflows; lower blocks");
    }
  }
  return {};
}

}  // namespace

BlockPoolExhausted::BlockPoolExhausted(BlockRefusal refusal, const char* message) noexcept : refusal_(refusal) {
  std::snprintf(message_, sizeof(message_), "%s", message);
}

Result<std::shared_ptr<BlockPool>> BlockPool::create(BlockPoolOptions options) {
  if (auto checked = check_options(options); !checked) {
    return checked.error();
  }
  std::vector<BlockClass> classes = options.classes;
  std::sort(classes.begin(), classes.end(),
            [](const BlockClass& a, const BlockClass& b) { return a.block_bytes < b.block_bytes; });

  std::shared_ptr<BlockPool> pool(new BlockPool());
  pool->name_ = std::move(options.name);
  pool->fall_through_ = options.fall_through;
  pool->class_count_ = classes.size();
  pool->classes_ = std::make_unique<ClassState[]>(classes.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    ClassState& c = pool->classes_[i];
    c.stride = round_up(classes[i].block_bytes, kMinStride);
    c.alignment = std::min(kMaxAlignment, c.stride & (~c.stride + 1));  // lowest set bit
    c.count = static_cast<std::uint32_t>(classes[i].blocks);
    total = round_up(total, kMaxAlignment);
    const std::size_t bytes = c.stride * c.count;
    if (total > std::numeric_limits<std::size_t>::max() / 2 - bytes) {
      return invalid(pool->name_, "its classes together overflow the address space; lower blocks");
    }
    total += bytes;
  }
  pool->storage_ = static_cast<std::byte*>(::operator new (total, std::align_val_t{kMaxAlignment}, std::nothrow));
  if (pool->storage_ == nullptr) {
    return Error(ErrorCode::kNoSpace, "axon block pool '" + pool->name_ + "': could not reserve " +
                                          std::to_string(total) + " bytes; lower blocks or block_bytes");
  }
  pool->storage_bytes_ = total;
  if (options.prefault) {
    std::memset(pool->storage_, 0, total);
  }
  std::size_t at = 0;
  for (std::size_t i = 0; i < pool->class_count_; ++i) {
    ClassState& c = pool->classes_[i];
    at = round_up(at, kMaxAlignment);
    c.first = pool->storage_ + at;
    at += c.stride * c.count;
    c.next = std::make_unique<std::atomic<std::uint32_t>[]>(c.count);
    for (std::uint32_t b = 0; b < c.count; ++b) {
      c.next[b].store(b + 1 == c.count ? ClassState::kNil : b + 1, std::memory_order_relaxed);
    }
    c.head.store(0, std::memory_order_relaxed);  // published with the pool's shared_ptr
  }
  return pool;
}

BlockPool::~BlockPool() { ::operator delete (storage_, std::align_val_t{kMaxAlignment}); }

void* BlockPool::try_allocate(std::size_t bytes, std::size_t alignment) noexcept {
  bool fitted = false;
  for (std::size_t i = 0; i < class_count_; ++i) {
    ClassState& c = classes_[i];
    if (!c.fits(bytes, alignment)) {
      continue;
    }
    if (std::byte* block = c.pop(); block != nullptr) {
      return block;
    }
    if (!fitted) {
      c.refused.fetch_add(1, std::memory_order_relaxed);  // statistic: the class that ran out
      fitted = true;
    }
    if (!fall_through_) {
      return nullptr;
    }
  }
  if (!fitted) {
    refused_too_large_.fetch_add(1, std::memory_order_relaxed);  // statistic
  }
  return nullptr;
}

void BlockPool::deallocate(void* block) noexcept {
  if (block == nullptr) {
    return;
  }
  const auto* p = static_cast<const std::byte*>(block);
  for (std::size_t i = 0; i < class_count_; ++i) {
    ClassState& c = classes_[i];
    if (!c.holds(p)) {
      continue;
    }
    const auto offset = static_cast<std::size_t>(p - c.first);
    if (offset % c.stride != 0) {
      break;
    }
    c.push(static_cast<std::uint32_t>(offset / c.stride));
    return;
  }
  std::fprintf(stderr, "axon block pool '%s': deallocate() of %p, which is not a block of this pool\n", name_.c_str(),
               block);
  std::abort();
}

bool BlockPool::owns(const void* p) const noexcept {
  const auto* at = static_cast<const std::byte*>(p);
  for (std::size_t i = 0; i < class_count_; ++i) {
    const ClassState& c = classes_[i];
    if (c.holds(at)) {
      return static_cast<std::size_t>(at - c.first) % c.stride == 0;
    }
  }
  return false;
}

std::size_t BlockPool::largest_block() const noexcept { return classes_[class_count_ - 1].stride; }

void BlockPool::throw_refusal(std::size_t bytes, std::size_t alignment) const {
  char message[240];
  const ClassState* fitting = nullptr;
  for (std::size_t i = 0; i < class_count_ && fitting == nullptr; ++i) {
    if (classes_[i].fits(bytes, alignment)) {
      fitting = &classes_[i];
    }
  }
  if (fitting == nullptr) {
    std::snprintf(message, sizeof(message),
                  "axon block pool '%s': no class fits %zu bytes aligned to %zu (largest block %zu bytes); add a "
                  "BlockClass with block_bytes >= %zu",
                  name_.c_str(), bytes, alignment, largest_block(), bytes);
    throw BlockPoolExhausted(BlockRefusal::kTooLarge, message);
  }
  std::snprintf(message, sizeof(message),
                "axon block pool '%s': no free block for %zu bytes (class of %zu bytes: %u of %u in use%s); raise "
                "its blocks or give blocks back sooner",
                name_.c_str(), bytes, fitting->stride, fitting->in_use.load(std::memory_order_relaxed), fitting->count,
                fall_through_ ? ", larger classes full too" : "");
  throw BlockPoolExhausted(BlockRefusal::kExhausted, message);
}

BlockPoolStats BlockPool::stats() const {
  BlockPoolStats out;
  out.name = name_;
  out.refused_too_large = refused_too_large_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < class_count_; ++i) {
    const ClassState& c = classes_[i];
    out.classes.push_back({.block_bytes = c.stride,
                           .alignment = c.alignment,
                           .blocks = c.count,
                           .in_use = c.in_use.load(std::memory_order_relaxed),
                           .high_water = c.high_water.load(std::memory_order_relaxed),
                           .refused = c.refused.load(std::memory_order_relaxed)});
  }
  return out;
}

}  // namespace axon
