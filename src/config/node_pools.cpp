// derive_node_pools(): what spans a node's entry and the topics it
// publishes. Runs once every topic is read: `publishes:` must name topics of
// the file, a published topic's max_payload_bytes must fit the classes the
// node lists, and `chunk_classes: auto` becomes the classes the topics need.
#include <string>

#include "src/config/config_sections.hpp"
#include "src/config/pool_derivation.hpp"

namespace axon::detail {
namespace {

/// ChunkClassConfig::count's range in the file (read_nodes.cpp).
constexpr std::uint64_t kMaxChunkCount = 1U << 20U;

/// The topic `entry` of node `node` publishes; nullptr (and a failure) when
/// the file does not list it.
const TopicConfig* published_topic(YamlReader& r, const YAML::Node& entry, const NodeConfig& node,
                                   const std::string& name, const DeploymentConfig& config) {
  if (const TopicConfig* topic = config.find_topic(name)) {
    return topic;
  }
  const std::string near = closest_match(name, names_of(config.topics));
  r.fail(entry, "node '" + node.name + "' publishes topic '" + name +
                    "', which is not listed under topics:" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
                    "; add an entry for it there (max_payload_bytes and rate_hz size the pool of "
                    "chunk_classes: auto), or remove it from publishes:");
  return nullptr;
}

/// A published topic bigger than the largest class the node lists would be
/// refused at advertise(); say so at start, in the file's words.
void check_fits_listed_classes(YamlReader& r, const YAML::Node& entry, const NodeConfig& node,
                               const TopicConfig& topic) {
  if (node.chunk_classes.empty() ||
      topic.publisher.max_payload_bytes <= rounded_payload_bytes(node.chunk_classes.back().payload_bytes)) {
    return;
  }
  r.fail(entry, "node '" + node.name + "' publishes topic '" + topic.name + "' of max_payload_bytes " +
                    std::to_string(topic.publisher.max_payload_bytes) +
                    ", but its largest pool chunk_classes entry holds " +
                    std::to_string(node.chunk_classes.back().payload_bytes) +
                    " bytes; add a larger class, or write chunk_classes: auto to size the pool from the topics");
}

void derive_pool(YamlReader& r, const YAML::Node& item, NodeConfig& node, const DeploymentConfig& config) {
  const YAML::Node site = item["pool"]["chunk_classes"];
  const std::string what = "node '" + node.name + "' pool chunk_classes is auto";
  if (node.publishes.empty()) {
    r.fail(site, what +
                     ", which sizes the pool from the topics the node publishes, but the node has no "
                     "publishes: list; add publishes: [topic, ...] or list the classes");
    return;
  }
  std::vector<TopicDemand> demands;
  for (std::size_t i = 0; i < node.publishes.size() && r.ok(); ++i) {
    const TopicConfig* topic = config.find_topic(node.publishes[i]);
    if (topic->publisher.max_payload_bytes == 0) {
      r.fail(item["publishes"][i], what + ", but topic '" + topic->name +
                                       "' it publishes has no max_payload_bytes; give the topic the size of its "
                                       "largest message (max_payload_bytes: 64 KiB), or list the classes");
      return;
    }
    demands.push_back(TopicDemand{
        .topic = topic->name, .payload_bytes = topic->publisher.max_payload_bytes, .chunks = chunks_held(*topic)});
  }
  DerivedPool pool = derive_chunk_classes(std::move(demands));
  for (std::size_t i = 0; i < pool.chunks.size(); ++i) {
    if (pool.chunks[i] > kMaxChunkCount) {
      r.fail(site, what + ": its class of " + std::to_string(pool.classes[i].payload_bytes) + " bytes would need " +
                       std::to_string(pool.chunks[i]) +
                       " chunks, more than 1048576; lower rate_hz or depth of its "
                       "topics, or list the classes");
      return;
    }
  }
  node.chunk_classes = std::move(pool.classes);
  node.chunk_class_topics = std::move(pool.topics);
}

}  // namespace

void derive_node_pools(YamlReader& r, const YAML::Node& list, DeploymentConfig& config) {
  for (std::size_t n = 0; n < config.nodes.size() && r.ok(); ++n) {
    NodeConfig& node = config.nodes[n];
    const YAML::Node item = list[n];
    for (std::size_t i = 0; i < node.publishes.size() && r.ok(); ++i) {
      const YAML::Node entry = item["publishes"][i];
      if (const TopicConfig* topic = published_topic(r, entry, node, node.publishes[i], config)) {
        check_fits_listed_classes(r, entry, node, *topic);
      }
    }
    if (node.chunk_classes_auto && r.ok()) {
      derive_pool(r, item, node, config);
    }
  }
}

}  // namespace axon::detail
