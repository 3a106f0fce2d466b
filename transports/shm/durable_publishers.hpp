// The transient-local publishers of a node: the service thread hands their
// history to late joiners while they are idle.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace axon::shm {

class ShmPublisherPort;

/// Thread safety: any thread. forget() waits for a running adopt_joiners().
class DurablePublishers {
 public:
  /// How often the service thread adopts joiners while any publisher is listed.
  static constexpr int kAdoptPeriodMs = 5;

  DurablePublishers() = default;
  DurablePublishers(const DurablePublishers&) = delete;
  DurablePublishers& operator=(const DurablePublishers&) = delete;

  /// Lists `port` until forget(port) (its destructor). Allocates.
  void add(ShmPublisherPort* port);
  void forget(ShmPublisherPort* port) noexcept;
  /// Whether any is listed (relaxed: only shortens the service period).
  [[nodiscard]] bool any() const noexcept { return count_.load(std::memory_order_relaxed) != 0; }
  /// The service thread: lets each listed publisher adopt its joiners.
  void adopt_joiners() noexcept;

 private:
  std::mutex mutex_;  ///< Guards ports_.
  std::vector<ShmPublisherPort*> ports_;
  std::atomic<std::uint32_t> count_{0};  ///< Relaxed: only shortens the service period.
};

}  // namespace axon::shm
