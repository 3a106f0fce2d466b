// What the data path's calls did: take() a sample or found nothing queued,
// loan() a chunk or met back-pressure, publish() sent the message to the
// subscribers its status counts. Outcomes (nothing queued, no free chunk,
// subscribers that timed out) are values of the normal path: they construct
// no Error and allocate nothing. An Error is a real failure only.
#pragma once

#include <cstdint>
#include <optional>
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
