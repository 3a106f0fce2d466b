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
}  // namespace detail

/// Either a value or an Error (like C++23 std::expected, which g++ 12 and
/// clang-tidy 14 do not both support). Using the value of a failed Result
/// aborts with the error's message: check `ok()` or `operator bool` first.
///
/// For pointer-like T (smart pointers, Loan, Sample) `operator->` forwards to
/// T's own arrow, so `node->advertise<T>(...)` works on a Result<shared_ptr>.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) noexcept(std::is_nothrow_move_constructible_v<T>)  // NOLINT(google-explicit-constructor)
      : has_value_(true) {
    new (&storage_.value) T(std::move(value));
  }
  Result(Error error) noexcept : has_value_(false) {  // NOLINT(google-explicit-constructor)
    new (&storage_.error) Error(std::move(error));
  }
  Result(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>) : has_value_(other.has_value_) {
    if (has_value_) {
      new (&storage_.value) T(std::move(other.storage_.value));
    } else {
      new (&storage_.error) Error(std::move(other.storage_.error));
    }
  }
  Result& operator=(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) {
      destroy();
      has_value_ = other.has_value_;
      if (has_value_) {
        new (&storage_.value) T(std::move(other.storage_.value));
      } else {
        new (&storage_.error) Error(std::move(other.storage_.error));
      }
    }
    return *this;
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result() { destroy(); }

  [[nodiscard]] bool ok() const noexcept { return has_value_; }
  explicit operator bool() const noexcept { return has_value_; }

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
    if constexpr (detail::PointerLike<T>) {
      return value();  // forwards: the compiler applies T's operator-> next
    } else {
      return &value();
    }
  }
  decltype(auto) operator->() const noexcept {
    if constexpr (detail::PointerLike<T>) {
      return value();
    } else {
      return &value();
    }
  }

  /// The error. Only valid when !ok().
  [[nodiscard]] const Error& error() const noexcept { return storage_.error; }

 private:
  void check() const noexcept {
    if (!has_value_) {
      detail::die_on_bad_access(storage_.error);
    }
  }
  void destroy() noexcept {
    if (has_value_) {
      storage_.value.~T();
    } else {
      storage_.error.~Error();
    }
  }

  union Storage {
    // User-provided on purpose: `= default` would be deleted (Error has no
    // default constructor).
    Storage() noexcept {}  // NOLINT(modernize-use-equals-default)
    ~Storage() {}          // NOLINT(modernize-use-equals-default)
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    T value;
    Error error;
  } storage_;
  bool has_value_;
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
