// Which counters of each sender session were accepted already: a sliding
// bitmap per session, as IPsec (RFC 4303, 3.4.3) and WireGuard keep one, so
// that a datagram captured and sent again is dropped.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace axon::udp {

/// One session's window: the highest counter accepted and which of the
/// kBits counters below it were. Counters kBits or more below the highest are
/// refused as too old. A session is one sending thread of one participant
/// (EnvelopeSealer), whose counters reach the socket in order; the receiver
/// handles them out of order when a subscriber's waiting thread read a few
/// (up to 8) and waits for the receive turn while the participant's thread
/// handles the batches after them (up to 1024 per turn). 8192 leaves room
/// for several such turns, as WireGuard's window does.
class ReplayWindow {
 public:
  static constexpr std::uint64_t kBits = 8192;

  /// Whether `counter` may be accepted: above the highest, or inside the
  /// window and not seen yet.
  [[nodiscard]] bool fresh(std::uint64_t counter) const noexcept;
  /// Marks `counter` seen (call after fresh() and the tag's check said yes).
  void accept(std::uint64_t counter) noexcept;

 private:
  static constexpr std::size_t kWords = kBits / 64;
  [[nodiscard]] bool seen(std::uint64_t counter) const noexcept {
    return ((bits_[(counter / 64) % kWords] >> (counter % 64)) & 1U) != 0;
  }

  std::uint64_t top_ = 0;  ///< The highest counter accepted (valid when started_).
  bool started_ = false;
  std::array<std::uint64_t, kWords> bits_{};
};

/// The windows of up to `max_sessions` sender sessions, found through an
/// open-addressing index (linear probing, twice as many slots as sessions). A session is added when its
/// first datagram passes the tag's check, so no one without the key can add
/// or push out one; when full, the least recently heard session makes room
/// (what it accepted is forgotten: docs/security.md says what that allows).
///
/// Thread safety: none (the receiving thread owns it). Allocates in the
/// constructor only.
class ReplayWindows {
 public:
  explicit ReplayWindows(std::size_t max_sessions);

  /// Whether (session, counter) may be accepted; an unknown session: yes.
  /// `session` is never 0 (EnvelopeOpener refuses it before).
  [[nodiscard]] bool fresh(std::uint64_t session, std::uint64_t counter) const noexcept;
  /// Marks (session, counter) seen, adding the session if need be.
  void accept(std::uint64_t session, std::uint64_t counter) noexcept;
  [[nodiscard]] std::size_t sessions() const noexcept { return used_; }

 private:
  struct Entry {
    std::uint64_t session = 0;
    std::uint64_t last_used = 0;  ///< Of use_clock_: the least recent is evicted.
    ReplayWindow window;
  };
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFU;
  [[nodiscard]] std::size_t home(std::uint64_t session) const noexcept {
    return static_cast<std::size_t>((session * 0x9E3779B97F4A7C15ULL) >> 32U) & mask_;
  }
  /// The index slot of `session`, or the empty slot where it would go.
  [[nodiscard]] std::size_t probe(std::uint64_t session) const noexcept;
  /// Empties index slot `i`, moving later slots of its probe run back (no tombstones).
  void erase(std::size_t i) noexcept;

  std::size_t mask_;
  std::vector<std::uint32_t> index_;  ///< Entry numbers, kEmpty for none.
  std::vector<Entry> entries_;        ///< max_sessions of them; the first used_ are in use.
  std::size_t used_ = 0;
  std::uint64_t use_clock_ = 0;
};

}  // namespace axon::udp
