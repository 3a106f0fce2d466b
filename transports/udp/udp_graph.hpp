// The graph of a node whose deployment spans hosts: this host's registry,
// plus the publishers and subscribers of other hosts that UDP discovery
// announced (docs/design/graph-events.md, "Other hosts"). The core sees one
// GraphSource either way.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "transports/shm/shm_graph.hpp"
#include "transports/udp/participant.hpp"

namespace axon::udp {

/// Thread safety: any thread (ShmGraph's and Participant's rules). Remote
/// endpoints change with announcements and lost participants, which move
/// the same graph word (Participant::graph_moved()).
class UdpGraph final : public GraphSource {
 public:
  UdpGraph(shm::ShmGraph& local, Participant& participant) noexcept : local_(local), participant_(participant) {}

  [[nodiscard]] WakeWord& graph_word() noexcept override { return local_.graph_word(); }
  /// This host's endpoints of `topic` (false when its registry is busy),
  /// then those of other hosts.
  Result<bool> try_snapshot(std::string_view topic, std::vector<GraphEndpoint>& out) override;

 private:
  shm::ShmGraph& local_;
  Participant& participant_;
};

/// The id of the `index`th publisher or subscriber of remote participant
/// `participant` on a topic: the top bit set, so it never equals a local
/// endpoint's (slot << 32 | generation, slots far below 2^31).
[[nodiscard]] std::uint64_t remote_endpoint_id(std::uint64_t participant, GraphEndpointKind kind,
                                               std::uint32_t index) noexcept;

}  // namespace axon::udp
