#include "scenario/component_pool.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace axon_bench {
namespace {

/// Per topic beyond its queue depth: the loan being written and samples subscribers hold.
constexpr std::uint32_t kExtraChunks = 4;

}  // namespace

std::vector<axon::ChunkClassConfig> component_chunk_classes(const Scenario& s, const ScenarioComponent& c) {
  std::vector<axon::ChunkClassConfig> classes;
  for (const int topic : c.publishes) {
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(topic)];
    const auto bytes = static_cast<std::uint32_t>(t.payload_bytes);
    auto found = std::find_if(classes.begin(), classes.end(), [&](const auto& k) { return k.payload_bytes == bytes; });
    if (found == classes.end()) {
      classes.push_back({.payload_bytes = bytes, .count = 0});
      found = classes.end() - 1;
    }
    found->count += t.depth + kExtraChunks;
  }
  std::sort(classes.begin(), classes.end(),
            [](const auto& a, const auto& b) { return a.payload_bytes < b.payload_bytes; });
  return classes;
}

}  // namespace axon_bench
