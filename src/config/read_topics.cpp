// The `topics:` section: transport and QoS per topic. QoS conflicts are the
// ones effective_queue() (src/qos.cpp) refuses at subscribe(), found here at
// start instead and explained in the file's words (qos_conflict.cpp).
#include "src/config/config_sections.hpp"

namespace axon::detail {
namespace {

/// Topic names of the shared-memory registry (kMaxTopicNameBytes - 1).
constexpr std::size_t kMaxTopicNameChars = 127;
constexpr std::uint64_t kMaxDepth = 256;
constexpr std::uint64_t kMaxDurabilityDepth = 16;
constexpr std::uint64_t kMaxPayloadBytes = 1U << 30U;
/// Chunks one publisher may reserve (ChunkReservation::kMaxChunks).
constexpr std::uint64_t kMaxReservedChunks = 64;
/// One hour: longer waits are a mistake, not a policy.
constexpr double kMaxMilliseconds = 3'600'000;
/// rate_hz: from one message in about 17 minutes to 100 kHz.
constexpr double kMinRateHz = 0.001;
constexpr double kMaxRateHz = 100'000;

double read_rate_hz(YamlReader& r, const YAML::Node& node, const std::string& what) {
  const double hz = r.number(node, what + " rate_hz (messages per second)");
  if (r.ok() && (hz < kMinRateHz || hz > kMaxRateHz)) {
    r.fail(node, what + " rate_hz (messages per second) must be from 0.001 to 100000 (decimals allowed), found " +
                     node.Scalar());
  }
  return r.ok() ? hz : 0;
}

std::int64_t milliseconds_as_ns(YamlReader& r, const YAML::Node& node, const std::string& what) {
  const double ms = r.number(node, what);
  if (r.ok() && (ms < 0 || ms > kMaxMilliseconds)) {
    r.fail(node, what + " must be from 0 to 3600000 milliseconds (decimals allowed), found " + node.Scalar());
  }
  return r.ok() ? static_cast<std::int64_t>(ms * 1e6) : 0;
}

void read_subscriber_qos(YamlReader& r, const YAML::Node& item, SubscriberQos& qos, const std::string& what) {
  if (const YAML::Node v = item["history"]; v.IsDefined()) {
    qos.history = r.choice(v, what + " history", {"keep_last", "keep_all"}) == "keep_all" ? History::kKeepAll
                                                                                          : History::kKeepLast;
  }
  if (const YAML::Node v = item["depth"]; v.IsDefined()) {
    qos.depth = static_cast<std::uint32_t>(r.integer(v, what + " depth", 1, kMaxDepth));
  }
  if (const YAML::Node v = item["reliability"]; v.IsDefined()) {
    qos.reliability = r.choice(v, what + " reliability", {"best_effort", "reliable"}) == "reliable"
                          ? Reliability::kReliable
                          : Reliability::kBestEffort;
  }
  if (const YAML::Node v = item["overflow"]; v.IsDefined()) {
    const std::string overflow =
        r.choice(v, what + " overflow", {"default", "drop_oldest", "reject_newest", "latest_only", "block_publisher"});
    qos.overflow = overflow == "drop_oldest"       ? Overflow::kDropOldest
                   : overflow == "reject_newest"   ? Overflow::kRejectNewest
                   : overflow == "latest_only"     ? Overflow::kLatestOnly
                   : overflow == "block_publisher" ? Overflow::kBlockPublisher
                                                   : Overflow::kDefault;
  }
  if (const YAML::Node v = item["block_timeout_ms"]; v.IsDefined()) {
    qos.block_timeout_ns = milliseconds_as_ns(r, v, what + " block_timeout_ms");
  }
  if (const YAML::Node v = item["quarantine_after_ms"]; v.IsDefined()) {
    qos.quarantine_after_ns = milliseconds_as_ns(r, v, what + " quarantine_after_ms");
  }
  if (const YAML::Node v = item["deadline_ms"]; v.IsDefined()) {
    qos.deadline_ns = milliseconds_as_ns(r, v, what + " deadline_ms");
  }
  if (const YAML::Node v = item["verification"]; v.IsDefined()) {
    const std::string verification = r.choice(v, what + " verification", {"cross_process", "always", "never"});
    qos.verification = verification == "always"  ? Verification::kAlways
                       : verification == "never" ? Verification::kNever
                                                 : Verification::kCrossProcess;
  }
}

void read_publisher_qos(YamlReader& r, const YAML::Node& item, PublisherQos& qos, const std::string& what) {
  if (const YAML::Node v = item["durability"]; v.IsDefined()) {
    qos.durability = r.choice(v, what + " durability", {"volatile", "transient_local"}) == "transient_local"
                         ? Durability::kTransientLocal
                         : Durability::kVolatile;
  }
  if (const YAML::Node v = item["durability_depth"]; v.IsDefined()) {
    qos.durability_depth = static_cast<std::uint32_t>(r.integer(v, what + " durability_depth", 1, kMaxDurabilityDepth));
    if (r.ok() && qos.durability != Durability::kTransientLocal) {
      r.fail(v, what + " durability_depth only applies to durability: transient_local (durability is volatile)");
    }
  }
  if (const YAML::Node v = item["high_water_percent"]; v.IsDefined()) {
    qos.high_water_percent = static_cast<std::uint32_t>(r.integer(v, what + " high_water_percent", 1, 100));
  }
  if (const YAML::Node v = item["max_payload_bytes"]; v.IsDefined()) {
    qos.max_payload_bytes = r.size(v, what + " max_payload_bytes", 1, kMaxPayloadBytes);
  }
  if (const YAML::Node v = item["reserved_chunks"]; v.IsDefined()) {
    qos.reserved_chunks = static_cast<std::uint32_t>(r.integer(v, what + " reserved_chunks", 0, kMaxReservedChunks));
  }
  if (const YAML::Node v = item["beyond_reservation"]; v.IsDefined()) {
    qos.beyond_reservation = r.choice(v, what + " beyond_reservation", {"shared", "refuse"}) == "refuse"
                                 ? BeyondReservation::kRefuse
                                 : BeyondReservation::kShared;
    if (r.ok() && qos.reserved_chunks == 0) {
      r.fail(v, what + " beyond_reservation only applies with reserved_chunks (the topic reserves none)");
    }
  }
}

/// The key a QoS conflict is reported at: the setting that most likely
/// contradicts the others.
YAML::Node conflict_site(const YAML::Node& item) {
  for (const char* key : {"overflow", "quarantine_after_ms", "history", "reliability"}) {
    if (const YAML::Node v = item[key]; v.IsDefined()) {
      return v;
    }
  }
  return item;
}

TransportKind read_transport(YamlReader& r, const YAML::Node& node, const std::vector<HostConfig>& hosts,
                             const std::string& what) {
  const std::string kind = r.choice(node, what + " transport", {"auto", "shm", "udp", "rdma"});
  if (kind != "rdma") {
    return kind == "shm" ? TransportKind::kShm : kind == "udp" ? TransportKind::kUdp : TransportKind::kAuto;
  }
  if (hosts.empty()) {
    r.fail(node, what + " transport rdma needs hosts with an rdma_device, but the file lists no hosts");
  }
  for (const auto& host : hosts) {
    if (host.rdma_device.empty()) {
      r.fail(node, what + " transport rdma needs an RDMA device on every host, but host '" + host.name +
                       "' has no rdma_device; add one or use transport auto or udp");
    }
  }
  return TransportKind::kRdma;
}

}  // namespace

std::vector<TopicConfig> read_topics(YamlReader& r, const YAML::Node& list, const std::vector<HostConfig>& hosts) {
  std::vector<TopicConfig> topics;
  if (!list.IsDefined() || list.IsNull() || !r.expect_list(list, "topics")) {
    return topics;
  }
  for (std::size_t i = 0; i < list.size() && r.ok(); ++i) {
    const YAML::Node item = list[i];
    const std::string where = "topic #" + std::to_string(i + 1);
    if (!r.expect_map(item, where)) {
      break;
    }
    r.check_keys(item,
                 {"name", "transport", "history", "depth", "reliability", "overflow", "block_timeout_ms",
                  "quarantine_after_ms", "deadline_ms", "verification", "durability", "durability_depth",
                  "high_water_percent", "max_payload_bytes", "reserved_chunks", "beyond_reservation", "rate_hz"},
                 where);
    TopicConfig topic;
    topic.location = location_of(item);
    topic.name = r.text(r.field(item, "name", where, true), where + " name");
    const std::string what = "topic '" + topic.name + "'";
    if (r.ok() && topic.name.size() > kMaxTopicNameChars) {
      r.fail(item["name"], what + " name has " + std::to_string(topic.name.size()) + " characters; at most " +
                               std::to_string(kMaxTopicNameChars));
    }
    for (const auto& other : topics) {
      if (other.name == topic.name && r.ok()) {
        r.fail(item["name"], what + " is defined twice (first at line " + std::to_string(other.location.line) +
                                 "); give each topic one entry");
      }
    }
    if (const YAML::Node transport = item["transport"]; transport.IsDefined() && r.ok()) {
      topic.transport = read_transport(r, transport, hosts, what);
    }
    read_subscriber_qos(r, item, topic.subscriber, what);
    read_publisher_qos(r, item, topic.publisher, what);
    if (const YAML::Node rate = item["rate_hz"]; rate.IsDefined() && r.ok()) {
      topic.rate_hz = read_rate_hz(r, rate, what);
    }
    if (!r.ok()) {
      break;
    }
    if (auto queue = effective_queue(topic.subscriber); !queue) {
      r.fail(conflict_site(item), what + ": conflicting QoS settings: " +
                                      qos_conflict_in_file_words(item, topic.subscriber, queue.error().message()));
    }
    topics.push_back(std::move(topic));
  }
  return topics;
}

}  // namespace axon::detail
