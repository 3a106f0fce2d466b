// The non-template parts of services (axon/service_message.hpp): topic
// names, client keys, and the wait on futex words that servers and clients
// share.
#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "axon/service_message.hpp"
#include "src/base/clock.hpp"
#include "src/base/futex.hpp"
#include "src/base/log.hpp"

namespace axon::detail {
namespace {

/// What "/reply/" and 16 hex digits add to a service name; topic names have
/// at most 127 characters (the registry's limit).
constexpr std::size_t kLongestService = 127 - 7 - 16;

}  // namespace

std::string request_topic(std::string_view service) { return fmt::format("{}/request", service); }

std::string reply_topic(std::string_view service, std::uint64_t client_key) {
  return fmt::format("{}/reply/{:016x}", service, client_key);
}

Result<void> check_service_name(std::string_view service) {
  if (service.empty() || service.size() > kLongestService) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("service name '{}' must have 1 to {} characters (its reply topics add 24)", service,
                             kLongestService));
  }
  return {};
}

void log_service_failure(std::string_view service, const Error& error) noexcept {
  try {
    logger().error("service '{}': cannot reply to a client: {}", service, error.message());
  } catch (...) {  // NOLINT(bugprone-empty-catch): logging must not take the server down
  }
}

TypeIdentity service_envelope_identity(TypeIdentity body) {
  body.name = "axon.service(" + body.name + ")";
  body.hash = (body.hash ^ 0x9E3779B97F4A7C15ULL) * 0xFF51AFD7ED558CCDULL;  // any bijection: not the body's hash
  return body;
}

std::uint64_t new_client_key() {
  std::random_device device;
  std::uint64_t key = 0;
  while (key == 0) {
    key = (std::uint64_t{device()} << 32U) ^ device();
  }
  return key;
}

std::int64_t monotonic_ns() noexcept { return monotonic_now_ns(); }

bool wait_until_ready(std::span<WakeWord* const> words, ReadyCheck ready, std::int64_t deadline_ns,
                      std::int64_t slice_ns) noexcept {
  for (;;) {
    // Counted a waiter before the check: whatever moves a word after it
    // wakes us (futex::Waiter's protocol).
    futex::Waiter waiter(words);
    if (ready()) {
      return true;
    }
    const std::int64_t now = monotonic_now_ns();
    if (deadline_ns >= 0 && now >= deadline_ns) {
      return false;
    }
    const std::int64_t left = deadline_ns < 0 ? slice_ns : std::min(slice_ns, deadline_ns - now);
    (void)waiter.wait(left);
  }
}

}  // namespace axon::detail
