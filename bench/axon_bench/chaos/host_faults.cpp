#include "chaos/host_faults.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "chaos/fault_schedule.hpp"
#include "harness/system.hpp"

namespace axon_bench {
namespace {

constexpr std::uint64_t kFillStepBytes = 64ULL << 20;
constexpr std::uint64_t kKeepAvailableBytes = 256ULL << 20;

[[noreturn]] void spin_forever() noexcept {
  for (;;) {
    asm volatile("" ::: "memory");
  }
}

/// The memory filler's body: fills, then sleeps until it is killed.
[[noreturn]] void fill_memory(double fill_percent, std::uint64_t* filled_out) noexcept {
  const std::uint64_t available = mem_available_bytes();
  const double percent = std::min(fill_percent, kMaxFillPercent);
  const auto target = static_cast<std::uint64_t>(static_cast<double>(available) * percent / 100);
  std::uint64_t filled = 0;
  while (filled + kFillStepBytes <= target && mem_available_bytes() > kKeepAvailableBytes + kFillStepBytes) {
    void* block = ::mmap(nullptr, kFillStepBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) {
      break;
    }
    // Huge pages where the kernel gives them on request (transparent_hugepage=madvise): 512 times fewer page
    // faults. The fill still runs at the kernel's page-clearing speed (about 0.4 GB/s on the development VM).
    (void)::madvise(block, kFillStepBytes, MADV_HUGEPAGE);
    std::memset(block, 0x5A, kFillStepBytes);  // touched: resident, not just reserved
    filled += kFillStepBytes;
    *filled_out = filled;  // read by the parent after it reaped this process (waitpid orders it)
  }
  for (;;) {
    ::pause();
  }
}

}  // namespace

std::uint64_t mem_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    std::uint64_t kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:") {
      return kib * 1024;
    }
    meminfo.ignore(256, '\n');
  }
  return 0;
}

std::string shm_directory() {
  const char* env = std::getenv("AXON_SHM_DIR");  // NOLINT(concurrency-mt-unsafe): the single-threaded parent
  return env != nullptr && *env != '\0' ? env : "/dev/shm";
}

std::uint64_t free_bytes_in(const std::string& dir) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) {
    return 0;
  }
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

std::vector<pid_t> start_cpu_hogs(int count) {
  std::vector<pid_t> pids;
  for (int i = 0; i < count; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      spin_forever();
    }
    if (pid > 0) {
      pids.push_back(pid);
    }
  }
  return pids;
}

pid_t start_memory_filler(double fill_percent, std::uint64_t* filled, std::string& error) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    fill_memory(fill_percent, filled);
  }
  if (pid < 0) {
    error = "fork: " + error_text(errno);
  }
  return pid;
}

std::uint64_t shm_fill_bytes(const std::string& dir, std::uint64_t leave_mib, std::string& error) {
  const std::uint64_t free = free_bytes_in(dir);
  const std::uint64_t leave = leave_mib << 20;
  if (free <= leave) {
    return 0;  // already that full
  }
  const std::uint64_t bytes = free - leave;
  const auto bound = static_cast<std::uint64_t>(static_cast<double>(mem_available_bytes()) * kMaxFillPercent / 100);
  if (bytes > bound) {
    error = "shm_full: leaving " + std::to_string(leave_mib) + " MiB free in " + dir + " means writing " +
            std::to_string(bytes >> 20) + " MiB, more than " + std::to_string(static_cast<int>(kMaxFillPercent)) +
            " % of MemAvailable (" + std::to_string(bound >> 20) +
            " MiB): the machine could run out of memory. Raise leave_mib, or run with a smaller shm directory "
            "(a container's --shm-size, or AXON_SHM_DIR on a small tmpfs)";
  }
  return bytes;
}

std::string fill_file(const std::string& path, std::uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    return "shm_full: cannot create " + path + ": " + error_text(errno);
  }
  const int err = bytes == 0 ? 0 : ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  ::close(fd);
  if (err != 0) {
    ::unlink(path.c_str());
    return "shm_full: cannot allocate " + std::to_string(bytes >> 20) + " MiB in " + path + ": " + error_text(err);
  }
  return "";
}

void stop_processes(std::vector<pid_t>& pids, int timeout_ms) {
  for (const pid_t pid : pids) {
    ::kill(pid, SIGKILL);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!pids.empty() && std::chrono::steady_clock::now() < deadline) {
    std::erase_if(pids, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
    if (!pids.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace axon_bench
