// libFuzzer target: parse_datagram() and a small Reassembler fed with what it
// accepts. Checks, beyond "no crash, no leak, no out-of-bounds access" (ASan,
// UBSan): an accepted datagram re-encodes to the same bytes, every fragment
// fed lands in exactly one counter, the reassembler never holds more
// destinations than slots, and it gives every one back.
//   bash scripts/run-fuzz.sh 120
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>

#include "tests/fuzz/udp_fuzz_input.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp::fuzz {
namespace {

constexpr std::uint32_t kMaxMessageBytes = 4096;
// The reassembler is stricter than the parser (3000 < 4096 bytes; 32 fragments
// where the parser allows more) so that its own refusals are reachable too.
constexpr ReassemblyConfig kConfig{.max_message_bytes = 3000,
                                   .max_fragments_per_message = 32,
                                   .max_messages_in_flight = 3,
                                   .max_messages_per_sender = 2,
                                   .completed_history = 4,
                                   .timeout_ns = 50'000'000,
                                   .when_full = WhenFull::kEvictOldest};
constexpr WireLimits kLimits{.max_message_bytes = kMaxMessageBytes, .max_fragment_bytes = 2048};

void check(bool condition) {
  if (!condition) {
    __builtin_trap();
  }
}

// A fixed pool of buffers, one more than the slots (a single-fragment message
// borrows one while every slot holds one). Poisons each buffer it hands out.
class PoolProvider final : public DestinationProvider {
 public:
  std::optional<Destination> acquire(const MessageKey& /*key*/, std::uint64_t /*topic_id*/,
                                     std::uint32_t total_bytes) noexcept override {
    check(total_bytes <= kMaxMessageBytes);
    if (refuse) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      if (!in_use_[i]) {
        in_use_[i] = true;
        std::memset(buffers_[i].data(), 0xEE, buffers_[i].size());
        return Destination{.bytes = std::span(buffers_[i]).first(total_bytes), .token = i};
      }
    }
    check(false);  // more destinations out than slots + 1: a leak in the reassembler
    return std::nullopt;
  }
  void release(const MessageKey& /*key*/, const Destination& destination) noexcept override {
    give_back(destination.token);
  }
  void give_back(std::uint64_t token) {
    check(token < buffers_.size() && in_use_[token]);
    in_use_[token] = false;
  }
  [[nodiscard]] std::size_t outstanding() const {
    std::size_t n = 0;
    for (const bool used : in_use_) {
      n += used ? 1 : 0;
    }
    return n;
  }
  bool refuse = false;

 private:
  std::array<std::array<std::byte, kMaxMessageBytes>, kConfig.max_messages_in_flight + 1> buffers_{};
  std::array<bool, kConfig.max_messages_in_flight + 1> in_use_{};
};

// A fragment from raw bytes without any check (but a payload span that lies
// inside them): what a caller that skipped parse_datagram() might pass.
DataFragment raw_fragment(std::span<const std::byte> bytes) {
  std::array<std::uint8_t, 36> f{};
  const std::size_t n = std::min(bytes.size(), f.size());
  for (std::size_t i = 0; i < n; ++i) {
    f[i] = std::to_integer<std::uint8_t>(bytes[i]);
  }
  const auto u32 = [&](std::size_t at) {
    return static_cast<std::uint32_t>(f[at]) | (static_cast<std::uint32_t>(f[at + 1]) << 8) |
           (static_cast<std::uint32_t>(f[at + 2]) << 16) | (static_cast<std::uint32_t>(f[at + 3]) << 24);
  };
  DataFragment out;
  out.topic_id = u32(0);
  out.sequence = u32(4);
  out.writer_id = f[8] & 3U;
  out.total_bytes = u32(12);
  out.fragment_index = u32(16);
  out.fragment_count = u32(20);
  out.fragment_bytes = u32(24);
  out.payload = bytes.subspan(n);
  return out;
}

// Encodes `parsed` again; it must give back `bytes` exactly.
void check_round_trip(std::span<const std::byte> bytes, const ParsedDatagram& parsed) {
  static std::array<std::byte, kMaxDatagramBytes> out;
  const bool checksum = (parsed.header.flags & kFlagChecksum) != 0;
  const bool reliable = (parsed.header.flags & kFlagReliable) != 0;
  std::size_t size = 0;
  switch (parsed.header.type) {
    case DatagramType::kData: size = encode_data(out, parsed.header.sender_id, parsed.data, checksum, reliable); break;
    case DatagramType::kHeartbeat:
      size = encode_heartbeat(out, parsed.header.sender_id, parsed.heartbeat, checksum, reliable);
      break;
    case DatagramType::kAnnounce: {
      const Announce& announce = parsed.announce;
      std::array<AnnounceEntry, kMaxAnnounceEntries> entries{};
      for (std::size_t i = 0; i < announce.entry_count; ++i) {
        entries[i] = announce.entry(i);
      }
      size = encode_announce(out, parsed.header.sender_id, announce, std::span(entries).first(announce.entry_count),
                             parsed.header.flags & kFlagRelayed, checksum);
      break;
    }
    case DatagramType::kGap: size = encode_gap(out, parsed.header.sender_id, parsed.gap, checksum); break;
    case DatagramType::kNack: {
      const Nack& nack = parsed.nack;
      std::array<NackRange, kMaxNackRanges> ranges{};
      for (std::size_t i = 0; i < nack.range_count; ++i) {
        ranges[i] = nack.range(i);
      }
      size = encode_nack(out, parsed.header.sender_id, nack.target_sender_id, nack.topic_id, nack.writer_id,
                         std::span(ranges).first(nack.range_count), checksum);
      break;
    }
  }
  check(size == bytes.size());
  check(std::memcmp(out.data(), bytes.data(), size) == 0);
}

std::uint64_t fragments_counted(const ReassemblyCounters& c) {
  return c.fragments_stored + c.duplicates + c.late_fragments + c.conflicts + c.too_large + c.too_many_fragments +
         c.malformed + c.refused_no_slot + c.refused_no_destination;
}

void run(std::span<const std::uint8_t> input) {
  if (input.empty()) {
    return;
  }
  ReassemblyConfig config = kConfig;
  if ((input[0] & kConfigRefuseNew) != 0) {
    config.when_full = WhenFull::kRefuseNew;
  }
  input = input.subspan(1);
  PoolProvider provider;
  {
    auto created = Reassembler::create(config, provider);
    check(created.ok());
    Reassembler sut = std::move(*created);
    ParseCounters parse_counters;
    std::uint64_t now_ns = 0;
    std::uint64_t fed = 0;
    std::size_t at = 0;
    while (at < input.size()) {
      const std::uint8_t control = input[at];
      std::size_t length = 0;
      if (at + 3 <= input.size()) {
        length = static_cast<std::size_t>(input[at + 1]) | (static_cast<std::size_t>(input[at + 2]) << 8);
      }
      at = std::min(at + 3, input.size());
      length = std::min(length, input.size() - at);
      const auto bytes = std::as_bytes(input.subspan(at, length));
      at += length;
      now_ns += static_cast<std::uint64_t>(control >> 5) * 1'000'000;

      ParsedDatagram parsed;
      if ((control & kRawFragment) != 0) {
        parsed.header.type = DatagramType::kData;
        parsed.header.sender_id = 1 + (control & 1U);
        parsed.data = raw_fragment(bytes);
      } else {
        const ParseError error = parse_datagram(bytes, kLimits, parsed);
        parse_counters.count(error);
        if (error != ParseError::kOk) {
          continue;
        }
        check_round_trip(bytes, parsed);
      }
      if (parsed.header.type == DatagramType::kData) {
        const DataFragment* fragment = &parsed.data;
        provider.refuse = (control & kRefuseDestination) != 0;
        const FeedResult result = sut.on_fragment(parsed.header.sender_id, *fragment, now_ns);
        ++fed;
        if (result.outcome == FeedOutcome::kCompleted) {
          check(result.message.destination.bytes.size() == fragment->total_bytes);
          provider.give_back(result.message.destination.token);
        }
      }
      check(fragments_counted(sut.counters()) == fed);
      check(sut.in_flight_count() <= kConfig.max_messages_in_flight);
      check(provider.outstanding() == sut.in_flight_count());
      if ((control & kExpire) != 0) {
        sut.expire(now_ns);
        const std::optional<std::uint64_t> deadline = sut.next_deadline_ns();
        check(deadline.has_value() == (sut.in_flight_count() > 0));
        check(!deadline || *deadline > now_ns);
      }
      if ((control & kDropSender) != 0) {
        sut.drop_sender(parsed.header.sender_id);
      }
      if ((control & kListMissing) != 0) {
        std::array<InFlightMessage, kConfig.max_messages_in_flight> listed{};
        const std::size_t n = sut.in_flight(listed);
        check(n == sut.in_flight_count());
        for (std::size_t i = 0; i < n; ++i) {
          std::array<FragmentRange, 8> missing{};
          const std::size_t ranges = sut.missing_fragments(listed[i].key, missing);
          check(ranges >= 1 && ranges <= missing.size());  // in flight: something is missing
          for (std::size_t r = 0; r < ranges; ++r) {
            check(missing[r].first < missing[r].end && missing[r].end <= listed[i].fragment_count);
          }
        }
      }
    }
  }
  check(provider.outstanding() == 0);  // the destructor gave every destination back
}

}  // namespace
}  // namespace axon::udp::fuzz

// The name is libFuzzer's.
// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  axon::udp::fuzz::run(std::span(data, size));
  return 0;
}
