// Shared-memory segments: a checked header, and RAII mappings of memfd and
// named (/dev/shm) segments.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "axon/result.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {

enum class SegmentKind : std::uint32_t { kRegistry = 1, kPool = 2, kStats = 3 };

inline constexpr std::uint64_t kSegmentMagic = 0x4E4F5841'4D485331ULL;  // "1SHMAXON"

/// First bytes of every segment. `ready` is set (release) by the creator once
/// the rest is initialized; openers check it (acquire) before anything else.
struct alignas(kCacheLine) SegmentHeader {
  std::uint64_t magic = 0;
  std::uint32_t layout_version = 0;
  SegmentKind kind = SegmentKind::kRegistry;
  std::uint64_t abi_hash = 0;
  std::uint64_t total_bytes = 0;
  std::atomic<std::uint32_t> ready{0};
};

/// Fills a header and leaves `ready` at 0.
void init_header(SegmentHeader& header, SegmentKind kind, std::uint64_t abi_hash, std::size_t bytes) noexcept;

/// Checks magic, layout version, ABI hash, kind and size of a mapped segment;
/// the message names `what` (e.g. the path) and both values of a mismatch.
Result<void> check_header(const SegmentHeader& header, SegmentKind kind, std::uint64_t abi_hash,
                          std::size_t mapped_bytes, std::string_view what);

/// A mapping and the descriptor behind it; unmaps and closes when destroyed.
class MappedSegment {
 public:
  MappedSegment() = default;
  MappedSegment(int fd, std::byte* base, std::size_t bytes) noexcept : fd_(fd), base_(base), bytes_(bytes) {}
  MappedSegment(MappedSegment&& other) noexcept;
  MappedSegment& operator=(MappedSegment&& other) noexcept;
  MappedSegment(const MappedSegment&) = delete;
  MappedSegment& operator=(const MappedSegment&) = delete;
  ~MappedSegment();

  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] bool contains(const void* address) const noexcept {
    const auto* p = static_cast<const std::byte*>(address);
    return p >= base_ && p < base_ + bytes_;
  }

 private:
  void reset() noexcept;
  int fd_ = -1;
  std::byte* base_ = nullptr;
  std::size_t bytes_ = 0;
};

/// An anonymous memfd of `bytes`, reserved with fallocate so that running out
/// of memory is an error here and never a SIGBUS later. The kernel frees it
/// when the last descriptor and mapping are gone, even after a crash.
/// `huge_pages`: backed by 2 MiB pages (MFD_HUGETLB; `bytes` must be a
/// multiple of kHugePageBytes), checked against the free huge pages instead
/// of MemAvailable, and an error (never normal pages) when they run short.
Result<MappedSegment> create_memfd_segment(const std::string& debug_name, std::size_t bytes, bool huge_pages = false);

/// Maps a segment received from a peer (descriptor ownership passes in).
Result<MappedSegment> map_received_segment(int fd, std::string_view what);

/// Creates `path` (O_EXCL) of `bytes` with `mode` (and `group` when named),
/// after checking that its file system has room.
Result<MappedSegment> create_named_segment(const std::string& path, std::size_t bytes, mode_t mode,
                                           const std::string& group);

/// Opens and maps an existing named segment.
Result<MappedSegment> open_named_segment(const std::string& path);

/// Fails with the size needed, the size available and the fix when the file
/// system holding `dir` has less than `bytes` free.
Result<void> check_free_space(const std::string& dir, std::size_t bytes);

/// Applies `mode` and `group` to a file descriptor.
Result<void> apply_permissions(int fd, mode_t mode, const std::string& group, std::string_view what);

}  // namespace axon::shm
