#include "src/config/transport_choice.hpp"

namespace axon::detail {

std::optional<TransportKind> transport_between(const DeploymentConfig* config, std::string_view topic,
                                               std::string_view from_host, std::string_view to_host) noexcept {
  if (from_host == to_host) {
    return TransportKind::kShm;
  }
  const TopicConfig* entry = config != nullptr ? config->find_topic(topic) : nullptr;
  switch (entry != nullptr ? entry->transport : TransportKind::kAuto) {
    case TransportKind::kAuto:
    case TransportKind::kUdp: return TransportKind::kUdp;
    case TransportKind::kRdma: return TransportKind::kRdma;
    case TransportKind::kShm: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace axon::detail
