#include "src/tools/axon/play/replay_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace axon::tools {
namespace {

struct SizedClass {
  std::uint64_t payload_bytes = 0;
  std::uint64_t chunks = 0;
};

/// The pool rounds every class up to whole cache lines.
std::uint64_t rounded(std::uint64_t bytes) { return (bytes + 63) / 64 * 64; }

std::uint64_t chunks_for(const ReplayDemand& demand) {
  const double in_hands = std::ceil(std::max(demand.rate_hz, 0.0) * kReplayHoldWindowMs / 1000.0);
  return std::max(kMinReplayChunks, static_cast<std::uint64_t>(in_hands) + 2);
}

/// The class whose merge into the next larger one adds the least memory.
std::size_t cheapest_merge(const std::vector<SizedClass>& classes) {
  std::size_t best = 0;
  std::uint64_t best_cost = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i + 1 < classes.size(); ++i) {
    const std::uint64_t cost = classes[i].chunks * (classes[i + 1].payload_bytes - classes[i].payload_bytes);
    if (cost < best_cost) {
      best_cost = cost;
      best = i;
    }
  }
  return best;
}

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1U << 20U) && bytes % (1U << 20U) == 0) {
    return fmt::format("{} MiB", bytes >> 20U);
  }
  if (bytes >= 1024 && bytes % 1024 == 0) {
    return fmt::format("{} KiB", bytes >> 10U);
  }
  return fmt::format("{} B", bytes);
}

}  // namespace

std::vector<ChunkClassConfig> replay_pool_classes(std::span<const ReplayDemand> demands) {
  std::vector<SizedClass> classes;
  for (const ChunkClassConfig& c : default_chunk_classes()) {
    classes.push_back(SizedClass{.payload_bytes = rounded(c.payload_bytes), .chunks = c.count});
  }
  for (const ReplayDemand& demand : demands) {
    if (demand.payload_bytes == 0) {
      continue;  // of unknown size: the default classes serve it
    }
    const std::uint64_t payload = rounded(demand.payload_bytes);
    const auto same =
        std::find_if(classes.begin(), classes.end(), [&](const SizedClass& c) { return c.payload_bytes == payload; });
    if (same != classes.end()) {
      same->chunks += chunks_for(demand);
    } else {
      classes.push_back(SizedClass{.payload_bytes = payload, .chunks = chunks_for(demand)});
    }
  }
  std::sort(classes.begin(), classes.end(),
            [](const SizedClass& a, const SizedClass& b) { return a.payload_bytes < b.payload_bytes; });
  while (classes.size() > kMaxReplayClasses) {
    const std::size_t i = cheapest_merge(classes);
    classes[i + 1].chunks += classes[i].chunks;
    classes.erase(classes.begin() + static_cast<std::ptrdiff_t>(i));
  }
  std::vector<ChunkClassConfig> out;
  out.reserve(classes.size());
  for (const SizedClass& c : classes) {
    // A payload past the pool's 32-bit class size stays out: its loan fails and the report names it.
    if (c.payload_bytes <= std::numeric_limits<std::uint32_t>::max()) {
      out.push_back(ChunkClassConfig{.payload_bytes = static_cast<std::uint32_t>(c.payload_bytes),
                                     .count = static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                         c.chunks, std::numeric_limits<std::uint32_t>::max()))});
    }
  }
  return out;
}

std::string describe_pool(std::span<const ChunkClassConfig> classes) {
  std::string text;
  std::uint64_t total = 0;
  for (const ChunkClassConfig& c : classes) {
    text += fmt::format("{}{} x {}", text.empty() ? "" : ", ", size_text(c.payload_bytes), c.count);
    total += std::uint64_t{c.payload_bytes} * c.count;
  }
  return fmt::format("{}; {:.1f} MiB in all", text, static_cast<double>(total) / (1U << 20U));
}

}  // namespace axon::tools
