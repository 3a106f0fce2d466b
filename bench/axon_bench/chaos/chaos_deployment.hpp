// The deployment config of a chaos run whose components name virtual hosts:
// the hosts with their addresses, each component's node on its host, and the
// UDP transport between them (discovery, heartbeats, the liveliness lease
// the partition checks count on). docs/configuration.md.
#pragma once

#include <string>
#include <vector>

#include "scenario/scenario_config.hpp"

namespace axon_bench {

/// The hosts' heartbeat and liveliness lease: a host silent this long is lost (publisher-lost handlers fire).
inline constexpr int kChaosHeartbeatMs = 100;
inline constexpr int kChaosLivelinessTimeoutMs = 1000;

/// The YAML text for scenario `s`, host k of `s.hosts` at `addresses[k]`.
std::string chaos_deployment_yaml(const Scenario& s, const std::vector<std::string>& addresses);

}  // namespace axon_bench
