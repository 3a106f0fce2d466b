// The readers of each section of a deployment file (hosts, nodes, topics,
// udp, rdma), called in that order by parse_deployment_config(); each checks its
// own entries and their references to earlier sections, and
// check_placement() what spans them. Failures are recorded in the reader
// (see yaml_reader.hpp). Not public API.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "axon/deployment_config.hpp"
#include "src/config/yaml_reader.hpp"

namespace axon::detail {

/// The top-level `limits:` mapping (the domain's registry tables).
DomainLimits read_limits(YamlReader& r, const YAML::Node& map);
std::vector<HostConfig> read_hosts(YamlReader& r, const YAML::Node& list);
/// Needs the hosts: a node's host must be one of them.
std::vector<NodeConfig> read_nodes(YamlReader& r, const YAML::Node& list, const std::vector<HostConfig>& hosts);
/// Needs the hosts: an rdma topic needs an RDMA device on every host.
std::vector<TopicConfig> read_topics(YamlReader& r, const YAML::Node& list, const std::vector<HostConfig>& hosts);
/// Needs the hosts: static peers may name them.
UdpConfig read_udp(YamlReader& r, const YAML::Node& map, const std::vector<HostConfig>& hosts);
/// Needs the hosts: the section sets up their rdma_device, so some host must name one.
RdmaConfig read_rdma(YamlReader& r, const YAML::Node& map, const std::vector<HostConfig>& hosts);
/// After the topics: each node's `publishes:` names topics of the file, a
/// published topic fits the node's listed classes, and `chunk_classes: auto`
/// becomes the classes derived from those topics (pool_derivation.hpp).
/// `list` is the file's nodes: list, in the order of config.nodes.
void derive_node_pools(YamlReader& r, const YAML::Node& list, DeploymentConfig& config);
/// After every section: when nodes run on several hosts, what the UDP
/// transport needs to join them (addresses given, of one family, discovery
/// in that family). `root` is the file's top-level mapping.
void check_placement(YamlReader& r, const YAML::Node& root, const DeploymentConfig& config);

/// Why effective_queue() refused the QoS of topic entry `item` (read into
/// `qos`), in the file's keys and values; `api_message` (effective_queue()'s
/// own, in API names) for a rule it does not know.
std::string qos_conflict_in_file_words(const YAML::Node& item, const SubscriberQos& qos, std::string_view api_message);

/// A numeric IPv4 or IPv6 address (no host names: a deployment file must not
/// depend on DNS at start-up).
bool is_ip_address(std::string_view text);
/// An IPv4 address in 224.0.0.0/4 or an IPv6 address in ff00::/8.
bool is_multicast_address(std::string_view text);

/// ConfigLocation of a YAML node (1-based).
ConfigLocation location_of(const YAML::Node& node);

/// The names in `items` (for "did you mean" and "known: ..." lists).
template <class Item>
std::vector<std::string> names_of(const std::vector<Item>& items) {
  std::vector<std::string> names;
  names.reserve(items.size());
  for (const auto& item : items) {
    names.push_back(item.name);
  }
  return names;
}

}  // namespace axon::detail
