// What Node::create takes from the deployment config: the file (from
// NodeOptions::config_path or AXON_CONFIG), this node's entry and host, its
// pool and memory settings, and the check that every topic has a transport
// in this build (shared memory and UDP; not RDMA). Not public API.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "axon/deployment_config.hpp"
#include "axon/options.hpp"
#include "axon/result.hpp"

namespace axon::detail {

struct NodeDeployment {
  /// nullptr when no config was given (single host, every default).
  std::shared_ptr<const DeploymentConfig> config;
  /// The host this node runs on ("" when the file lists no hosts).
  std::string host;
  /// What the file names that matched nothing ("FILE[:LINE:COLUMN]: ..."):
  /// this node missing from a file that lists others.
  std::vector<std::string> warnings;
};

/// Loads the config named by `options.config_path`, else by AXON_CONFIG (none:
/// an empty NodeDeployment). Applies this node's entry to `options`: chunk
/// classes when the code left them empty (those of `chunk_classes: auto` are
/// logged at info level, naming the topics each class serves), memory options
/// that either side turns on. Refuses what this build cannot carry: a topic
/// with transport rdma. Nodes on other hosts are fine (UDP). A node the file does not list
/// is refused when the file has several hosts or says `strict: true`, and
/// warned about when the file lists other nodes. Slow path.
Result<NodeDeployment> apply_deployment(const std::string& node_name, NodeOptions& options);

}  // namespace axon::detail
