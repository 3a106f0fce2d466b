// When a RELIABLE stream's receiver NACKs, and for what: a real RemoteWriter
// (with a shared-memory mirror) and a real Reassembler, fed by hand, and the
// clock given to each round.
#include "transports/udp/nack_planner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <vector>

#include "tests/unit/udp/test_provider.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/remote_writer.hpp"

namespace axon::udp {
namespace {

constexpr std::uint64_t kSender = 42;
constexpr std::uint32_t kWriter = 1;
constexpr std::uint64_t kTopic = 9;
constexpr std::uint32_t kFragmentBytes = 100;
constexpr std::int64_t kMs = 1'000'000;

class NackPlannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("axon_nack_planner_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    auto transport = shm::ShmTransport::create(shm::ShmConfig{
        .domain_id = 7, .node_name = "receiver", .shm_dir = dir_.string(), .chunk_classes = {{1024, 64}}});
    ASSERT_TRUE(transport) << transport.error().message();
    transport_ = *transport;
    const TopicDescriptor topic{.name = "stream",
                                .type = TypeIdentity{.name = "bytes", .hash = 1, .size = 1, .align = 1},
                                .max_payload_bytes = 1000};
    auto mirror = transport_->advertise(topic, PublisherQos{});
    ASSERT_TRUE(mirror);
    writer_ = std::make_unique<RemoteWriter>(std::static_pointer_cast<shm::ShmPublisherPort>(*mirror), kSender, kWriter,
                                             kTopic, counters_);
    auto reassembler = Reassembler::create(ReassemblyConfig{}, provider_);
    ASSERT_TRUE(reassembler);
    reassembler_.emplace(std::move(*reassembler));
    writer_->on_heartbeat(1, 0, true, 0);  // the stream starts at 1
  }
  void TearDown() override {
    reassembler_.reset();
    writer_.reset();
    transport_.reset();
    std::filesystem::remove_all(dir_);
  }

  /// Fragments [first, end) of message `sequence` (10 fragments) arrive at `now_ns`.
  void arrive(std::uint64_t sequence, std::uint32_t first, std::uint32_t end, std::int64_t now_ns) {
    for (std::uint32_t i = first; i < end; ++i) {
      writer_->on_data(sequence, true, now_ns);
      const FeedResult result =
          reassembler_->on_fragment(kSender, make_fragment(kTopic, kWriter, sequence, message_, kFragmentBytes, i),
                                    static_cast<std::uint64_t>(now_ns));
      if (result.outcome == FeedOutcome::kCompleted) {
        (void)provider_.take(result.message);
        auto chunk = writer_->loan(message_.size());
        ASSERT_TRUE(chunk);
        writer_->complete(sequence, *chunk, static_cast<std::uint32_t>(message_.size()));
      }
    }
  }
  /// One round at `now_ns`, if the stream is due: the ranges it asks for.
  std::vector<NackRange> round(std::int64_t now_ns, bool backlog = false) {
    if (!nack_due(*writer_, now_ns)) {
      return {};
    }
    std::array<NackRange, kMaxNackRanges> out{};
    const std::size_t n = plan_nack(*writer_, *reassembler_, NackRound{.now_ns = now_ns, .backlog = backlog}, out);
    return {out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n)};
  }

  std::vector<std::byte> message_ = test::message_of(1000);  // 10 fragments
  std::filesystem::path dir_;
  NetworkCounterCells counters_;
  test::TestProvider provider_;
  std::shared_ptr<shm::ShmTransport> transport_;
  std::unique_ptr<RemoteWriter> writer_;
  std::optional<Reassembler> reassembler_;
};

bool asks_for(const std::vector<NackRange>& ranges, std::uint64_t sequence, std::uint32_t first, std::uint32_t end) {
  for (const NackRange& r : ranges) {
    if (r.sequence == sequence && r.first_fragment == first && r.end_fragment == end) {
      return true;
    }
  }
  return false;
}

TEST_F(NackPlannerTest, AMessageOvertakenByANewerOneIsAskedForAtOnce) {
  arrive(1, 0, 4, 10 * kMs);   // 4..9 lost
  arrive(2, 0, 10, 10 * kMs);  // a newer message: 1's hole is no longer arriving
  const auto ranges = round(10 * kMs);
  ASSERT_EQ(ranges.size(), 1U);
  EXPECT_TRUE(asks_for(ranges, 1, 4, 10));
}

TEST_F(NackPlannerTest, TheNewestMessageIsAskedForOnlyAfterSilence) {
  arrive(1, 0, 4, 10 * kMs);
  EXPECT_TRUE(round(10 * kMs + kNackDelayNs / 2).empty()) << "still arriving";
  EXPECT_TRUE(asks_for(round(10 * kMs + kNackDelayNs + 1), 1, 4, 10));
}

TEST_F(NackPlannerTest, NothingIsAskedForWhileDatagramsWaitUnread) {
  // A receiver that fell behind: its socket holds the rest of the message.
  arrive(1, 0, 4, 10 * kMs);
  EXPECT_TRUE(round(50 * kMs, /*backlog=*/true).empty());
  EXPECT_TRUE(asks_for(round(50 * kMs, /*backlog=*/false), 1, 4, 10));
}

TEST_F(NackPlannerTest, AWriterThatPausedMidMessageIsNotAskedAgainUntilItIsHeardFrom) {
  // The writer stops sending in the middle of message 1 (descheduled, say):
  // one NACK goes out, and no more while nothing comes from it.
  arrive(1, 0, 4, 10 * kMs);
  EXPECT_FALSE(round(13 * kMs).empty());
  for (std::int64_t t = 17 * kMs; t < 200 * kMs; t += kNackIntervalNs) {
    EXPECT_TRUE(round(t).empty()) << "at " << t / kMs << " ms: the same fragments would be resent again";
  }
  // It resumes and sends one more fragment; the rest is still missing: ask again.
  arrive(1, 4, 5, 200 * kMs);
  EXPECT_TRUE(asks_for(round(200 * kMs + kNackDelayNs + 1), 1, 5, 10));
}

TEST_F(NackPlannerTest, AHoleThatStaysIsAskedForAgainWithGrowingWaits) {
  arrive(1, 0, 4, 10 * kMs);
  std::vector<std::int64_t> asked;
  for (std::int64_t t = 11 * kMs; t < 400 * kMs; t += kMs) {
    arrive(2, 0, 1, t);  // the writer keeps sending (something newer), 1's hole stays
    if (!round(t).empty()) {
      asked.push_back(t);
    }
  }
  ASSERT_GE(asked.size(), 4U);
  for (std::size_t i = 2; i < asked.size(); ++i) {
    const std::int64_t wait = asked[i] - asked[i - 1];
    EXPECT_GE(wait, std::min(asked[i - 1] - asked[i - 2], kRepairTimeoutNs / 2) * 2 - kMs)
        << "asked at " << asked[i - 1] / kMs << " and " << asked[i] / kMs << " ms";
    EXPECT_LE(wait, kRepairTimeoutNs + kMs);
  }
}

TEST_F(NackPlannerTest, ProgressOfTheStreamResetsTheWait) {
  arrive(1, 0, 4, 10 * kMs);
  arrive(2, 0, 4, 10 * kMs);
  arrive(3, 0, 10, 10 * kMs);  // complete, held until 1 and 2 came
  EXPECT_EQ(round(11 * kMs).size(), 2U);
  arrive(4, 0, 1, 15 * kMs);
  EXPECT_EQ(round(15 * kMs).size(), 2U) << "asked again after the interval; the next wait is twice as long";
  arrive(4, 1, 2, 19 * kMs);
  EXPECT_TRUE(round(19 * kMs).empty());
  arrive(1, 4, 10, 20 * kMs);  // the resend of 1 came: the stream moved on
  const auto ranges = round(21 * kMs);
  EXPECT_TRUE(asks_for(ranges, 2, 4, 10)) << "after progress the shortest interval applies again";
}

}  // namespace
}  // namespace axon::udp
