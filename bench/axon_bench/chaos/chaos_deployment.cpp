#include "chaos/chaos_deployment.hpp"

#include <fmt/format.h>

namespace axon_bench {

std::string chaos_deployment_yaml(const Scenario& s, const std::vector<std::string>& addresses) {
  std::string yaml = "# written by axon-bench chaos for " + s.file + "\nhosts:\n";
  for (std::size_t k = 0; k < s.hosts.size() && k < addresses.size(); ++k) {
    yaml += fmt::format("  - {{name: {}, address: {}}}\n", s.hosts[k], addresses[k]);
  }
  yaml += "nodes:\n";
  for (const ScenarioComponent& c : s.components) {
    yaml += fmt::format("  - {{name: \"{}\", host: {}}}\n", c.name, s.hosts[static_cast<std::size_t>(c.host)]);
  }
  // Multicast discovery on the hosts' one segment; the topics take `auto`: shared memory on a host, UDP between.
  yaml += fmt::format(
      "udp:\n  discovery: {{multicast_group: 239.255.0.19, port: 7400}}\n  heartbeat_period_ms: {}\n"
      "  liveliness_timeout_ms: {}\n",
      kChaosHeartbeatMs, kChaosLivelinessTimeoutMs);
  return yaml;
}

}  // namespace axon_bench
