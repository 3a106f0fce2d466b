#include "harness/system.hpp"

#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace axon_bench {
namespace {

std::int64_t to_ns(const timeval& tv) noexcept {
  return static_cast<std::int64_t>(tv.tv_sec) * 1'000'000'000 + static_cast<std::int64_t>(tv.tv_usec) * 1'000;
}

}  // namespace

std::string error_text(int err) {
  char buffer[128];
  return ::strerror_r(err, buffer, sizeof(buffer));  // GNU: returns the message (maybe not in buffer)
}

int online_cpu_count() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    return CPU_COUNT(&set);
  }
  return static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
}

std::vector<int> choose_cpu_pair(const std::vector<int>& requested) {
  if (requested.empty()) {
    if (online_cpu_count() >= 2) {
      return {0, 1};
    }
    return {-1, -1};
  }
  if (requested.size() != 2) {
    throw std::invalid_argument("--cpus takes two CPUs, e.g. --cpus 0,1 (-1 leaves a side unpinned)");
  }
  return requested;
}

std::string pin_to_cpu(int cpu) {
  if (cpu < 0) {
    return {};
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<std::size_t>(cpu), &set);
  if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
    return "cannot pin to CPU " + std::to_string(cpu) + ": " + error_text(errno) +
           " (see `taskset -pc $$` for the CPUs this shell may use)";
  }
  return {};
}

CpuTimes CpuTimes::now() noexcept {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return CpuTimes{.user_ns = to_ns(usage.ru_utime), .system_ns = to_ns(usage.ru_stime), .wall_ns = now_ns()};
}

double cpu_percent(const CpuTimes& begin, const CpuTimes& end) noexcept {
  const auto wall = static_cast<double>(end.wall_ns - begin.wall_ns);
  if (wall <= 0) {
    return 0.0;
  }
  const auto used = static_cast<double>((end.user_ns - begin.user_ns) + (end.system_ns - begin.system_ns));
  return 100.0 * used / wall;
}

std::uint32_t domain_for_case(std::size_t index) noexcept {
  return (0x4000'0000U | (static_cast<std::uint32_t>(::getpid()) << 6)) + static_cast<std::uint32_t>(index % 64);
}

void remove_domain_files(std::uint32_t domain) {
  const char* env = std::getenv("AXON_SHM_DIR");  // NOLINT(concurrency-mt-unsafe): single-threaded parent
  remove_domain_files_in(env != nullptr && *env != '\0' ? env : "/dev/shm", domain);
}

void remove_domain_files_in(const std::string& dir, std::uint32_t domain) {
  const std::string prefix = "axon_d" + std::to_string(domain) + "_";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return;
  }
  while (const dirent* entry = ::readdir(d)) {  // NOLINT(concurrency-mt-unsafe): one thread reads `d`
    if (std::string_view(entry->d_name).starts_with(prefix)) {
      ::unlink((dir + "/" + entry->d_name).c_str());
    }
  }
  ::closedir(d);
}

MachineInfo machine_info() {
  MachineInfo info;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        info.cpu_model = line.substr(line.find_first_not_of(" \t", colon + 1));
      }
      break;
    }
  }
  if (info.cpu_model.empty()) {
    info.cpu_model = "unknown";
  }
  info.cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  utsname names{};
  info.kernel = ::uname(&names) == 0 ? names.release : "unknown";
  return info;
}

}  // namespace axon_bench
