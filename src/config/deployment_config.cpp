// parse_deployment_config(): the top level of a deployment file; each section
// has its reader (read_hosts.cpp, read_nodes.cpp, read_topics.cpp,
// read_udp.cpp, read_rdma.cpp), and check_placement.cpp checks what spans sections.
#include "axon/deployment_config.hpp"

#include <fstream>
#include <sstream>

#include "src/config/config_sections.hpp"

namespace axon {
namespace {

template <class Item>
const Item* find_by_name(const std::vector<Item>& items, std::string_view name) noexcept {
  for (const auto& item : items) {
    if (item.name == name) {
      return &item;
    }
  }
  return nullptr;
}

}  // namespace

std::string_view to_string(TransportKind kind) noexcept {
  switch (kind) {
    case TransportKind::kAuto: return "auto";
    case TransportKind::kShm: return "shm";
    case TransportKind::kUdp: return "udp";
    case TransportKind::kRdma: return "rdma";
  }
  return "unknown";
}

const HostConfig* DeploymentConfig::find_host(std::string_view name) const noexcept {
  return find_by_name(hosts, name);
}
const NodeConfig* DeploymentConfig::find_node(std::string_view name) const noexcept {
  return find_by_name(nodes, name);
}
const TopicConfig* DeploymentConfig::find_topic(std::string_view name) const noexcept {
  return find_by_name(topics, name);
}

Result<DeploymentConfig> parse_deployment_config(std::string_view text, std::string_view name_for_errors) {
  detail::YamlReader r{std::string(name_for_errors)};
  DeploymentConfig config;
  config.file = std::string(name_for_errors);
  try {
    const YAML::Node root = detail::load_yaml(r, text);
    if (!r.ok()) {
      return r.error();
    }
    if (!root.IsDefined() || root.IsNull()) {
      return config;  // an empty file: every default
    }
    if (!r.expect_map(root, "a deployment file")) {
      return r.error();
    }
    r.check_keys(root, {"domain", "strict", "limits", "hosts", "nodes", "topics", "udp", "rdma"},
                 "the deployment file");
    if (const YAML::Node domain = root["domain"]; domain.IsDefined() && r.ok()) {
      config.domain = static_cast<std::uint32_t>(r.integer(domain, "domain", 0, 0xFFFF'FFFFU));
    }
    if (const YAML::Node strict = root["strict"]; strict.IsDefined() && r.ok()) {
      config.strict = r.boolean(strict, "strict");
    }
    if (const YAML::Node limits = root["limits"]; limits.IsDefined() && r.ok()) {
      config.limits = detail::read_limits(r, limits);
    }
    if (r.ok()) {
      config.hosts = detail::read_hosts(r, root["hosts"]);
    }
    if (r.ok()) {
      config.nodes = detail::read_nodes(r, root["nodes"], config.hosts);
    }
    if (r.ok()) {
      config.topics = detail::read_topics(r, root["topics"], config.hosts);
    }
    if (r.ok()) {
      detail::derive_node_pools(r, root["nodes"], config);
    }
    if (r.ok()) {
      config.udp = detail::read_udp(r, root["udp"], config.hosts);
    }
    if (r.ok()) {
      config.rdma = detail::read_rdma(r, root["rdma"], config.hosts);
    }
    if (r.ok()) {
      detail::check_placement(r, root, config);
    }
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, e.msg);
  }
  if (!r.ok()) {
    return r.error();
  }
  return config;
}

Result<DeploymentConfig> load_deployment_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Error(ErrorCode::kInvalidArgument,
                 path +
                     ": cannot open the deployment config (NodeOptions::config_path or AXON_CONFIG); check the "
                     "path, or unset it to run with defaults on one host");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_deployment_config(text.str(), path);
}

}  // namespace axon
