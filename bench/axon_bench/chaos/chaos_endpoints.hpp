// The publishers and subscribers of a chaos component behind one interface
// each, whatever their payload type: a writer fills every payload with its
// sequence number, incarnation, pattern and checksum; a reader checks them
// and hands the loop what it found. Internal to chaos_component.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "chaos/chaos_payload.hpp"
#include "harness/endpoint_calls.hpp"
#include "harness/system.hpp"
#include <axon/axon.hpp>

namespace axon_bench {

class ChaosWriter {
 public:
  virtual ~ChaosWriter() = default;
  /// Loans, fills (stamped with the time now) and publishes message `seq` of incarnation `incarnation`.
  virtual axon::PublishResult send(std::uint64_t seq, std::uint32_t incarnation) = 0;
  [[nodiscard]] virtual std::uint32_t subscriber_count() const = 0;
};

/// What a reader found in one message.
struct ChaosTaken {
  ChaosRead read;
  std::int64_t publish_ns = 0;  ///< SampleInfo::publish_time_ns: on this host (a remote message's arrival here).
  std::int64_t stamped_ns = 0;  ///< The payload's stamp: when its publisher, on whatever host, filled it.
  std::int64_t received_ns = 0;
};

class ChaosReader {
 public:
  virtual ~ChaosReader() = default;
  [[nodiscard]] virtual std::uint32_t publisher_count() = 0;
  /// The subscriber as a callback subscription for an executor.
  [[nodiscard]] virtual std::shared_ptr<axon::SubscriptionBase> subscription(
      std::function<void(const ChaosTaken&)> on_taken) = 0;
};

template <class T>
class ChaosWriterOf final : public ChaosWriter {
 public:
  explicit ChaosWriterOf(std::shared_ptr<axon::Publisher<T>> pub) : pub_(std::move(pub)) {}
  axon::PublishResult send(std::uint64_t seq, std::uint32_t incarnation) override {
    auto loan = pub_->loan();
    if (loan.exhausted()) {
      return axon::kPoolExhausted;  // counted by the loop, no sequence number spent
    }
    if (!loan) {
      return loan.error();
    }
    // Across hosts the subscriber counts its latency from this stamp: a message from another host is published on
    // the subscriber's host again when it arrives.
    write_chaos_payload((*loan)->data, sizeof(T), Stamp{.index = seq, .time_ns = now_ns()}, seq, incarnation);
    return pub_->publish(std::move(*loan));
  }
  [[nodiscard]] std::uint32_t subscriber_count() const override { return pub_->subscriber_count(); }

 private:
  std::shared_ptr<axon::Publisher<T>> pub_;
};

template <class T>
class ChaosReaderOf final : public ChaosReader {
 public:
  explicit ChaosReaderOf(std::shared_ptr<axon::Subscriber<T>> sub) : sub_(std::move(sub)) {}
  [[nodiscard]] std::uint32_t publisher_count() override { return sub_->publisher_count(); }
  [[nodiscard]] std::shared_ptr<axon::SubscriptionBase> subscription(
      std::function<void(const ChaosTaken&)> on_taken) override {
    return std::make_shared<axon::CallbackSubscription<T>>(
        sub_, [on_taken = std::move(on_taken)](const axon::Sample<T>& sample) {
          const std::int64_t received_ns = now_ns();  // before the checksum: latency is the transport's
          on_taken({.read = read_chaos_payload(sample->data, sizeof(T)),
                    .publish_ns = sample.info().publish_time_ns,
                    .stamped_ns = read_stamp(sample->data).time_ns,
                    .received_ns = received_ns});
        });
  }

 private:
  std::shared_ptr<axon::Subscriber<T>> sub_;
};

}  // namespace axon_bench
