// Reassembler::predict_next(), prediction_holds() and fragments received in
// place (no copy): what lets the transport read fragments straight into
// their chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "tests/unit/udp/test_provider.hpp"
#include "transports/udp/reassembly.hpp"

namespace axon::udp {
namespace {

using test::message_of;
using test::TestProvider;

constexpr std::uint64_t kTopic = 0x5151ULL;
constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint32_t kFragmentBytes = 100;

DataFragment fragment_of(const std::vector<std::byte>& message, std::uint64_t sequence, std::uint32_t index,
                         std::uint32_t writer = 1) {
  return make_fragment(kTopic, writer, sequence, message, kFragmentBytes, index);
}

class ReassemblerPrediction : public ::testing::Test {
 protected:
  Reassembler make(const ReassemblyConfig& config = {}) {
    auto created = Reassembler::create(config, provider);
    EXPECT_TRUE(created.ok()) << created.error().message();
    return std::move(*created);
  }

  // What a scatter receive does: the fragment's bytes land at the predicted
  // place, and the parsed fragment's payload points there.
  static FeedResult receive_in_place(Reassembler& sut, const PredictedFragment& predicted,
                                     const std::vector<std::byte>& message, std::uint64_t now_ns = 0) {
    DataFragment f = fragment_of(message, predicted.key.sequence, predicted.index, predicted.key.writer_id);
    EXPECT_EQ(f.payload.size(), predicted.destination.size());
    std::memcpy(predicted.destination.data(), f.payload.data(), f.payload.size());
    f.payload = predicted.destination;
    return sut.on_fragment(predicted.key.sender_id, f, now_ns);
  }

  static std::vector<std::uint32_t> indices(std::span<const PredictedFragment> predicted) {
    std::vector<std::uint32_t> out;
    for (const PredictedFragment& p : predicted) {
      out.push_back(p.index);
    }
    return out;
  }

  TestProvider provider;
};

TEST_F(ReassemblerPrediction, PredictsNothingWhileNoMessageIsInFlight) {
  auto sut = make();
  std::array<PredictedFragment, 8> out{};
  EXPECT_EQ(sut.predict_next(out), 0U);

  const auto small = message_of(50);
  const FeedResult one = sut.on_fragment(5, fragment_of(small, 1, 0), 0);  // complete at once: no slot
  ASSERT_EQ(one.outcome, FeedOutcome::kCompleted);
  provider.take(one.message);

  EXPECT_EQ(sut.predict_next(out), 0U);
}

TEST_F(ReassemblerPrediction, PredictsTheFragmentsThatFollowTheLastOneReceived) {
  auto sut = make();
  const auto message = message_of(1000);  // 10 fragments
  for (std::uint32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 7, i, 2), 0).outcome, FeedOutcome::kStored);
  }
  std::array<PredictedFragment, 4> out{};

  ASSERT_EQ(sut.predict_next(out), 4U);

  EXPECT_EQ(indices(out), (std::vector<std::uint32_t>{3, 4, 5, 6}));
  const PredictedFragment& p = out[0];
  EXPECT_EQ(p.key, (MessageKey{.sender_id = 5, .sequence = 7, .writer_id = 2}));
  EXPECT_EQ(p.topic_id, kTopic);
  EXPECT_EQ(p.total_bytes, 1000U);
  EXPECT_EQ(p.fragment_count, 10U);
  EXPECT_EQ(p.fragment_bytes, kFragmentBytes);
  EXPECT_EQ(p.destination.size(), kFragmentBytes);
  EXPECT_EQ(out[1].destination.data(), p.destination.data() + kFragmentBytes) << "each at index * fragment_bytes";
  EXPECT_TRUE(sut.prediction_holds(p));
}

TEST_F(ReassemblerPrediction, SkipsReceivedFragmentsAndStopsAtTheLast) {
  auto sut = make();
  const auto message = message_of(950);             // 10 fragments, the last of 50 bytes
  for (const std::uint32_t i : {0U, 5U, 7U, 2U}) {  // the last one received: 2
    ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, i), 0).outcome, FeedOutcome::kStored);
  }
  std::array<PredictedFragment, 16> out{};

  const std::size_t n = sut.predict_next(out);

  EXPECT_EQ(indices(std::span(out).first(n)), (std::vector<std::uint32_t>{3, 4, 6, 8, 9}))
      << "from the last received (2) to the end, never 0, 5 or 7, no wrap-around to 1";
  EXPECT_EQ(out[n - 1].destination.size(), 50U) << "the last fragment: the remainder";
}

TEST_F(ReassemblerPrediction, RespectsTheRoomGiven) {
  auto sut = make();
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);
  std::array<PredictedFragment, 2> two{};
  EXPECT_EQ(sut.predict_next(two), 2U);
  EXPECT_EQ(sut.predict_next(std::span<PredictedFragment>{}), 0U);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 9), 0).outcome, FeedOutcome::kStored);
  EXPECT_EQ(sut.predict_next(two), 0U) << "nothing follows the last fragment";
}

TEST_F(ReassemblerPrediction, NeverPredictsAFragmentAlreadyReceived) {
  auto sut = make({.max_messages_in_flight = 4, .max_messages_per_sender = 4});
  std::mt19937 rng(42);
  for (std::uint64_t sequence = 1; sequence <= 30; ++sequence) {
    const auto message = message_of(100 + rng() % 6000, static_cast<std::uint32_t>(sequence));
    const auto count = static_cast<std::uint32_t>(fragment_count_for(message.size(), kFragmentBytes));
    std::vector<std::uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0U);
    std::shuffle(order.begin(), order.end(), rng);
    std::set<std::uint32_t> received;
    for (std::uint32_t i = 0; i + 1 < count; ++i) {
      ASSERT_EQ(sut.on_fragment(5, fragment_of(message, sequence, order[i]), 0).outcome, FeedOutcome::kStored);
      received.insert(order[i]);
      std::vector<PredictedFragment> out(1 + rng() % 70);
      const std::size_t n = sut.predict_next(out);
      // Exactly the first n unreceived fragments after the one just received.
      std::uint32_t expected = order[i] + 1;
      for (std::size_t k = 0; k < n; ++k, ++expected) {
        while (received.count(expected) != 0) {
          ++expected;
        }
        ASSERT_EQ(out[k].index, expected) << "sequence " << sequence << " step " << i;
        ASSERT_EQ(received.count(out[k].index), 0U);
        ASSERT_TRUE(sut.prediction_holds(out[k]));
      }
      while (received.count(expected) != 0) {
        ++expected;
      }
      ASSERT_TRUE(n == out.size() || expected >= count) << "stopped early";
    }
    const FeedResult last = sut.on_fragment(5, fragment_of(message, sequence, order.back()), 0);
    ASSERT_EQ(last.outcome, FeedOutcome::kCompleted);
    EXPECT_EQ(provider.take(last.message), message);
  }
}

TEST_F(ReassemblerPrediction, FollowsTheMostRecentlyUpdatedMessage) {
  auto sut = make();
  const auto a = message_of(1000, 1);
  const auto b = message_of(1000, 2);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(a, 1, 0), 10).outcome, FeedOutcome::kStored);
  ASSERT_EQ(sut.on_fragment(6, fragment_of(b, 1, 0), 10).outcome, FeedOutcome::kStored);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(a, 1, 1), 10).outcome, FeedOutcome::kStored);
  std::array<PredictedFragment, 1> out{};

  ASSERT_EQ(sut.predict_next(out), 1U);
  EXPECT_EQ(out[0].key.sender_id, 5U);
  EXPECT_EQ(out[0].index, 2U);

  ASSERT_EQ(sut.on_fragment(6, fragment_of(b, 1, 4), 10).outcome, FeedOutcome::kStored);  // same clock: order counts
  ASSERT_EQ(sut.predict_next(out), 1U);
  EXPECT_EQ(out[0].key.sender_id, 6U);
  EXPECT_EQ(out[0].index, 5U);
}

TEST_F(ReassemblerPrediction, AFragmentReceivedInPlaceIsNotCopied) {
  auto sut = make();
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);  // copied
  std::array<PredictedFragment, 16> out{};
  const std::size_t n = sut.predict_next(out);
  ASSERT_EQ(n, 9U);

  FeedResult last;
  for (std::size_t i = 0; i < n; ++i) {
    last = receive_in_place(sut, out[i], message);
  }

  ASSERT_EQ(last.outcome, FeedOutcome::kCompleted);
  EXPECT_EQ(provider.take(last.message), message);
  EXPECT_EQ(sut.counters().fragments_in_place, 9U);
  EXPECT_EQ(sut.counters().fragments_copied, 1U);
  EXPECT_EQ(sut.counters().fragments_stored, 10U);
}

TEST_F(ReassemblerPrediction, AReceivedInPlaceFragmentIsADuplicateLikeAnyOther) {
  auto sut = make();
  const auto message = message_of(1000);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 1, 0), 0).outcome, FeedOutcome::kStored);
  std::array<PredictedFragment, 1> out{};
  ASSERT_EQ(sut.predict_next(out), 1U);
  ASSERT_EQ(receive_in_place(sut, out[0], message).outcome, FeedOutcome::kStored);

  EXPECT_FALSE(sut.prediction_holds(out[0])) << "received now";
  EXPECT_EQ(receive_in_place(sut, out[0], message).outcome, FeedOutcome::kDuplicate);
  ASSERT_EQ(sut.predict_next(out), 1U);
  EXPECT_EQ(out[0].index, 2U);
}

TEST_F(ReassemblerPrediction, APredictionStopsHoldingWhenItsMessageGivesUpItsDestination) {
  auto sut = make({.max_messages_in_flight = 2, .max_messages_per_sender = 1, .timeout_ns = 100 * kMs});
  const auto message = message_of(1000);
  std::array<PredictedFragment, 1> out{};
  auto predict = [&](std::uint64_t sequence, std::uint64_t now_ns) {
    EXPECT_EQ(sut.on_fragment(5, fragment_of(message, sequence, 0), now_ns).outcome, FeedOutcome::kStored);
    EXPECT_EQ(sut.predict_next(out), 1U);
    EXPECT_TRUE(sut.prediction_holds(out[0]));
    return out[0];
  };

  const PredictedFragment evicted = predict(1, 0);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 2, 0), 0).outcome, FeedOutcome::kStored);  // the sender's share
  EXPECT_FALSE(sut.prediction_holds(evicted)) << "evicted";

  const PredictedFragment expired = predict(3, 10 * kMs);
  ASSERT_EQ(sut.expire(200 * kMs), 1U);
  EXPECT_FALSE(sut.prediction_holds(expired)) << "expired";

  const PredictedFragment dropped = predict(4, 300 * kMs);
  ASSERT_EQ(sut.drop_sender(5), 1U);
  EXPECT_FALSE(sut.prediction_holds(dropped)) << "sender dropped";

  const PredictedFragment restarted = predict(5, 400 * kMs);
  ASSERT_EQ(sut.expire(600 * kMs), 1U);
  ASSERT_EQ(sut.on_fragment(5, fragment_of(message, 5, 0), 600 * kMs).outcome, FeedOutcome::kStored);
  EXPECT_FALSE(sut.prediction_holds(restarted)) << "the same message again, in another destination";

  const PredictedFragment completed = predict(6, 700 * kMs);
  for (std::uint32_t i = 1; i < 10; ++i) {
    const FeedResult r = sut.on_fragment(5, fragment_of(message, 6, i), 700 * kMs);
    if (r.outcome == FeedOutcome::kCompleted) {
      provider.take(r.message);
    }
  }
  EXPECT_FALSE(sut.prediction_holds(completed)) << "completed";
}

}  // namespace
}  // namespace axon::udp
