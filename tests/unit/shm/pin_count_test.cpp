// The pin count of ShmPublisherPort::publish_pinned(): one kNetworkBit holds
// a chunk for several network writes at once (RDMA writes to several hosts,
// UDP resends), and only the last unpin() lets the chunk go back to the pool.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/common/temp_dir.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::shm {
namespace {

constexpr std::uint32_t kChunks = 4;

/// A node with one publisher of a topic (no subscriber: the chunk's only
/// holders are the publisher's own bits).
struct PinNode {
  PinNode() {
    auto created = ShmTransport::create(ShmConfig{.domain_id = 7,
                                                  .node_name = "pins",
                                                  .shm_dir = dir.path(),
                                                  .chunk_classes = {{.payload_bytes = 256, .count = kChunks}},
                                                  .chunk_fallback = ChunkFallback{.max_classes = 0}});
    if (!created.ok()) {
      ADD_FAILURE() << created.error().message();
      return;
    }
    transport = std::move(*created);
    auto advertised = transport->advertise(topic, PublisherQos{});
    if (!advertised.ok()) {
      ADD_FAILURE() << advertised.error().message();
      return;
    }
    publisher = std::dynamic_pointer_cast<ShmPublisherPort>(*advertised);
  }
  [[nodiscard]] std::uint32_t free_chunks() const { return transport->pool_stats().at(0).free_chunks; }
  /// Loans every chunk it can get, gives them back, and says whether `handle` was among them.
  bool loans_chunk(const void* handle) {
    std::vector<LoanedChunk> held;
    bool found = false;
    for (auto loan = publisher->loan(8); loan.ok(); loan = publisher->loan(8)) {
      found = found || loan->handle == handle;
      held.push_back(*loan);
    }
    for (const LoanedChunk& chunk : held) {
      publisher->discard(chunk);
    }
    return found;
  }

  axon::test::TempDir dir{"axon-pin-count"};
  const TopicDescriptor topic{.name = "frames",
                              .type = TypeIdentity{.name = "bytes", .hash = 1, .size = 1, .align = 1},
                              .max_payload_bytes = 64};
  std::shared_ptr<ShmTransport> transport;
  std::shared_ptr<ShmPublisherPort> publisher;
};

/// Publishes one message pinned `pins` times; its chunk's handle.
void* publish_pinned(PinNode& node, std::uint32_t pins) {
  auto loan = node.publisher->loan(8);
  EXPECT_TRUE(loan.ok());
  if (!loan.ok()) {
    return nullptr;
  }
  EXPECT_TRUE(node.publisher->publish_pinned(*loan, 8, 0, pins).ok());
  return loan->handle;
}

class ShmPinCount : public ::testing::TestWithParam<bool> {};

TEST_P(ShmPinCount, TwoPinsHoldTheChunkUntilTheLastUnpinInEitherOrder) {
  PinNode node;
  ASSERT_NE(node.publisher, nullptr);
  void* first = publish_pinned(node, 2);
  void* second = publish_pinned(node, 2);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_NE(first, second) << "a pinned chunk is never loaned again";
  EXPECT_EQ(node.free_chunks(), kChunks - 2);
  EXPECT_EQ(node.publisher->pins_of(first), 2U);

  // One pin of each, in the order the parameter says.
  const bool first_first = GetParam();
  node.publisher->unpin(first_first ? first : second);
  node.publisher->unpin(first_first ? second : first);

  EXPECT_EQ(node.publisher->pins_of(first), 1U);
  EXPECT_EQ(node.publisher->pins_of(second), 1U);
  EXPECT_EQ(node.free_chunks(), kChunks - 2) << "one pin left holds each chunk";
  EXPECT_FALSE(node.loans_chunk(first));
  EXPECT_FALSE(node.loans_chunk(second));

  node.publisher->unpin(first);

  EXPECT_EQ(node.publisher->pins_of(first), 0U);
  EXPECT_EQ(node.free_chunks(), kChunks - 1);
  EXPECT_TRUE(node.loans_chunk(first)) << "the last unpin frees the chunk";
  EXPECT_FALSE(node.loans_chunk(second));

  node.publisher->unpin(second);

  EXPECT_EQ(node.free_chunks(), kChunks);
  EXPECT_TRUE(node.loans_chunk(second));
}

INSTANTIATE_TEST_SUITE_P(UnpinOrder, ShmPinCount, ::testing::Bool(), [](const ::testing::TestParamInfo<bool>& info) {
  return info.param ? std::string("FirstChunkFirst") : std::string("SecondChunkFirst");
});

TEST(ShmPinCountSingle, OnePinIsTheUdpWritersPinAndZeroPinsIsAPlainPublish) {
  PinNode node;
  ASSERT_NE(node.publisher, nullptr);
  void* pinned = publish_pinned(node, 1);
  void* plain = publish_pinned(node, 0);
  ASSERT_NE(pinned, nullptr);
  ASSERT_NE(plain, nullptr);

  EXPECT_EQ(node.publisher->pins_of(pinned), 1U);
  EXPECT_EQ(node.publisher->pins_of(plain), 0U);
  EXPECT_TRUE(node.loans_chunk(plain)) << "pins 0: the chunk is reusable at once, like publish()";
  EXPECT_FALSE(node.loans_chunk(pinned));

  node.publisher->unpin(pinned);

  EXPECT_EQ(node.free_chunks(), kChunks);
  EXPECT_TRUE(node.loans_chunk(pinned));
}

TEST(ShmPinCountSingle, UnpinFromAnotherThreadFreesTheChunk) {
  PinNode node;
  ASSERT_NE(node.publisher, nullptr);
  void* pinned = publish_pinned(node, 3);
  ASSERT_NE(pinned, nullptr);

  std::thread other([&] {
    node.publisher->unpin(pinned);
    node.publisher->unpin(pinned);
  });
  node.publisher->unpin(pinned);
  other.join();

  EXPECT_EQ(node.publisher->pins_of(pinned), 0U);
  EXPECT_EQ(node.free_chunks(), kChunks);
}

}  // namespace
}  // namespace axon::shm
