#include "src/config/node_deployment.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace axon::detail {
namespace {

std::string where(const DeploymentConfig& config, const ConfigLocation& location) {
  return location.line > 0 ? fmt::format("{}:{}:{}", config.file, location.line, location.column) : config.file;
}

/// This build has the shared-memory and UDP transports; RDMA is not built.
/// `auto` never needs it: between hosts it picks UDP (transport_choice.hpp).
Result<void> check_transports(const DeploymentConfig& config) {
  for (const auto& topic : config.topics) {
    if (topic.transport == TransportKind::kRdma) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("{}: topic '{}' asks for transport rdma, but the RDMA transport is not in this build; "
                               "use transport udp, or auto (shared memory on one host, UDP between hosts)",
                               where(config, topic.location), topic.name));
    }
  }
  return {};
}

std::string config_path(const NodeOptions& options) {
  if (!options.config_path.empty()) {
    return options.config_path;
  }
  const char* env = std::getenv("AXON_CONFIG");  // NOLINT(concurrency-mt-unsafe): start-up only
  return env != nullptr ? std::string(env) : std::string();
}

}  // namespace

Result<NodeDeployment> apply_deployment(const std::string& node_name, NodeOptions& options) {
  const std::string path = config_path(options);
  if (path.empty()) {
    return NodeDeployment{};
  }
  auto loaded = load_deployment_config(path);
  if (!loaded) {
    return loaded.error();
  }
  auto config = std::make_shared<const DeploymentConfig>(std::move(*loaded));
  NodeDeployment deployment{.config = config, .host = {}};
  if (const NodeConfig* node = config->find_node(node_name)) {
    deployment.host = node->host;
    if (options.chunk_classes.empty()) {
      options.chunk_classes = node->chunk_classes;
    }
    if (!options.chunk_fallback) {
      options.chunk_fallback = node->chunk_fallback;
    }
    options.prefault_memory = options.prefault_memory || node->prefault_memory;
    options.lock_memory = options.lock_memory || node->lock_memory;
    options.huge_pages = options.huge_pages || node->huge_pages;
  } else if (config->hosts.size() > 1) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: node '{}' is not listed under nodes:, and the file has {} hosts, so it cannot "
                             "tell where the node runs; add '- {{name: {}, host: ...}}' under nodes:",
                             config->file, node_name, config->hosts.size(), node_name));
  } else if (config->hosts.size() == 1) {
    deployment.host = config->hosts.front().name;
  }
  if (!options.domain_id && config->domain) {
    const char* env = std::getenv("AXON_DOMAIN");  // NOLINT(concurrency-mt-unsafe): start-up only
    if (env == nullptr || *env == '\0') {
      options.domain_id = config->domain;
    }
  }
  if (auto ok = check_transports(*config); !ok) {
    return ok.error();
  }
  return deployment;
}

}  // namespace axon::detail
