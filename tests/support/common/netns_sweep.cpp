// Leftovers of virtual hosts whose creator died before its destructor ran
// (SIGKILL, a ctest timeout): deleted by the next run that makes hosts.
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "tests/support/common/error_text.hpp"
#include "tests/support/common/netns.hpp"
#include "tests/support/common/netns_names.hpp"
#include "tests/support/common/run_command.hpp"

namespace axon::test {
namespace {

constexpr std::string_view kPrefix = "axon-";

/// The pid in "axon-<pid>-...", or 0 when `name` is not one of ours.
pid_t owner_pid(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0) {
    return 0;
  }
  const char* digits = name.c_str() + kPrefix.size();
  char* end = nullptr;
  const long pid = std::strtol(digits, &end, 10);
  if (end == digits || *end != '-' || pid <= 0) {
    return 0;
  }
  return static_cast<pid_t>(pid);
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

std::vector<std::string> entries_of_dead_owners(const char* dir) {
  std::vector<std::string> names;
  std::error_code error;  // a missing directory: nothing to sweep
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    if (const pid_t pid = owner_pid(name); pid != 0 && !alive(pid)) {
      names.push_back(std::move(name));
    }
  }
  return names;
}

void append(std::string& problems, const std::string& problem) {
  if (!problem.empty()) {
    problems += (problems.empty() ? "" : "; ") + problem;
  }
}

}  // namespace

std::string virtual_host_prefix(pid_t pid, unsigned set) {
  return std::string(kPrefix) + std::to_string(pid) + "-" + std::to_string(set);
}

std::string unmount_virtual_host_shm(const std::string& dir) {
  // MNT_DETACH: a process that still has it as /dev/shm keeps its copy.
  if (::umount2(dir.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
    return "umount " + dir + ": " + error_text(errno);
  }
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) {
    return "rmdir " + dir + ": " + error_text(errno);
  }
  return {};
}

std::string sweep_leftover_virtual_hosts() {
  std::string problems;
  for (const auto& name : entries_of_dead_owners("/run/netns")) {
    const CommandOutput out = run_command({"ip", "netns", "delete", name});
    // Another run may be sweeping the same leftover right now.
    if (out.exit_code != 0 && ::access(("/run/netns/" + name).c_str(), F_OK) == 0) {
      append(problems, "ip netns delete " + name + ": " + out.output);
    }
  }
  for (const auto& name : entries_of_dead_owners(kVirtualHostShmRoot)) {
    append(problems, unmount_virtual_host_shm(std::string(kVirtualHostShmRoot) + "/" + name));
  }
  return problems;
}

}  // namespace axon::test
