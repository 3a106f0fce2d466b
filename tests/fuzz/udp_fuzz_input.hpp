// The input format of the UDP datagram fuzzer, shared with its seed
// generator: one configuration byte (bit 0: the reassembler refuses new
// messages when full instead of evicting; bits 1..3: 0 to hand each datagram
// over as it is, or a batch size 1..7 to receive the datagrams in batches as
// the transport does, predicted fragments read straight into their chunk;
// bit 4: authenticated datagrams, bit 5 with it: encrypted, see below), then a series of records, each
//   u8 control | u16 length (little-endian) | `length` bytes of datagram
// (a record cut short by the end of the input takes what is left).
// Control bits: 0x01 call expire(), 0x02 drop_sender() of the datagram's
// sender, 0x04 list missing fragments of every message in flight, 0x08 the
// provider refuses this message's destination, 0x10 skip the parser and hand
// the reassembler a fragment decoded naively from the bytes (its own checks
// must hold); bits 5..7 advance the clock by that many milliseconds before
// the datagram. In batch mode, a batch is the next records (up to the batch
// size): their datagrams are received together, then handled in order with
// their control bits; a 0x10 record takes no place in the batch.
// Authenticated (config bit 4): the receiver expects the envelope under
// kFuzzKey (transports/udp/envelope.hpp). A record whose bytes start with the
// envelope's magic "AXNS" arrives as it is (an envelope of the input's own:
// the opener and the replay window are fuzzed); any other record is sealed by
// the harness with the next counter of one sender session, so that mutated
// datagrams still reach the parser behind the envelope.
// Encrypted (config bits 4 and 5): the receiver expects encrypted envelopes;
// the harness seals records as ciphertext, and a record of its own envelope
// (of either protection) arrives as it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace axon::udp::fuzz {

inline constexpr std::uint8_t kExpire = 0x01;
inline constexpr std::uint8_t kDropSender = 0x02;
inline constexpr std::uint8_t kListMissing = 0x04;
inline constexpr std::uint8_t kRefuseDestination = 0x08;
inline constexpr std::uint8_t kRawFragment = 0x10;
inline constexpr std::uint8_t kConfigRefuseNew = 0x01;  ///< In the configuration byte.
inline constexpr unsigned kConfigBatchShift = 1;        ///< Batch size: (config >> shift) & mask.
inline constexpr std::uint8_t kConfigBatchMask = 0x07;
inline constexpr std::uint8_t kConfigAuthenticated = 0x10;  ///< In the configuration byte.
inline constexpr std::uint8_t kConfigEncrypted = 0x20;      ///< With kConfigAuthenticated: encrypted datagrams.
/// The fixed key of the authenticated mode (its seeds are sealed with it) and the harness's session.
inline constexpr std::uint8_t kFuzzKeyByte = 0x42;
inline constexpr std::uint64_t kFuzzSession = 0xF0220F022ULL;

inline void append_record(std::vector<std::uint8_t>& input, std::uint8_t control, std::span<const std::byte> datagram) {
  input.push_back(control);
  input.push_back(static_cast<std::uint8_t>(datagram.size() & 0xFFU));
  input.push_back(static_cast<std::uint8_t>(datagram.size() >> 8));
  for (const std::byte b : datagram) {
    input.push_back(static_cast<std::uint8_t>(b));
  }
}

}  // namespace axon::udp::fuzz
