#include "transports/udp/udp_graph.hpp"

namespace axon::udp {

std::uint64_t remote_endpoint_id(std::uint64_t participant, GraphEndpointKind kind, std::uint32_t index) noexcept {
  // A mix of the three (a bijection of the participant id, then the index and
  // kind in the low bits): distinct for the endpoints of one participant,
  // and stable while its announcement says the same.
  const std::uint64_t mixed = (participant ^ (participant >> 31U)) * 0x9E3779B97F4A7C15ULL;
  const std::uint64_t low = (std::uint64_t{index} << 1U) | (kind == GraphEndpointKind::kSubscriber ? 1U : 0U);
  return (1ULL << 63U) | ((mixed ^ low) & ~(1ULL << 63U));
}

Result<bool> UdpGraph::try_snapshot(std::string_view topic, std::vector<GraphEndpoint>& out) {
  auto local = local_.try_snapshot(topic, out);
  if (!local || !*local) {
    return local;
  }
  for (const RemoteEndpoints& remote : participant_.remote_endpoints(topic)) {
    for (const auto& [kind, count] : {std::pair{GraphEndpointKind::kPublisher, remote.publishers},
                                      std::pair{GraphEndpointKind::kSubscriber, remote.subscribers}}) {
      for (std::uint32_t i = 0; i < count; ++i) {
        out.push_back(GraphEndpoint{.kind = kind,
                                    .endpoint_id = remote_endpoint_id(remote.participant, kind, i),
                                    .node_name = {},
                                    .pid = 0,
                                    .host = remote.host});
      }
    }
  }
  return true;
}

}  // namespace axon::udp
