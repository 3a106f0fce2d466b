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
///   another host, `auto`           → kRdma when both hosts name an
///                                    rdma_device, else kUdp (per pair: one
///                                    publish may reach some hosts by RDMA
///                                    and others by UDP);
///   another host, `rdma`           → kRdma (the config reader made sure
///                                    every host names an rdma_device);
///   another host, `shm`            → std::nullopt: the topic stays on its host.
/// A topic not in the config (or no config) is `auto`. Does not allocate.
[[nodiscard]] std::optional<TransportKind> transport_between(const DeploymentConfig* config, std::string_view topic,
                                                             std::string_view from_host,
                                                             std::string_view to_host) noexcept;

/// How `topic` leaves `from_host` as one answer (Node::transport_for()):
/// std::nullopt for `transport: shm`; kRdma when every other host of the
/// file is reached by RDMA; else kUdp (some or all by UDP: Node::routes()
/// says which per host). Without other hosts in the file: as toward a host
/// it does not name (kShm when `from_host` is "" too). Does not allocate.
[[nodiscard]] std::optional<TransportKind> transport_beyond(const DeploymentConfig* config, std::string_view topic,
                                                            std::string_view from_host) noexcept;

}  // namespace axon::detail
