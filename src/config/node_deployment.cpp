#include "src/config/node_deployment.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "src/base/log.hpp"
#include "src/config/config_sections.hpp"
#include "src/config/pool_derivation.hpp"
#include "src/config/yaml_reader.hpp"

namespace axon::detail {
namespace {

std::string where(const DeploymentConfig& config, const ConfigLocation& location) {
  return location.line > 0 ? fmt::format("{}:{}:{}", config.file, location.line, location.column) : config.file;
}

/// A node the file does not list under nodes: (a misspelt name would
/// otherwise run silently with the defaults): an error when the file has
/// several hosts (where does it run?) or says strict: true, else a warning
/// when the file lists other nodes.
Result<void> check_unlisted_node(const DeploymentConfig& config, const std::string& node_name,
                                 std::vector<std::string>& warnings) {
  const std::string near = closest_match(node_name, names_of(config.nodes));
  const NodeConfig* near_entry = near.empty() ? nullptr : config.find_node(near);
  const std::string at = near_entry != nullptr ? where(config, near_entry->location) : config.file;
  const std::string did_you_mean = near.empty() ? std::string() : " (did you mean '" + near + "'?)";
  if (config.hosts.size() > 1) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: node '{}' is not listed under nodes:{}, and the file has {} hosts, so it cannot "
                             "tell where the node runs; add '- {{name: {}, host: ...}}' under nodes:",
                             at, node_name, did_you_mean, config.hosts.size(), node_name));
  }
  if (config.strict) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: node '{}' is not listed under nodes:{}, and the file says strict: true, which "
                             "requires every node to be listed; correct the name given to Node::create or in the "
                             "file, or add '- {{name: {}}}' under nodes:",
                             at, node_name, did_you_mean, node_name));
  }
  if (!config.nodes.empty()) {
    std::string listed;
    for (const auto& node : config.nodes) {
      listed += (listed.empty() ? "" : ", ") + node.name;
    }
    warnings.push_back(
        fmt::format("{}: node '{}' is not listed under nodes:{}, so none of the pool or executor "
                    "settings there apply to it and it runs with the defaults (nodes listed: {}); "
                    "correct the name, or add '- {{name: {}}}' under nodes: ('strict: true' at the "
                    "top of the file makes this an error)",
                    at, node_name, did_you_mean, listed, node_name));
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
  NodeDeployment deployment{.config = config, .host = {}, .warnings = {}};
  if (!options.domain_limits) {
    options.domain_limits = config->limits;
  }
  if (const NodeConfig* node = config->find_node(node_name)) {
    deployment.host = node->host;
    if (options.chunk_classes.empty()) {
      options.chunk_classes = node->chunk_classes;
      if (node->chunk_classes_auto) {
        logger().info("{}: node '{}' pool (chunk_classes: auto, from the topics it publishes): {}",
                      where(*config, node->location), node_name, describe_derived_pool(*node));
      }
    }
    if (!options.chunk_fallback) {
      options.chunk_fallback = node->chunk_fallback;
    }
    options.prefault_memory = options.prefault_memory || node->prefault_memory;
    options.lock_memory = options.lock_memory || node->lock_memory;
    options.huge_pages = options.huge_pages || node->huge_pages;
    if (!options.pool_publishers) {
      options.pool_publishers = node->publishers;
    }
    if (!options.pool_connections) {
      options.pool_connections = node->connections;
    }
    if (!options.pool_queue_slots) {
      options.pool_queue_slots = node->queue_slots;
    }
  } else if (auto unlisted = check_unlisted_node(*config, node_name, deployment.warnings); !unlisted) {
    return unlisted.error();
  } else if (config->hosts.size() == 1) {
    deployment.host = config->hosts.front().name;
  }
  if (!options.domain_id && config->domain) {
    const char* env = std::getenv("AXON_DOMAIN");  // NOLINT(concurrency-mt-unsafe): start-up only
    if (env == nullptr || *env == '\0') {
      options.domain_id = config->domain;
    }
  }
  return deployment;
}

}  // namespace axon::detail
