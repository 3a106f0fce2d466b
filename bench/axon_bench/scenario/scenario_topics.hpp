// The publishers and subscribers of a scenario component behind one
// interface each, whatever their payload type (Payload<N>, chosen at run
// time from the scenario file). Internal to scenario_component.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "harness/endpoint_calls.hpp"
#include "harness/payload.hpp"
#include "harness/system.hpp"
#include <axon/axon.hpp>

namespace axon_bench {

/// A publisher of one topic, whatever its message type.
class TopicWriter {
 public:
  virtual ~TopicWriter() = default;
  /// Loans, stamps and publishes message `index` due at `due_ns`.
  virtual axon::PublishResult send(std::uint64_t index, std::int64_t due_ns) = 0;
  [[nodiscard]] virtual std::uint32_t subscriber_count() const = 0;
};

/// What the loop learns from one taken message.
struct Taken {
  std::int64_t due_ns = 0;
  std::int64_t publish_ns = 0;
  std::int64_t received_ns = 0;
};

/// A subscriber of one topic, whatever its message type.
class TopicReader {
 public:
  virtual ~TopicReader() = default;
  /// 1: took a message into `out`; 0: none queued; -1: failed (see error()).
  virtual int take(Taken& out) = 0;
  [[nodiscard]] virtual std::uint32_t publisher_count() = 0;
  /// The same subscriber as a callback subscription for an executor:
  /// `on_taken` gets what take() would have given. Use one or the other.
  [[nodiscard]] virtual std::shared_ptr<axon::SubscriptionBase> subscription(
      std::function<void(const Taken&)> on_taken) = 0;
  [[nodiscard]] const std::string& error() const { return error_; }

 protected:
  std::string error_;
};

template <class T>
class WriterOf final : public TopicWriter {
 public:
  WriterOf(std::shared_ptr<axon::Publisher<T>> pub, bool touch) : pub_(std::move(pub)), touch_(touch) {}
  axon::PublishResult send(std::uint64_t index, std::int64_t due_ns) override {
    // No waiting for a chunk: the loop counts a loan that failed and goes on.
    return workers::publish_stamped(*pub_, Stamp{.index = index, .time_ns = due_ns}, touch_, [] { return false; });
  }
  [[nodiscard]] std::uint32_t subscriber_count() const override { return pub_->subscriber_count(); }

 private:
  std::shared_ptr<axon::Publisher<T>> pub_;
  bool touch_;
};

template <class T>
class ReaderOf final : public TopicReader {
 public:
  ReaderOf(std::shared_ptr<axon::Subscriber<T>> sub, bool touch) : sub_(std::move(sub)), touch_(touch) {}
  int take(Taken& out) override {
    auto took = workers::try_take(*sub_, [&](const axon::Sample<T>& sample) { out = taken(sample); });
    if (!took) {
      error_ = "take on '" + sub_->topic() + "': " + std::string(took.error().message());
      return -1;
    }
    return *took == workers::Took::kSample ? 1 : 0;
  }
  [[nodiscard]] std::uint32_t publisher_count() override { return sub_->publisher_count(); }
  [[nodiscard]] std::shared_ptr<axon::SubscriptionBase> subscription(
      std::function<void(const Taken&)> on_taken) override {
    return std::make_shared<axon::CallbackSubscription<T>>(
        sub_, [this, on_taken = std::move(on_taken)](const axon::Sample<T>& sample) { on_taken(taken(sample)); });
  }
  ~ReaderOf() override { workers::keep(checksum_); }

 private:
  /// What the loop learns from `sample` (reading every byte first with --touch).
  Taken taken(const axon::Sample<T>& sample) {
    if (touch_) {
      checksum_ += read_payload(sample->data, sizeof(T));
    }
    return {.due_ns = read_stamp(sample->data).time_ns,
            .publish_ns = sample.info().publish_time_ns,
            .received_ns = now_ns()};
  }

  std::shared_ptr<axon::Subscriber<T>> sub_;
  bool touch_;
  std::uint64_t checksum_ = 0;
};

}  // namespace axon_bench
