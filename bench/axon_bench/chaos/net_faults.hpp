// The network faults of a chaos run, done in the namespaces of the virtual
// hosts (tests/support/common/netns.hpp) the components run on: loss with
// iptables' statistic match (VirtualHosts::add_packet_loss), delay and
// reordering with the netem queueing discipline (tc), partitions with
// iptables DROP rules. Each is removed by its own commands when it ends;
// deleting the namespaces removes whatever a failed run left.
#pragma once

#include <string>
#include <vector>

#include "chaos/fault_schedule.hpp"
#include "tests/support/common/netns.hpp"

namespace axon_bench {

/// The commands (argv) that put fault `f` in place and those that take it away again, for hosts named as in
/// `hosts` (by Fault::host and Fault::peer). Loss is not among them: VirtualHosts does it.
struct NetFaultCommands {
  std::vector<std::vector<std::string>> apply;
  std::vector<std::vector<std::string>> remove;
};
NetFaultCommands net_fault_commands(const std::vector<axon::test::VirtualHost>& hosts, const Fault& f);

/// Puts `f` in place. Returns "" or what failed (the command and its output); what was put in place is taken away
/// again then.
std::string apply_net_fault(const axon::test::VirtualHosts& hosts, const Fault& f);

/// Takes `f` away. Returns "" or what could not be removed.
std::string remove_net_fault(const axon::test::VirtualHosts& hosts, const Fault& f);

/// "" when the hosts can do delay and reorder (tc and the netem qdisc); else why not and what to do.
std::string netem_unavailable_reason(const axon::test::VirtualHosts& hosts);

/// What of the faults is still in place in the hosts' namespaces: iptables rules and netem qdiscs ("h0: -A INPUT
/// ..."). The hosts have none of their own, so anything listed was left by a fault.
std::vector<std::string> net_faults_left(const axon::test::VirtualHosts& hosts);

/// After VirtualHosts::destroy(): the namespaces of `hosts` (and their switch) still in /run/netns and their
/// tmpfs still in /proc/mounts.
std::vector<std::string> virtual_hosts_left(const std::vector<axon::test::VirtualHost>& hosts);

}  // namespace axon_bench
