#include "transports/shm/segment.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

#include "src/base/errors.hpp"
#include "transports/shm/memory_options.hpp"

#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21U << 26)  // linux/memfd.h: log2(2 MiB) << MFD_HUGE_SHIFT
#endif

namespace axon::shm {
namespace {

std::string mib(std::size_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0)); }

Result<MappedSegment> map_fd(int fd, std::size_t bytes, std::string_view what) {
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("mmap of {} ({})", what, mib(bytes)));
  }
  return MappedSegment(fd, static_cast<std::byte*>(base), bytes);
}

}  // namespace

void init_header(SegmentHeader& header, SegmentKind kind, std::uint64_t abi_hash, std::size_t bytes) noexcept {
  new (&header) SegmentHeader();
  header.magic = kSegmentMagic;
  header.layout_version = kLayoutVersion;
  header.kind = kind;
  header.abi_hash = abi_hash;
  header.total_bytes = bytes;
}

Result<void> check_header(const SegmentHeader& header, SegmentKind kind, std::uint64_t abi_hash,
                          std::size_t mapped_bytes, std::string_view what) {
  if (header.magic != kSegmentMagic) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} is not an axon segment (magic {:#x}, expected {:#x}); remove it if "
                             "no axon process uses it",
                             what, header.magic, kSegmentMagic));
  }
  if (header.layout_version != kLayoutVersion || header.abi_hash != abi_hash) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} was made by another axon build (layout {} ABI {:#x}, this build: "
                             "layout {} ABI {:#x}); run the same axon version in every process of "
                             "the domain, or use another domain id",
                             what, header.layout_version, header.abi_hash, kLayoutVersion, abi_hash));
  }
  if (header.kind != kind) {
    return Error(ErrorCode::kIncompatible, fmt::format("{} is an axon segment of another kind", what));
  }
  if (header.total_bytes != mapped_bytes) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} says it has {} bytes but {} are mapped", what, header.total_bytes, mapped_bytes));
  }
  return {};
}

MappedSegment::MappedSegment(MappedSegment&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      base_(std::exchange(other.base_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

MappedSegment& MappedSegment::operator=(MappedSegment&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

MappedSegment::~MappedSegment() { reset(); }

void MappedSegment::reset() noexcept {
  if (base_ != nullptr) {
    ::munmap(base_, bytes_);
    base_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

namespace {

/// MemAvailable of /proc/meminfo in bytes, or 0 when unknown.
std::size_t memory_available() {
  FILE* f = std::fopen("/proc/meminfo", "re");
  if (f == nullptr) {
    return 0;
  }
  char line[256];
  std::size_t kib = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "MemAvailable: %zu kB", &kib) == 1) {
      break;
    }
  }
  std::fclose(f);
  return kib * 1024;
}

}  // namespace

Result<MappedSegment> create_memfd_segment(const std::string& debug_name, std::size_t bytes, bool huge_pages) {
  if (huge_pages) {
    // Huge pages come from their own reserve (vm.nr_hugepages), not MemAvailable.
    if (auto enough = check_huge_pages_available(bytes); !enough) {
      return enough.error();
    }
  } else if (const std::size_t available = memory_available(); available != 0 && bytes > available) {
    // Reserving more than the machine has would push it into the OOM killer
    // before fallocate gives up: refuse up front.
    return Error(ErrorCode::kNoSpace,
                 fmt::format("the chunk pool needs {} of memory but only {} is available; lower the "
                             "chunk counts or sizes of the pool (NodeOptions::chunk_classes)",
                             mib(bytes), mib(available)));
  }
  // Sealable: a pool's size is sealed below, so that nobody (not even its
  // owner by mistake) can truncate it under the processes that map it.
  const unsigned flags = MFD_CLOEXEC | MFD_ALLOW_SEALING | (huge_pages ? MFD_HUGETLB | MFD_HUGE_2MB : 0U);
  const int fd = ::memfd_create(debug_name.c_str(), flags);
  if (fd < 0) {
    return huge_pages ? huge_pages_error(errno, "memfd_create", bytes)
                      : system_error(errno, "memfd_create for the chunk pool");
  }
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::close(fd);
    return huge_pages ? huge_pages_error(err, "ftruncate", bytes)
                      : system_error(err, fmt::format("ftruncate of the chunk pool to {}", mib(bytes)));
  }
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    ::close(fd);
    if (huge_pages) {
      return huge_pages_error(err, "fallocate", bytes);
    }
    return Error(ErrorCode::kNoSpace,
                 fmt::format("cannot reserve {} of memory for the chunk pool ({}); lower the chunk "
                             "counts or sizes of the pool (NodeOptions::chunk_classes) or free memory",
                             mib(bytes), errno_text(err)));
  }
  // A shrunk pool would raise SIGBUS in every process that touches a chunk
  // past the new end; a grown one is of no use to anybody.
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
    const int err = errno;
    ::close(fd);
    return system_error(err, "sealing the size of the chunk pool (F_ADD_SEALS; needs Linux 3.17, 4.16 for huge pages)");
  }
  return map_fd(fd, bytes, "the chunk pool");
}

namespace {

/// Maps all of the file behind `fd` (ownership passes in).
Result<MappedSegment> map_whole_file(int fd, std::string_view what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("fstat of {}", what));
  }
  if (st.st_size < static_cast<off_t>(sizeof(SegmentHeader))) {
    ::close(fd);
    return Error(ErrorCode::kIncompatible, fmt::format("{} is too small to be a segment", what));
  }
  return map_fd(fd, static_cast<std::size_t>(st.st_size), what);
}

}  // namespace

Result<MappedSegment> map_received_segment(int fd, std::string_view what) {
  // A pool whose size is not sealed could be truncated under us (SIGBUS on
  // the data path): every pool of this build is sealed at creation.
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    const int err = seals < 0 ? errno : 0;
    ::close(fd);
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} is not sealed against shrinking ({}); every process of the domain must run the "
                             "same axon version",
                             what, err != 0 ? errno_text(err) : std::string("F_SEAL_SHRINK missing")));
  }
  return map_whole_file(fd, what);
}

Result<void> check_free_space(const std::string& dir, std::size_t bytes) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) {
    return system_error(errno, fmt::format("statvfs of {}", dir));
  }
  const std::size_t available = static_cast<std::size_t>(vfs.f_bavail) * vfs.f_frsize;
  if (available < bytes) {
    return Error(ErrorCode::kNoSpace,
                 fmt::format("{} has {} free, axon needs {} there: run the container with a larger "
                             "--shm-size (e.g. --shm-size=256m), remove stale files from {}, or set "
                             "AXON_SHM_DIR to a larger tmpfs",
                             dir, mib(available), mib(bytes), dir));
  }
  return {};
}

Result<void> apply_permissions(int fd, mode_t mode, const std::string& group, std::string_view what) {
  if (::fchmod(fd, mode) != 0) {
    return system_error(errno, fmt::format("fchmod {:o} of {}", mode, what));
  }
  if (!group.empty()) {
    struct group* g = ::getgrnam(group.c_str());  // NOLINT(concurrency-mt-unsafe): start-up only
    if (g == nullptr) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("group '{}' for {} does not exist; create it or fix the group option", group, what));
    }
    if (::fchown(fd, static_cast<uid_t>(-1), g->gr_gid) != 0) {
      return system_error(errno, fmt::format("fchown of {} to group {}", what, group));
    }
  }
  return {};
}

Result<MappedSegment> create_named_segment(const std::string& path, std::size_t bytes, mode_t mode,
                                           const std::string& group) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (auto space = check_free_space(dir, bytes); !space) {
    return space.error();
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return system_error(errno, fmt::format("create {}", path));
  }
  auto fail = [&](Error error) -> Result<MappedSegment> {
    ::close(fd);
    ::unlink(path.c_str());
    return error;
  };
  if (auto perms = apply_permissions(fd, mode, group, path); !perms) {
    return fail(perms.error());
  }
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    return fail(Error(ErrorCode::kNoSpace, fmt::format("cannot allocate {} for {} ({}): give the container a larger "
                                                       "--shm-size or free space in {}",
                                                       mib(bytes), path, errno_text(err), dir)));
  }
  return map_fd(fd, bytes, path);
}

Result<MappedSegment> open_named_segment(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return system_error(errno, fmt::format("open {}", path));
  }
  return map_whole_file(fd, path);
}

}  // namespace axon::shm
