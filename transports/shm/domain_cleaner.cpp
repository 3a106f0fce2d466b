// clean_domain(): what dead processes left of a domain, removed under the
// domain lock once no process uses the domain.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "axon/domain_view.hpp"
#include "src/base/errors.hpp"
#include "transports/shm/domain_files.hpp"

namespace axon {
namespace {

/// How long clean waits for the domain lock: a node holds it for a join,
/// a leave or a liveness round, never for long.
constexpr std::chrono::milliseconds kLockPatience{2000};

/// Whether a live process holds the registry (every node holds LOCK_SH on it
/// for its life): false when nobody does or there is no registry.
Result<bool> registry_in_use(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      return false;
    }
    return system_error(errno, fmt::format("open {} (run as the user the nodes run as, or as root)", path));
  }
  const bool in_use = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);  // releases the probe's lock
  return in_use;
}

/// "node 'camera' (pid 12)" for each live node of the view, comma separated.
std::string live_nodes(const DomainView& view) {
  std::string text;
  for (const ParticipantView& p : view.participants) {
    if (p.alive) {
      text += fmt::format("{}node '{}' (pid {})", text.empty() ? "" : ", ", p.name, p.pid);
    }
  }
  return text.empty() ? "a process that holds the registry open" : text;
}

Result<void> remove_files(const shm::DomainFiles& files, CleanReport& report) {
  DIR* dir = ::opendir(files.address.shm_dir.c_str());
  if (dir == nullptr) {
    return system_error(errno, fmt::format("open the directory {}", files.address.shm_dir));
  }
  const std::string prefix = files.file_prefix();
  Result<void> outcome;
  while (const dirent* entry = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): own DIR stream
    const std::string_view name = entry->d_name;
    if (!name.starts_with(prefix)) {
      continue;
    }
    std::string path = fmt::format("{}/{}", files.address.shm_dir, name);
    if (::unlink(path.c_str()) != 0) {
      outcome = system_error(errno, fmt::format("remove {}", path));
      break;
    }
    report.removed.push_back(std::move(path));
  }
  ::closedir(dir);
  return outcome;
}

}  // namespace

Result<CleanReport> clean_domain(const DomainAddress& address) {
  const shm::DomainFiles files(address);
  CleanReport report{.address = files.address, .removed = {}};
  // Before the lock: the view reads under a shared lock of its own.
  auto view = read_domain_view(address);
  // Taken with a file of its own when none is left (a node may start
  // meanwhile): removed again below, but not reported as something left.
  const bool lock_was_left = ::access(files.lock_path().c_str(), F_OK) == 0;
  auto lock = shm::OutsideLock::take(files.lock_path(), shm::OutsideLock::Kind::kExclusive, kLockPatience, true);
  if (!lock) {
    return lock.error();
  }
  if (!lock->held()) {
    return Error(ErrorCode::kInUse,
                 fmt::format("domain {}: its lock {} was held for {} ms: a process of the domain is stopped "
                             "(SIGSTOP, a debugger) or busy; continue or kill it, then run axon clean again",
                             address.domain_id, files.lock_path(), kLockPatience.count()));
  }
  auto in_use = registry_in_use(files.registry_path());
  if (!in_use) {
    return in_use.error();
  }
  if (*in_use) {
    return Error(ErrorCode::kInUse,
                 fmt::format("domain {} is in use by {}: axon clean removes only what dead processes left; stop "
                             "them first",
                             address.domain_id, view ? live_nodes(*view) : "a live process"));
  }
  if (auto removed = remove_files(files, report); !removed) {
    return removed.error();
  }
  // Last, while held: a node that opens the path next creates a new file
  // (and sees that the one it may have locked is gone).
  if (::unlink(files.lock_path().c_str()) == 0 && lock_was_left) {
    report.removed.push_back(files.lock_path());
  }
  return report;
}

}  // namespace axon
