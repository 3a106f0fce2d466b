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

namespace axon::udp {

class UdpTransport final : public Transport {
 public:
  /// `stays_local(topic)`: the topic must not leave this host (transport: shm).
  UdpTransport(std::shared_ptr<shm::ShmTransport> shm, std::shared_ptr<Participant> participant,
               std::function<bool(std::string_view)> stays_local) noexcept
      : shm_(std::move(shm)), participant_(std::move(participant)), stays_local_(std::move(stays_local)) {}

  [[nodiscard]] std::string_view name() const noexcept override { return "shm+udp"; }
  Result<std::shared_ptr<PublisherPort>> advertise(const TopicDescriptor& topic, const PublisherQos& qos) override;
  Result<std::shared_ptr<SubscriberPort>> subscribe(const TopicDescriptor& topic, const SubscriberQos& qos) override;
  [[nodiscard]] std::vector<PoolClassStats> pool_stats() const override { return shm_->pool_stats(); }
  /// This host's graph: remote publishers appear as their mirror (a local
  /// publisher of the receiving node) once a subscriber of this host wants
  /// the topic; remote subscribers do not appear (docs/design/graph-events.md).
  [[nodiscard]] GraphSource* graph() noexcept override { return shm_->graph(); }

  [[nodiscard]] const std::shared_ptr<Participant>& participant() const noexcept { return participant_; }

 private:
  std::shared_ptr<shm::ShmTransport> shm_;
  std::shared_ptr<Participant> participant_;
  std::function<bool(std::string_view)> stays_local_;
};

}  // namespace axon::udp
