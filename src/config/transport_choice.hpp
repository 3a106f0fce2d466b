// What a topic's `transport:` means between two hosts: the rule for
// Node::transport_for(), Node::routes() and the composition root's choice of
// port, written down once (docs/configuration.md, "Status in this build").
// Not public API.
#pragma once

#include <optional>
#include <string_view>

#include "axon/deployment_config.hpp"

namespace axon::detail {

/// How messages of `topic` go from a node on `from_host` to subscribers on
/// `to_host` (host names of the config; "" for both when it lists none):
///   same host                      → kShm, whatever the topic says;
///   another host, `udp`            → kUdp;
///   another host, `auto`           → kRdma when every host of the file
///                                    names an rdma_device, else kUdp;
///   another host, `rdma`           → kRdma (the config reader made sure
///                                    every host names an rdma_device);
///   another host, `shm`            → std::nullopt: the topic stays on its host.
/// A topic not in the config (or no config) is `auto`. Does not allocate.
[[nodiscard]] std::optional<TransportKind> transport_between(const DeploymentConfig* config, std::string_view topic,
                                                             std::string_view from_host,
                                                             std::string_view to_host) noexcept;

}  // namespace axon::detail
