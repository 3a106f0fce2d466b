// Node: a process's (or component's) membership in a domain; creates
// publishers and subscribers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "axon/options.hpp"
#include "axon/publisher.hpp"
#include "axon/result.hpp"
#include "axon/subscriber.hpp"
#include "axon/transport.hpp"
#include "axon/type_identity.hpp"

namespace axon {

/// Thread safety: all methods may be called from any thread. Publishers and
/// subscribers keep what they need alive, so they may outlive their node.
class Node {
 public:
  /// Joins the domain (NodeOptions::domain_id, AXON_DOMAIN or 0). Fails with
  /// a message saying what to fix: no room in /dev/shm, a domain made by an
  /// incompatible axon build, too many participants, ...
  static Result<std::shared_ptr<Node>> create(std::string name, NodeOptions options = {});

  /// A publisher of raw struct T on `topic`.
  template <class T>
  Result<std::shared_ptr<Publisher<T>>> advertise(std::string_view topic, PublisherQos qos = {}) {
    if (qos.max_payload_bytes == 0) {
      qos.max_payload_bytes = sizeof(T);
    }
    auto port = transport_->advertise(raw_topic<T>(topic), qos);
    if (!port) {
      return port.error();
    }
    return std::make_shared<Publisher<T>>(std::move(*port), std::string(topic));
  }

  /// A subscriber of raw struct T on `topic`; refused when the topic carries
  /// another type.
  template <class T>
  Result<std::shared_ptr<Subscriber<T>>> subscribe(std::string_view topic, SubscriberQos qos = {}) {
    auto port = transport_->subscribe(raw_topic<T>(topic), qos);
    if (!port) {
      return port.error();
    }
    return std::make_shared<Subscriber<T>>(std::move(*port), std::string(topic));
  }

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::uint32_t domain_id() const noexcept { return domain_id_; }
  /// Free and total chunks per class of this node's pool.
  [[nodiscard]] std::vector<PoolClassStats> pool_stats() const { return transport_->pool_stats(); }

  Node(std::string name, std::uint32_t domain_id, std::shared_ptr<Transport> transport) noexcept
      : name_(std::move(name)), domain_id_(domain_id), transport_(std::move(transport)) {}

 private:
  template <class T>
  static TopicDescriptor raw_topic(std::string_view topic) {
    return TopicDescriptor{.name = std::string(topic), .type = raw_type_identity<T>(), .max_payload_bytes = sizeof(T)};
  }

  std::string name_;
  std::uint32_t domain_id_;
  std::shared_ptr<Transport> transport_;
};

}  // namespace axon
