// Real-time memory options of a pool mapping: prefaulting, locking (mlock)
// and 2 MiB huge pages, with errors that name the missing privilege, limit
// or reservation and how to provide it.
//
// Thread safety: every function may be called from any thread; none is on
// the data path (they run when a pool is created or mapped) and they allocate
// only for error messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "axon/result.hpp"

namespace axon::shm {

/// What NodeOptions asks of every pool mapping of a node: its own and the
/// peers' pools it maps.
struct MemoryOptions {
  bool prefault = false;    ///< Populate every page table entry up front.
  bool lock = false;        ///< mlock the mapping.
  bool huge_pages = false;  ///< Back the node's own pool with 2 MiB pages.
};

/// The huge page size axon asks for (MFD_HUGE_2MB).
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

/// `bytes` rounded up to a whole number of huge pages.
[[nodiscard]] constexpr std::size_t round_up_to_huge_pages(std::size_t bytes) noexcept {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

/// The 2 MiB huge page counters of /proc/meminfo (HugePages_*), all 0 when
/// the file cannot be read.
struct HugePageCounts {
  std::uint64_t total = 0;     ///< HugePages_Total (vm.nr_hugepages).
  std::uint64_t free = 0;      ///< HugePages_Free.
  std::uint64_t reserved = 0;  ///< HugePages_Rsvd: free, but promised to mappings.
  /// Pages nobody has claimed yet.
  [[nodiscard]] std::uint64_t available() const noexcept { return free > reserved ? free - reserved : 0; }
};
[[nodiscard]] HugePageCounts read_huge_page_counts();

/// kNoSpace unless `bytes` (a multiple of kHugePageBytes) fit the huge pages
/// that are free now; the message says how many are needed, how many are
/// free and how to reserve more (/proc/sys/vm/nr_hugepages).
[[nodiscard]] Result<void> check_huge_pages_available(std::size_t bytes);

/// The error for a hugetlb memfd whose memfd_create, ftruncate or fallocate
/// failed with `err` (`step` names the call): the same advice as above.
[[nodiscard]] Error huge_pages_error(int err, std::string_view step, std::size_t bytes);

/// Populates the page tables of a shared mapping (MADV_POPULATE_WRITE, or
/// touching one byte per page on kernels before 5.14) so that the first
/// access does not fault. The memory must be allocated already (fallocate).
[[nodiscard]] Result<void> prefault_mapping(std::byte* base, std::size_t bytes, std::string_view what);

/// mlocks a mapping. On failure the message names RLIMIT_MEMLOCK (soft and
/// hard limit, bytes locked already, bytes needed), CAP_IPC_LOCK and the fix.
[[nodiscard]] Result<void> lock_mapping(std::byte* base, std::size_t bytes, std::string_view what);

/// The message lock_mapping() gives when mlock of `bytes` failed with `err`,
/// from the process's current limit, capabilities and VmLck.
[[nodiscard]] std::string memlock_error_text(int err, std::size_t bytes, std::string_view what);

/// Whether CAP_IPC_LOCK is in this thread's effective capability set.
[[nodiscard]] bool has_ipc_lock_capability() noexcept;

/// prefault_mapping() then lock_mapping(), as `options` ask (huge_pages is
/// applied when the memfd is created, not here).
[[nodiscard]] Result<void> apply_memory_options(const MemoryOptions& options, std::byte* base, std::size_t bytes,
                                                std::string_view what);

}  // namespace axon::shm
