// What happens on one virtual host: a process moving onto it, packet loss
// injected into its firewall, the speed of its link.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tests/support/common/error_text.hpp"
#include "tests/support/common/netns.hpp"
#include "tests/support/common/run_command.hpp"

namespace axon::test {
namespace {

Error system_error(const std::string& what) { return {ErrorCode::kSystem, what + ": " + error_text(errno)}; }

std::string probability_text(double probability) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", probability);
  return text;
}

/// The iptables rule of add_packet_loss(), appended (-A) or deleted (-D).
std::vector<std::string> loss_rule(const std::string& iptables, const std::string& netns, const char* action,
                                   double probability) {
  return {"ip",
          "netns",
          "exec",
          netns,
          iptables,
          action,
          "INPUT",
          "-m",
          "statistic",
          "--mode",
          "random",
          "--probability",
          probability_text(probability),
          "-j",
          "DROP"};
}

}  // namespace

Result<void> VirtualHosts::enter(std::size_t k) const {
  const VirtualHost& h = hosts_.at(k);
  const std::string netns_path = "/run/netns/" + h.netns;
  const int fd = ::open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return system_error("open " + netns_path);
  }
  const int joined = ::setns(fd, CLONE_NEWNET);
  ::close(fd);
  if (joined != 0) {
    return system_error("setns(" + netns_path + ", CLONE_NEWNET)");
  }
  // A mount namespace of its own, private so that the /dev/shm below stays
  // on this host and nothing mounted later leaks back to the caller.
  if (::unshare(CLONE_NEWNS) != 0) {
    return system_error("unshare(CLONE_NEWNS) (the caller must be single-threaded)");
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return system_error("mount --make-rprivate /");
  }
  // The host's own tmpfs, shared by every process on it (like a computer).
  if (::mount(h.shm_dir.c_str(), "/dev/shm", nullptr, MS_BIND, nullptr) != 0) {
    return system_error("mount --bind " + h.shm_dir + " /dev/shm");
  }
  return {};
}

Result<void> VirtualHosts::set_link(std::size_t k, bool up) const {
  const VirtualHost& h = hosts_.at(k);
  if (std::string error = run_checked({"ip", "-n", h.netns, "link", "set", h.interface, up ? "up" : "down"});
      !error.empty()) {
    return Error(ErrorCode::kSystem, error);
  }
  if (up) {  // the route goes with the link
    (void)run_command({"ip", "-n", h.netns, "route", "replace", "224.0.0.0/4", "dev", h.interface});
  }
  return {};
}

Result<void> VirtualHosts::limit_rate(std::size_t k, const std::string& rate) const {
  const VirtualHost& h = hosts_.at(k);
  const std::string tc = find_program("tc");
  if (tc.empty()) {
    return Error(ErrorCode::kSystem, "tc (iproute2) is not installed: bash scripts/install-deps.sh");
  }
  if (std::string error = run_checked({"ip", "netns", "exec", h.netns, tc, "qdisc", "replace", "dev", h.interface,
                                       "root", "tbf", "rate", rate, "burst", "512kb", "latency", "50ms"});
      !error.empty()) {
    return Error(ErrorCode::kSystem, error);
  }
  return {};
}

Result<void> VirtualHosts::add_packet_loss(std::size_t k, double probability) const {
  const std::string iptables = find_program("iptables");
  if (iptables.empty()) {
    return Error(ErrorCode::kSystem, "iptables is not installed: bash scripts/install-deps.sh");
  }
  if (std::string error = run_checked(loss_rule(iptables, hosts_.at(k).netns, "-A", probability)); !error.empty()) {
    return Error(ErrorCode::kSystem, error);
  }
  return {};
}

Result<void> VirtualHosts::remove_packet_loss(std::size_t k, double probability) const {
  const std::string iptables = find_program("iptables");
  if (iptables.empty()) {
    return Error(ErrorCode::kSystem, "iptables is not installed: bash scripts/install-deps.sh");
  }
  if (std::string error = run_checked(loss_rule(iptables, hosts_.at(k).netns, "-D", probability)); !error.empty()) {
    return Error(ErrorCode::kSystem, error);
  }
  return {};
}

}  // namespace axon::test
