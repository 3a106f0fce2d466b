// The messages play has copied into their chunks and not published yet, in log-time order (docs/design/replay.md,
// "Preparing ahead"): the frames of a burst are copied while play waits for the burst's first one, instead of
// each frame's copy (hundreds of µs for 2 MiB) making the next one late.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "axon/bytes.hpp"
#include "axon/loan.hpp"

namespace axon::tools {

/// A message ready to publish: its payload is in `loan` already.
struct PreparedMessage {
  std::size_t output = 0;  ///< The player's output (publisher) index.
  std::uint64_t log_time_ns = 0;
  Loan<Bytes> loan;
};

/// A first-in first-out ring of at most kCapacity prepared messages.
///
/// Thread safety: none (the replay's one thread). Allocates nothing.
template <std::size_t kCapacity>
class PreparedMessages {
 public:
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] bool full() const noexcept { return size_ == kCapacity; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// The oldest message. Precondition: !empty().
  [[nodiscard]] const PreparedMessage& front() const noexcept { return *slots_[head_]; }

  /// Precondition: !full().
  void push(PreparedMessage message) noexcept {
    slots_[(head_ + size_) % kCapacity].emplace(std::move(message));
    ++size_;
  }

  /// Takes the oldest message out. Precondition: !empty().
  [[nodiscard]] PreparedMessage pop() noexcept {
    std::optional<PreparedMessage>& slot = slots_[head_];
    PreparedMessage message = std::move(*slot);
    slot.reset();
    head_ = (head_ + 1) % kCapacity;
    --size_;
    return message;
  }

 private:
  std::array<std::optional<PreparedMessage>, kCapacity> slots_{};
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace axon::tools
