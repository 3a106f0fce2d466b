#include "transports/udp/reassembly.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "tests/unit/udp/test_provider.hpp"

namespace axon::udp {
namespace {

constexpr std::uint64_t kTopic = 0xABCDEFULL;
constexpr std::uint64_t kMs = 1'000'000;

using test::message_of;
using test::TestProvider;

class ReassemblerTest : public ::testing::Test {
 protected:
  Reassembler make(const ReassemblyConfig& config = {}) {
    auto created = Reassembler::create(config, provider);
    EXPECT_TRUE(created.ok()) << created.error().message();
    return std::move(*created);
  }

  TestProvider provider;
};

DataFragment fragment_of(const std::vector<std::byte>& message, std::uint64_t sequence, std::uint32_t index,
                         std::uint32_t fragment_bytes = 100, std::uint32_t writer = 1) {
  return make_fragment(kTopic, writer, sequence, message, fragment_bytes, index);
}

TEST_F(ReassemblerTest, CompletesAMessageDeliveredInOrder) {
  auto sut = make();
  const auto message = message_of(950);
  for (std::uint32_t i = 0; i < 9; ++i) {
    EXPECT_EQ(sut.on_fragment(5, fragment_of(message, 1, i), 0).outcome, FeedOutcome::kStored);
  }
  const FeedResult last = sut.on_fragment(5, fragment_of(message, 1, 9), 0);

  ASSERT_EQ(last.outcome, FeedOutcome::kCompleted);
  EXPECT_EQ(last.message.key, (MessageKey{.sender_id = 5, .sequence = 1, .writer_id = 1}));
  EXPECT_EQ(last.message.topic_id, kTopic);
  EXPECT_EQ(last.message.total_bytes, 950U);
  EXPECT_EQ(provider.take(last.message), message);
  EXPECT_EQ(sut.in_flight_count(), 0U);
  EXPECT_EQ(sut.counters().fragments_stored, 10U);
  EXPECT_EQ(sut.counters().messages_completed, 1U);
}

TEST_F(ReassemblerTest, CompletesMessagesDeliveredInRandomOrder) {
  auto sut = make();
  std::mt19937 rng(1234);
  for (std::uint64_t sequence = 1; sequence <= 50; ++sequence) {
    const auto message = message_of(1 + rng() % 5000, static_cast<std::uint32_t>(sequence));
    const auto count = static_cast<std::uint32_t>(fragment_count_for(message.size(), 100));
    std::vector<std::uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0U);
    std::shuffle(order.begin(), order.end(), rng);
    for (std::uint32_t i = 0; i + 1 < count; ++i) {
      ASSERT_EQ(sut.on_fragment(5, fragment_of(message, sequence, order[i]), 0).outcome, FeedOutcome::kStored);
    }
    const FeedResult last = sut.on_fragment(5, fragment_of(message, sequence, order.back()), 0);
    ASSERT_EQ(last.outcome, FeedOutcome::kCompleted);
    EXPECT_EQ(provider.take(last.message), message) << "sequence " << sequence;
  }
  EXPECT_EQ(provider.outstanding(), 0U);
}

TEST_F(ReassemblerTest, SingleFragmentAndEmptyMessagesCompleteAtOnceWithoutASlot) {
  auto sut = make({.max_messages_in_flight = 1, .max_messages_per_sender = 1});
  const auto big = message_of(300);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(big, 1, 0), 0).outcome, FeedOutcome::kStored);  // holds the only slot

  const auto small = message_of(60);
  const FeedResult one = sut.on_fragment(5, fragment_of(small, 2, 0), 0);
  const std::vector<std::byte> empty;
  const FeedResult zero = sut.on_fragment(5, fragment_of(empty, 3, 0), 0);

  ASSERT_EQ(one.outcome, FeedOutcome::kCompleted);
  EXPECT_EQ(provider.take(one.message), small);
  ASSERT_EQ(zero.outcome, FeedOutcome::kCompleted);
  EXPECT_EQ(zero.message.total_bytes, 0U);
  EXPECT_TRUE(provider.take(zero.message).empty());
  EXPECT_EQ(sut.in_flight_count(), 1U);
  EXPECT_EQ(sut.counters().messages_evicted, 0U);
}

TEST_F(ReassemblerTest, IgnoresAndCountsDuplicateFragments) {
  auto sut = make();
  const auto message = message_of(250);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 1), 0).outcome, FeedOutcome::kStored);
  EXPECT_EQ(sut.on_fragment(5, fragment_of(message, 1, 1), 0).outcome, FeedOutcome::kDuplicate);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);
  const FeedResult done = sut.on_fragment(5, fragment_of(message, 1, 2), 0);
  ASSERT_EQ(done.outcome, FeedOutcome::kCompleted);
  EXPECT_EQ(provider.take(done.message), message);

  EXPECT_EQ(sut.on_fragment(5, fragment_of(message, 1, 2), 0).outcome, FeedOutcome::kLate);
  EXPECT_EQ(sut.on_fragment(5, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kLate);
  EXPECT_EQ(sut.counters().duplicates, 1U);
  EXPECT_EQ(sut.counters().late_fragments, 2U);
  EXPECT_EQ(provider.outstanding(), 0U) << "a late fragment must not start a new message";
}

TEST_F(ReassemblerTest, KeepsInterleavedMessagesOfSendersAndWritersApart) {
  auto sut = make({.max_messages_in_flight = 8, .max_messages_per_sender = 4});
  struct Stream {
    std::uint64_t sender;
    std::uint32_t writer;
    std::uint64_t sequence;
    std::vector<std::byte> message;
  };
  std::vector<Stream> streams{{1, 1, 7, message_of(1000, 1)},
                              {1, 2, 7, message_of(900, 2)},
                              {2, 1, 7, message_of(1000, 3)},
                              {1, 1, 8, message_of(777, 4)}};
  std::size_t completed = 0;
  for (std::uint32_t i = 0; i < 10; ++i) {
    for (const Stream& s : streams) {
      if (i >= fragment_count_for(s.message.size(), 100)) {
        continue;
      }
      const FeedResult r = sut.on_fragment(s.sender, fragment_of(s.message, s.sequence, i, 100, s.writer), 0);
      if (r.outcome == FeedOutcome::kCompleted) {
        ++completed;
        EXPECT_EQ(r.message.key.sender_id, s.sender);
        EXPECT_EQ(r.message.key.writer_id, s.writer);
        EXPECT_EQ(provider.take(r.message), s.message);
      } else {
        EXPECT_EQ(r.outcome, FeedOutcome::kStored);
      }
    }
  }
  EXPECT_EQ(completed, streams.size());
}

TEST_F(ReassemblerTest, RejectsFragmentsThatConflictWithTheFirst) {
  auto sut = make();
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);

  const auto longer = message_of(1100);
  EXPECT_EQ(sut.on_fragment(5, fragment_of(longer, 1, 1), 0).outcome, FeedOutcome::kConflict) << "total size";
  EXPECT_EQ(sut.on_fragment(5, fragment_of(message, 1, 1, 200), 0).outcome, FeedOutcome::kConflict)
      << "fragment size and count";
  DataFragment other_topic = fragment_of(message, 1, 1);
  other_topic.topic_id = kTopic + 1;
  EXPECT_EQ(sut.on_fragment(5, other_topic, 0).outcome, FeedOutcome::kConflict) << "topic";

  EXPECT_EQ(sut.counters().conflicts, 3U);
  std::array<FragmentRange, 4> missing{};
  ASSERT_EQ(sut.missing_fragments({.sender_id = 5, .sequence = 1, .writer_id = 1}, missing), 1U);
  EXPECT_EQ(missing[0].first, 1U) << "a conflicting fragment is not stored";
  EXPECT_EQ(missing[0].end, 10U);
}

TEST_F(ReassemblerTest, DropsIdleIncompleteMessagesAfterTheTimeout) {
  auto sut = make({.timeout_ns = 100 * kMs});
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 0), 10 * kMs).outcome, FeedOutcome::kStored);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 1), 50 * kMs).outcome, FeedOutcome::kStored);
  EXPECT_EQ(sut.next_deadline_ns(), 150 * kMs) << "idle time counts from the last fragment";

  EXPECT_EQ(sut.expire(149 * kMs), 0U);
  EXPECT_EQ(sut.expire(150 * kMs), 1U);

  EXPECT_EQ(sut.in_flight_count(), 0U);
  EXPECT_EQ(sut.counters().messages_timed_out, 1U);
  EXPECT_EQ(provider.outstanding(), 0U) << "the destination went back to the provider";
  EXPECT_FALSE(sut.next_deadline_ns().has_value());
  // A retransmission after the drop starts over (and may still complete).
  EXPECT_EQ(sut.on_fragment(5, fragment_of(message, 1, 2), 200 * kMs).outcome, FeedOutcome::kStored);
}

TEST_F(ReassemblerTest, EvictsTheOldestMessageWhenAllSlotsAreTaken) {
  auto sut = make({.max_messages_in_flight = 2, .max_messages_per_sender = 2});
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(1, fragment_of(message, 1, 0), 1).outcome, FeedOutcome::kStored);
  ASSERT_EQ(sut.on_fragment(2, fragment_of(message, 1, 0), 2).outcome, FeedOutcome::kStored);
  ASSERT_EQ(sut.on_fragment(1, fragment_of(message, 1, 1), 3).outcome, FeedOutcome::kStored);  // sender 2 oldest now

  EXPECT_EQ(sut.on_fragment(3, fragment_of(message, 1, 0), 4).outcome, FeedOutcome::kStored);

  EXPECT_EQ(sut.counters().messages_evicted, 1U);
  std::array<InFlightMessage, 4> listed{};
  ASSERT_EQ(sut.in_flight(listed), 2U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_NE(listed[i].key.sender_id, 2U);
  }
  EXPECT_EQ(provider.outstanding(), 2U);
}

TEST_F(ReassemblerTest, RefusesNewMessagesWhenFullUnderTheRefusePolicy) {
  auto sut = make({.max_messages_in_flight = 2,
                   .max_messages_per_sender = 2,
                   .timeout_ns = 100 * kMs,
                   .when_full = WhenFull::kRefuseNew});
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(1, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);
  ASSERT_EQ(sut.on_fragment(2, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);

  EXPECT_EQ(sut.on_fragment(3, fragment_of(message, 1, 0), 50 * kMs).outcome, FeedOutcome::kNoSlot);
  EXPECT_EQ(sut.counters().refused_no_slot, 1U);
  // A slot past its timeout is taken even under this policy.
  EXPECT_EQ(sut.on_fragment(3, fragment_of(message, 1, 0), 100 * kMs).outcome, FeedOutcome::kStored);
  EXPECT_EQ(sut.counters().messages_timed_out, 1U);
}

TEST_F(ReassemblerTest, OneSenderNeverHoldsMoreThanItsShare) {
  auto sut = make({.max_messages_in_flight = 4, .max_messages_per_sender = 2});
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(9, fragment_of(message, 1, 0), 1).outcome, FeedOutcome::kStored);  // another sender
  for (std::uint64_t sequence = 1; sequence <= 10; ++sequence) {
    ASSERT_EQ(sut.on_fragment(1, fragment_of(message, sequence, 0), 1 + sequence).outcome, FeedOutcome::kStored);
  }
  std::array<InFlightMessage, 8> listed{};
  const std::size_t n = sut.in_flight(listed);
  ASSERT_EQ(n, 3U);
  EXPECT_EQ(std::count_if(listed.begin(), listed.begin() + 3, [](const auto& m) { return m.key.sender_id == 1; }), 2);
  EXPECT_EQ(std::count_if(listed.begin(), listed.begin() + 3, [](const auto& m) { return m.key.sender_id == 9; }), 1)
      << "the flooding sender evicted only its own messages";
  EXPECT_EQ(sut.counters().messages_evicted, 8U);
}

TEST_F(ReassemblerTest, ReportsMissingFragmentsAsRanges) {
  auto sut = make();
  const auto message = message_of(20'000);  // 200 fragments of 100 bytes
  for (const std::uint32_t i : {0U, 1U, 2U, 5U, 63U, 64U, 65U, 130U, 199U}) {
    ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, i), 0).outcome, FeedOutcome::kStored);
  }
  const MessageKey key{.sender_id = 5, .sequence = 1, .writer_id = 1};
  std::array<FragmentRange, 8> out{};
  ASSERT_EQ(sut.missing_fragments(key, out), 4U);
  const std::array<std::pair<std::uint32_t, std::uint32_t>, 4> expected{{{3, 5}, {6, 63}, {66, 130}, {131, 199}}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].first, expected[i].first) << i;
    EXPECT_EQ(out[i].end, expected[i].second) << i;
  }
  std::array<FragmentRange, 2> two{};
  EXPECT_EQ(sut.missing_fragments(key, two), 2U) << "stops when the output is full";
  EXPECT_EQ(sut.missing_fragments({.sender_id = 6, .sequence = 1, .writer_id = 1}, out), 0U);
}

TEST_F(ReassemblerTest, ReportsAWholeMessageMissingButOne) {
  auto sut = make();
  const auto message = message_of(12'800);  // 128 fragments: two full bitmap words
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 127), 0).outcome, FeedOutcome::kStored);
  std::array<FragmentRange, 4> out{};
  ASSERT_EQ(sut.missing_fragments({.sender_id = 5, .sequence = 1, .writer_id = 1}, out), 1U);
  EXPECT_EQ(out[0].first, 0U);
  EXPECT_EQ(out[0].end, 127U);
}

TEST_F(ReassemblerTest, CountsWhatItCannotTake) {
  auto sut = make({.max_message_bytes = 2000, .max_fragments_per_message = 10});
  const auto too_big = message_of(2001);
  EXPECT_EQ(sut.on_fragment(5, fragment_of(too_big, 1, 0, 1000), 0).outcome, FeedOutcome::kTooLarge);
  const auto many = message_of(1100);
  EXPECT_EQ(sut.on_fragment(5, fragment_of(many, 1, 0, 100), 0).outcome, FeedOutcome::kTooManyFragments);
  DataFragment bad = fragment_of(many, 2, 0, 200);
  bad.fragment_index = 6;  // index >= count, as a caller that skipped the parser might pass
  EXPECT_EQ(sut.on_fragment(5, bad, 0).outcome, FeedOutcome::kMalformed);
  provider.refuse = true;
  EXPECT_EQ(sut.on_fragment(5, fragment_of(many, 3, 0, 200), 0).outcome, FeedOutcome::kNoDestination);
  provider.refuse = false;
  provider.short_by = 1;
  EXPECT_EQ(sut.on_fragment(5, fragment_of(many, 4, 0, 200), 0).outcome, FeedOutcome::kNoDestination);

  const ReassemblyCounters& c = sut.counters();
  EXPECT_EQ(c.too_large, 1U);
  EXPECT_EQ(c.too_many_fragments, 1U);
  EXPECT_EQ(c.malformed, 1U);
  EXPECT_EQ(c.refused_no_destination, 2U);
  EXPECT_EQ(provider.outstanding(), 0U) << "a buffer too short went straight back";
  EXPECT_EQ(sut.in_flight_count(), 0U);
}

TEST_F(ReassemblerTest, DropSenderReleasesOnlyThatSendersMessages) {
  auto sut = make();
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(1, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);
  ASSERT_EQ(sut.on_fragment(1, fragment_of(message, 2, 0), 0).outcome, FeedOutcome::kStored);
  ASSERT_EQ(sut.on_fragment(2, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);

  EXPECT_EQ(sut.drop_sender(1), 2U);

  EXPECT_EQ(sut.in_flight_count(), 1U);
  EXPECT_EQ(provider.outstanding(), 1U);
  EXPECT_EQ(sut.counters().messages_dropped_sender, 2U);
}

TEST_F(ReassemblerTest, DestructionReleasesEveryDestinationInFlight) {
  {
    auto sut = make();
    const auto message = message_of(1000);
    for (std::uint64_t sequence = 1; sequence <= 3; ++sequence) {
      ASSERT_EQ(sut.on_fragment(1, fragment_of(message, sequence, 0), 0).outcome, FeedOutcome::kStored);
    }
    auto moved = std::move(sut);  // the moved-from reassembler releases nothing
    EXPECT_EQ(moved.in_flight_count(), 3U);
  }
  EXPECT_EQ(provider.outstanding(), 0U);
  EXPECT_EQ(provider.released, 3U);
}

TEST_F(ReassemblerTest, RefusesAnInconsistentConfiguration) {
  EXPECT_FALSE(Reassembler::create({.max_messages_in_flight = 0}, provider).ok());
  EXPECT_FALSE(Reassembler::create({.max_messages_in_flight = 2, .max_messages_per_sender = 3}, provider).ok());
  EXPECT_FALSE(Reassembler::create({.timeout_ns = 0}, provider).ok());
  auto huge = Reassembler::create(
      {.max_fragments_per_message = 1U << 24, .max_messages_in_flight = 4096, .max_messages_per_sender = 4}, provider);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(ReassemblerTest, ReassemblesSixteenMebibytesFromAbout12000RandomOrderFragments) {
  auto sut = make();
  const auto message = message_of(std::size_t{16} * 1024 * 1024, 77);
  const auto count = static_cast<std::uint32_t>(fragment_count_for(message.size(), kMtu1500FragmentBytes));
  ASSERT_EQ(count, 11916U);
  std::vector<std::uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0U);
  std::shuffle(order.begin(), order.end(), std::mt19937(99));
  // Every fragment goes through the wire format, as it would from a socket.
  std::vector<std::byte> datagram(kMaxDatagramBytes);
  FeedResult last;
  for (std::uint32_t i = 0; i < count; ++i) {
    const DataFragment f = make_fragment(kTopic, 1, 1, message, kMtu1500FragmentBytes, order[i]);
    const std::size_t size = encode_data(datagram, 5, f);
    ASSERT_LE(size, 1500U - 28U);
    auto parsed = parse_datagram(std::span(datagram).first(size));
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    last = sut.on_fragment(parsed->header.sender_id, parsed->data, 0);
    if (i + 1 < count) {
      ASSERT_EQ(last.outcome, FeedOutcome::kStored) << i;
    }
    if (i == count / 2) {  // re-send a few: ignored
      EXPECT_EQ(sut.on_fragment(5, f, 0).outcome, FeedOutcome::kDuplicate);
    }
  }
  ASSERT_EQ(last.outcome, FeedOutcome::kCompleted);
  EXPECT_TRUE(provider.take(last.message) == message);
  EXPECT_EQ(sut.counters().fragments_stored, count);
  EXPECT_EQ(sut.counters().duplicates, 1U);
}

}  // namespace
}  // namespace axon::udp
