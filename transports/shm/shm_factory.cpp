#include "axon/detail/transport_factories.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::detail {

Result<std::shared_ptr<Transport>> create_shm_transport(const std::string& node_name, const NodeOptions& options,
                                                        std::uint32_t domain_id) {
  shm::ShmConfig config{.domain_id = domain_id,
                        .node_name = node_name,
                        .shm_dir = options.shm_dir,
                        .file_mode = options.file_mode,
                        .group = options.group,
                        .chunk_classes = options.chunk_classes,
                        .liveness_period_ms = options.liveness_period_ms,
                        .prefault_memory = options.prefault_memory,
                        .lock_memory = options.lock_memory,
                        .huge_pages = options.huge_pages};
  auto transport = shm::ShmTransport::create(std::move(config));
  if (!transport) {
    return transport.error();
  }
  return std::shared_ptr<Transport>(std::move(*transport));
}

}  // namespace axon::detail
