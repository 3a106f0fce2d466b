// What a chaos publisher writes into every payload and its subscribers
// check: after the scenario's stamp, the message's sequence number in its
// publisher's incarnation (a restarted publisher is a new incarnation and
// counts from 0 again), that incarnation, and a checksum of every other byte
// of the payload, whose rest is a pattern derived from the sequence number.
// SequenceTracker follows one subscriber's streams, one per publisher
// incarnation, and counts what was lost, duplicated or out of order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "harness/payload.hpp"

namespace axon_bench {

struct ChaosHeader {
  std::uint64_t seq = 0;
  std::uint32_t incarnation = 0;
  std::uint32_t reserved = 0;
  std::uint64_t checksum = 0;
};

/// Where the header sits: after the stamp (offset 0), inside the smallest payload (64 B).
inline constexpr std::size_t kChaosHeaderOffset = kStampBytes;
inline constexpr std::size_t kChaosChecksumOffset = kChaosHeaderOffset + offsetof(ChaosHeader, checksum);
static_assert(kChaosHeaderOffset + sizeof(ChaosHeader) <= 64, "the header fits the smallest scenario payload");
static_assert(kChaosChecksumOffset % 8 == 0, "the checksum is one whole word of the payload");

/// A checksum of the payload's 8-byte words, the checksum word counted as 0:
/// four independent lanes (multiply-rotate) so that it runs near memory speed.
/// `bytes` is a multiple of 32 (payloads are powers of two from 64 B).
inline std::uint64_t payload_checksum(const std::byte* payload, std::size_t bytes) noexcept {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  std::array<std::uint64_t, 4> lane{1, 2, 3, 4};
  for (std::size_t i = 0; i < bytes; i += 32) {
    for (std::size_t k = 0; k < 4; ++k) {
      std::uint64_t word;
      std::memcpy(&word, payload + i + 8 * k, sizeof(word));
      word = i + 8 * k == kChaosChecksumOffset ? 0 : word;
      lane[k] = ((lane[k] ^ word) * kMul);
      lane[k] = (lane[k] << 29) | (lane[k] >> 35);
    }
  }
  return (lane[0] * kMul) ^ (lane[1] * 3) ^ (lane[2] * 5) ^ (lane[3] * 7) ^ bytes;
}

/// Writes the stamp, the header and the pattern, then the checksum.
inline void write_chaos_payload(std::byte* payload, std::size_t bytes, const Stamp& stamp, std::uint64_t seq,
                                std::uint32_t incarnation) noexcept {
  write_stamp(payload, stamp);
  const ChaosHeader header{.seq = seq, .incarnation = incarnation, .reserved = 0, .checksum = 0};
  std::memcpy(payload + kChaosHeaderOffset, &header, sizeof(header));
  for (std::size_t i = kChaosHeaderOffset + sizeof(ChaosHeader); i < bytes; i += 8) {
    const std::uint64_t word = seq * 0x100000001B3ULL + i;
    std::memcpy(payload + i, &word, sizeof(word));
  }
  const std::uint64_t sum = payload_checksum(payload, bytes);
  std::memcpy(payload + kChaosChecksumOffset, &sum, sizeof(sum));
}

/// The header of a received payload, and whether its checksum matches.
struct ChaosRead {
  ChaosHeader header;
  bool intact = false;
};

inline ChaosRead read_chaos_payload(const std::byte* payload, std::size_t bytes) noexcept {
  ChaosRead read;
  std::memcpy(&read.header, payload + kChaosHeaderOffset, sizeof(read.header));
  read.intact = payload_checksum(payload, bytes) == read.header.checksum;
  return read;
}

/// One subscriber incarnation's messages from one publisher incarnation.
/// Lives in shared memory (the parent judges it): plain values only.
struct StreamRecord {
  std::uint32_t subscriber_incarnation = 0;
  std::uint32_t publisher_incarnation = 0;
  std::uint64_t first_seq = 0;
  std::uint64_t last_seq = 0;  ///< The highest seen.
  std::uint64_t received = 0;
  std::uint64_t lost = 0;          ///< Sequence numbers skipped between two received.
  std::uint64_t duplicates = 0;    ///< The same sequence number as the previous message.
  std::uint64_t out_of_order = 0;  ///< Lower than the highest seen.
};

/// The streams of one subscription. Not thread-safe: one subscriber's thread.
template <std::size_t kCapacity>
struct SequenceTracker {
  std::array<StreamRecord, kCapacity> streams{};
  std::uint32_t count = 0;
  std::uint64_t overflowed = 0;  ///< Messages of streams beyond kCapacity (not judged: the check fails).

  void on_message(std::uint32_t subscriber_incarnation, std::uint32_t publisher_incarnation,
                  std::uint64_t seq) noexcept {
    StreamRecord* s = find(subscriber_incarnation, publisher_incarnation);
    if (s == nullptr) {
      if (count == kCapacity) {
        ++overflowed;
        return;
      }
      s = &streams[count++];
      *s = StreamRecord{.subscriber_incarnation = subscriber_incarnation,
                        .publisher_incarnation = publisher_incarnation,
                        .first_seq = seq,
                        .last_seq = seq,
                        .received = 1};
      return;
    }
    ++s->received;
    if (seq == s->last_seq + 1) {
      s->last_seq = seq;
    } else if (seq > s->last_seq + 1) {
      s->lost += seq - s->last_seq - 1;
      s->last_seq = seq;
    } else if (seq == s->last_seq) {
      ++s->duplicates;
    } else {
      ++s->out_of_order;
    }
  }

 private:
  StreamRecord* find(std::uint32_t subscriber_incarnation, std::uint32_t publisher_incarnation) noexcept {
    for (std::uint32_t i = count; i > 0; --i) {  // the newest stream first: the one that usually matches
      StreamRecord& s = streams[i - 1];
      if (s.subscriber_incarnation == subscriber_incarnation && s.publisher_incarnation == publisher_incarnation) {
        return &s;
      }
    }
    return nullptr;
  }
};

}  // namespace axon_bench
