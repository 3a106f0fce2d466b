// The deployment file's top-level `limits:`: the sizes of the domain's
// registry tables (DomainLimits; docs/configuration.md).
#include "src/config/config_sections.hpp"

namespace axon::detail {

DomainLimits read_limits(YamlReader& r, const YAML::Node& map) {
  DomainLimits limits;
  if (!r.expect_map(map, "limits")) {
    return limits;
  }
  r.check_keys(map, {"nodes", "topics", "publishers", "subscribers", "publishers_per_topic"}, "limits");
  struct Key {
    const char* name;
    std::uint32_t& value;
    std::uint32_t max;
  };
  for (const Key& key :
       {Key{"nodes", limits.nodes, DomainLimits::kMaxNodes}, Key{"topics", limits.topics, DomainLimits::kMaxTopics},
        Key{"publishers", limits.publishers, DomainLimits::kMaxPublishers},
        Key{"subscribers", limits.subscribers, DomainLimits::kMaxSubscribers},
        Key{"publishers_per_topic", limits.publishers_per_topic, DomainLimits::kMaxPublishersPerTopic}}) {
    if (const YAML::Node v = map[key.name]; v.IsDefined() && r.ok()) {
      key.value = static_cast<std::uint32_t>(r.integer(v, std::string("limits.") + key.name, 1, key.max));
    }
  }
  return limits;
}

}  // namespace axon::detail
