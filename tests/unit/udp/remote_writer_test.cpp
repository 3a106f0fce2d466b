// The receiving side of one remote writer, step by step: synchronisation by
// the first heartbeat, in-order delivery of a RELIABLE stream, gaps, duplicates,
// and BEST_EFFORT ordering. Messages go through a real shared-memory mirror to
// a real subscriber port of the same process.
#include "transports/udp/remote_writer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "transports/shm/shm_transport.hpp"

namespace axon::udp {
namespace {

class RemoteWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("axon_remote_writer_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    auto transport = shm::ShmTransport::create(shm::ShmConfig{
        .domain_id = 7, .node_name = "receiver", .shm_dir = dir_.string(), .chunk_classes = {{256, 256}}});
    ASSERT_TRUE(transport) << transport.error().message();
    transport_ = *transport;
    const TopicDescriptor topic{.name = "stream",
                                .type = TypeIdentity{.name = "u64", .hash = 1, .size = 8, .align = 8},
                                .max_payload_bytes = 8};
    auto subscriber = transport_->subscribe(topic, SubscriberQos{.depth = 256});
    auto mirror = transport_->advertise(topic, PublisherQos{});
    ASSERT_TRUE(subscriber && mirror);
    subscriber_ = *subscriber;
    writer_ =
        std::make_unique<RemoteWriter>(std::static_pointer_cast<shm::ShmPublisherPort>(*mirror), 42, 1, 9, counters_);
  }
  void TearDown() override {
    writer_.reset();
    subscriber_.reset();
    transport_.reset();
    std::filesystem::remove_all(dir_);
  }

  /// A message `sequence` assembled, as the participant hands it over.
  bool arrive(std::uint64_t sequence) {
    writer_->on_data(sequence, reliable_, 0);
    if (!writer_->wants(sequence)) {
      return false;
    }
    auto chunk = writer_->loan(8);
    EXPECT_TRUE(chunk);
    std::memcpy(chunk->payload, &sequence, sizeof(sequence));
    writer_->complete(sequence, *chunk, 8);
    return true;
  }
  /// What local subscribers got since the last call, by the remote sequence in the payload.
  std::vector<std::uint64_t> delivered() {
    std::vector<std::uint64_t> out;
    while (auto chunk = subscriber_->take()) {
      std::uint64_t sequence = 0;
      std::memcpy(&sequence, chunk->payload, sizeof(sequence));
      out.push_back(sequence);
      subscriber_->release(*chunk);
    }
    return out;
  }
  std::vector<std::uint64_t> missing() const {
    std::vector<std::uint64_t> out;
    writer_->for_each_missing(64, [&](std::uint64_t sequence, bool) { out.push_back(sequence); });
    return out;
  }

  bool reliable_ = true;
  std::filesystem::path dir_;
  NetworkCounterCells counters_;
  std::shared_ptr<shm::ShmTransport> transport_;
  std::shared_ptr<SubscriberPort> subscriber_;
  std::unique_ptr<RemoteWriter> writer_;
};

using Sequences = std::vector<std::uint64_t>;

TEST_F(RemoteWriterTest, ReliableStreamWaitsForItsFirstHeartbeat) {
  EXPECT_FALSE(arrive(5)) << "before a heartbeat the start of the stream is unknown";
  writer_->on_heartbeat(3, 4, true, 0);
  EXPECT_EQ(missing(), (Sequences{3, 4, 5}));
  EXPECT_TRUE(arrive(3));
  EXPECT_EQ(delivered(), (Sequences{3}));
}

TEST_F(RemoteWriterTest, ReliableStreamHoldsLaterMessagesUntilTheMissingOneArrives) {
  writer_->on_heartbeat(1, 0, true, 0);
  EXPECT_TRUE(arrive(1));
  EXPECT_TRUE(arrive(3));
  EXPECT_TRUE(arrive(4));
  EXPECT_EQ(delivered(), (Sequences{1}));
  EXPECT_EQ(missing(), (Sequences{2}));
  EXPECT_TRUE(arrive(2));
  EXPECT_EQ(delivered(), (Sequences{2, 3, 4}));
  EXPECT_TRUE(missing().empty());
  EXPECT_EQ(counters_.messages_received.load(), 4U);
}

TEST_F(RemoteWriterTest, ReliableStreamRefusesDuplicatesAndMessagesBeyondItsWindow) {
  writer_->on_heartbeat(1, 0, true, 0);
  EXPECT_TRUE(arrive(1));
  EXPECT_FALSE(arrive(1)) << "already delivered";
  EXPECT_TRUE(arrive(3));
  EXPECT_FALSE(arrive(3)) << "already held";
  EXPECT_FALSE(arrive(2 + RemoteWriter::kWindow)) << "beyond the reorder window: assembled later, after a NACK";
  EXPECT_EQ(delivered(), (Sequences{1}));
}

TEST_F(RemoteWriterTest, AGapSkipsTheLostMessagesCountsThemAndDeliversWhatWasHeld) {
  writer_->on_heartbeat(1, 0, true, 0);
  EXPECT_TRUE(arrive(1));
  EXPECT_TRUE(arrive(3));
  EXPECT_TRUE(arrive(6));
  writer_->on_gap(2, 5);  // 2 and 4 are gone; 3 was received after all
  EXPECT_EQ(delivered(), (Sequences{1, 3}));
  EXPECT_EQ(counters_.messages_lost.load(), 2U);
  EXPECT_EQ(missing(), (Sequences{5}));
  EXPECT_TRUE(arrive(5));
  EXPECT_EQ(delivered(), (Sequences{5, 6}));
}

TEST_F(RemoteWriterTest, AHeartbeatWhoseStreamStartsLaterReportsAGapInsteadOfStalling) {
  writer_->on_heartbeat(1, 0, true, 0);
  EXPECT_TRUE(arrive(1));
  EXPECT_TRUE(arrive(4));
  writer_->on_heartbeat(3, 4, true, 0);  // 2 will never come
  EXPECT_EQ(counters_.messages_lost.load(), 1U);
  EXPECT_EQ(missing(), (Sequences{3}));
  EXPECT_TRUE(arrive(3));
  EXPECT_EQ(delivered(), (Sequences{1, 3, 4}));
}

TEST_F(RemoteWriterTest, BestEffortDeliversAtOnceAndDropsOlderMessages) {
  reliable_ = false;
  EXPECT_TRUE(arrive(2));
  EXPECT_TRUE(arrive(5));
  EXPECT_FALSE(arrive(4)) << "older than one already delivered";
  EXPECT_EQ(delivered(), (Sequences{2, 5}));
  EXPECT_TRUE(missing().empty()) << "best effort never NACKs";
}

TEST_F(RemoteWriterTest, AReliableStreamAcknowledgesWhatItDeliveredAtMostEveryMillisecond) {
  constexpr std::int64_t kMs = 1'000'000;
  EXPECT_FALSE(writer_->ack_due(10 * kMs)) << "nothing to acknowledge before the stream is synchronised";
  writer_->on_heartbeat(1, 0, true, 0);
  EXPECT_TRUE(writer_->ack_due(10 * kMs)) << "the heartbeat asks, and the stream's start is news";
  writer_->acked(10 * kMs);
  EXPECT_FALSE(writer_->ack_pending());
  EXPECT_TRUE(arrive(1));
  EXPECT_TRUE(arrive(2));
  EXPECT_EQ(writer_->expected(), 3U);
  EXPECT_TRUE(writer_->ack_pending());
  EXPECT_FALSE(writer_->ack_due(10 * kMs + kMs / 2)) << "at most one ACK per interval";
  EXPECT_TRUE(writer_->ack_due(11 * kMs));
  writer_->acked(11 * kMs);
  EXPECT_TRUE(arrive(4));
  EXPECT_FALSE(writer_->ack_pending()) << "a message held behind a missing one is not acknowledged";
  writer_->on_heartbeat(3, 4, true, 11 * kMs);
  EXPECT_TRUE(writer_->ack_due(12 * kMs)) << "a heartbeat asks again (the last ACK may be lost)";
  EXPECT_TRUE(writer_->ack_due(11 * kMs + kMs / 10))
      << "asked, it answers within the interval: the writer may be waiting for room in its window";
}

TEST_F(RemoteWriterTest, ABestEffortStreamNeverAcknowledges) {
  reliable_ = false;
  writer_->on_heartbeat(1, 0, false, 0);
  EXPECT_TRUE(arrive(1));
  EXPECT_FALSE(writer_->ack_pending());
}

}  // namespace
}  // namespace axon::udp
