#include "tests/support/host_process.hpp"

#include <cstdio>

namespace axon::test {
namespace {

std::string enter_host(const VirtualHosts& hosts, std::size_t k) {
  if (auto entered = hosts.enter(k); !entered) {
    return "entering virtual host " + std::to_string(k) + ": " + std::string(entered.error().message());
  }
  return {};
}

}  // namespace

ChildProcess spawn_on_host(const VirtualHosts& hosts, std::size_t k, const std::vector<std::string>& argv) {
  return ChildProcess::spawn(argv, [&hosts, k] { return enter_host(hosts, k); });
}

ChildProcess run_on_host(const VirtualHosts& hosts, std::size_t k, const std::function<int()>& body) {
  return ChildProcess::fork_and_run([&]() -> int {
    if (const std::string error = enter_host(hosts, k); !error.empty()) {
      std::printf("ERROR %s\n", error.c_str());
      return 127;
    }
    return body();
  });
}

std::string net_peer_path() { return AXON_NET_PEER; }

}  // namespace axon::test
