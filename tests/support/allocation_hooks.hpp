// Counting replacements of operator new and (outside sanitizer builds)
// malloc, calloc and realloc, for tests that prove a path does not allocate.
// They replace the allocator of the whole program: link
// tests/support/allocation_hooks.cpp only into such a test's own executable.
#pragma once

#include <cstdint>

namespace axon::test::allocations {

/// Whether counts mean anything: a sanitizer's runtime owns malloc and
/// operator new, so only the plain build counts (the loops still run, for
/// the sanitizers).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kCounted = false;
#else
inline constexpr bool kCounted = true;
#endif

/// What start() counts.
enum class Scope : std::uint8_t { kThisThread, kAllThreads };

/// Resets the count to 0 and counts allocations from now on.
void start(Scope scope = Scope::kThisThread) noexcept;
/// Stops counting; returns the count. Allocations of other threads are seen
/// once those threads were synchronized with (joined, or an acquire load of
/// something they wrote after the measured work).
std::uint64_t stop() noexcept;

}  // namespace axon::test::allocations
