// What the network transports report: where a topic's messages go, and the
// counters of this node's UDP participant (network_counters.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "axon/deployment_config.hpp"
#include "axon/network_counters.hpp"

namespace axon {

/// One place a topic's messages go from this node: this host (shared memory)
/// or another host (UDP), as chosen by the deployment config and discovery.
struct TopicRoute {
  std::string host;  ///< Host name from the config ("" : this host without a config).
  TransportKind transport = TransportKind::kShm;
  std::uint32_t subscribers = 0;  ///< Remote: subscriptions that host announced.
  bool reliable = false;          ///< Remote: at least one of them is RELIABLE.
};

}  // namespace axon
