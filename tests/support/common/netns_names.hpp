// How virtual hosts are named, so that a later run can tell its own from the
// leftovers of a killed one: every name starts with "axon-<pid>-<set>".
// Internal to netns.cpp and netns_sweep.cpp.
#pragma once

#include <sys/types.h>

#include <string>

namespace axon::test {

/// Where the hosts' /dev/shm tmpfs mounts live (one directory per host).
inline constexpr const char* kVirtualHostShmRoot = "/run/axon-netns";

/// "axon-<pid>-<set>": the start of every namespace and directory name of a set.
std::string virtual_host_prefix(pid_t pid, unsigned set);

/// Unmounts (lazily) and removes one host's tmpfs directory; "" on success.
std::string unmount_virtual_host_shm(const std::string& dir);

}  // namespace axon::test
