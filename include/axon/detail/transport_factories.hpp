// How the node creates transports. Not part of the public API.
#pragma once

#include <memory>
#include <string>

#include "axon/deployment_config.hpp"
#include "axon/network.hpp"
#include "axon/options.hpp"
#include "axon/result.hpp"
#include "axon/transport.hpp"

namespace axon::detail {

/// What a node asks its network transport (transports/udp).
class NetworkView {
 public:
  virtual ~NetworkView() = default;
  /// Remote hosts that receive `topic` (this host is not listed).
  [[nodiscard]] virtual std::vector<TopicRoute> remote_routes(std::string_view topic) const = 0;
  [[nodiscard]] virtual NetworkCounters network_counters() const noexcept = 0;
};

/// A node's transport, and its network side when the deployment spans hosts.
struct NodeTransport {
  std::shared_ptr<Transport> transport;
  std::shared_ptr<NetworkView> network;  ///< nullptr: shared memory only.
};

/// Joins the node's domain over shared memory (transports/shm) and, when the
/// deployment config puts other hosts in reach, over UDP (transports/udp).
Result<NodeTransport> create_node_transport(const std::string& node_name, const NodeOptions& options,
                                            std::uint32_t domain_id, const DeploymentConfig* deployment,
                                            const std::string& host);

}  // namespace axon::detail
