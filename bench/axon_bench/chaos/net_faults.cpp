#include "chaos/net_faults.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "axon/type_identity.hpp"
#include "net_delay/delayer_protocol.hpp"
#include "tests/support/common/run_command.hpp"

namespace axon_bench {
namespace {

using Argv = std::vector<std::string>;

/// `program` (found in PATH, /usr/sbin or /sbin) with `args`, run in network namespace `netns`.
Argv in_netns(const std::string& netns, const std::string& program, std::initializer_list<std::string> args) {
  const std::string path = axon::test::find_program(program);
  Argv argv{"ip", "netns", "exec", netns, path.empty() ? program : path};
  argv.insert(argv.end(), args);
  return argv;
}

std::string number(double value) { return fmt::format("{}", value); }

/// How long a delayer may take to bind its queue, and to let its packets go and exit.
constexpr int kDelayerStartMs = 5000;
constexpr int kDelayerStopMs = 5000;

/// The NFQUEUE rule that hands host `h`'s outgoing UDP packets to its delayer; `action` -A or -D. --queue-bypass:
/// with no delayer bound (it died) the packets pass instead of being dropped.
Argv delayer_rule(const axon::test::VirtualHost& h, const std::string& action) {
  return in_netns(h.netns, "iptables",
                  {action, "OUTPUT", "-o", h.interface, "-p", "udp", "-j", "NFQUEUE", "--queue-num",
                   std::to_string(kDelayerQueue), "--queue-bypass"});
}

/// `ip netns exec NS .../axon-net-delay --queue Q --delay-ms D ...`; the bare name when it was not built.
Argv delayer_command(const axon::test::VirtualHost& h, const Fault& f) {
  const std::string path = delayer_program_path();
  const bool reorder = f.kind == FaultKind::kReorder;
  return {"ip",
          "netns",
          "exec",
          h.netns,
          path.empty() ? kDelayerProgram : path,
          "--queue",
          std::to_string(kDelayerQueue),
          "--delay-ms",
          number(f.delay_ms),
          "--jitter-ms",
          number(reorder ? 0 : f.jitter_ms),
          "--immediate-percent",
          number(reorder ? f.percent : 0),
          "--seed",
          std::to_string(delayer_seed(f))};
}

/// The identity (device, inode) of a namespace file; {0, 0} when it cannot be read.
std::pair<dev_t, ino_t> namespace_id(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? std::pair{st.st_dev, st.st_ino} : std::pair<dev_t, ino_t>{0, 0};
}

/// The processes whose network namespace is `netns` ("4711 (axon-net-delay)").
std::vector<std::string> processes_in(const std::string& netns) {
  std::vector<std::string> found;
  const auto wanted = namespace_id("/run/netns/" + netns);
  if (wanted.second == 0) {
    return found;
  }
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* entry = ::readdir(proc)) {  // NOLINT(concurrency-mt-unsafe): one thread reads `proc`
      const int pid = std::atoi(entry->d_name);
      if (pid > 0 && namespace_id(fmt::format("/proc/{}/ns/net", pid)) == wanted) {
        std::ifstream comm(fmt::format("/proc/{}/comm", pid));
        std::string name;
        std::getline(comm, name);
        found.push_back(fmt::format("{} ({})", pid, name));
      }
    }
    ::closedir(proc);
  }
  return found;
}

/// The partition rules of host `h` against `other` (-1: against everyone through its interface), `action` -I or -D.
std::vector<Argv> partition_rules(const axon::test::VirtualHost& h, const axon::test::VirtualHost* other,
                                  const std::string& action) {
  if (other == nullptr) {
    return {in_netns(h.netns, "iptables", {action, "INPUT", "-i", h.interface, "-j", "DROP"}),
            in_netns(h.netns, "iptables", {action, "OUTPUT", "-o", h.interface, "-j", "DROP"})};
  }
  // Both directions, multicast discovery and heartbeats included: dropped where they arrive.
  return {in_netns(h.netns, "iptables", {action, "INPUT", "-s", other->address, "-j", "DROP"}),
          in_netns(h.netns, "iptables", {action, "OUTPUT", "-d", other->address, "-j", "DROP"})};
}

std::string run_all(const std::vector<Argv>& commands) {
  std::string errors;
  for (const Argv& argv : commands) {
    if (std::string error = axon::test::run_checked(argv); !error.empty()) {
      errors += (errors.empty() ? "" : "; ") + error;
    }
  }
  return errors;
}

}  // namespace

NetFaultCommands net_fault_commands(const std::vector<axon::test::VirtualHost>& hosts, const Fault& f) {
  NetFaultCommands c;
  if (!is_network_fault(f.kind) || f.host < 0 || static_cast<std::size_t>(f.host) >= hosts.size()) {
    return c;
  }
  const axon::test::VirtualHost& h = hosts[static_cast<std::size_t>(f.host)];
  switch (f.kind) {
    case FaultKind::kDelay:
    case FaultKind::kReorder:
      // The delayer holds each packet (reorder: all but `percent`, which go at once and overtake the others).
      c.delayer = delayer_command(h, f);
      c.apply.push_back(delayer_rule(h, "-A"));
      c.remove.push_back(delayer_rule(h, "-D"));
      break;
    case FaultKind::kPartition:
      if (f.peer < 0) {
        c.apply = partition_rules(h, nullptr, "-I");
        c.remove = partition_rules(h, nullptr, "-D");
      } else {
        const axon::test::VirtualHost& p = hosts.at(static_cast<std::size_t>(f.peer));
        c.apply = partition_rules(h, &p, "-I");
        c.remove = partition_rules(h, &p, "-D");
        for (auto& argv : partition_rules(p, &h, "-I")) {
          c.apply.push_back(std::move(argv));
        }
        for (auto& argv : partition_rules(p, &h, "-D")) {
          c.remove.push_back(std::move(argv));
        }
      }
      break;
    default: break;  // loss: VirtualHosts::add_packet_loss
  }
  return c;
}

std::uint64_t delayer_seed(const Fault& f) noexcept {
  // FNV-1a (axon's type hash) over the fields that name the fault.
  return axon::detail::fnv1a(
      fmt::format("{} {} {} {} {} {}", fault_kind_name(f.kind), f.at_s, f.host, f.delay_ms, f.jitter_ms, f.percent));
}

std::string apply_net_fault(const axon::test::VirtualHosts& hosts, const Fault& f, DelayerProcess& delayer) {
  if (f.kind == FaultKind::kLoss) {
    auto added = hosts.add_packet_loss(static_cast<std::size_t>(f.host), f.percent / 100);
    return added ? "" : std::string(added.error().message());
  }
  const NetFaultCommands c = net_fault_commands(hosts.hosts(), f);
  // The delayer binds its queue before the rule hands it packets.
  if (!c.delayer.empty()) {
    if (std::string error = start_delayer(c.delayer, kDelayerStartMs, delayer); !error.empty()) {
      return fmt::format("{} fault: {}", fault_kind_name(f.kind), error);
    }
  }
  for (std::size_t i = 0; i < c.apply.size(); ++i) {
    if (std::string error = axon::test::run_checked(c.apply[i]); !error.empty()) {
      (void)run_all({c.remove.begin(), c.remove.begin() + static_cast<std::ptrdiff_t>(std::min(i, c.remove.size()))});
      (void)stop_delayer(delayer, kDelayerStopMs);
      return fmt::format("{} fault: {}", fault_kind_name(f.kind), error);
    }
  }
  return "";
}

NetFaultRemoval remove_net_fault(const axon::test::VirtualHosts& hosts, const Fault& f, DelayerProcess& delayer) {
  NetFaultRemoval removal;
  if (f.kind == FaultKind::kLoss) {
    auto removed = hosts.remove_packet_loss(static_cast<std::size_t>(f.host), f.percent / 100);
    removal.error = removed ? "" : std::string(removed.error().message());
    return removal;
  }
  // The rule first: no packet reaches the queue once the delayer is told to go.
  removal.error = run_all(net_fault_commands(hosts.hosts(), f).remove);
  DelayerExit exit = stop_delayer(delayer, kDelayerStopMs);
  removal.counts = std::move(exit.counts);
  if (!exit.error.empty()) {
    removal.error += (removal.error.empty() ? "" : "; ") + exit.error;
  }
  return removal;
}

std::string nfqueue_unavailable_reason(const axon::test::VirtualHosts& hosts) {
  if (delayer_program_path().empty()) {
    return fmt::format(
        "{} is not next to this axon-bench: it is built with it where libnetfilter_queue is installed (run "
        "scripts/install-deps.sh, which installs libnetfilter-queue-dev, then configure and build again)",
        kDelayerProgram);
  }
  if (axon::test::find_program("iptables").empty()) {
    return "iptables is not installed: run scripts/install-deps.sh";
  }
  // A delay fault of 1 ms on host 0, put in place and taken away: the delayer binds its queue and iptables takes
  // the NFQUEUE rule.
  const Fault probe{.kind = FaultKind::kDelay, .for_s = 1, .host = 0, .delay_ms = 1};
  DelayerProcess delayer;
  const std::string failed = apply_net_fault(hosts, probe, delayer);
  const NetFaultRemoval removal = failed.empty() ? remove_net_fault(hosts, probe, delayer) : NetFaultRemoval{};
  if (failed.empty() && removal.error.empty()) {
    return "";
  }
  return fmt::format(
      "NFQUEUE does not work in a virtual host ({}); the kernel needs CONFIG_NETFILTER_NETLINK_QUEUE and "
      "CONFIG_NETFILTER_XT_TARGET_NFQUEUE (as modules: `modprobe nfnetlink_queue xt_NFQUEUE`), or leave the delay "
      "and reorder faults out (loss and partition need only iptables)",
      failed.empty() ? removal.error : failed);
}

std::vector<std::string> net_faults_left(const axon::test::VirtualHosts& hosts) {
  std::vector<std::string> left;
  for (std::size_t k = 0; k < hosts.size(); ++k) {
    const axon::test::VirtualHost& h = hosts.host(k);
    const auto rules = axon::test::run_command(in_netns(h.netns, "iptables", {"-S"}));
    std::istringstream lines(rules.output);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("-A ")) {
        left.push_back(fmt::format("host {}: iptables {}", k, line));
      }
    }
    for (const std::string& process : processes_in(h.netns)) {
      left.push_back(fmt::format("host {}: process {}", k, process));
    }
  }
  return left;
}

std::vector<std::string> virtual_hosts_left(const std::vector<axon::test::VirtualHost>& hosts) {
  std::vector<std::string> left;
  if (hosts.empty()) {
    return left;
  }
  // Every name of the set shares the prefix of host 0's namespace ("axon-<pid>-<n>-h0").
  const std::string& first = hosts.front().netns;
  const std::string prefix = first.substr(0, first.rfind('-') + 1);
  if (DIR* d = ::opendir("/run/netns")) {
    while (const dirent* entry = ::readdir(d)) {  // NOLINT(concurrency-mt-unsafe): one thread reads `d`
      if (std::string(entry->d_name).starts_with(prefix)) {
        left.push_back(fmt::format("network namespace {}", entry->d_name));
      }
    }
    ::closedir(d);
  }
  std::ifstream mounts("/proc/mounts");
  for (std::string line; std::getline(mounts, line);) {
    for (const axon::test::VirtualHost& h : hosts) {
      if (line.find(" " + h.shm_dir + " ") != std::string::npos) {
        left.push_back(fmt::format("mount {}", h.shm_dir));
      }
    }
  }
  return left;
}

}  // namespace axon_bench
