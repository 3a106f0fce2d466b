#include "transports/shm/memory_options.hpp"

#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "src/base/errors.hpp"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
#endif

namespace axon::shm {
namespace {

constexpr std::size_t kKiB = 1024;

std::string mib(std::size_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0)); }

std::string limit_text(rlim_t limit) {
  return limit == RLIM_INFINITY ? std::string("unlimited") : fmt::format("{} KiB", limit / kKiB);
}

std::string kib(std::size_t bytes) { return fmt::format("{} KiB", (bytes + kKiB - 1) / kKiB); }

/// A "<key>: <n> kB" or "<key>: <n>" line of a /proc file, or 0.
std::uint64_t read_proc_number(const char* path, const char* format) {
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) {
    return 0;
  }
  char line[256];
  unsigned long long value = 0;  // NOLINT(google-runtime-int): sscanf's %llu
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, format, &value) == 1) {
      break;
    }
  }
  std::fclose(f);
  return value;
}

/// Bytes this process has locked already (VmLck of /proc/self/status).
std::size_t locked_bytes() { return read_proc_number("/proc/self/status", "VmLck: %llu kB") * kKiB; }

}  // namespace

HugePageCounts read_huge_page_counts() {
  HugePageCounts counts;
  FILE* f = std::fopen("/proc/meminfo", "re");
  if (f == nullptr) {
    return counts;
  }
  char line[256];
  unsigned long long value = 0;  // NOLINT(google-runtime-int): sscanf's %llu
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "HugePages_Total: %llu", &value) == 1) {
      counts.total = value;
    } else if (std::sscanf(line, "HugePages_Free: %llu", &value) == 1) {
      counts.free = value;
    } else if (std::sscanf(line, "HugePages_Rsvd: %llu", &value) == 1) {
      counts.reserved = value;
    }
  }
  std::fclose(f);
  return counts;
}

namespace {

std::string huge_pages_advice(std::size_t bytes, const HugePageCounts& counts) {
  const std::uint64_t needed = bytes / kHugePageBytes;
  const std::uint64_t free = counts.available();
  const std::uint64_t total = counts.total + (needed > free ? needed - free : 0);
  return fmt::format(
      "the chunk pool needs {} huge pages of 2 MiB ({}) but {} are free (/proc/sys/vm/nr_hugepages "
      "is {}): reserve more as root with `echo {} > /proc/sys/vm/nr_hugepages` (or vm.nr_hugepages "
      "= {} in /etc/sysctl.d/, or hugepages={} on the kernel command line), or set "
      "NodeOptions::huge_pages = false",
      needed, mib(bytes), free, counts.total, total, total, total);
}

}  // namespace

Result<void> check_huge_pages_available(std::size_t bytes) {
  const HugePageCounts counts = read_huge_page_counts();
  if (counts.available() * kHugePageBytes < bytes) {
    return Error(ErrorCode::kNoSpace, "not enough huge pages: " + huge_pages_advice(bytes, counts));
  }
  return {};
}

Error huge_pages_error(int err, std::string_view step, std::size_t bytes) {
  if (err == EINVAL && step == "memfd_create") {
    return {ErrorCode::kSystem,
            fmt::format("memfd_create with MFD_HUGETLB failed ({}): this kernel has no 2 MiB huge pages "
                        "(CONFIG_HUGETLBFS); set NodeOptions::huge_pages = false",
                        errno_text(err))};
  }
  return {ErrorCode::kNoSpace, fmt::format("{} of a huge-page chunk pool failed ({}): {}", step, errno_text(err),
                                           huge_pages_advice(bytes, read_huge_page_counts()))};
}

Result<void> prefault_mapping(std::byte* base, std::size_t bytes, std::string_view what) {
  if (::madvise(base, bytes, MADV_POPULATE_WRITE) == 0) {
    return {};
  }
  const int err = errno;
  if (err != EINVAL) {
    return system_error(err, fmt::format("prefaulting {} ({}, MADV_POPULATE_WRITE)", what, mib(bytes)));
  }
  // Before Linux 5.14: a read fault maps a shared page writable (tmpfs and
  // hugetlbfs need no write notification), and a read never races with peers.
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  for (std::size_t offset = 0; offset < bytes; offset += page) {
    [[maybe_unused]] const auto touched = *static_cast<volatile const std::byte*>(base + offset);
  }
  return {};
}

bool has_ipc_lock_capability() noexcept {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) {
    return false;
  }
  return (data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK)) != 0;
}

std::string memlock_error_text(int err, std::size_t bytes, std::string_view what) {
  rlimit limit{};
  ::getrlimit(RLIMIT_MEMLOCK, &limit);
  const std::size_t locked = locked_bytes();
  const std::size_t needed = locked + bytes;
  const std::size_t needed_kib = (needed + kKiB - 1) / kKiB;
  std::string text =
      fmt::format("cannot lock {} in memory (NodeOptions::lock_memory): mlock of {} ({} bytes) failed ({}). ", what,
                  mib(bytes), bytes, errno_text(err));
  if (has_ipc_lock_capability()) {
    // CAP_IPC_LOCK lifts RLIMIT_MEMLOCK: the kernel could not lock the pages.
    return text + fmt::format(
                      "The process has CAP_IPC_LOCK, so RLIMIT_MEMLOCK (soft {}, hard {}) does not apply: "
                      "the machine has too little memory that can be locked ({} locked by this process "
                      "already); free memory, make the pool smaller (NodeOptions::chunk_classes) or set "
                      "NodeOptions::lock_memory = false",
                      limit_text(limit.rlim_cur), limit_text(limit.rlim_max), kib(locked));
  }
  text += fmt::format(
      "The process lacks CAP_IPC_LOCK, so RLIMIT_MEMLOCK applies: soft limit {}, hard limit {}, {} locked by this "
      "process already, {} bytes ({} KiB) needed in all. ",
      limit_text(limit.rlim_cur), limit_text(limit.rlim_max), kib(locked), needed, needed_kib);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
    text += "The hard limit is too low as well, so only root can raise it. ";
  }
  return text + fmt::format(
                    "Raise the limit to at least {0} KiB: `ulimit -l {0}` (or `ulimit -l unlimited`) in the shell "
                    "that starts the program, a `<user> - memlock {0}` line in /etc/security/limits.conf, "
                    "LimitMEMLOCK={0}K (or infinity) in its systemd unit, or `--ulimit memlock=-1` for docker run; "
                    "or grant the program CAP_IPC_LOCK (`setcap cap_ipc_lock+ep <program>`, or "
                    "AmbientCapabilities=CAP_IPC_LOCK in systemd); or set NodeOptions::lock_memory = false",
                    needed_kib);
}

Result<void> lock_mapping(std::byte* base, std::size_t bytes, std::string_view what) {
  // The system call itself: the sanitizers' mlock interceptor does nothing
  // and returns 0 (it protects their shadow memory from mlockall).
  if (::syscall(SYS_mlock, base, bytes) == 0) {
    return {};
  }
  const int err = errno;
  return Error(ErrorCode::kSystem, memlock_error_text(err, bytes, what));
}

Result<void> apply_memory_options(const MemoryOptions& options, std::byte* base, std::size_t bytes,
                                  std::string_view what) {
  if (options.prefault) {
    if (auto ok = prefault_mapping(base, bytes, what); !ok) {
      return ok;
    }
  }
  if (options.lock) {
    return lock_mapping(base, bytes, what);
  }
  return {};
}

}  // namespace axon::shm
