// The `nodes:` section: where each node runs, its pool and memory options
// and its executors' real-time settings.
#include <fmt/format.h>

#include <algorithm>

#include "src/config/config_sections.hpp"

namespace axon::detail {
namespace {

/// Chunk classes of one pool at most (kMaxSizeClasses of transports/shm).
constexpr std::size_t kMaxChunkClasses = 16;
constexpr std::uint64_t kMaxChunkPayloadBytes = 1U << 30U;
constexpr std::uint64_t kMaxChunkCount = 1U << 20U;
constexpr std::uint64_t kMaxCpu = 4095;
/// How many times larger a fallback class may be at most (0: any).
constexpr std::uint64_t kMaxChunkFallbackRatio = 1U << 20U;

std::vector<ChunkClassConfig> read_chunk_classes(YamlReader& r, const YAML::Node& list, const std::string& what) {
  std::vector<ChunkClassConfig> classes;
  if (!r.expect_list(list, what)) {
    return classes;
  }
  if (list.size() == 0 || list.size() > kMaxChunkClasses) {
    r.fail(list, what + " must list 1 to " + std::to_string(kMaxChunkClasses) + " classes, found " +
                     std::to_string(list.size()));
    return classes;
  }
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const YAML::Node item = list[i];
    const std::string where = what + " #" + std::to_string(i + 1);
    if (!r.expect_map(item, where)) {
      break;
    }
    r.check_keys(item, {"payload_bytes", "count"}, where);
    const YAML::Node payload = r.field(item, "payload_bytes", where, true);
    const YAML::Node count = r.field(item, "count", where, true);
    if (!r.ok()) {
      break;
    }
    ChunkClassConfig c;
    c.payload_bytes = static_cast<std::uint32_t>(r.size(payload, where + " payload_bytes", 1, kMaxChunkPayloadBytes));
    c.count = static_cast<std::uint32_t>(r.integer(count, where + " count", 1, kMaxChunkCount));
    if (r.ok() && !classes.empty() && c.payload_bytes <= classes.back().payload_bytes) {
      r.fail(payload, where + " payload_bytes is " + std::to_string(c.payload_bytes) +
                          "; classes must grow strictly (the previous one holds " +
                          std::to_string(classes.back().payload_bytes) + " bytes)");
    }
    classes.push_back(c);
  }
  return classes;
}

void read_pool(YamlReader& r, const YAML::Node& map, NodeConfig& node, const std::string& what) {
  if (!r.expect_map(map, what)) {
    return;
  }
  r.check_keys(map,
               {"chunk_classes", "chunk_fallback", "prefault_memory", "lock_memory", "huge_pages", "publishers",
                "connections", "queue_slots"},
               what);
  if (const YAML::Node classes = map["chunk_classes"]; classes.IsDefined() && r.ok()) {
    if (classes.IsScalar() && classes.Scalar() == "auto") {
      node.chunk_classes_auto = true;  // derived from publishes: once the topics are read (derive_node_pools)
    } else if (classes.IsScalar()) {
      r.fail(classes, what +
                          " chunk_classes must be a list of {payload_bytes, count} or auto (sized from the "
                          "topics the node publishes), found " +
                          YamlReader::kind_of(classes));
    } else {
      node.chunk_classes = read_chunk_classes(r, classes, what + " chunk_classes");
    }
  }
  if (const YAML::Node fallback = map["chunk_fallback"];
      fallback.IsDefined() && r.ok() && r.expect_map(fallback, what + " chunk_fallback")) {
    r.check_keys(fallback, {"max_classes", "max_ratio"}, what + " chunk_fallback");
    ChunkFallback value;
    if (const YAML::Node v = fallback["max_classes"]; v.IsDefined()) {
      value.max_classes =
          static_cast<std::uint32_t>(r.integer(v, what + " chunk_fallback max_classes", 0, kMaxChunkClasses - 1));
    }
    if (const YAML::Node v = fallback["max_ratio"]; v.IsDefined()) {
      value.max_ratio = static_cast<std::uint32_t>(
          r.integer(v, what + " chunk_fallback max_ratio (0: any)", 0, kMaxChunkFallbackRatio));
    }
    node.chunk_fallback = value;
  }
  if (const YAML::Node v = map["prefault_memory"]; v.IsDefined()) {
    node.prefault_memory = r.boolean(v, what + " prefault_memory");
  }
  if (const YAML::Node v = map["lock_memory"]; v.IsDefined()) {
    node.lock_memory = r.boolean(v, what + " lock_memory");
  }
  if (const YAML::Node v = map["huge_pages"]; v.IsDefined()) {
    node.huge_pages = r.boolean(v, what + " huge_pages");
  }
  // The ranges of the shared-memory pool's tables (pool_segment.hpp,
  // shm_constants.hpp).
  if (const YAML::Node v = map["publishers"]; v.IsDefined()) {
    node.publishers = static_cast<std::uint32_t>(r.integer(v, what + " publishers", 1, 4096));
  }
  if (const YAML::Node v = map["connections"]; v.IsDefined()) {
    node.connections = static_cast<std::uint32_t>(r.integer(v, what + " connections", 1, 16384));
  }
  if (const YAML::Node v = map["queue_slots"]; v.IsDefined()) {
    node.queue_slots = static_cast<std::uint32_t>(r.integer(v, what + " queue_slots", 1, 1 << 20));
  }
}

/// `publishes:`: topic names, each once (that they are topics of the file is
/// checked once the topics are read: derive_node_pools()).
std::vector<std::string> read_publishes(YamlReader& r, const YAML::Node& list, const std::string& what) {
  std::vector<std::string> topics;
  if (!r.expect_list(list, what)) {
    return topics;
  }
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    std::string topic = r.text(list[i], what + " entry #" + std::to_string(i + 1));
    if (r.ok() && std::find(topics.begin(), topics.end(), topic) != topics.end()) {
      r.fail(list[i], fmt::format("{} lists topic '{}' twice", what, topic));
    }
    topics.push_back(std::move(topic));
  }
  return topics;
}

void read_executor(YamlReader& r, const YAML::Node& map, NodeConfig& node, const std::string& what) {
  if (!r.expect_map(map, what)) {
    return;
  }
  r.check_keys(map, {"cpu_affinity", "sched_fifo_priority"}, what);
  if (const YAML::Node cpus = map["cpu_affinity"];
      cpus.IsDefined() && r.ok() && r.expect_list(cpus, what + " cpu_affinity")) {
    for (const auto& cpu : cpus) {
      const int value = static_cast<int>(r.integer(cpu, what + " cpu_affinity entry", 0, kMaxCpu));
      for (const int seen : node.executor_thread.cpu_affinity) {
        if (seen == value && r.ok()) {
          r.fail(cpu, what + " cpu_affinity lists CPU " + std::to_string(value) + " twice");
        }
      }
      node.executor_thread.cpu_affinity.push_back(value);
    }
  }
  if (const YAML::Node priority = map["sched_fifo_priority"]; priority.IsDefined()) {
    node.executor_thread.sched_fifo_priority =
        static_cast<int>(r.integer(priority, what + " sched_fifo_priority (0: normal scheduling)", 0, 99));
  }
}

std::string resolve_host(YamlReader& r, const YAML::Node& node, const std::vector<HostConfig>& hosts,
                         const std::string& what) {
  const YAML::Node host = node["host"];
  if (!host.IsDefined()) {
    if (hosts.size() > 1) {
      std::string list;
      for (const auto& h : hosts) {
        list += (list.empty() ? "" : ", ") + h.name;
      }
      r.fail(node, what + " must say which host it runs on (host: one of " + list + ")");
    }
    return hosts.size() == 1 ? hosts.front().name : std::string();
  }
  std::string name = r.text(host, what + " host");
  if (!r.ok()) {
    return {};
  }
  if (hosts.empty()) {
    r.fail(host, what + " runs on unknown host '" + name + "': the file lists no hosts (add it under hosts:)");
    return {};
  }
  for (const auto& h : hosts) {
    if (h.name == name) {
      return name;
    }
  }
  const std::string near = closest_match(name, names_of(hosts));
  std::string known;
  for (const auto& h : hosts) {
    known += (known.empty() ? "" : ", ") + h.name;
  }
  r.fail(host, what + " runs on unknown host '" + name + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                   "; hosts: " + known);
  return {};
}

}  // namespace

std::vector<NodeConfig> read_nodes(YamlReader& r, const YAML::Node& list, const std::vector<HostConfig>& hosts) {
  std::vector<NodeConfig> nodes;
  if (!list.IsDefined() || list.IsNull() || !r.expect_list(list, "nodes")) {
    return nodes;
  }
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const YAML::Node item = list[i];
    const std::string where = "node #" + std::to_string(i + 1);
    if (!r.expect_map(item, where)) {
      break;
    }
    r.check_keys(item, {"name", "host", "publishes", "pool", "executor"}, where);
    NodeConfig node;
    node.location = location_of(item);
    node.name = r.text(r.field(item, "name", where, true), where + " name");
    const std::string what = "node '" + node.name + "'";
    if (r.ok() && (node.name.size() >= 64 || node.name.find('/') != std::string::npos)) {
      r.fail(item["name"], what + " name must have 1 to 63 characters and no '/'");
    }
    for (const auto& other : nodes) {
      if (other.name == node.name && r.ok()) {
        r.fail(item["name"], what + " is defined twice (first at line " + std::to_string(other.location.line) +
                                 "); node names must be unique");
      }
    }
    if (!r.ok()) {
      break;
    }
    node.host = resolve_host(r, item, hosts, what);
    if (const YAML::Node publishes = item["publishes"]; publishes.IsDefined() && r.ok()) {
      node.publishes = read_publishes(r, publishes, what + " publishes");
    }
    if (const YAML::Node pool = item["pool"]; pool.IsDefined() && r.ok()) {
      read_pool(r, pool, node, what + " pool");
    }
    if (const YAML::Node executor = item["executor"]; executor.IsDefined() && r.ok()) {
      read_executor(r, executor, node, what + " executor");
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace axon::detail
