// libFuzzer target: parse_datagram(), parse_split_datagram() and a small
// Reassembler fed with what they accept, directly or through the receive path
// of the transport (ScatterReceive: predicted fragments read straight into
// their chunk). Checks, beyond "no crash, no leak, no out-of-bounds access,
// no read of a chunk given back" (ASan, UBSan): both parsers agree, an
// accepted datagram re-encodes to the same bytes (also when its payload was
// read into a chunk), every fragment fed lands in exactly one counter and in
// place or copied, a fragment received as predicted is placed without a copy,
// a datagram that was not is put back together byte for byte, predictions
// name only missing fragments, the reassembler never holds more destinations
// than slots, and it gives every one back. Behind envelopes (authenticated or
// encrypted mode): the guard admits exactly what a second opener of the same
// key admits, decrypts in place to the same clear text (also a payload read
// into a chunk), and no record the harness encrypted goes in clear.
//   bash scripts/run-fuzz.sh 120
#include <sanitizer/asan_interface.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "tests/fuzz/udp_fuzz_input.hpp"
#include "transports/udp/datagram_guard.hpp"
#include "transports/udp/envelope.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/scatter_receive.hpp"
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
// Receive buffers in batch mode: the largest fragment the parser accepts and some tail.
constexpr std::size_t kDatagramBytes = kDataHeaderBytes + 2048 + 64;

void check(bool condition) {
  if (!condition) {
    __builtin_trap();
  }
}

// A fixed pool of buffers, one more than the slots (a single-fragment message
// borrows one while every slot holds one). Fills each buffer it hands out
// with 0xEE, and poisons it for ASan while it is not out: reading a
// destination the reassembler gave back (a chunk back in the pool) traps.
class PoolProvider final : public DestinationProvider {
 public:
  PoolProvider() {
    for (auto& buffer : buffers_) {
      ASAN_POISON_MEMORY_REGION(buffer.data(), buffer.size());
    }
  }
  PoolProvider(const PoolProvider&) = delete;
  PoolProvider& operator=(const PoolProvider&) = delete;
  PoolProvider(PoolProvider&&) = delete;
  PoolProvider& operator=(PoolProvider&&) = delete;
  ~PoolProvider() override {
    for (auto& buffer : buffers_) {
      ASAN_UNPOISON_MEMORY_REGION(buffer.data(), buffer.size());  // the stack is reused after
    }
  }

  std::optional<Destination> acquire(const MessageKey& /*key*/, std::uint64_t /*topic_id*/,
                                     std::uint32_t total_bytes) noexcept override {
    check(total_bytes <= kMaxMessageBytes);
    if (refuse) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      if (!in_use_[i]) {
        in_use_[i] = true;
        ASAN_UNPOISON_MEMORY_REGION(buffers_[i].data(), total_bytes);
        std::memset(buffers_[i].data(), 0xEE, total_bytes);
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
    ASAN_POISON_MEMORY_REGION(buffers_[token].data(), buffers_[token].size());
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
  alignas(64) std::array<std::array<std::byte, kMaxMessageBytes>, kConfig.max_messages_in_flight + 1> buffers_{};
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
    case DatagramType::kAck: size = encode_ack(out, parsed.header.sender_id, parsed.ack, checksum); break;
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

// parse_split_datagram() on the datagram's first kDataHeaderBytes and the rest,
// in two separate exact-size buffers (ASan sees any read past either), must
// give the same outcome as parse_datagram() and, when both accept it, the
// same fields (it re-encodes to the same bytes).
void check_split_parse(std::span<const std::byte> bytes, ParseError whole) {
  const std::size_t split_at = std::min(bytes.size(), kDataHeaderBytes);
  const std::vector<std::byte> header(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(split_at));
  const std::vector<std::byte> payload(bytes.begin() + static_cast<std::ptrdiff_t>(split_at), bytes.end());
  ParsedDatagram parsed;
  check(parse_split_datagram(header, payload, kLimits, parsed) == whole);
  if (whole == ParseError::kOk) {
    check_round_trip(bytes, parsed);
    check(parsed.header.type != DatagramType::kData || payload.empty() || parsed.data.payload.data() == payload.data());
  }
}

// What recvmmsg does with one datagram: it fills the pieces in order; a
// longer one is cut and reports its real size.
void deliver(IncomingDatagram& d, std::span<const std::byte> bytes) {
  std::size_t at = 0;
  for (const std::span<std::byte> piece : d.pieces) {
    const std::size_t n = std::min(piece.size(), bytes.size() - at);
    if (n > 0) {
      std::memcpy(piece.data(), bytes.data() + at, n);
    }
    at += n;
  }
  d.size = bytes.size();
}

struct Record {
  std::uint8_t control = 0;
  std::span<const std::byte> bytes;  ///< The axon datagram in clear (after the envelope, in authenticated mode).
  std::span<const std::byte>
      wire;                   ///< What the socket delivers: `bytes`, or an envelope and `bytes` (or its ciphertext).
  bool own_envelope = false;  ///< Authenticated mode: the input's own envelope, not the harness's.
  bool opens = true;          ///< Authenticated mode: what the guard must decide (the oracle's outcome).
};

DatagramKey fuzz_key() {
  std::array<std::byte, kKeyBytes> bytes{};
  bytes.fill(std::byte{kFuzzKeyByte});
  return *make_datagram_key(bytes);
}

std::unique_ptr<EnvelopeOpener> fuzz_opener(Protection protection) {
  return std::move(*EnvelopeOpener::create(fuzz_key(), nullptr, 4, protection));
}

/// A buffer per record of a batch: allocated once for all runs.
using RecordBuffers = std::array<std::vector<std::byte>, kConfigBatchMask>;
RecordBuffers make_buffers() {
  RecordBuffers made;
  for (auto& buffer : made) {
    buffer.resize(kEnvelopeBytes + 65535);
  }
  return made;
}

/// The envelope of authenticated (and encrypted) mode: the harness's sealer,
/// the receiver's guard, and an oracle: a second opener of the same key and
/// protection that opens a copy of every datagram the guard will see, in the
/// same order, so it must decide the same, and gives the clear text of an
/// encrypted datagram of the input's own.
struct Authentication {
  explicit Authentication(Protection p) : protection(p), guard(fuzz_opener(p), {}, counters), oracle(fuzz_opener(p)) {}
  Protection protection;
  /// One per protection for all runs (their own thread sessions are never used: seal_as() with kFuzzSession keeps
  /// runs deterministic).
  [[nodiscard]] const EnvelopeSealer& sealer() const {
    static const EnvelopeSealer authenticating(fuzz_key(), Protection::kAuthenticated);
    static const EnvelopeSealer encrypting(fuzz_key(), Protection::kEncrypted);
    return protection == Protection::kEncrypted ? encrypting : authenticating;
  }
  NetworkCounterCells counters;
  DatagramGuard guard;
  std::unique_ptr<EnvelopeOpener> oracle;
  static RecordBuffers& sealed() {  // what the socket delivers
    static RecordBuffers buffers = make_buffers();
    return buffers;
  }
  static RecordBuffers& opened() {  // the oracle's copy, opened in place
    static RecordBuffers buffers = make_buffers();
    return buffers;
  }
  std::uint64_t next_counter = 1;

  /// `record` as it arrives, in buffer `slot`: its own envelope, or sealed
  /// by the harness. The guard will be asked about it when it is at most
  /// `guarded_bytes` long (a batch does not ask about a datagram longer than its buffer).
  Record wrap(Record record, std::size_t slot, std::size_t guarded_bytes) {
    const std::span<const std::byte> bytes = record.bytes;
    std::vector<std::byte>& buffer = sealed()[slot];
    if (bytes.size() >= 4 && std::memcmp(bytes.data(), "AXNS", 4) == 0) {
      record.own_envelope = true;
      std::memcpy(buffer.data(), bytes.data(), bytes.size());
      record.wire = std::span(buffer).first(bytes.size());
    } else {
      EnvelopeBytes envelope{};
      const std::span<std::byte> after = std::span(buffer).subspan(kEnvelopeBytes, bytes.size());
      check(sealer().seal_as(envelope, kFuzzSession, next_counter++, bytes, {},
                             protection == Protection::kEncrypted ? after : std::span<std::byte>{}));
      std::memcpy(buffer.data(), envelope.data(), envelope.size());
      if (protection != Protection::kEncrypted && !bytes.empty()) {
        std::memcpy(after.data(), bytes.data(), bytes.size());
      }
      record.wire = std::span(buffer).first(kEnvelopeBytes + bytes.size());
      check(protection != Protection::kEncrypted || bytes.size() < 16 ||
            std::memcmp(after.data(), bytes.data(), bytes.size()) != 0);  // no clear text behind an encrypted envelope
    }
    if (record.wire.size() > guarded_bytes) {
      return record;
    }
    std::vector<std::byte>& copy = opened()[slot];
    std::memcpy(copy.data(), record.wire.data(), record.wire.size());
    const std::span<std::byte> mine = std::span(copy).first(record.wire.size());
    record.opens = oracle->open(DatagramPieces{.pieces = {mine, {}, {}}, .size = mine.size()}) == OpenOutcome::kOk;
    check(record.opens || record.own_envelope);  // what the harness sealed always opens
    if (record.own_envelope) {
      record.bytes = mine.subspan(std::min(mine.size(), kEnvelopeBytes));  // in clear when it opened
    }
    return record;
  }
};

// The next record at `at` (see udp_fuzz_input.hpp).
Record next_record(std::span<const std::uint8_t> input, std::size_t& at) {
  Record record{.control = input[at], .bytes = {}};
  std::size_t length = 0;
  if (at + 3 <= input.size()) {
    length = static_cast<std::size_t>(input[at + 1]) | (static_cast<std::size_t>(input[at + 2]) << 8);
  }
  at = std::min(at + 3, input.size());
  length = std::min(length, input.size() - at);
  record.bytes = std::as_bytes(input.subspan(at, length));
  record.wire = record.bytes;
  at += length;
  return record;
}

// Drives one reassembler with records, directly or in receive batches, and
// checks the invariants after each.
class Harness {
 public:
  Harness(Reassembler& sut, PoolProvider& provider, Authentication* auth)
      : sut_(sut), provider_(provider), auth_(auth) {}

  // A record handed over as it is: the envelope checked (authenticated mode),
  // parsed whole (and split), DATA fed.
  void handle(Record record) {
    begin(record);
    ParsedDatagram parsed;
    if ((record.control & kRawFragment) != 0) {
      feed_raw(record, parsed);
      end(record, parsed.header.sender_id);
      return;
    }
    if (auth_ != nullptr) {
      record = auth_->wrap(record, 0, SIZE_MAX);
      // The guard's own copy: the oracle opened another (the sealed buffer is what the socket delivered).
      const std::span<std::byte> wire = std::span(Authentication::sealed()[0]).first(record.wire.size());
      const bool admitted =
          auth_->guard.admit(DatagramPieces{.pieces = {wire, {}, {}}, .size = wire.size()}, Endpoint{});
      check(admitted == record.opens);
      if (!admitted) {
        end(record, 0);
        return;
      }
      check(std::ranges::equal(wire.subspan(kEnvelopeBytes), record.bytes));  // decrypted where it lies
    }
    const ParseError error = parse_datagram(record.bytes, kLimits, parsed);
    parse_counters_.count(error);
    check_split_parse(record.bytes, error);
    if (error == ParseError::kOk) {
      check_round_trip(record.bytes, parsed);
      if (parsed.header.type == DatagramType::kData) {
        feed(parsed, false);
      }
    }
    end(record, parsed.header.sender_id);
  }

  // Records received as one batch, as the transport does: predicted fragments
  // straight into their chunk, then handled in order.
  void handle_batch(std::span<Record> records, ScatterReceive& scatter) {
    const std::span<IncomingDatagram> incoming = scatter.prepare(&sut_);
    std::size_t received = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
      Record& record = records[i];
      if ((record.control & kRawFragment) == 0) {
        if (auth_ != nullptr) {
          record = auth_->wrap(record, i, kDatagramBytes + kEnvelopeBytes);  // the guard skips a longer one: cut
        }
        deliver(incoming[received++], record.wire);
      }
    }
    scatter.settle(received, kLimits, auth_ != nullptr ? &auth_->guard : nullptr);
    std::size_t position = 0;
    for (const Record& record : records) {
      begin(record);
      ParsedDatagram parsed;
      if ((record.control & kRawFragment) != 0) {
        feed_raw(record, parsed);
        end(record, parsed.header.sender_id);
        continue;
      }
      const Arrival arrival = scatter.arrival(position++, sut_);
      switch (arrival.kind) {
        case Arrival::Kind::kTooLong:
          check(record.wire.size() > kDatagramBytes + (auth_ != nullptr ? kEnvelopeBytes : 0));
          break;
        case Arrival::Kind::kRefused: check(!record.opens); break;  // as the oracle decided
        case Arrival::Kind::kContiguous: {
          check(record.opens);
          // Put back together, whatever happened in the chunk it was read into.
          check(std::ranges::equal(arrival.bytes, record.bytes));
          const ParseError error = parse_datagram(arrival.bytes, kLimits, parsed);
          parse_counters_.count(error);
          check_split_parse(record.bytes, error);
          if (error == ParseError::kOk && parsed.header.type == DatagramType::kData) {
            feed(parsed, false);
          }
          break;
        }
        case Arrival::Kind::kInPlace:
          check(record.opens);
          // The header in its buffer and the payload in the chunk are still
          // exactly the datagram, and it is placed without a copy.
          check_round_trip(record.bytes, *arrival.parsed);
          parsed = *arrival.parsed;
          feed(parsed, true);
          break;
        case Arrival::Kind::kStale: ++stale_; break;
      }
      end(record, parsed.header.sender_id);
    }
  }

 private:
  void begin(const Record& record) {
    now_ns_ += static_cast<std::uint64_t>(record.control >> 5) * 1'000'000;
    provider_.refuse = (record.control & kRefuseDestination) != 0;
  }

  void feed_raw(const Record& record, ParsedDatagram& parsed) {
    parsed.header.type = DatagramType::kData;
    parsed.header.sender_id = 1 + (record.control & 1U);
    parsed.data = raw_fragment(record.bytes);
    feed(parsed, false);
  }

  void feed(const ParsedDatagram& parsed, bool in_place) {
    const std::uint64_t placed_before = sut_.counters().fragments_in_place;
    const FeedResult result = sut_.on_fragment(parsed.header.sender_id, parsed.data, now_ns_);
    ++fed_;
    if (in_place) {
      check(result.outcome == FeedOutcome::kStored || result.outcome == FeedOutcome::kCompleted);
      check(sut_.counters().fragments_in_place == placed_before + 1);
    }
    if (result.outcome == FeedOutcome::kCompleted) {
      check(result.message.destination.bytes.size() == parsed.data.total_bytes);
      provider_.give_back(result.message.destination.token);
    }
  }

  void end(const Record& record, std::uint64_t sender_id) {
    const ReassemblyCounters& c = sut_.counters();
    check(fragments_counted(c) == fed_);
    check(c.fragments_stored == c.fragments_in_place + c.fragments_copied);
    check(sut_.in_flight_count() <= kConfig.max_messages_in_flight);
    check(provider_.outstanding() == sut_.in_flight_count());
    check_predictions();
    if ((record.control & kExpire) != 0) {
      sut_.expire(now_ns_);
      const std::optional<std::uint64_t> deadline = sut_.next_deadline_ns();
      check(deadline.has_value() == (sut_.in_flight_count() > 0));
      check(!deadline || *deadline > now_ns_);
    }
    if ((record.control & kDropSender) != 0) {
      sut_.drop_sender(sender_id);
    }
    if ((record.control & kListMissing) != 0) {
      std::array<InFlightMessage, kConfig.max_messages_in_flight> listed{};
      const std::size_t n = sut_.in_flight(listed);
      check(n == sut_.in_flight_count());
      for (std::size_t i = 0; i < n; ++i) {
        std::array<FragmentRange, 8> missing{};
        const std::size_t ranges = sut_.missing_fragments(listed[i].key, missing);
        check(ranges >= 1 && ranges <= missing.size());  // in flight: something is missing
        for (std::size_t r = 0; r < ranges; ++r) {
          check(missing[r].first < missing[r].end && missing[r].end <= listed[i].fragment_count);
        }
      }
    }
  }

  // Predictions name missing fragments only, in increasing order, each
  // exactly its slice of a destination the reassembler holds.
  void check_predictions() const {
    std::array<PredictedFragment, 8> predicted{};
    const std::size_t n = sut_.predict_next(predicted);
    check(n == 0 || sut_.in_flight_count() > 0);
    for (std::size_t i = 0; i < n; ++i) {
      const PredictedFragment& p = predicted[i];
      check(sut_.prediction_holds(p));
      check(i == 0 || p.index > predicted[i - 1].index);
      check(p.index < p.fragment_count);
      const std::uint64_t offset = static_cast<std::uint64_t>(p.index) * p.fragment_bytes;
      check(p.destination.size() == std::min<std::uint64_t>(p.fragment_bytes, p.total_bytes - offset));
      std::array<FragmentRange, 32> missing{};
      const std::size_t ranges = sut_.missing_fragments(p.key, missing);
      check(std::any_of(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(ranges),
                        [&](const FragmentRange& r) { return r.first <= p.index && p.index < r.end; }));
    }
  }

  Reassembler& sut_;
  PoolProvider& provider_;
  Authentication* auth_;  ///< Null: datagrams come without an envelope.
  ParseCounters parse_counters_;
  std::uint64_t now_ns_ = 0;
  std::uint64_t fed_ = 0;
  std::uint64_t stale_ = 0;
};

void run(std::span<const std::uint8_t> input) {
  if (input.empty()) {
    return;
  }
  ReassemblyConfig config = kConfig;
  if ((input[0] & kConfigRefuseNew) != 0) {
    config.when_full = WhenFull::kRefuseNew;
  }
  const std::size_t batch = (input[0] >> kConfigBatchShift) & kConfigBatchMask;
  std::optional<Authentication> auth;
  if ((input[0] & kConfigAuthenticated) != 0) {
    auth.emplace((input[0] & kConfigEncrypted) != 0 ? Protection::kEncrypted : Protection::kAuthenticated);
  }
  input = input.subspan(1);
  PoolProvider provider;
  {
    auto created = Reassembler::create(config, provider);
    check(created.ok());
    Reassembler sut = std::move(*created);
    Harness harness(sut, provider, auth ? &*auth : nullptr);
    const std::size_t envelope = auth ? kEnvelopeBytes : 0;
    ScatterReceive scatter(std::max<std::size_t>(batch, 1), kDatagramBytes + envelope, envelope);
    std::size_t at = 0;
    while (at < input.size()) {
      if (batch == 0) {
        harness.handle(next_record(input, at));
        continue;
      }
      std::array<Record, kConfigBatchMask> records{};
      std::size_t count = 0;
      while (count < batch && at < input.size()) {
        records[count++] = next_record(input, at);
      }
      harness.handle_batch(std::span(records).first(count), scatter);
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
