#include "transports/rdma/rdma_hosts_transport.hpp"

#include <algorithm>
#include <limits>

#include "transports/rdma/rdma_publisher_port.hpp"
#include "transports/rdma/rdma_subscriber_port.hpp"
#include "transports/udp/local_topics.hpp"

namespace axon::rdma {
namespace {

/// The largest message a writer of `topic` announces in its OPEN, which is
/// the size of every chunk its receivers grant: the topic's
/// max_payload_bytes (a raw type's size), else the pool's largest class.
std::uint32_t largest_message_bytes(const TopicDescriptor& topic, const shm::ChunkArea& area) noexcept {
  if (topic.max_payload_bytes != 0) {
    return static_cast<std::uint32_t>(
        std::min<std::uint64_t>(topic.max_payload_bytes, std::numeric_limits<std::uint32_t>::max()));
  }
  std::uint32_t largest = 0;
  for (const shm::ChunkClassExtent& c : area.class_list()) {
    largest = std::max(largest, c.payload_capacity);
  }
  return largest;
}

}  // namespace

RdmaHostsTransport::TopicReach RdmaHostsTransport::reach_of(std::string_view topic) const {
  TopicReach reach;
  for (const std::string& host : reach_.other_hosts) {
    const bool rdma = reach_.by_rdma(topic, host);
    reach.by_rdma = reach.by_rdma || rdma;
    reach.by_udp = reach.by_udp || !rdma;
  }
  return reach;
}

Result<std::shared_ptr<PublisherPort>> RdmaHostsTransport::advertise(const TopicDescriptor& topic,
                                                                     const PublisherQos& qos) {
  const TopicReach reach = reach_of(topic.name);
  if (!reach.by_rdma) {
    return udp_->advertise(topic, qos);
  }
  TopicDescriptor carried = topic;
  carried.carried_by = "rdma";
  auto local = shm_->advertise(carried, qos);
  if (!local) {
    return local;
  }
  auto shm_port = std::static_pointer_cast<shm::ShmPublisherPort>(std::move(*local));
  auto writer = std::make_shared<RdmaWriter>(
      shm_port,
      RdmaWriterFields{.topic_id = udp::topic_id_of(topic.name),
                       .type_hash = topic.type.hash,
                       .writer_id = next_writer_id_.fetch_add(1, std::memory_order_relaxed),
                       .largest_message_bytes = largest_message_bytes(topic, shm_->own_chunk_area())},
      credits_);
  outbound_->add_writer(writer, std::vector<std::uint64_t>{});  // no receiver until discovery names one
  // Discovery's receivers of the topic on the RDMA hosts, now and at each
  // change: a stream to each over its link (the listener runs on the UDP
  // participant's threads). The UDP writer keeps the hosts the config
  // reaches by UDP; when there are none, it sends to no host at all.
  auto routes = udp_->participant()->add_writer(
      shm_port, topic,
      [outbound = outbound_, sent = writer.get()](std::vector<std::uint64_t> participants) {
        outbound->set_peers(*sent, std::move(participants));
      },
      [by_rdma = reach_.by_rdma, name = std::string(topic.name), mixed = reach.by_udp](std::string_view host) {
        return !mixed || by_rdma(name, host);
      });
  return std::shared_ptr<PublisherPort>(
      std::make_shared<RdmaPublisherPort>(RdmaPublisherPort::Parts{.local = std::move(shm_port),
                                                                   .writer = std::move(writer),
                                                                   .streams = outbound_,
                                                                   .participant = udp_->participant(),
                                                                   .routes = std::move(routes),
                                                                   .mixed = reach.by_udp}));
}

Result<std::shared_ptr<SubscriberPort>> RdmaHostsTransport::subscribe(const TopicDescriptor& topic,
                                                                      const SubscriberQos& qos) {
  if (!reach_of(topic.name).by_rdma) {
    return udp_->subscribe(topic, qos);
  }
  TopicDescriptor carried = topic;
  carried.carried_by = "rdma";  // received by RDMA from the hosts that reach it so (the UDP port stays under it)
  auto port = udp_->subscribe(carried, qos);
  if (!port) {
    return port;
  }
  return std::shared_ptr<SubscriberPort>(std::make_shared<RdmaSubscriberPort>(std::move(*port), turn_));
}

}  // namespace axon::rdma
