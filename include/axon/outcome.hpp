// What the data path's calls did: take() a sample or found nothing queued,
// loan() a chunk or met back-pressure, publish() sent the message to the
// subscribers its status counts. Outcomes (nothing queued, no free chunk,
// subscribers that timed out) are values of the normal path: they construct
// no Error and allocate nothing. An Error is a real failure only.
#pragma once

#include <cstdint>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "axon/result.hpp"

namespace axon {

/// What publish() did, counted in subscribers.
struct PublishStatus {
  std::uint32_t delivered = 0;  ///< Got the message queued (some after an eviction).
  std::uint32_t dropped = 0;    ///< Did not get it: queue full (reject newest) or timed out.
  std::uint32_t evicted = 0;    ///< Dropped their oldest message to make room (drop oldest,
                                ///< latest only, quarantined).
  std::uint32_t timed_out = 0;  ///< Blocking subscribers still full after their timeout
                                ///< (reliable ones too: an outcome, not an error).
  std::uint32_t full = 0;       ///< Queues at or above the high-water mark after this publish.
};

/// take() found nothing queued: return `kNothingQueued` from a SubscriberPort.
struct NothingQueued {
  explicit constexpr NothingQueued() = default;
  static constexpr const char* kWhat = "nothing queued (an outcome, not an error)";
};
inline constexpr NothingQueued kNothingQueued{};

/// loan() found every chunk that could hold the message in use
/// (back-pressure): return `kPoolExhausted` from a PublisherPort.
struct PoolExhausted {
  explicit constexpr PoolExhausted() = default;
  static constexpr const char* kWhat =
      "no free chunk: back-pressure, an outcome, not an error (explain_exhausted() says who holds them)";
};
inline constexpr PoolExhausted kPoolExhausted{};

namespace detail {

/// The code-kOk Error that error() returns when nothing failed, so that
/// `EXPECT_TRUE(r.ok()) << r.error().message()` reads well. Built once.
template <class Outcome>
const Error& no_failure(bool outcome) noexcept {
  static const Error kOutcome(ErrorCode::kOk, Outcome::kWhat);
  static const Error kValue(ErrorCode::kOk, "no error");
  return outcome ? kOutcome : kValue;
}

/// A value, an outcome that has none (`Outcome`: NothingQueued or PoolExhausted),
/// or an Error. The storage of TakeResult and LoanResult.
template <class T, class Outcome>
class [[nodiscard]] ValueOrOutcome {
 public:
  ValueOrOutcome(T value) noexcept(std::is_nothrow_move_constructible_v<T>)  // NOLINT(google-explicit-constructor)
      : state_(State::kValue) {
    new (&storage_.value) T(std::move(value));
  }
  ValueOrOutcome(Outcome /*outcome*/) noexcept : state_(State::kOutcome) {}  // NOLINT(google-explicit-constructor)
  ValueOrOutcome(Error error) noexcept : state_(State::kError) {             // NOLINT(google-explicit-constructor)
    new (&storage_.error) Error(std::move(error));
  }
  ValueOrOutcome(ValueOrOutcome&& other) noexcept(std::is_nothrow_move_constructible_v<T>) { take_from(other); }
  ValueOrOutcome& operator=(ValueOrOutcome&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) {
      destroy();
      take_from(other);
    }
    return *this;
  }
  ValueOrOutcome(const ValueOrOutcome&) = delete;
  ValueOrOutcome& operator=(const ValueOrOutcome&) = delete;
  ~ValueOrOutcome() { destroy(); }

  /// Holds a value (a sample, a loan).
  [[nodiscard]] bool ok() const noexcept { return state_ == State::kValue; }
  explicit operator bool() const noexcept { return ok(); }
  /// A real failure: error() says what.
  [[nodiscard]] bool failed() const noexcept { return state_ == State::kError; }

  /// The value. Using it when !ok() aborts with what happened instead.
  [[nodiscard]] T& value() & noexcept {
    check();
    return storage_.value;
  }
  [[nodiscard]] const T& value() const& noexcept {
    check();
    return storage_.value;
  }
  [[nodiscard]] T&& value() && noexcept {
    check();
    return std::move(storage_.value);
  }
  T& operator*() & noexcept { return value(); }
  const T& operator*() const& noexcept { return value(); }
  T&& operator*() && noexcept { return std::move(*this).value(); }
  decltype(auto) operator->() noexcept {
    if constexpr (PointerLike<T>) {
      return value();  // forwards: the compiler applies T's operator-> next
    } else {
      return &value();
    }
  }
  decltype(auto) operator->() const noexcept {
    if constexpr (PointerLike<T>) {
      return value();
    } else {
      return &value();
    }
  }

  /// The failure when failed(); otherwise an Error with code kOk whose
  /// message names the outcome.
  [[nodiscard]] const Error& error() const noexcept {
    return failed() ? storage_.error : no_failure<Outcome>(state_ == State::kOutcome);
  }

 protected:
  [[nodiscard]] bool is_outcome() const noexcept { return state_ == State::kOutcome; }

 private:
  enum class State : std::uint8_t { kValue, kOutcome, kError };

  void check() const noexcept {
    if (state_ != State::kValue) {
      die_on_bad_access(error());
    }
  }
  void take_from(ValueOrOutcome& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    state_ = other.state_;
    if (state_ == State::kValue) {
      new (&storage_.value) T(std::move(other.storage_.value));
    } else if (state_ == State::kError) {
      new (&storage_.error) Error(std::move(other.storage_.error));
    }
  }
  void destroy() noexcept {
    if (state_ == State::kValue) {
      storage_.value.~T();
    } else if (state_ == State::kError) {
      storage_.error.~Error();
    }
  }

  union Storage {
    Storage() noexcept {}  // NOLINT(modernize-use-equals-default): Error has no default constructor
    ~Storage() {}          // NOLINT(modernize-use-equals-default)
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    T value;
    Error error;
  } storage_;
  State state_;
};

}  // namespace detail

/// What take() got: a sample (ok()), nothing queued (empty(): an outcome,
/// no Error constructed), or a failure (failed(): error()).
///
///     if (auto sample = sub->take()) { use(sample->field); }
///     else if (sample.failed()) { log(sample.error().message()); }
template <class T>
class [[nodiscard]] TakeResult : public detail::ValueOrOutcome<T, NothingQueued> {
 public:
  using detail::ValueOrOutcome<T, NothingQueued>::ValueOrOutcome;
  /// Nothing was queued: not an error.
  [[nodiscard]] bool empty() const noexcept { return this->is_outcome(); }
};

/// What loan() got: a loan (ok()), no free chunk (exhausted():
/// back-pressure, an outcome: skip this message or retry later), or a
/// failure (failed(): the message is larger than any chunk, ...).
template <class T>
class [[nodiscard]] LoanResult : public detail::ValueOrOutcome<T, PoolExhausted> {
 public:
  using detail::ValueOrOutcome<T, PoolExhausted>::ValueOrOutcome;
  /// Every chunk that could hold the message is in use: not an error.
  [[nodiscard]] bool exhausted() const noexcept { return this->is_outcome(); }
};

/// What publish() did. The status is always there (`*`, `->`, status()),
/// failure or not: it counts the subscribers that got the message, and
/// those that did not (a reliable subscriber that stayed full for its whole
/// block_timeout_ns is in `timed_out` and `dropped`: an outcome, not an
/// error). ok(): the message was sent. Otherwise it was not sent for lack
/// of a chunk (exhausted(): publish(value) and publish_serialized() loan
/// one), or a failure came with the status (failed(): a loan of another
/// publisher, a malformed message, a transport that could not send; the
/// status counts whoever got it nonetheless, e.g. the local subscribers of
/// a message the network could not carry).
class [[nodiscard]] PublishResult {
 public:
  PublishResult(PublishStatus status) noexcept : status_(status) {}        // NOLINT(google-explicit-constructor)
  PublishResult(PoolExhausted /*outcome*/) noexcept : exhausted_(true) {}  // NOLINT(google-explicit-constructor)
  PublishResult(Error error, PublishStatus status = {}) noexcept           // NOLINT(google-explicit-constructor)
      : status_(status), error_(std::move(error)) {}

  /// Sent: no failure, and there was a chunk to send it in.
  [[nodiscard]] bool ok() const noexcept { return !exhausted_ && !error_; }
  explicit operator bool() const noexcept { return ok(); }
  /// Not sent: no free chunk (back-pressure, not an error).
  [[nodiscard]] bool exhausted() const noexcept { return exhausted_; }
  [[nodiscard]] bool failed() const noexcept { return error_.has_value(); }

  [[nodiscard]] const PublishStatus& status() const noexcept { return status_; }
  const PublishStatus& operator*() const noexcept { return status_; }
  const PublishStatus* operator->() const noexcept { return &status_; }

  /// The failure when failed(); otherwise an Error with code kOk.
  [[nodiscard]] const Error& error() const noexcept {
    return error_ ? *error_ : detail::no_failure<PoolExhausted>(exhausted_);
  }

 private:
  PublishStatus status_;
  bool exhausted_ = false;
  std::optional<Error> error_;
};

}  // namespace axon
