#include "src/config/transport_choice.hpp"

#include <algorithm>

namespace axon::detail {
namespace {

/// Whether the file names an rdma_device for `host`.
bool has_rdma_device(const DeploymentConfig* config, std::string_view host) noexcept {
  const HostConfig* entry = config != nullptr ? config->find_host(host) : nullptr;
  return entry != nullptr && !entry->rdma_device.empty();
}

}  // namespace

std::optional<TransportKind> transport_between(const DeploymentConfig* config, std::string_view topic,
                                               std::string_view from_host, std::string_view to_host) noexcept {
  if (from_host == to_host) {
    return TransportKind::kShm;
  }
  const TopicConfig* entry = config != nullptr ? config->find_topic(topic) : nullptr;
  switch (entry != nullptr ? entry->transport : TransportKind::kAuto) {
    case TransportKind::kAuto:
      // Per pair: RDMA needs a device at both ends.
      return has_rdma_device(config, from_host) && has_rdma_device(config, to_host) ? TransportKind::kRdma
                                                                                    : TransportKind::kUdp;
    case TransportKind::kUdp: return TransportKind::kUdp;
    case TransportKind::kRdma: return TransportKind::kRdma;
    case TransportKind::kShm: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<TransportKind> transport_beyond(const DeploymentConfig* config, std::string_view topic,
                                              std::string_view from_host) noexcept {
  bool other_host = false;
  bool all_rdma = true;
  if (config != nullptr) {
    for (const HostConfig& host : config->hosts) {
      if (host.name == from_host) {
        continue;
      }
      const std::optional<TransportKind> kind = transport_between(config, topic, from_host, host.name);
      if (!kind) {
        return std::nullopt;  // transport: shm
      }
      other_host = true;
      all_rdma = all_rdma && *kind == TransportKind::kRdma;
    }
  }
  if (!other_host) {
    // Other hosts only as udp.static_peers the file does not name (no device
    // known there), or none at all.
    return from_host.empty() ? std::optional(TransportKind::kShm)
                             : transport_between(config, topic, from_host, std::string_view{});
  }
  return all_rdma ? TransportKind::kRdma : TransportKind::kUdp;
}

}  // namespace axon::detail
