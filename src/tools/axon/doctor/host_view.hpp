// What axon doctor may look at on a host, behind one small class so that tests can hand the checks a fake
// host: files under a root directory (/proc and /sys as the checks name them, read from root + path, so a
// temporary directory with proc/meminfo in it is a host), and the facts of this process that no file holds
// exactly (resource limits, capabilities, the free space of the shared-memory directory).
//
// Thread safety: const methods from any thread. Allocates.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace axon::tools::doctor {

/// A resource limit as getrlimit() reports it, RLIM_INFINITY as kUnlimited.
struct Limit {
  static constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
};

struct SpaceBytes {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;  ///< What an unprivileged process may still use (statvfs f_bavail).
};

/// What the checks learn from system calls rather than files: the doctor's own process, which inherited its
/// limits and capabilities from the shell (docs/tools.md says to run it as the programs run).
struct ProcessFacts {
  Limit memlock;  ///< RLIMIT_MEMLOCK, bytes.
  Limit rtprio;   ///< RLIMIT_RTPRIO, a SCHED_FIFO priority.
  bool cap_ipc_lock = false;
  bool cap_sys_nice = false;
  bool cap_net_admin = false;
  /// The directory of the domain's registry: AXON_SHM_DIR, else /dev/shm.
  std::string shm_dir = "/dev/shm";
  /// Its size and free space; nullopt when it does not exist.
  std::optional<SpaceBytes> shm_space;
};

class HostView {
 public:
  /// Files are read from `root` + their absolute path ("/" for this host).
  HostView(std::filesystem::path root, ProcessFacts facts);

  /// This host: root "/", this process's limits and capabilities, AXON_SHM_DIR or /dev/shm.
  [[nodiscard]] static HostView local();

  /// The contents of `path` ("/proc/meminfo"); nullopt when it is missing or unreadable.
  [[nodiscard]] std::optional<std::string> read(std::string_view path) const;
  /// read() with the surrounding whitespace (a sysfs file's newline) removed.
  [[nodiscard]] std::optional<std::string> read_trimmed(std::string_view path) const;
  /// The names in directory `path`, sorted; empty when it is missing.
  [[nodiscard]] std::vector<std::string> list(std::string_view path) const;
  [[nodiscard]] bool exists(std::string_view path) const;
  /// The command name (/proc/<pid>/comm) of every process, sorted, duplicates kept.
  [[nodiscard]] std::vector<std::string> process_names() const;
  [[nodiscard]] const ProcessFacts& facts() const noexcept { return facts_; }

 private:
  [[nodiscard]] std::filesystem::path under_root(std::string_view path) const;

  std::filesystem::path root_;
  ProcessFacts facts_;
};

/// `text` without leading and trailing spaces, tabs and newlines.
[[nodiscard]] std::string trim(std::string_view text);

}  // namespace axon::tools::doctor
