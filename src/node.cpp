#include "axon/node.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "axon/detail/transport_factories.hpp"
#include "src/base/log.hpp"
#include "src/config/config_usage.hpp"
#include "src/config/node_deployment.hpp"
#include "src/config/transport_choice.hpp"

namespace axon {
namespace {

Result<std::uint32_t> domain_from_environment() {
  const char* text = std::getenv("AXON_DOMAIN");  // NOLINT(concurrency-mt-unsafe): start-up only
  if (text == nullptr || *text == '\0') {
    return 0U;
  }
  char* end = nullptr;
  const unsigned long value = std::strtoul(text, &end, 10);
  if (*end != '\0' || value > 0xFFFFFFFFUL) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("AXON_DOMAIN='{}' is not a domain id (an integer 0..4294967295)", text));
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace

std::vector<ChunkClassConfig> default_chunk_classes() {
  return {{.payload_bytes = 256, .count = 1024},          {.payload_bytes = 4096, .count = 256},
          {.payload_bytes = 64 * 1024, .count = 64},      {.payload_bytes = 1024 * 1024, .count = 8},
          {.payload_bytes = 4 * 1024 * 1024, .count = 4}, {.payload_bytes = 16 * 1024 * 1024, .count = 2}};
}

Result<void> Node::check_data_path(std::string_view topic, DataPath path, bool require_zero_copy,
                                   std::string_view role) {
  if (require_zero_copy && path != DataPath::kZeroCopy) {
    return Error(ErrorCode::kRequirementNotMet,
                 fmt::format("{} of topic '{}' requires zero copy, but its message type travels {}; use a raw "
                             "struct or a FlatBuffers table, or drop require_zero_copy",
                             role, topic, to_string(path)));
  }
  return {};
}

void Node::log_data_path(std::string_view topic, std::string_view serializer, DataPath path, std::string_view role) {
  logger().debug("{} of topic '{}': {} messages, data path {}", role, topic, serializer, to_string(path));
}

TransportKind Node::transport_for(std::string_view topic) const noexcept {
  if (network_ == nullptr) {
    return TransportKind::kShm;
  }
  return detail::transport_beyond(deployment_.get(), topic, host_).value_or(TransportKind::kShm);
}

std::vector<TopicRoute> Node::routes(std::string_view topic) const {
  std::vector<TopicRoute> routes{TopicRoute{.host = host_, .transport = TransportKind::kShm}};
  if (network_ != nullptr && transport_for(topic) != TransportKind::kShm) {
    for (TopicRoute& remote : network_->remote_routes(topic)) {
      routes.push_back(std::move(remote));
    }
  }
  return routes;
}

NetworkCounters Node::network_counters() const noexcept {
  return network_ != nullptr ? network_->network_counters() : NetworkCounters{};
}

ThreadOptions Node::executor_thread_options() const {
  const NodeConfig* entry = deployment_ ? deployment_->find_node(name_) : nullptr;
  return entry != nullptr ? entry->executor_thread : ThreadOptions{};
}

std::vector<std::string> Node::config_warnings() const {
  return config_usage_ != nullptr ? config_usage_->warnings() : std::vector<std::string>{};
}

PublisherQos Node::publisher_qos_for(std::string_view topic, const std::optional<PublisherQos>& code) const {
  if (config_usage_ != nullptr) {
    config_usage_->note_topic(topic);
  }
  if (code) {
    return *code;  // given in code: used as it is, the defaults too
  }
  const TopicConfig* entry = deployment_ ? deployment_->find_topic(topic) : nullptr;
  return entry != nullptr ? entry->publisher : PublisherQos{};
}

SubscriberQos Node::subscriber_qos_for(std::string_view topic, const std::optional<SubscriberQos>& code) const {
  if (config_usage_ != nullptr) {
    config_usage_->note_topic(topic);
  }
  if (code) {
    return *code;
  }
  const TopicConfig* entry = deployment_ ? deployment_->find_topic(topic) : nullptr;
  return entry != nullptr ? entry->subscriber : SubscriberQos{};
}

Result<std::shared_ptr<Node>> Node::create(std::string name, NodeOptions options) {
  if (name.empty() || name.size() >= 64 || name.find('/') != std::string::npos) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("node name '{}' must have 1 to 63 characters and no '/'", name));
  }
  auto placement = detail::apply_deployment(name, options);
  if (!placement) {
    return placement.error();
  }
  std::uint32_t domain = 0;
  if (options.domain_id) {
    domain = *options.domain_id;
  } else {
    auto from_env = domain_from_environment();
    if (!from_env) {
      return from_env.error();
    }
    domain = *from_env;
  }
  if (options.shm_dir.empty()) {
    const char* dir = std::getenv("AXON_SHM_DIR");  // NOLINT(concurrency-mt-unsafe): start-up only
    options.shm_dir = dir != nullptr && *dir != '\0' ? dir : "/dev/shm";
  }
  auto transport = detail::create_node_transport(name, options, domain, placement->config.get(), placement->host);
  if (!transport) {
    return transport.error();
  }
  std::shared_ptr<detail::ConfigUsage> usage;
  if (placement->config != nullptr) {
    usage = std::make_shared<detail::ConfigUsage>(placement->config, name, std::move(placement->warnings));
  }
  auto node =
      std::make_shared<Node>(std::move(name), domain, std::move(transport->transport), std::move(placement->config),
                             std::move(placement->host), std::move(transport->network));
  node->config_usage_ = std::move(usage);
  return node;
}

}  // namespace axon
