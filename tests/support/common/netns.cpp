#include "tests/support/common/netns.hpp"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "tests/support/common/error_text.hpp"
#include "tests/support/common/netns_names.hpp"
#include "tests/support/common/run_command.hpp"

namespace axon::test {
namespace {

constexpr std::size_t kMaxHosts = 8;

std::string errno_text(const std::string& what) { return what + ": " + error_text(errno); }

/// Whether this process may make network namespaces at all (a container
/// without CAP_SYS_ADMIN cannot, even as uid 0): a child tries.
std::string probe_unshare_net() {
  const pid_t pid = ::fork();
  if (pid < 0) {
    return errno_text("fork");
  }
  if (pid == 0) {
    ::_exit(::unshare(CLONE_NEWNET | CLONE_NEWNS) == 0 ? 0 : errno);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    return {};
  }
  const int err = WIFEXITED(status) ? WEXITSTATUS(status) : EPERM;
  return "unshare(CLONE_NEWNET | CLONE_NEWNS) failed: " + error_text(err);
}

/// The set's subnet 10.X.Y.0/24, X.Y from the pid and the set's number, so
/// that parallel runs never share a subnet (their segments are separate
/// anyway; distinct addresses keep captures and logs readable).
std::string subnet_of(pid_t pid, unsigned set) {
  const unsigned index = ((static_cast<unsigned>(pid) << 3U) | (set & 7U)) & 0xFFFFU;
  return "10." + std::to_string(index >> 8U) + "." + std::to_string(index & 0xFFU) + ".";
}

}  // namespace

std::string VirtualHosts::unavailable_reason() {
  const std::string how = "; virtual hosts are network namespaces: run as root";
  if (::geteuid() != 0) {
    return "not running as root (euid " + std::to_string(::geteuid()) + ")" + how;
  }
  if (const CommandOutput ip = run_command({"ip", "netns", "list"}); ip.exit_code != 0) {
    return "`ip netns list` failed (" + ip.output + "): install iproute2 (bash scripts/install-deps.sh)" + how;
  }
  if (const std::string unshare = probe_unshare_net(); !unshare.empty()) {
    return unshare + " (a container needs CAP_SYS_ADMIN, e.g. docker run --privileged)" + how;
  }
  return {};
}

Result<VirtualHosts> VirtualHosts::create(VirtualHostsOptions options) {
  if (options.hosts < 2 || options.hosts > kMaxHosts ||
      (options.topology == Topology::kVethPair && options.hosts != 2)) {
    return Error(ErrorCode::kInvalidArgument, "virtual hosts: 2 to 8 hosts on a bridge, exactly 2 on a veth pair");
  }
  if (std::string sweep = sweep_leftover_virtual_hosts(); !sweep.empty()) {
    std::fprintf(stderr, "virtual hosts: leftovers of earlier runs remain: %s\n", sweep.c_str());
  }
  static std::atomic<unsigned> sets{0};
  const unsigned set = sets.fetch_add(1);
  const pid_t pid = ::getpid();
  VirtualHosts hosts;
  hosts.prefix_ = virtual_host_prefix(pid, set);
  const std::string subnet = subnet_of(pid, set);
  for (std::size_t k = 0; k < options.hosts; ++k) {
    VirtualHost host;
    host.netns = hosts.prefix_ + "-h" + std::to_string(k);
    host.address = subnet + std::to_string(k + 1);
    host.interface = options.topology == Topology::kVethPair ? "eth" + std::to_string(k) : "eth0";
    host.shm_dir = std::string(kVirtualHostShmRoot) + "/" + host.netns;
    hosts.hosts_.push_back(std::move(host));
  }
  if (options.topology == Topology::kBridge) {
    hosts.switch_netns_ = hosts.prefix_ + "-sw";
  }
  if (std::string error = hosts.build(options.topology); !error.empty()) {
    if (std::string left = hosts.destroy(); !left.empty()) {
      error += "; cleaning up: " + left;
    }
    return Error(ErrorCode::kSystem, "virtual hosts: " + error);
  }
  return hosts;
}

std::string VirtualHosts::build(Topology topology) {
  std::vector<std::string> all_netns;
  if (!switch_netns_.empty()) {
    all_netns.push_back(switch_netns_);
  }
  for (const auto& h : hosts_) {
    all_netns.push_back(h.netns);
  }
  for (const auto& ns : all_netns) {
    if (std::string error = run_checked({"ip", "netns", "add", ns}); !error.empty()) {
      return error;
    }
    created_netns_.push_back(ns);
  }
  std::vector<std::vector<std::string>> commands;
  if (topology == Topology::kBridge) {
    // No IGMP snooping: with no querier on the segment the bridge would
    // otherwise stop forwarding a group some time after the first joins.
    commands.push_back({"ip", "-n", switch_netns_, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0"});
    commands.push_back({"ip", "-n", switch_netns_, "link", "set", "br0", "up"});
    for (std::size_t k = 0; k < hosts_.size(); ++k) {
      const std::string port = "port" + std::to_string(k);
      commands.push_back({"ip", "link", "add", hosts_[k].interface, "netns", hosts_[k].netns, "type", "veth", "peer",
                          "name", port, "netns", switch_netns_});
      commands.push_back({"ip", "-n", switch_netns_, "link", "set", port, "master", "br0"});
      commands.push_back({"ip", "-n", switch_netns_, "link", "set", port, "up"});
    }
  } else {
    commands.push_back({"ip", "link", "add", hosts_[0].interface, "netns", hosts_[0].netns, "type", "veth", "peer",
                        "name", hosts_[1].interface, "netns", hosts_[1].netns});
  }
  for (const auto& h : hosts_) {
    commands.push_back({"ip", "-n", h.netns, "addr", "add", h.address + "/24", "dev", h.interface});
    commands.push_back({"ip", "-n", h.netns, "link", "set", h.interface, "up"});
    commands.push_back({"ip", "-n", h.netns, "link", "set", "lo", "up"});
    commands.push_back({"ip", "-n", h.netns, "route", "add", "224.0.0.0/4", "dev", h.interface});
  }
  for (const auto& command : commands) {
    if (std::string error = run_checked(command); !error.empty()) {
      return error;
    }
  }
  ::mkdir(kVirtualHostShmRoot, 0755);
  for (const auto& h : hosts_) {
    if (::mkdir(h.shm_dir.c_str(), 01777) != 0 && errno != EEXIST) {
      return errno_text("mkdir " + h.shm_dir);
    }
    if (::mount("tmpfs", h.shm_dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
      std::string error = errno_text("mount -t tmpfs tmpfs " + h.shm_dir);
      ::rmdir(h.shm_dir.c_str());
      return error;
    }
    mounted_dirs_.push_back(h.shm_dir);
  }
  return {};
}

VirtualHosts::VirtualHosts(VirtualHosts&& other) noexcept
    : prefix_(std::move(other.prefix_)),
      hosts_(std::move(other.hosts_)),
      switch_netns_(std::move(other.switch_netns_)),
      created_netns_(std::exchange(other.created_netns_, {})),
      mounted_dirs_(std::exchange(other.mounted_dirs_, {})) {}

VirtualHosts& VirtualHosts::operator=(VirtualHosts&& other) noexcept {
  if (this != &other) {
    destroy();
    prefix_ = std::move(other.prefix_);
    hosts_ = std::move(other.hosts_);
    switch_netns_ = std::move(other.switch_netns_);
    created_netns_ = std::exchange(other.created_netns_, {});
    mounted_dirs_ = std::exchange(other.mounted_dirs_, {});
  }
  return *this;
}

VirtualHosts::~VirtualHosts() {
  if (const std::string left = destroy(); !left.empty()) {
    std::fprintf(stderr, "virtual hosts: %s\n", left.c_str());
  }
}

std::string VirtualHosts::destroy() {
  std::string problems;
  // Hosts first, then the switch: a veth goes with either of its ends.
  for (std::size_t i = created_netns_.size(); i-- > 0;) {
    if (std::string error = run_checked({"ip", "netns", "delete", created_netns_[i]}); !error.empty()) {
      problems += (problems.empty() ? "" : "; ") + error;
    }
  }
  created_netns_.clear();
  for (const auto& dir : mounted_dirs_) {
    if (std::string error = unmount_virtual_host_shm(dir); !error.empty()) {
      problems += (problems.empty() ? "" : "; ") + error;
    }
  }
  mounted_dirs_.clear();
  return problems;
}

}  // namespace axon::test
