#include "transports/udp/udp_transport.hpp"

#include "transports/udp/udp_ports.hpp"

namespace axon::udp {

namespace {

/// `topic` as carried by UDP beyond this host, unless a transport around this one named another way already.
TopicDescriptor carried_by_udp(const TopicDescriptor& topic) {
  TopicDescriptor carried = topic;
  if (carried.carried_by.empty()) {
    carried.carried_by = "udp";
  }
  return carried;
}

}  // namespace

Result<std::shared_ptr<PublisherPort>> UdpTransport::advertise(const TopicDescriptor& topic, const PublisherQos& qos) {
  if (stays_local_(topic.name)) {
    return shm_->advertise(topic, qos);
  }
  auto local = shm_->advertise(carried_by_udp(topic), qos);
  if (!local) {
    return local;
  }
  auto shm_port = std::static_pointer_cast<shm::ShmPublisherPort>(std::move(*local));
  auto writer = participant_->add_writer(shm_port, topic);
  return std::shared_ptr<PublisherPort>(
      std::make_shared<UdpPublisherPort>(std::move(shm_port), std::move(writer), participant_));
}

Result<std::shared_ptr<SubscriberPort>> UdpTransport::subscribe(const TopicDescriptor& topic,
                                                                const SubscriberQos& qos) {
  if (stays_local_(topic.name)) {
    return shm_->subscribe(topic, qos);
  }
  auto local = shm_->subscribe(carried_by_udp(topic), qos);
  if (!local) {
    return local;
  }
  const SubscriptionQos asked = subscription_qos_of(qos);
  participant_->add_subscription(topic, asked);
  return std::shared_ptr<SubscriberPort>(
      std::make_shared<UdpSubscriberPort>(std::move(*local), participant_, topic.name, asked));
}

}  // namespace axon::udp
