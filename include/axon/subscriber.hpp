// Subscriber<T>: receives messages of type T from one topic, read in place
// (raw structs, FlatBuffers, slices and bytes) or decoded (Protobuf, user
// serializers).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "axon/detail/decoded_pool.hpp"
#include "axon/options.hpp"
#include "axon/outcome.hpp"
#include "axon/result.hpp"
#include "axon/sample.hpp"
#include "axon/serializer.hpp"
#include "axon/transport.hpp"

namespace axon {

/// Thread safety: take() from one thread at a time; samples may be dropped
/// on any thread. take() does not allocate, lock or make system calls except
/// when the topic's publishers changed (it then reconnects, once).
template <class T>
class Subscriber {
  static_assert(detail::HasSerializer<T>,
                "axon has no serializer for this message type: use a trivially copyable struct, a "
                "FlatBuffers table (#include <axon/serializers/flatbuffers.hpp>), a Protobuf message "
                "(#include <axon/serializers/protobuf.hpp>), or specialize axon::Serializer<T>");
  using S = Serializer<T>;

 public:
  Subscriber(std::shared_ptr<SubscriberPort> port, std::string topic, const SubscriberQos& qos)
      : port_(std::move(port)),
        topic_(std::move(topic)),
        verification_(qos.verification),
        deadline_ns_(qos.deadline_ns) {
    if constexpr (!S::kReadsInPlace) {
      decoded_ = std::make_shared<detail::DecodedPool<T>>(qos.max_held_samples);
    }
  }

  // Move-only for every T, like Publisher<T>: take() is for one thread at a
  // time, and a copy would be a second handle to the same queue (and
  // decoded objects) that breaks that rule without a word. Share one through
  // the std::shared_ptr Node::subscribe() returns. A moved-from subscriber
  // may only be destroyed or assigned to.
  Subscriber(Subscriber&&) noexcept = default;
  Subscriber& operator=(Subscriber&&) noexcept = default;
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;
  ~Subscriber() = default;

  /// The oldest queued message of a publisher, or empty() (an outcome, not
  /// a failure: no Error, no allocation) when nothing is queued. Messages
  /// that fail verification (for slices: a size that is not a whole number
  /// of elements, or misaligned ones) are dropped and counted
  /// (counters().rejected) and never reach user code; a message that fails to decode is dropped,
  /// counted and returned as a kMalformed failure, as is kTooManySamples
  /// when every sample max_held_samples allows is held.
  ///
  ///     if (auto sample = sub->take()) { use(sample->field); }
  ///     else if (sample.failed()) { log(sample.error().message()); }
  [[nodiscard]] TakeResult<Sample<T>> take() noexcept {
    if constexpr (detail::ElementMessage<T>) {
      // Slices and bytes: a span only over a whole number of aligned elements.
      for (;;) {
        auto chunk = port_->take();
        if (!chunk) {
          return not_taken(chunk);
        }
        const auto view = S::view_elements(bytes_of(*chunk));
        if (view.problem.empty()) {
          return Sample<T>(port_, *chunk, view.elements);
        }
        port_->reject(*chunk, view.problem);
      }
    } else if constexpr (S::kReadsInPlace) {
      for (;;) {
        auto chunk = port_->take();
        if (!chunk) {
          return not_taken(chunk);
        }
        const bool verify = verification_ == Verification::kAlways ||
                            (verification_ == Verification::kCrossProcess && !chunk->same_process);
        if (const T* value = S::view(bytes_of(*chunk), verify)) {
          return Sample<T>(port_, *chunk, value);
        }
        port_->reject(*chunk, "not a valid message of the topic's type");
      }
    } else {
      // Claim an object first, so a message is never taken and then dropped
      // for lack of room.
      const int slot = decoded_->acquire();
      if (slot < 0) {
        return Error(ErrorCode::kTooManySamples, "every decoded sample is held; drop some first");
      }
      auto chunk = port_->take();
      if (!chunk) {
        decoded_->release(slot);
        return not_taken(chunk);
      }
      T& object = decoded_->object(slot);
      if (!S::decode(bytes_of(*chunk), object)) {
        decoded_->release(slot);
        port_->reject(*chunk, "does not decode");
        return Error(ErrorCode::kMalformed, "a message did not decode and was dropped");
      }
      const SampleInfo info = chunk->info;
      port_->release(*chunk);
      return Sample<T>(decoded_, slot, &object, info);
    }
  }

  /// How this topic's messages travel.
  [[nodiscard]] static constexpr DataPath data_path() noexcept { return S::kDataPath; }
  /// Messages taken and rejected so far.
  [[nodiscard]] SubscriberCounters counters() const noexcept { return port_->counters(); }
  /// Publishers connected now (may rescan the registry: a slow path).
  [[nodiscard]] std::uint32_t publisher_count() noexcept { return port_->publisher_count(); }
  [[nodiscard]] const std::string& topic() const noexcept { return topic_; }
  /// Publishers that left or died while connected (lock-free, any thread).
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept { return port_->publishers_lost(); }
  /// Whether take() has a message now (same thread rules as take()).
  [[nodiscard]] bool has_data() noexcept { return port_->has_data(); }
  /// The futex word publishers signal for this subscriber (executors and
  /// WaitSet sleep on it); nullptr when the transport cannot wake waiters.
  [[nodiscard]] WakeWord* wake_word() noexcept { return port_->wake_word(); }
  /// What executors and WaitSet may sleep on besides wake_word() (see
  /// WaitSource); nullptr: the word alone.
  [[nodiscard]] WaitSource* wait_source() noexcept { return port_->wait_source(); }
  /// Deadline of the subscription's QoS (0: none); executors watch it.
  [[nodiscard]] std::int64_t deadline_ns() const noexcept { return deadline_ns_; }

 private:
  /// A port's take() without a chunk, as the typed result.
  static TakeResult<Sample<T>> not_taken(const TakeResult<ReceivedChunk>& chunk) noexcept {
    if (chunk.empty()) {
      return kNothingQueued;
    }
    return chunk.error();
  }
  static std::span<const std::byte> bytes_of(const ReceivedChunk& chunk) noexcept {
    return {chunk.payload, chunk.info.payload_bytes};
  }

  std::shared_ptr<SubscriberPort> port_;
  std::string topic_;
  Verification verification_;
  std::int64_t deadline_ns_ = 0;
  std::shared_ptr<detail::DecodedPool<T>> decoded_;
};

}  // namespace axon
