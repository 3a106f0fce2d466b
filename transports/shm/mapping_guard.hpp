// Survives the truncation of a shared file mapping (the registry) under a
// running process. Touching a page of a MAP_SHARED file beyond its end raises
// SIGBUS; a cleanup script that truncates /dev/shm files would otherwise kill
// every node of the domain on its next publish. Named tmpfs files cannot be
// sealed (only memfds can, and pools are sealed memfds), so the registry is
// guarded instead: a SIGBUS handler, installed once per process, grows the
// file back when the faulting address lies in a guarded mapping and returns,
// so the access retries on a fresh zero page of the same file (futex keys of
// shared file mappings are inode + offset, so wake-ups across processes keep
// working). The transport notices the damage (repairs() or the file's size)
// on its next registry decision and treats the registry as damaged.
//
// Thread safety: guard()/the destructor from any thread; the handler reads
// the table lock-free (async-signal-safe: atomics, fstat, fallocate,
// sigaction). A fault at an address that is not guarded goes to the handler
// that was installed before ours, or to the default action.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "axon/result.hpp"

namespace axon::shm {

/// Registration of one mapping; unregisters when destroyed. Destroy it before
/// the mapping is unmapped and its descriptor closed.
class GuardedMapping {
 public:
  GuardedMapping() = default;
  /// Guards [base, base + bytes) backed by `fd` (which must stay open while
  /// guarded). Installs the process's handler on first use. Fails when the
  /// table (kMaxGuardedMappings) is full or sigaction fails. Allocates nothing.
  static Result<GuardedMapping> guard(const void* base, std::size_t bytes, int fd);
  GuardedMapping(GuardedMapping&& other) noexcept;
  GuardedMapping& operator=(GuardedMapping&& other) noexcept;
  GuardedMapping(const GuardedMapping&) = delete;
  GuardedMapping& operator=(const GuardedMapping&) = delete;
  ~GuardedMapping();

  /// How often the handler grew the file back for a fault in this mapping
  /// (0: never; anything else means the file was truncated while mapped).
  [[nodiscard]] std::uint64_t repairs() const noexcept;

  static constexpr std::uint32_t kMaxGuardedMappings = 64;

 private:
  explicit GuardedMapping(std::uint32_t slot) noexcept : slot_(slot) {}
  void reset() noexcept;
  std::uint32_t slot_ = kMaxGuardedMappings;  ///< kMaxGuardedMappings: none.
};

}  // namespace axon::shm
