// Callback subscriptions: a Subscriber<T> plus the function executors call
// with each of its messages, and handlers for missed deadlines and lost
// publishers. SubscriptionBase is the type-erased face executors hold.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "axon/result.hpp"
#include "axon/sample.hpp"
#include "axon/subscriber.hpp"
#include "axon/transport.hpp"

namespace axon {

/// A subscription with SubscriberQos::deadline_ns > 0 got no message for a
/// whole period. Fired once per silent period while the silence lasts.
struct DeadlineEvent {
  std::string_view topic;            ///< Valid during the handler call only.
  std::int64_t deadline_ns = 0;      ///< The QoS deadline.
  std::int64_t last_message_ns = 0;  ///< CLOCK_MONOTONIC of the executor round that last
                                     ///< dispatched a message (0: none since added).
  std::uint64_t missed_total = 0;    ///< Deadlines missed since the subscription was added.
};

/// Publishers of the topic left or died (SubscriberCounters::publishers_lost grew).
struct LivelinessEvent {
  std::string_view topic;        ///< Valid during the handler call only.
  std::uint64_t lost = 0;        ///< Publishers lost since the previous event.
  std::uint64_t lost_total = 0;  ///< Publishers lost since the subscription was created.
};

/// What one dispatch_one() call did.
enum class DispatchResult : std::uint8_t {
  kDispatched,  ///< Took a message and ran the callback.
  kNoData,      ///< Nothing queued.
  kDropped,     ///< Took nothing usable (malformed, or every sample held): counted by the subscriber.
};

/// The type-erased subscription executors hold.
///
/// Thread safety: an executor claims a subscription in add() (one executor at
/// a time) and then calls dispatch_one() and has_data() from one thread at a
/// time, with happens-before between successive calls. Set the handlers
/// before adding the subscription to an executor. Handlers and the callback
/// of one subscription never run concurrently with each other.
class SubscriptionBase {
 public:
  SubscriptionBase() = default;
  SubscriptionBase(const SubscriptionBase&) = delete;
  SubscriptionBase& operator=(const SubscriptionBase&) = delete;
  virtual ~SubscriptionBase() = default;

  /// Takes one message and runs the callback with it. No allocation, lock or
  /// system call for raw structs (see Subscriber<T>::take()).
  virtual DispatchResult dispatch_one() noexcept = 0;
  /// Whether dispatch_one() has a message now (same thread rules).
  [[nodiscard]] virtual bool has_data() noexcept = 0;
  /// The futex word publishers signal; nullptr when the transport cannot wake waiters.
  [[nodiscard]] virtual WakeWord* wake_word() noexcept = 0;
  /// What a waiter may sleep on besides wake_word() (see WaitSource); nullptr: the word alone.
  [[nodiscard]] virtual WaitSource* wait_source() noexcept { return nullptr; }
  /// SubscriberQos::deadline_ns (0: none).
  [[nodiscard]] virtual std::int64_t deadline_ns() const noexcept = 0;
  /// SubscriberCounters::publishers_lost (one relaxed load).
  [[nodiscard]] virtual std::uint64_t publishers_lost() const noexcept = 0;
  [[nodiscard]] virtual const std::string& topic() const noexcept = 0;

  /// Called by the executor when the QoS deadline passed without a message.
  /// Set before adding the subscription to an executor. May allocate.
  void on_deadline_missed(std::function<void(const DeadlineEvent&)> handler) { deadline_handler_ = std::move(handler); }
  /// Called by the executor when publishers of the topic left or died.
  /// Set before adding the subscription to an executor. May allocate.
  void on_publisher_lost(std::function<void(const LivelinessEvent&)> handler) { lost_handler_ = std::move(handler); }

  /// Executors only: run the handlers (nothing when none is set).
  void handle_deadline_missed(const DeadlineEvent& event) const {
    if (deadline_handler_) {
      deadline_handler_(event);
    }
  }
  void handle_publisher_lost(const LivelinessEvent& event) const {
    if (lost_handler_) {
      lost_handler_(event);
    }
  }

  /// Executors only: claims the subscription for one executor; false when
  /// another one holds it. Thread-safe.
  bool try_attach() noexcept {
    // Acq_rel: the claiming executor sees the handlers set before, and
    // everything the previous executor did before detach().
    return !attached_.exchange(true, std::memory_order_acq_rel);
  }
  /// Executors only: gives the claim back.
  void detach() noexcept {
    // Release: pairs with the acq_rel exchange in try_attach().
    attached_.store(false, std::memory_order_release);
  }

 private:
  std::function<void(const DeadlineEvent&)> deadline_handler_;
  std::function<void(const LivelinessEvent&)> lost_handler_;
  std::atomic<bool> attached_{false};
};

/// A Subscriber<T> whose messages an executor hands to `callback`, in the
/// order take() returns them, one at a time. The callback gets a const
/// Sample<T>&: the sample (and its chunk) is released when the callback
/// returns. A callback must not throw (dispatch_one() is noexcept: an
/// exception ends the process).
template <class T>
class CallbackSubscription final : public SubscriptionBase {
 public:
  using Callback = std::function<void(const Sample<T>&)>;

  CallbackSubscription(std::shared_ptr<Subscriber<T>> subscriber, Callback callback) noexcept
      : subscriber_(std::move(subscriber)), callback_(std::move(callback)) {}

  DispatchResult dispatch_one() noexcept override {
    auto sample = subscriber_->take();
    if (!sample) {
      return sample.empty() ? DispatchResult::kNoData : DispatchResult::kDropped;
    }
    callback_(*sample);
    return DispatchResult::kDispatched;
  }
  [[nodiscard]] bool has_data() noexcept override { return subscriber_->has_data(); }
  [[nodiscard]] WakeWord* wake_word() noexcept override { return subscriber_->wake_word(); }
  [[nodiscard]] WaitSource* wait_source() noexcept override { return subscriber_->wait_source(); }
  [[nodiscard]] std::int64_t deadline_ns() const noexcept override { return subscriber_->deadline_ns(); }
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept override { return subscriber_->publishers_lost(); }
  [[nodiscard]] const std::string& topic() const noexcept override { return subscriber_->topic(); }

  /// The wrapped subscriber (counters, publisher_count). Do not take() from
  /// it while an executor holds this subscription.
  [[nodiscard]] Subscriber<T>& subscriber() noexcept { return *subscriber_; }

 private:
  std::shared_ptr<Subscriber<T>> subscriber_;
  Callback callback_;
};

}  // namespace axon
