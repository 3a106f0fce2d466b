#include "scenario/component_pool.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace axon_bench {
namespace {

/// Per topic beyond its queue depth: the loan being written and samples subscribers hold.
constexpr std::uint32_t kExtraChunks = 4;
/// Per topic received from another host, beyond that: messages being reassembled at once.
constexpr std::uint32_t kReassemblyChunks = 8;

void add_chunks(std::vector<axon::ChunkClassConfig>& classes, const ScenarioTopic& t, std::uint32_t count) {
  const auto bytes = static_cast<std::uint32_t>(t.payload_bytes);
  auto found = std::find_if(classes.begin(), classes.end(), [&](const auto& k) { return k.payload_bytes == bytes; });
  if (found == classes.end()) {
    classes.push_back({.payload_bytes = bytes, .count = 0});
    found = classes.end() - 1;
  }
  found->count += count;
}

void sort_classes(std::vector<axon::ChunkClassConfig>& classes) {
  std::sort(classes.begin(), classes.end(),
            [](const auto& a, const auto& b) { return a.payload_bytes < b.payload_bytes; });
}

}  // namespace

std::vector<axon::ChunkClassConfig> component_chunk_classes(const Scenario& s, const ScenarioComponent& c) {
  std::vector<axon::ChunkClassConfig> classes;
  for (const int topic : c.publishes) {
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(topic)];
    add_chunks(classes, t, t.depth + kExtraChunks);
  }
  sort_classes(classes);
  return classes;
}

std::vector<axon::ChunkClassConfig> component_chunk_classes_on_hosts(const Scenario& s, const ScenarioComponent& c) {
  std::vector<axon::ChunkClassConfig> classes = component_chunk_classes(s, c);
  for (const int topic : c.subscribes) {
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(topic)];
    if (s.components[static_cast<std::size_t>(t.publisher)].host != c.host) {
      add_chunks(classes, t, t.depth + kExtraChunks + kReassemblyChunks);
    }
  }
  sort_classes(classes);
  return classes;
}

}  // namespace axon_bench
