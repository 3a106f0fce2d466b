// The one clock axon stamps and measures with: CLOCK_MONOTONIC through the
// vDSO (no system call).
#pragma once

#include <cstdint>
#include <ctime>

namespace axon {

inline std::int64_t monotonic_now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace axon
