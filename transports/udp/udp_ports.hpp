// Ports of a topic that leaves the host: the shared-memory port does the
// local work; the publisher's writer also sends to remote hosts, and the
// subscriber stays announced while it lives.
#pragma once

#include <memory>
#include <string>

#include "axon/transport.hpp"
#include "transports/udp/participant.hpp"
#include "transports/udp/udp_writer.hpp"

namespace axon::udp {

class UdpPublisherPort final : public PublisherPort {
 public:
  UdpPublisherPort(std::shared_ptr<shm::ShmPublisherPort> local, std::shared_ptr<UdpWriter> writer,
                   std::shared_ptr<Participant> participant) noexcept
      : local_(std::move(local)), writer_(std::move(writer)), participant_(std::move(participant)) {}
  ~UdpPublisherPort() override { participant_->remove_writer(writer_.get()); }
  UdpPublisherPort(const UdpPublisherPort&) = delete;
  UdpPublisherPort& operator=(const UdpPublisherPort&) = delete;

  LoanResult<LoanedChunk> loan(std::size_t payload_bytes) noexcept override { return writer_->loan(payload_bytes); }
  [[nodiscard]] std::string explain_exhausted() const override { return local_->explain_exhausted(); }
  PublishResult publish(LoanedChunk chunk, std::size_t payload_bytes, std::size_t payload_offset) noexcept override {
    return writer_->publish(chunk, payload_bytes, payload_offset);
  }
  void discard(LoanedChunk chunk) noexcept override { local_->discard(chunk); }
  [[nodiscard]] std::uint32_t subscriber_count() const noexcept override { return local_->subscriber_count(); }
  [[nodiscard]] std::size_t subscriber_fill(std::span<SubscriberFill> out) const noexcept override {
    return local_->subscriber_fill(out);
  }
  [[nodiscard]] PublisherCounters counters() const noexcept override { return local_->counters(); }
  void on_backpressure(std::function<void(const BackpressureEvent&)> handler) override {
    local_->on_backpressure(std::move(handler));
  }
  [[nodiscard]] std::string_view topic_name() const noexcept override { return local_->topic_name(); }

 private:
  std::shared_ptr<shm::ShmPublisherPort> local_;
  std::shared_ptr<UdpWriter> writer_;
  std::shared_ptr<Participant> participant_;
};

class UdpSubscriberPort final : public SubscriberPort {
 public:
  UdpSubscriberPort(std::shared_ptr<SubscriberPort> local, std::shared_ptr<Participant> participant, std::string topic,
                    const SubscriptionQos& qos) noexcept
      : local_(std::move(local)), participant_(std::move(participant)), topic_(std::move(topic)), qos_(qos) {}
  ~UdpSubscriberPort() override { participant_->remove_subscription(topic_, qos_); }
  UdpSubscriberPort(const UdpSubscriberPort&) = delete;
  UdpSubscriberPort& operator=(const UdpSubscriberPort&) = delete;

  TakeResult<ReceivedChunk> take() noexcept override { return local_->take(); }
  void release(const ReceivedChunk& chunk) noexcept override { local_->release(chunk); }
  void reject(const ReceivedChunk& chunk, std::string_view reason) noexcept override { local_->reject(chunk, reason); }
  [[nodiscard]] SubscriberCounters counters() const noexcept override { return local_->counters(); }
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept override { return local_->publishers_lost(); }
  [[nodiscard]] std::uint32_t publisher_count() noexcept override { return local_->publisher_count(); }
  [[nodiscard]] bool has_data() noexcept override { return local_->has_data(); }
  [[nodiscard]] WakeWord* wake_word() noexcept override { return local_->wake_word(); }
  [[nodiscard]] WaitSource* wait_source() noexcept override { return participant_->wait_source(); }

 private:
  std::shared_ptr<SubscriberPort> local_;
  std::shared_ptr<Participant> participant_;
  std::string topic_;
  SubscriptionQos qos_;
};

}  // namespace axon::udp
