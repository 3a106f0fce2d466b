// The chunks of a link's writes in flight (transports/rdma/write_ledger.hpp):
// retired oldest first up to a completion's sequence, across the 2^40 wrap,
// all handed back when the queue pair is gone, never more than its capacity.
// The chunks' handles are markers only: the ledger never unpins.
#include "transports/rdma/write_ledger.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <vector>

#include "tests/support/common/temp_dir.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::rdma {
namespace {

// A real publisher port of a node's shm transport (the ledger keeps it alive).
class RdmaWriteLedger : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = shm::ShmTransport::create(
        shm::ShmConfig{.domain_id = 9, .node_name = "ledger", .shm_dir = dir.path(), .chunk_classes = {{256, 4}}});
    ASSERT_TRUE(created.ok()) << created.error().message();
    transport = std::move(*created);
    auto advertised = transport->advertise(
        {.name = "t", .type = TypeIdentity{.name = "bytes", .hash = 1, .size = 1, .align = 1}, .max_payload_bytes = 64},
        PublisherQos{});
    ASSERT_TRUE(advertised.ok());
    port = std::dynamic_pointer_cast<shm::ShmPublisherPort>(*advertised);
    ASSERT_NE(port, nullptr);
  }
  SentChunk chunk(int marker) { return SentChunk{.port = port, .handle = &markers[static_cast<std::size_t>(marker)]}; }
  [[nodiscard]] int marker_of(const SentChunk& c) const {
    return static_cast<int>(static_cast<const int*>(c.handle) - markers.data());
  }

  axon::test::TempDir dir{"axon-rdma-ledger"};
  std::shared_ptr<shm::ShmTransport> transport;
  std::shared_ptr<shm::ShmPublisherPort> port;
  std::array<int, 16> markers{};
};

TEST_F(RdmaWriteLedger, ACompletionRetiresEveryWriteUpToItsSequenceOldestFirstAndNoLater) {
  WriteLedger sut(8);
  for (int i = 0; i < 3; ++i) {
    SentChunk c = chunk(i);
    ASSERT_TRUE(sut.record(10 + static_cast<std::uint64_t>(i) * 2, c));  // writes of 2 parts: 10, 12, 14
    EXPECT_TRUE(c.empty()) << "record() takes the chunk";
  }

  EXPECT_TRUE(sut.take_done(9).empty()) << "nothing is done before the first write's sequence";
  std::vector<int> done;
  for (SentChunk c = sut.take_done(13); !c.empty(); c = sut.take_done(13)) {
    done.push_back(marker_of(c));
  }

  EXPECT_EQ(done, (std::vector<int>{0, 1})) << "a control SEND's completion at 13 covers the writes at 10 and 12";
  EXPECT_EQ(sut.size(), 1U);
  EXPECT_EQ(marker_of(sut.take_done(14)), 2);
  EXPECT_EQ(sut.size(), 0U);
}

TEST_F(RdmaWriteLedger, RetiresAcrossTheWrapOfTheFortyBitSequence) {
  WriteLedger sut(4);
  SentChunk a = chunk(0);
  SentChunk b = chunk(1);
  ASSERT_TRUE(sut.record(kWorkSequenceMask - 1, a));
  ASSERT_TRUE(sut.record(kWorkSequenceMask + 2, b));  // wraps to 1

  EXPECT_EQ(marker_of(sut.take_done(kWorkSequenceMask)), 0);
  EXPECT_TRUE(sut.take_done(kWorkSequenceMask).empty()) << "sequence 1 after the wrap is later than 2^40 - 1";
  EXPECT_EQ(marker_of(sut.take_done(1)), 1);
}

TEST_F(RdmaWriteLedger, IsFullAtItsCapacityAndLeavesTheChunkToTheCaller) {
  WriteLedger sut(2);
  SentChunk a = chunk(0);
  SentChunk b = chunk(1);
  SentChunk c = chunk(2);
  ASSERT_TRUE(sut.record(1, a));
  ASSERT_TRUE(sut.record(2, b));

  EXPECT_FALSE(sut.record(3, c));
  EXPECT_FALSE(c.empty()) << "a refused record leaves the pin with the caller";
  EXPECT_EQ(marker_of(sut.take_done(1)), 0);
  EXPECT_TRUE(sut.record(3, c)) << "a retired place is used again (the ring wraps)";
  EXPECT_EQ(sut.next_tag(), 1U) << "the tag is the next place of the ring";
}

TEST_F(RdmaWriteLedger, TakeAnyHandsBackEveryChunkOnceWhenTheQueuePairIsGone) {
  WriteLedger sut(4);
  for (int i = 0; i < 3; ++i) {
    SentChunk c = chunk(i);
    ASSERT_TRUE(sut.record(100 + static_cast<std::uint64_t>(i), c));
  }
  (void)sut.take_done(100);

  std::vector<int> released;
  for (SentChunk c = sut.take_any(); !c.empty(); c = sut.take_any()) {
    released.push_back(marker_of(c));
  }

  EXPECT_EQ(released, (std::vector<int>{1, 2}));
  EXPECT_EQ(sut.size(), 0U);
  EXPECT_EQ(port.use_count(), 1) << "no copy of the port stays in the ledger";
}

}  // namespace
}  // namespace axon::rdma
