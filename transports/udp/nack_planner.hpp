// When the receiver of a RELIABLE stream asks its writer for what it misses,
// and for what: one NACK round of one remote writer (design/udp.md, "NACKs").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "transports/udp/wire_format.hpp"

namespace axon::udp {

class Reassembler;
class RemoteWriter;

/// A RELIABLE stream is NACKed at most this often ...
inline constexpr std::int64_t kNackIntervalNs = 4'000'000;
/// ... and a message still arriving (no newer one started) only after this
/// much silence with nothing left to read in the socket.
inline constexpr std::int64_t kNackDelayNs = 2'000'000;
/// A sequence asked for already is asked again after kNackIntervalNs, then
/// twice as long each time the stream made no progress meanwhile, up to this
/// (and while datagrams still wait in the socket only after this long: its
/// resend is probably among them).
inline constexpr std::int64_t kRepairTimeoutNs = 64'000'000;

/// What a stream's NACKs asked for so far (kept by its RemoteWriter).
struct NackHistory {
  std::int64_t last_round_ns = 0;          ///< When the last NACK went out.
  std::uint64_t asked_through = 0;         ///< Newest sequence a NACK asked for.
  std::int64_t asked_at_ns = 0;            ///< When sequences up to asked_through were last asked for.
  std::int64_t wait_ns = kNackIntervalNs;  ///< Before they may be asked for again.
  std::uint64_t expected_when_asked = 0;   ///< The stream's next sequence to deliver then.
};

/// The receiver's state that one round depends on.
struct NackRound {
  std::int64_t now_ns = 0;
  /// Datagrams wait unread in the data socket: a fragment missing now may be
  /// among them (a receiver behind the stream, or a resend queued behind it).
  bool backlog = false;
  std::size_t max_ranges = kMaxNackRanges;  ///< Ranges that fit one NACK datagram.
};

/// Whether `writer`'s stream may be NACKed at `now_ns` (RELIABLE, interval passed).
[[nodiscard]] bool nack_due(const RemoteWriter& writer, std::int64_t now_ns) noexcept;

/// Fills `out` (at least round.max_ranges entries) with what `writer`'s NACK
/// asks for now and returns how many ranges (0: send nothing). Asks for a
/// message newer ones overtook at once, for the newest only when it went
/// quiet and nothing is left to read, and for a sequence asked already only
/// when its resend had time to arrive. Records what it asked in the writer's
/// NackHistory (the caller sends the NACK).
std::size_t plan_nack(RemoteWriter& writer, const Reassembler& reassembler, const NackRound& round,
                      std::span<NackRange> out) noexcept;

}  // namespace axon::udp
