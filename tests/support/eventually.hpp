// Bounded waiting for tests: poll a condition every millisecond until it
// holds or a timeout passes (never an unbounded spin on a shared 2-core box).
#pragma once

#include <chrono>
#include <thread>

namespace axon::test {

/// Waits up to `timeout` for `done()`, checking every millisecond.
template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace axon::test
