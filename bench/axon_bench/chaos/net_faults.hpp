// The network faults of a chaos run, done in the namespaces of the virtual
// hosts (tests/support/common/netns.hpp) the components run on: loss with
// iptables' statistic match (VirtualHosts::add_packet_loss), partitions with
// iptables DROP rules, delay and reordering with a delayer process in the
// host (axon-net-delay, chaos/net_delayer.hpp) that an iptables NFQUEUE rule
// hands the host's outgoing UDP packets to; it lets each go when its delay is
// over (netem's meaning; this machine's kernel has no netem, but NFQUEUE).
// Each is removed by its own commands when it ends (the rule first, then the
// delayer); deleting the namespaces removes whatever a failed run left.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chaos/fault_schedule.hpp"
#include "chaos/net_delayer.hpp"
#include "tests/support/common/netns.hpp"

namespace axon_bench {

/// The commands (argv) that put fault `f` in place and those that take it away again, for hosts named as in
/// `hosts` (by Fault::host and Fault::peer). Loss is not among them: VirtualHosts does it.
struct NetFaultCommands {
  std::vector<std::string> delayer;  ///< delay, reorder: started (until READY) before `apply`, stopped after `remove`.
  std::vector<std::vector<std::string>> apply;
  std::vector<std::vector<std::string>> remove;
};
NetFaultCommands net_fault_commands(const std::vector<axon::test::VirtualHost>& hosts, const Fault& f);

/// The seed of the delayer's draws for `f`: a hash of the fault's own fields, so the printed schedule replays the
/// same per-packet delays.
std::uint64_t delayer_seed(const Fault& f) noexcept;

/// Puts `f` in place; a delay or reorder fault's delayer goes to `delayer`. Returns "" or what failed (the command
/// and its output); what was put in place is taken away again then.
std::string apply_net_fault(const axon::test::VirtualHosts& hosts, const Fault& f, DelayerProcess& delayer);

/// What taking a fault away said.
struct NetFaultRemoval {
  std::string counts;  ///< The delayer's counts (delay, reorder), for the report.
  std::string error;   ///< "" or what could not be removed.
};

/// Takes `f` away: its rules, then its delayer (which lets every packet it holds go), waited for.
NetFaultRemoval remove_net_fault(const axon::test::VirtualHosts& hosts, const Fault& f, DelayerProcess& delayer);

/// "" when delay and reorder work in the hosts' namespaces (axon-net-delay binds an NFQUEUE queue in host 0 and
/// iptables takes an NFQUEUE rule there); else what is missing and what to do.
std::string nfqueue_unavailable_reason(const axon::test::VirtualHosts& hosts);

/// What of the faults is still in place in the hosts' namespaces: iptables rules ("host 0: iptables -A INPUT ...")
/// and processes (a delayer: "host 1: process 4711 (axon-net-delay)"). Call it when no component runs: the hosts
/// have no rule or process of their own, so anything listed was left by a fault.
std::vector<std::string> net_faults_left(const axon::test::VirtualHosts& hosts);

/// After VirtualHosts::destroy(): the namespaces of `hosts` (and their switch) still in /run/netns and their
/// tmpfs still in /proc/mounts.
std::vector<std::string> virtual_hosts_left(const std::vector<axon::test::VirtualHost>& hosts);

}  // namespace axon_bench
