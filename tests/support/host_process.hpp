// Child processes on a virtual host (a network namespace with its own
// /dev/shm, see netns.hpp): the multi-host tests' way to start a peer or to
// run a piece of the test (a raw socket) on a host.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/common/netns.hpp"

namespace axon::test {

/// Starts `argv` on host `k` of `hosts` (VirtualHosts::enter() in the child,
/// then exec). A child that cannot enter the host prints "ERROR ..." and
/// exits with 127.
ChildProcess spawn_on_host(const VirtualHosts& hosts, std::size_t k, const std::vector<std::string>& argv);

/// Forks a child that enters host `k` and runs `body` there (its stdout is
/// captured, its exit status is what `body` returns; 127: could not enter).
ChildProcess run_on_host(const VirtualHosts& hosts, std::size_t k, const std::function<int()>& body);

/// Path of the multi-host peer program (set by CMake as AXON_NET_PEER).
std::string net_peer_path();

}  // namespace axon::test
