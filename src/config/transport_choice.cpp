#include "src/config/transport_choice.hpp"

#include <algorithm>

namespace axon::detail {
namespace {

/// `auto` takes RDMA when every host of the file names an rdma_device: then
/// every pair of hosts can use it. One host without a device makes `auto`
/// UDP for all (choosing per pair of hosts, RDMA to some and UDP to others
/// for one publisher, is not built).
bool every_host_has_rdma(const DeploymentConfig* config) noexcept {
  return config != nullptr && !config->hosts.empty() &&
         std::all_of(config->hosts.begin(), config->hosts.end(),
                     [](const HostConfig& host) { return !host.rdma_device.empty(); });
}

}  // namespace

std::optional<TransportKind> transport_between(const DeploymentConfig* config, std::string_view topic,
                                               std::string_view from_host, std::string_view to_host) noexcept {
  if (from_host == to_host) {
    return TransportKind::kShm;
  }
  const TopicConfig* entry = config != nullptr ? config->find_topic(topic) : nullptr;
  switch (entry != nullptr ? entry->transport : TransportKind::kAuto) {
    case TransportKind::kAuto: return every_host_has_rdma(config) ? TransportKind::kRdma : TransportKind::kUdp;
    case TransportKind::kUdp: return TransportKind::kUdp;
    case TransportKind::kRdma: return TransportKind::kRdma;
    case TransportKind::kShm: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace axon::detail
