// The transport of a node whose deployment spans hosts: shared memory on this
// host, plus the UDP participant for topics that leave it. Publishers of such
// topics get a writer (once per remote host), subscribers are announced so a
// remote publisher's messages reach this host.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "axon/transport.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/participant.hpp"
#include "transports/udp/udp_graph.hpp"

namespace axon::udp {

class UdpTransport final : public Transport {
 public:
  /// `stays_local(topic)`: the topic must not leave this host (transport: shm).
  UdpTransport(std::shared_ptr<shm::ShmTransport> shm, std::shared_ptr<Participant> participant,
               std::function<bool(std::string_view)> stays_local) noexcept
      : shm_(std::move(shm)),
        participant_(std::move(participant)),
        stays_local_(std::move(stays_local)),
        graph_(shm_->shm_graph(), *participant_) {}

  [[nodiscard]] std::string_view name() const noexcept override { return "shm+udp"; }
  Result<std::shared_ptr<PublisherPort>> advertise(const TopicDescriptor& topic, const PublisherQos& qos) override;
  Result<std::shared_ptr<SubscriberPort>> subscribe(const TopicDescriptor& topic, const SubscriberQos& qos) override;
  [[nodiscard]] std::vector<PoolClassStats> pool_stats() const override { return shm_->pool_stats(); }
  /// This host's record of the topic (schemas do not cross hosts).
  Result<TopicRecord> find_topic(std::string_view topic) override { return shm_->find_topic(topic); }
  /// This host's graph plus the publishers and subscribers other hosts
  /// announced (docs/design/graph-events.md, "Other hosts").
  [[nodiscard]] GraphSource* graph() noexcept override { return &graph_; }

  [[nodiscard]] const std::shared_ptr<Participant>& participant() const noexcept { return participant_; }

 private:
  std::shared_ptr<shm::ShmTransport> shm_;
  std::shared_ptr<Participant> participant_;
  std::function<bool(std::string_view)> stays_local_;
  UdpGraph graph_;  ///< After shm_ and participant_, which it refers to.
};

}  // namespace axon::udp
