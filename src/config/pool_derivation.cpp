#include "src/config/pool_derivation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace axon::detail {
namespace {

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1U << 20U) && bytes % (1U << 20U) == 0) {
    return fmt::format("{} MiB", bytes >> 20U);
  }
  if (bytes >= (1U << 10U) && bytes % (1U << 10U) == 0) {
    return fmt::format("{} KiB", bytes >> 10U);
  }
  return fmt::format("{} B", bytes);
}

struct Class {
  std::uint64_t payload_bytes = 0;
  std::uint64_t chunks = 0;
  std::vector<std::string> topics;
};

/// Index i whose merge into class i + 1 wastes the least memory: its chunks
/// grow by the difference in size (ties: the smaller class).
std::size_t cheapest_merge(const std::vector<Class>& classes) {
  std::size_t best = 0;
  std::uint64_t best_cost = UINT64_MAX;
  for (std::size_t i = 0; i + 1 < classes.size(); ++i) {
    const std::uint64_t growth = classes[i + 1].payload_bytes - classes[i].payload_bytes;
    const std::uint64_t cost =
        growth > UINT64_MAX / std::max<std::uint64_t>(classes[i].chunks, 1) ? UINT64_MAX : growth * classes[i].chunks;
    if (cost < best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace

std::uint64_t chunks_held(const TopicConfig& topic) {
  auto queue = effective_queue(topic.subscriber);  // the parser refused a conflicting QoS already
  const std::uint64_t depth = queue ? queue->depth : topic.subscriber.depth;
  const std::uint64_t history =
      topic.publisher.durability == Durability::kTransientLocal ? topic.publisher.durability_depth : 0;
  const auto in_hands = static_cast<std::uint64_t>(std::ceil(topic.rate_hz * kHoldWindowMs / 1000.0));
  const std::uint64_t held = depth + history + 1 + in_hands;
  return std::max({held, static_cast<std::uint64_t>(topic.publisher.reserved_chunks),
                   static_cast<std::uint64_t>(kMinChunksPerTopic)});
}

DerivedPool derive_chunk_classes(std::vector<TopicDemand> demands) {
  std::stable_sort(demands.begin(), demands.end(),
                   [](const TopicDemand& a, const TopicDemand& b) { return a.payload_bytes < b.payload_bytes; });
  std::vector<Class> classes;
  for (auto& demand : demands) {
    const std::uint64_t payload = rounded_payload_bytes(demand.payload_bytes);
    if (classes.empty() || classes.back().payload_bytes != payload) {
      classes.push_back(Class{.payload_bytes = payload, .chunks = 0, .topics = {}});
    }
    classes.back().chunks += demand.chunks;
    classes.back().topics.push_back(std::move(demand.topic));
  }
  while (classes.size() > kMaxDerivedClasses) {
    const std::size_t i = cheapest_merge(classes);
    Class& larger = classes[i + 1];
    larger.chunks += classes[i].chunks;
    larger.topics.insert(larger.topics.begin(), classes[i].topics.begin(), classes[i].topics.end());
    classes.erase(classes.begin() + static_cast<std::ptrdiff_t>(i));
  }
  DerivedPool pool;
  for (auto& c : classes) {
    pool.classes.push_back(
        ChunkClassConfig{.payload_bytes = static_cast<std::uint32_t>(c.payload_bytes),
                         .count = static_cast<std::uint32_t>(std::min<std::uint64_t>(c.chunks, UINT32_MAX))});
    pool.chunks.push_back(c.chunks);
    pool.topics.push_back(std::move(c.topics));
  }
  return pool;
}

std::string describe_derived_pool(const NodeConfig& node) {
  std::string text;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < node.chunk_classes.size(); ++i) {
    const ChunkClassConfig& c = node.chunk_classes[i];
    const std::vector<std::string> none;
    const auto& topics = i < node.chunk_class_topics.size() ? node.chunk_class_topics[i] : none;
    text += fmt::format("{}{} x {} ({})", text.empty() ? "" : ", ", size_text(c.payload_bytes), c.count,
                        fmt::join(topics, ", "));
    total += static_cast<std::uint64_t>(c.payload_bytes) * c.count;
  }
  return fmt::format("{}; {:.1f} MiB of payload in all", text, static_cast<double>(total) / (1U << 20U));
}

}  // namespace axon::detail
