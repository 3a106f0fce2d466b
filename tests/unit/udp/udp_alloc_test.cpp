// Nothing a peer sends makes the parser or the reassembler allocate: operator
// new (and, outside sanitizer builds, malloc) are replaced by counting
// versions in this executable (tests/support/allocation_hooks.cpp; its own
// executable, so the hooks touch no other test).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "tests/support/allocation_hooks.hpp"
#include "transports/udp/datagram_guard.hpp"
#include "transports/udp/envelope.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/scatter_receive.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {
namespace {

namespace allocations = test::allocations;

// Hands out slices of one preallocated arena, one per slot (+1 for single-fragment messages).
class ArenaProvider final : public DestinationProvider {
 public:
  static constexpr std::size_t kBuffers = 5;
  static constexpr std::size_t kBufferBytes = std::size_t{64} * 1024;
  ArenaProvider() : arena_(kBuffers * kBufferBytes) {}
  std::optional<Destination> acquire(const MessageKey& /*key*/, std::uint64_t /*topic_id*/,
                                     std::uint32_t total_bytes) noexcept override {
    for (std::size_t i = 0; i < kBuffers; ++i) {
      if (!in_use_[i] && total_bytes <= kBufferBytes) {
        in_use_[i] = true;
        return Destination{.bytes = std::span(arena_).subspan(i * kBufferBytes, total_bytes), .token = i};
      }
    }
    return std::nullopt;
  }
  void release(const MessageKey& /*key*/, const Destination& destination) noexcept override {
    in_use_[destination.token] = false;
  }

 private:
  std::vector<std::byte> arena_;
  std::array<bool, kBuffers> in_use_{};
};

TEST(UdpAllocations, ParsingAndReassemblingAllocateNothing) {
  ArenaProvider provider;
  auto created = Reassembler::create({.max_message_bytes = 64 * 1024,
                                      .max_fragments_per_message = 64,
                                      .max_messages_in_flight = 4,
                                      .max_messages_per_sender = 2,
                                      .timeout_ns = 1000},
                                     provider);
  ASSERT_TRUE(created.ok());
  Reassembler sut = std::move(*created);
  // Prepared before counting: messages of three senders, some fragments
  // corrupted or duplicated, reordered within windows of three messages.
  std::vector<std::byte> message(20'000);
  std::vector<std::vector<std::byte>> datagrams;
  std::array<std::byte, kMaxDatagramBytes> out{};
  std::mt19937 rng(5);
  for (std::uint64_t sequence = 1; sequence <= 200; ++sequence) {
    for (std::uint32_t index = 0; index < 15; ++index) {
      const DataFragment f = make_fragment(1, 1, sequence, message, 1400, index);
      const std::size_t size = encode_data(out, 1 + sequence % 3, f, sequence % 2 == 0);
      datagrams.emplace_back(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(size));
      if (rng() % 8 == 0) {
        datagrams.back()[rng() % size] ^= std::byte{0x40};
      }
      if (rng() % 8 == 0) {
        datagrams.push_back(datagrams.back());
      }
    }
  }
  for (std::size_t at = 0; at < datagrams.size(); at += 45) {
    const auto first = datagrams.begin() + static_cast<std::ptrdiff_t>(at);
    std::shuffle(first, first + std::min<std::ptrdiff_t>(45, datagrams.end() - first), rng);
  }
  ParseCounters parse_counters;
  std::uint64_t completed = 0;

  allocations::start();
  std::uint64_t now_ns = 0;
  for (const auto& d : datagrams) {
    ParsedDatagram parsed;
    const ParseError error = parse_datagram(d, {}, parsed);
    parse_counters.count(error);
    if (error == ParseError::kOk) {
      const FeedResult r = sut.on_fragment(parsed.header.sender_id, parsed.data, now_ns);
      if (r.outcome == FeedOutcome::kCompleted) {
        ++completed;
        provider.release(r.message.key, r.message.destination);
      }
    }
    std::array<FragmentRange, 8> missing{};
    std::array<InFlightMessage, 4> listed{};
    for (std::size_t i = 0; i < sut.in_flight(listed); ++i) {
      (void)sut.missing_fragments(listed[i].key, missing);
    }
    now_ns += 10;
    sut.expire(now_ns);
  }
  auto refused = parse_datagram(std::span(datagrams.front()).first(10));  // the Result overload, failing
  const std::uint64_t allocated = allocations::stop();

  EXPECT_FALSE(refused.ok());
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U);
  }
  EXPECT_GT(parse_counters.refused(), 0U);
  EXPECT_GT(completed, 0U);
  EXPECT_GT(sut.counters().duplicates, 0U);
  std::cout << "datagrams " << datagrams.size() << ", refused " << parse_counters.refused() << ", completed "
            << completed << ", duplicates " << sut.counters().duplicates << ", evicted "
            << sut.counters().messages_evicted << ", timed out " << sut.counters().messages_timed_out << '\n';
}

// The receive path with predictions: prepare(), what the kernel does, settle(),
// arrival() and feeding, over messages in order with some fragments
// corrupted, duplicated or swapped, so that datagrams land in place, are put
// back together or turn stale.
TEST(UdpAllocations, ReceivingInPlaceAllocatesNothing) {
  ArenaProvider provider;
  auto created = Reassembler::create({.max_message_bytes = 64 * 1024,
                                      .max_fragments_per_message = 64,
                                      .max_messages_in_flight = 4,
                                      .max_messages_per_sender = 1,
                                      .timeout_ns = 1000},
                                     provider);
  ASSERT_TRUE(created.ok());
  Reassembler reassembler = std::move(*created);
  ScatterReceive sut(8, 1536);
  std::vector<std::byte> message(20'000);
  std::vector<std::vector<std::byte>> datagrams;
  std::array<std::byte, kMaxDatagramBytes> out{};
  std::mt19937 rng(11);
  for (std::uint64_t sequence = 1; sequence <= 100; ++sequence) {
    for (std::uint32_t index = 0; index < 15; ++index) {
      const DataFragment f = make_fragment(1, 1, sequence, message, 1400, index);
      const std::size_t size = encode_data(out, 7, f, sequence % 2 == 0);
      datagrams.emplace_back(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(size));
      if (rng() % 16 == 0) {
        datagrams.back()[rng() % size] ^= std::byte{0x40};
      }
      if (rng() % 16 == 0) {
        datagrams.push_back(datagrams.back());
      }
      if (rng() % 16 == 0 && datagrams.size() > 1) {
        std::swap(datagrams.back(), datagrams[datagrams.size() - 2]);
      }
    }
  }
  std::array<std::size_t, 4> kinds{};

  allocations::start();
  std::uint64_t now_ns = 0;
  for (std::size_t at = 0; at < datagrams.size();) {
    const std::span<IncomingDatagram> batch = sut.prepare(&reassembler);
    const std::size_t n = std::min<std::size_t>(1 + rng() % batch.size(), datagrams.size() - at);
    for (std::size_t i = 0; i < n; ++i) {  // the kernel's part
      const std::vector<std::byte>& d = datagrams[at + i];
      std::size_t copied = 0;
      for (const std::span<std::byte> piece : batch[i].pieces) {
        const std::size_t part = std::min(piece.size(), d.size() - copied);
        if (part > 0) {
          std::memcpy(piece.data(), d.data() + copied, part);
        }
        copied += part;
      }
      batch[i].size = d.size();
    }
    at += n;
    sut.settle(n, {});
    for (std::size_t i = 0; i < n; ++i) {
      const Arrival arrival = sut.arrival(i, reassembler);
      ++kinds[static_cast<std::size_t>(arrival.kind)];
      ParsedDatagram contiguous;
      const ParsedDatagram* parsed = arrival.parsed;
      if (arrival.kind == Arrival::Kind::kContiguous &&
          parse_datagram(arrival.bytes, {}, contiguous) == ParseError::kOk) {
        parsed = &contiguous;
      }
      if (parsed != nullptr) {
        const FeedResult r = reassembler.on_fragment(parsed->header.sender_id, parsed->data, now_ns);
        if (r.outcome == FeedOutcome::kCompleted) {
          provider.release(r.message.key, r.message.destination);
        }
      }
    }
    now_ns += 10;
    reassembler.expire(now_ns);
  }
  const std::uint64_t allocated = allocations::stop();

  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U);
  }
  const ReassemblyCounters& c = reassembler.counters();
  EXPECT_GT(c.fragments_in_place, c.fragments_copied) << "most fragments are read straight into place";
  EXPECT_GT(kinds[static_cast<std::size_t>(Arrival::Kind::kContiguous)], 0U);
  std::cout << "datagrams " << datagrams.size() << ", in place " << c.fragments_in_place << ", copied "
            << c.fragments_copied << ", stale " << kinds[static_cast<std::size_t>(Arrival::Kind::kStale)]
            << ", completed " << c.messages_completed << '\n';
}

}  // namespace
}  // namespace axon::udp

namespace axon::udp {
namespace {

DatagramKey test_key() {
  std::array<std::byte, kKeyBytes> bytes{};
  bytes.fill(std::byte{0x17});
  return *make_datagram_key(bytes);
}

// The same with every datagram encrypted: the guard decrypts each where it
// lies (a predicted fragment's payload in its chunk) before it is parsed;
// some are corrupted after sealing (the tag fails), some replayed.
TEST(UdpAllocations, ReceivingEncryptedDatagramsInPlaceAllocatesNothing) {
  ArenaProvider provider;
  auto created = Reassembler::create({.max_message_bytes = 64 * 1024,
                                      .max_fragments_per_message = 64,
                                      .max_messages_in_flight = 4,
                                      .max_messages_per_sender = 1,
                                      .timeout_ns = 1000},
                                     provider);
  ASSERT_TRUE(created.ok());
  Reassembler reassembler = std::move(*created);
  auto opener = EnvelopeOpener::create(test_key(), nullptr, 16, Protection::kEncrypted);
  ASSERT_TRUE(opener.ok());
  NetworkCounterCells counters;
  DatagramGuard guard(std::move(*opener), AllowList{}, counters);
  const EnvelopeSealer sealer(test_key(), Protection::kEncrypted);
  ScatterReceive sut(8, 1536 + kEnvelopeBytes, kEnvelopeBytes);
  std::vector<std::byte> message(20'000);
  std::vector<std::vector<std::byte>> datagrams;
  std::array<std::byte, kMaxDatagramBytes> out{};
  std::mt19937 rng(12);
  std::uint64_t counter = 0;
  for (std::uint64_t sequence = 1; sequence <= 60; ++sequence) {
    for (std::uint32_t index = 0; index < 15; ++index) {
      const DataFragment f = make_fragment(1, 1, sequence, message, 1400, index);
      const std::size_t size = encode_data(out, 7, f, false);
      std::vector<std::byte> datagram(kEnvelopeBytes + size);
      EnvelopeBytes envelope{};
      ASSERT_TRUE(sealer.seal_as(envelope, 0x77, ++counter, std::span(out).first(size), {},
                                 std::span(datagram).subspan(kEnvelopeBytes)));
      std::copy(envelope.begin(), envelope.end(), datagram.begin());
      datagrams.push_back(std::move(datagram));
      if (rng() % 16 == 0) {
        datagrams.back()[kEnvelopeBytes + rng() % size] ^= std::byte{0x40};
      }
      if (rng() % 16 == 0) {
        datagrams.push_back(datagrams.back());
      }
    }
  }
  std::array<std::size_t, 5> kinds{};

  allocations::start();
  std::uint64_t now_ns = 0;
  for (std::size_t at = 0; at < datagrams.size();) {
    const std::span<IncomingDatagram> batch = sut.prepare(&reassembler);
    const std::size_t n = std::min<std::size_t>(1 + rng() % batch.size(), datagrams.size() - at);
    for (std::size_t i = 0; i < n; ++i) {  // the kernel's part
      const std::vector<std::byte>& d = datagrams[at + i];
      std::size_t copied = 0;
      for (const std::span<std::byte> piece : batch[i].pieces) {
        const std::size_t part = std::min(piece.size(), d.size() - copied);
        if (part > 0) {
          std::memcpy(piece.data(), d.data() + copied, part);
        }
        copied += part;
      }
      batch[i].size = d.size();
    }
    at += n;
    sut.settle(n, {}, &guard);
    for (std::size_t i = 0; i < n; ++i) {
      const Arrival arrival = sut.arrival(i, reassembler);
      ++kinds[static_cast<std::size_t>(arrival.kind)];
      ParsedDatagram contiguous;
      const ParsedDatagram* parsed = arrival.parsed;
      if (arrival.kind == Arrival::Kind::kContiguous &&
          parse_datagram(arrival.bytes, {}, contiguous) == ParseError::kOk) {
        parsed = &contiguous;
      }
      if (parsed != nullptr) {
        const FeedResult r = reassembler.on_fragment(parsed->header.sender_id, parsed->data, now_ns);
        if (r.outcome == FeedOutcome::kCompleted) {
          provider.release(r.message.key, r.message.destination);
        }
      }
    }
    now_ns += 10;
    reassembler.expire(now_ns);
  }
  const std::uint64_t allocated = allocations::stop();

  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U);
  }
  const ReassemblyCounters& c = reassembler.counters();
  EXPECT_GT(c.fragments_in_place, c.fragments_copied) << "encrypted fragments still land in place";
  EXPECT_GT(c.messages_completed, 0U);
  EXPECT_GT(counters.auth_failures.load(), 0U);
  EXPECT_GT(counters.replays.load(), 0U);
  EXPECT_GT(kinds[static_cast<std::size_t>(Arrival::Kind::kRefused)], 0U);
  std::cout << "datagrams " << datagrams.size() << ", in place " << c.fragments_in_place << ", copied "
            << c.fragments_copied << ", refused " << kinds[static_cast<std::size_t>(Arrival::Kind::kRefused)]
            << ", completed " << c.messages_completed << '\n';
}

TEST(UdpAllocations, SendingABatchAllocatesNothing) {
  // Segmented and not: OutgoingBatch lives on the sender's stack.
  for (const bool segmentation : {true, false}) {
    auto receiver = UdpSocket::open(
        SocketOptions{.bind = Endpoint{.ipv4 = 0x7F000001, .port = 0}, .receive_buffer_bytes = 4U << 20U});
    auto sender =
        UdpSocket::open(SocketOptions{.bind = Endpoint{.ipv4 = 0x7F000001, .port = 0}, .segmentation = segmentation});
    ASSERT_TRUE(receiver.ok() && sender.ok());
    std::array<std::byte, kDataHeaderBytes> header{};
    std::vector<std::byte> payload(200 * 1408);
    std::vector<OutgoingDatagram> datagrams;
    for (std::size_t i = 0; i < 200; ++i) {
      datagrams.push_back(OutgoingDatagram{
          .header = header, .payload = std::span(payload).subspan(i * 1408, 1408), .to = receiver->local()});
    }

    allocations::start();
    const std::size_t sent = sender->send_batch(datagrams);
    const std::uint64_t allocated = allocations::stop();

    EXPECT_EQ(sent, datagrams.size());
    if (allocations::kCounted) {
      EXPECT_EQ(allocated, 0U) << "segmentation " << segmentation;
    }
  }
}

TEST(UdpAllocations, SendingAnEncryptedBatchAllocatesNothingAfterTheThreadsFirst) {
  // The thread's first encrypted send makes its session, OpenSSL context and
  // ciphertext arena; every later one reuses them.
  for (const bool segmentation : {true, false}) {
    auto receiver = UdpSocket::open(
        SocketOptions{.bind = Endpoint{.ipv4 = 0x7F000001, .port = 0}, .receive_buffer_bytes = 4U << 20U});
    auto sender =
        UdpSocket::open(SocketOptions{.bind = Endpoint{.ipv4 = 0x7F000001, .port = 0}, .segmentation = segmentation});
    ASSERT_TRUE(receiver.ok() && sender.ok());
    sender->seal_with(std::make_shared<EnvelopeSealer>(test_key(), Protection::kEncrypted));
    std::array<std::byte, kDataHeaderBytes> header{};
    std::vector<std::byte> payload(200 * 1368);
    const std::vector<std::byte> before = payload;
    std::vector<OutgoingDatagram> datagrams;
    for (std::size_t i = 0; i < 200; ++i) {
      datagrams.push_back(OutgoingDatagram{
          .header = header, .payload = std::span(payload).subspan(i * 1368, 1368), .to = receiver->local()});
    }
    ASSERT_EQ(sender->send_batch(std::span(datagrams).first(1)), 1U);

    allocations::start();
    const std::size_t sent = sender->send_batch(datagrams);
    const std::uint64_t allocated = allocations::stop();

    EXPECT_EQ(sent, datagrams.size());
    EXPECT_EQ(payload, before) << "the payload was encrypted in place";
    if (allocations::kCounted) {
      EXPECT_EQ(allocated, 0U) << "segmentation " << segmentation;
    }
  }
}

}  // namespace
}  // namespace axon::udp
