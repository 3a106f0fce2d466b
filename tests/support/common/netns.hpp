// Virtual hosts for multi-host tests and benchmarks: Linux network
// namespaces joined like computers on one Ethernet segment, each with its own
// /dev/shm. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2.
//
//   kBridge (2..8 hosts)            kVethPair (2 hosts)
//   h0 eth0 --+                     h0 eth0 ------ eth1 h1
//   h1 eth0 --+-- br0 (switch ns)
//   h2 eth0 --+
//
// Host k has address 10.X.Y.(k+1)/24 on eth0 (X.Y from the pid), lo up, and a
// route for 224.0.0.0/4 on eth0 so multicast discovery works. Everything is
// created inside the namespaces (no interface ever appears in the caller's
// namespace), so deleting the namespaces deletes everything.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "axon/result.hpp"

namespace axon::test {

enum class Topology {
  kBridge,    ///< Every host's eth0 on one Linux bridge in an extra "switch" namespace (one L2 segment).
  kVethPair,  ///< Two hosts, one veth pair between them (no switch): the shortest path for benchmarks.
};

struct VirtualHostsOptions {
  std::size_t hosts = 2;  ///< 2..8 (kVethPair: exactly 2).
  Topology topology = Topology::kBridge;
};

/// One virtual host's names.
struct VirtualHost {
  std::string netns;      ///< Network namespace ("axon-<pid>-<n>-h<k>", see `ip netns list`).
  std::string address;    ///< IPv4 address of `interface`, without the prefix length.
  std::string interface;  ///< "eth0" (kVethPair: "eth0" on host 0, "eth1" on host 1).
  std::string shm_dir;    ///< The tmpfs that becomes the host's /dev/shm (enter()).
};

/// Owns a set of virtual hosts; the destructor deletes the namespaces (and
/// with them the veths, the bridge and iptables rules) and the tmpfs mounts,
/// also when a test fails. Processes still inside a namespace keep it alive
/// until they exit, so kill them first (declare this object before them).
///
/// Thread safety: create() and the destructor from one thread; the const
/// methods from any thread.
class VirtualHosts {
 public:
  /// "" when this process can create virtual hosts; otherwise why not and
  /// how to run them (as root). Tests GTEST_SKIP() with it.
  static std::string unavailable_reason();

  /// Deletes leftovers of processes that died (same prefix, pid not alive),
  /// then creates the hosts. An error names the failing command and what it
  /// printed; whatever was created is deleted again.
  static Result<VirtualHosts> create(VirtualHostsOptions options = {});

  VirtualHosts(VirtualHosts&& other) noexcept;
  VirtualHosts& operator=(VirtualHosts&& other) noexcept;
  VirtualHosts(const VirtualHosts&) = delete;
  VirtualHosts& operator=(const VirtualHosts&) = delete;
  ~VirtualHosts();

  [[nodiscard]] std::size_t size() const noexcept { return hosts_.size(); }
  [[nodiscard]] const VirtualHost& host(std::size_t k) const { return hosts_.at(k); }
  [[nodiscard]] const std::vector<VirtualHost>& hosts() const noexcept { return hosts_; }

  /// Moves the calling process onto host `k`: its network namespace, a
  /// private mount namespace, and the host's tmpfs on /dev/shm. Call it in a
  /// freshly forked, single-threaded child before exec (or before creating
  /// a node); the mount namespace needs a single thread.
  [[nodiscard]] Result<void> enter(std::size_t k) const;

  /// Drops incoming packets on host `k` at random with `probability`
  /// (iptables -A INPUT -m statistic --mode random --probability P -j DROP).
  [[nodiscard]] Result<void> add_packet_loss(std::size_t k, double probability) const;
  /// Deletes the rule add_packet_loss(k, probability) added.
  [[nodiscard]] Result<void> remove_packet_loss(std::size_t k, double probability) const;

  /// Limits what host `k` sends to `rate` (tc's syntax: "1gbit", "2500mbit") with a token bucket on its
  /// interface (tc qdisc tbf; 512 KiB of burst, 50 ms of queue): a link of that speed, not memory's.
  [[nodiscard]] Result<void> limit_rate(std::size_t k, const std::string& rate) const;

  /// Takes host `k`'s interface down (a pulled cable: its processes live on
  /// but nothing gets in or out), or up again.
  [[nodiscard]] Result<void> set_link(std::size_t k, bool up) const;

  /// Deletes everything now; returns what could not be deleted ("" when
  /// all went). The destructor calls it and prints the problems to stderr.
  std::string destroy();

 private:
  VirtualHosts() = default;
  /// Creates the namespaces, links and mounts described by the members.
  [[nodiscard]] std::string build(Topology topology);

  std::string prefix_;  ///< "axon-<pid>-<n>", shared by every name of this set.
  std::vector<VirtualHost> hosts_;
  std::string switch_netns_;                ///< kBridge only.
  std::vector<std::string> created_netns_;  ///< What destroy() must delete.
  std::vector<std::string> mounted_dirs_;
};

/// Deletes namespaces and tmpfs mounts whose name has the virtual-host prefix
/// and the pid of a process that no longer exists (left by a killed test).
/// Returns what could not be deleted ("" otherwise). create() calls it.
std::string sweep_leftover_virtual_hosts();

}  // namespace axon::test
