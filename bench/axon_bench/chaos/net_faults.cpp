#include "chaos/net_faults.hpp"

#include <dirent.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

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
      c.apply.push_back(in_netns(h.netns, "tc",
                                 {"qdisc", "add", "dev", h.interface, "root", "netem", "delay",
                                  number(f.delay_ms) + "ms", number(f.jitter_ms) + "ms"}));
      c.remove.push_back(in_netns(h.netns, "tc", {"qdisc", "del", "dev", h.interface, "root"}));
      break;
    case FaultKind::kReorder:
      // netem sends `percent` of the packets at once and delays the others: those sent at once overtake them.
      c.apply.push_back(in_netns(h.netns, "tc",
                                 {"qdisc", "add", "dev", h.interface, "root", "netem", "delay",
                                  number(f.delay_ms) + "ms", "reorder", number(f.percent) + "%"}));
      c.remove.push_back(in_netns(h.netns, "tc", {"qdisc", "del", "dev", h.interface, "root"}));
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

std::string apply_net_fault(const axon::test::VirtualHosts& hosts, const Fault& f) {
  if (f.kind == FaultKind::kLoss) {
    auto added = hosts.add_packet_loss(static_cast<std::size_t>(f.host), f.percent / 100);
    return added ? "" : std::string(added.error().message());
  }
  const NetFaultCommands c = net_fault_commands(hosts.hosts(), f);
  for (std::size_t i = 0; i < c.apply.size(); ++i) {
    if (std::string error = axon::test::run_checked(c.apply[i]); !error.empty()) {
      (void)run_all({c.remove.begin(), c.remove.begin() + static_cast<std::ptrdiff_t>(std::min(i, c.remove.size()))});
      return fmt::format("{} fault: {}", fault_kind_name(f.kind), error);
    }
  }
  return "";
}

std::string remove_net_fault(const axon::test::VirtualHosts& hosts, const Fault& f) {
  if (f.kind == FaultKind::kLoss) {
    auto removed = hosts.remove_packet_loss(static_cast<std::size_t>(f.host), f.percent / 100);
    return removed ? "" : std::string(removed.error().message());
  }
  return run_all(net_fault_commands(hosts.hosts(), f).remove);
}

std::string netem_unavailable_reason(const axon::test::VirtualHosts& hosts) {
  if (axon::test::find_program("tc").empty()) {
    return "tc (iproute2) is not installed: run scripts/install-deps.sh";
  }
  const axon::test::VirtualHost& h = hosts.host(0);
  const auto probe =
      axon::test::run_command(in_netns(h.netns, "tc", {"qdisc", "add", "dev", h.interface, "root", "netem"}));
  if (probe.exit_code != 0) {
    std::string said = probe.output;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) {
      said.pop_back();
    }
    return "this kernel has no netem queueing discipline (`tc qdisc add dev " + h.interface +
           " root netem` in a virtual host said: " + said +
           "); load it with `modprobe sch_netem` or use a kernel built with CONFIG_NET_SCH_NETEM, or leave the "
           "delay and reorder faults out (loss and partition need only iptables)";
  }
  (void)axon::test::run_command(in_netns(h.netns, "tc", {"qdisc", "del", "dev", h.interface, "root"}));
  return "";
}

std::vector<std::string> net_faults_left(const axon::test::VirtualHosts& hosts) {
  std::vector<std::string> left;
  const bool have_tc = !axon::test::find_program("tc").empty();
  for (std::size_t k = 0; k < hosts.size(); ++k) {
    const axon::test::VirtualHost& h = hosts.host(k);
    const auto rules = axon::test::run_command(in_netns(h.netns, "iptables", {"-S"}));
    std::istringstream lines(rules.output);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("-A ")) {
        left.push_back(fmt::format("host {}: iptables {}", k, line));
      }
    }
    if (have_tc) {
      const auto qdiscs = axon::test::run_command(in_netns(h.netns, "tc", {"qdisc", "show", "dev", h.interface}));
      if (qdiscs.output.find("netem") != std::string::npos) {
        left.push_back(fmt::format("host {}: {}", k, qdiscs.output));
      }
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
