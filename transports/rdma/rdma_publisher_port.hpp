// The port of a publisher whose topic goes to other hosts by RDMA
// (docs/design/rdma-transport.md, "Built: the node's send side", "One
// publish, RDMA to some hosts and UDP to others"): the shared-memory port
// does the local work, the RdmaWriter writes each message into the RDMA
// hosts' pools, and the UDP participant's writer of the topic announces the
// publisher, says which participants of the RDMA hosts receive the topic
// (OutboundStreams::set_peers()) and sends to the hosts reached by UDP, if
// any (`mixed`): then the RdmaWriter's local publish is the UDP writer's,
// which counts both writers' pins on the chunk and sends the datagrams.
#pragma once

#include <memory>
#include <string>

#include "axon/transport.hpp"
#include "transports/rdma/outbound_streams.hpp"
#include "transports/rdma/rdma_writer.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/udp/participant.hpp"
#include "transports/udp/udp_writer.hpp"

namespace axon::rdma {

class RdmaPublisherPort final : public PublisherPort {
 public:
  struct Parts {
    std::shared_ptr<shm::ShmPublisherPort> local;
    std::shared_ptr<RdmaWriter> writer;
    std::shared_ptr<OutboundStreams> streams;
    std::shared_ptr<udp::Participant> participant;
    /// Carried elsewhere to the RDMA hosts: announces, matches, sends to the others.
    std::shared_ptr<udp::UdpWriter> routes;
    /// Some receiving hosts are reached by UDP: loans and the local publish
    /// go through `routes` (its RELIABLE history holds chunks too).
    bool mixed = false;
  };
  explicit RdmaPublisherPort(Parts parts) noexcept : parts_(std::move(parts)), udp_beside_(*parts_.routes) {}
  /// No more destination changes, the publisher's announcement withdrawn,
  /// then its streams closed (CLOSE to each receiver).
  ~RdmaPublisherPort() override {
    parts_.routes->stop_listening();
    parts_.participant->remove_writer(parts_.routes.get());
    parts_.streams->remove_writer(*parts_.writer);
  }
  RdmaPublisherPort(const RdmaPublisherPort&) = delete;
  RdmaPublisherPort& operator=(const RdmaPublisherPort&) = delete;

  LoanResult<LoanedChunk> loan(std::size_t payload_bytes) noexcept override {
    // The UDP writer waits for ACKs when its history holds the pool.
    return parts_.mixed ? parts_.routes->loan(payload_bytes) : parts_.local->loan(payload_bytes);
  }
  [[nodiscard]] std::string explain_exhausted() const override { return parts_.local->explain_exhausted(); }
  PublishResult publish(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset) noexcept override {
    return parts_.writer->publish(chunk, payload_bytes, payload_offset, parts_.mixed ? &udp_beside_ : nullptr);
  }
  void discard(LoanedChunk chunk) noexcept override { parts_.local->discard(chunk); }
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept override { return parts_.local->subscriber_count(); }
  [[nodiscard]] std::size_t subscriber_fill(std::span<SubscriberFill> out) const noexcept override {
    return parts_.local->subscriber_fill(out);
  }
  [[nodiscard]] PublisherCounters counters() const noexcept override { return parts_.local->counters(); }
  void on_backpressure(std::function<void(const BackpressureEvent&)> handler) override {
    parts_.local->on_backpressure(std::move(handler));
  }
  [[nodiscard]] std::string_view topic_name() const noexcept override { return parts_.local->topic_name(); }

 private:
  /// The UDP writer as the RdmaWriter's local publish: the writes' pins and
  /// its own in one count, and its datagrams to the UDP hosts.
  class UdpBeside final : public LocalPublish {
   public:
    explicit UdpBeside(udp::UdpWriter& writer) noexcept : writer_(writer) {}
    PublishResult publish_pinned(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset,
                                 std::uint32_t pins) noexcept override {
      return writer_.publish(chunk, payload_bytes, payload_offset, pins);
    }

   private:
    udp::UdpWriter& writer_;
  };

  Parts parts_;
  UdpBeside udp_beside_;  ///< After parts_, whose writer it names.
};

}  // namespace axon::rdma
