// Errors as values at the API boundary: Result<T> holds a T or an Error.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace axon {

/// What went wrong. One enum for the whole library keeps the API small; the
/// message says which component and what to do.
enum class ErrorCode : std::uint8_t {
  kOk = 0,
  // Not here: "nothing queued" and "no free chunk" are outcomes, not errors
  // (TakeResult::empty(), LoanResult::exhausted(), axon/outcome.hpp).
  kTooManySamples,     ///< The subscriber holds its maximum number of samples.
  kPayloadTooLarge,    ///< The message does not fit the largest chunk class.
  kTypeMismatch,       ///< A topic's type identity differs from the caller's.
  kLimitReached,       ///< A fixed table (topics, publishers, ...) is full.
  kInvalidArgument,    ///< A name, option or value the caller passed is wrong.
  kNoSpace,            ///< Not enough room to create a segment.
  kIncompatible,       ///< A segment has another magic, layout version or ABI.
  kSystem,             ///< A system call failed; the message names it.
  kTimeout,            ///< A bounded wait ran out.
  kClosed,             ///< The peer or the object is gone.
  kMalformed,          ///< Bytes that are not a valid message (verification or decoding failed).
  kRequirementNotMet,  ///< A QoS requirement (e.g. require_zero_copy) cannot be met.
  kNoServer,           ///< A service call found no server (none serves it, or it left mid-call).
  kInUse,              ///< Live processes still use it (axon clean of a running domain).
  kNotFound,           ///< What was named (a topic) does not exist.
};

/// Readable name of an error code ("pool_exhausted").
[[nodiscard]] std::string_view to_string(ErrorCode code) noexcept;

/// An error code and a message. Hot-path errors carry only a static message
/// (no allocation); start-up errors carry a detailed one.
class Error {
 public:
  Error(ErrorCode code, const char* static_message) noexcept : code_(code), static_message_(static_message) {}
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  [[nodiscard]] ErrorCode code() const noexcept { return code_; }
  [[nodiscard]] std::string_view message() const noexcept {
    return message_.empty() ? std::string_view(static_message_) : std::string_view(message_);
  }

 private:
  ErrorCode code_;
  const char* static_message_ = "";
  std::string message_;
};

namespace detail {
// clang-format off (clang-format 14 cannot lay out requires-expressions)
template <class P>
concept PointerLike = requires(P& p) {
  p.operator->();
}
|| std::is_pointer_v<P>;
// clang-format on

[[noreturn]] inline void die_on_bad_access(const Error& error) noexcept {
  std::fprintf(stderr, "axon: value of a failed Result used: %.*s\n", static_cast<int>(error.message().size()),
               error.message().data());
  std::abort();
}

/// The code-kOk Error that error() returns when nothing failed, so that
/// `EXPECT_TRUE(r.ok()) << r.error().message()` reads well. Built once.
template <class Outcome>
const Error& no_failure(bool outcome) noexcept {
  static const Error kOutcome(ErrorCode::kOk, Outcome::kWhat);
  static const Error kValue(ErrorCode::kOk, "no error");
  return outcome ? kOutcome : kValue;
}

/// The Outcome of a Result: none (it holds a value or an Error only).
struct NoOutcome {
  explicit constexpr NoOutcome() = default;
  static constexpr const char* kWhat = "no value";
};

/// A value, an outcome that has none (`Outcome`: NothingQueued or
/// PoolExhausted, axon/outcome.hpp; NoOutcome for Result), or an Error: the
/// storage and accessors of Result, TakeResult and LoanResult. One union and
/// a state byte: nothing allocates, and an outcome constructs no Error.
template <class T, class Outcome>
class [[nodiscard]] ValueOrOutcome {
 public:
  ValueOrOutcome(T value) noexcept(std::is_nothrow_move_constructible_v<T>)  // NOLINT(google-explicit-constructor)
      : state_(State::kValue) {
    new (&storage_.value) T(std::move(value));
  }
  ValueOrOutcome(Outcome /*outcome*/) noexcept  // NOLINT(google-explicit-constructor)
      requires(!std::is_same_v<Outcome, NoOutcome>)
      : state_(State::kOutcome) {}
  ValueOrOutcome(Error error) noexcept : state_(State::kError) {  // NOLINT(google-explicit-constructor)
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

  /// Holds a value.
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

  /// For pointer-like T (smart pointers, Loan, Sample) `->` forwards to T's
  /// own arrow, so `node->advertise<T>(...)` works on a Result<shared_ptr>.
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

/// Either a value or an Error (like C++23 std::expected, which g++ 12 and
/// clang-tidy 14 do not both support). Using the value of a failed Result
/// aborts with the error's message: check `ok()` or `operator bool` first.
/// error() is the failure when !ok() (failed() is the same as !ok()).
template <class T>
class [[nodiscard]] Result : public detail::ValueOrOutcome<T, detail::NoOutcome> {
 public:
  using detail::ValueOrOutcome<T, detail::NoOutcome>::ValueOrOutcome;
};

/// Result of an operation without a value.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() noexcept = default;
  Result(Error error) noexcept : error_(std::move(error)), has_error_(true) {}  // NOLINT(google-explicit-constructor)
  [[nodiscard]] bool ok() const noexcept { return !has_error_; }
  explicit operator bool() const noexcept { return !has_error_; }
  [[nodiscard]] const Error& error() const noexcept { return error_; }

 private:
  Error error_{ErrorCode::kOk, ""};
  bool has_error_ = false;
};

}  // namespace axon
