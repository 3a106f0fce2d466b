#include <fmt/format.h>

#include "axon/detail/transport_factories.hpp"
#include "src/config/transport_choice.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/participant.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/udp_transport.hpp"

namespace axon::detail {
namespace {

/// UDP is needed when the file names another host to reach.
bool spans_hosts(const DeploymentConfig* deployment, const std::string& host) {
  return deployment != nullptr && !host.empty() &&
         (deployment->hosts.size() > 1 || !deployment->udp.static_peers.empty());
}

Result<std::uint32_t> address_of(const DeploymentConfig& deployment, const std::string& name_or_address) {
  if (const HostConfig* entry = deployment.find_host(name_or_address)) {
    return udp::parse_ipv4(entry->address.empty() ? std::string("127.0.0.1") : entry->address);
  }
  return udp::parse_ipv4(name_or_address);
}

Result<std::shared_ptr<udp::Participant>> create_participant(const std::string& node_name, std::uint32_t domain_id,
                                                             const DeploymentConfig& deployment,
                                                             const std::string& host,
                                                             std::shared_ptr<shm::ShmTransport> shm) {
  auto own = address_of(deployment, host);
  if (!own) {
    return Error(own.error().code(), fmt::format("{}: host '{}': {}", deployment.file, host, own.error().message()));
  }
  udp::ParticipantConfig config{.domain_id = domain_id,
                                .node_name = node_name,
                                .host = host,
                                .host_ipv4 = *own,
                                .udp = deployment.udp,
                                .static_peers = {}};
  for (const std::string& peer : deployment.udp.static_peers) {
    if (peer == host) {
      continue;
    }
    auto address = address_of(deployment, peer);
    if (!address) {
      return Error(address.error().code(),
                   fmt::format("{}: udp static peer '{}': {}", deployment.file, peer, address.error().message()));
    }
    config.static_peers.push_back(*address);
  }
  return udp::Participant::create(std::move(config), std::move(shm));
}

}  // namespace

Result<NodeTransport> create_node_transport(const std::string& node_name, const NodeOptions& options,
                                            std::uint32_t domain_id, const DeploymentConfig* deployment,
                                            const std::string& host) {
  shm::ShmConfig config{.domain_id = domain_id,
                        .node_name = node_name,
                        .shm_dir = options.shm_dir,
                        .file_mode = options.file_mode,
                        .group = options.group,
                        .chunk_classes = options.chunk_classes,
                        .chunk_fallback = options.chunk_fallback.value_or(ChunkFallback{}),
                        .liveness_period_ms = options.liveness_period_ms,
                        .prefault_memory = options.prefault_memory,
                        .lock_memory = options.lock_memory,
                        .huge_pages = options.huge_pages};
  auto shm = shm::ShmTransport::create(std::move(config));
  if (!shm) {
    return shm.error();
  }
  if (!spans_hosts(deployment, host)) {
    return NodeTransport{.transport = std::move(*shm), .network = nullptr};
  }
  auto participant = create_participant(node_name, domain_id, *deployment, host, *shm);
  if (!participant) {
    return participant.error();
  }
  auto stays_local = [deployment = *deployment](std::string_view topic) {
    // Any other host will do: the rule depends only on the topic here.
    return !transport_between(&deployment, topic, "this host", "another host").has_value();
  };
  auto transport = std::make_shared<udp::UdpTransport>(std::move(*shm), *participant, std::move(stays_local));
  return NodeTransport{.transport = std::move(transport), .network = std::move(*participant)};
}

}  // namespace axon::detail
