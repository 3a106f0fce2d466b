// Each serializer between real processes: round trips, zero-copy reads that
// point into the publisher's shared memory, and hostile bytes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/process_maps.hpp"
#include "tests/support/schema_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::inside_mapping;

template <class T, class Check>
std::uint64_t receive(Subscriber<T>& sub, std::uint64_t expect, Check check) {
  std::uint64_t received = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (received < expect && std::chrono::steady_clock::now() < deadline) {
    auto sample = sub.take();
    if (!sample) {
      std::this_thread::sleep_for(100us);
      continue;
    }
    check(*sample, received + 1);
    ++received;
  }
  return received;
}

class SerializerProcess : public test::PeerDomainTest {
 protected:
  std::shared_ptr<Node> make_node() const { return PeerDomainTest::make_node("serializer-test"); }
  void TearDown() override { EXPECT_TRUE(test::domain_files(domain).empty()); }
};

TEST_F(SerializerProcess, FlatBuffersArriveIntactAndAreReadInThePublishersMemory) {
  auto node = make_node();
  auto sub = node->subscribe<test::fb::ObjectList>("objects", {.depth = 256, .overflow = Overflow::kBlockPublisher});
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->data_path(), DataPath::kZeroCopy);
  auto pub = peer("fb-publish", {"count=200"});
  const std::string pool = "axon_pool_d" + std::to_string(domain) + "_peer-fb";
  const auto received = receive(**sub, 200, [&](const Sample<test::fb::ObjectList>& s, std::uint64_t seq) {
    EXPECT_TRUE(test::object_list_ok(*s, seq, 128));
    EXPECT_TRUE(inside_mapping(s.data(), pool)) << "the root table must be read in shared memory";
    EXPECT_TRUE(inside_mapping(s->targets()->Get(127), pool));
  });
  EXPECT_EQ(received, 200U);
  EXPECT_EQ(sub->counters().rejected, 0U);
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(SerializerProcess, ProtobufArrivesIntact) {
  auto node = make_node();
  auto sub = node->subscribe<test::pb::ObjectList>("objects", {.depth = 256, .overflow = Overflow::kBlockPublisher});
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->data_path(), DataPath::kSerializedInSharedMemory);
  auto pub = peer("pb-publish", {"count=200"});
  const auto received = receive(**sub, 200, [&](const Sample<test::pb::ObjectList>& s, std::uint64_t seq) {
    EXPECT_TRUE(test::object_list_ok(*s, seq, 128));
  });
  EXPECT_EQ(received, 200U);
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(SerializerProcess, CorruptedFlatBuffersAreDroppedCountedAndNeverReachUserCode) {
  auto node = make_node();
  auto sub = node->subscribe<test::fb::ObjectList>("objects", {.depth = 16});
  ASSERT_TRUE(sub.ok());
  auto pub = peer("fb-garbage", {});
  ASSERT_TRUE(pub.wait_for_line("PUBLISHED", 20s)) << pub.output();
  const auto received = receive(**sub, 1, [&](const Sample<test::fb::ObjectList>& s, std::uint64_t) {
    EXPECT_TRUE(test::object_list_ok(*s, 1, 128)) << "only the valid message gets through";
  });
  EXPECT_EQ(received, 1U);
  EXPECT_EQ(sub->counters().rejected, 3U) << "noise, a truncated buffer and a bad root offset";
  EXPECT_TRUE(sub->take().empty());
  EXPECT_EQ(pub.wait(30s), 0);
}

TEST_F(SerializerProcess, ProtobufThatDoesNotParseIsAnErrorValueAndCounted) {
  auto node = make_node();
  auto sub = node->subscribe<test::pb::ObjectList>("objects", {.depth = 16});
  ASSERT_TRUE(sub.ok());
  auto pub = peer("pb-garbage", {});
  ASSERT_TRUE(pub.wait_for_line("PUBLISHED", 20s)) << pub.output();
  std::uint64_t malformed = 0;
  std::uint64_t valid = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (valid == 0 && std::chrono::steady_clock::now() < deadline) {
    auto sample = sub->take();
    if (sample && test::object_list_ok(**sample, 1, 128)) {
      ++valid;
    } else if (sample) {
      continue;  // a garbage message that happened to parse
    } else if (sample.error().code() == ErrorCode::kMalformed) {
      ++malformed;
    } else {
      std::this_thread::sleep_for(100us);
    }
  }
  EXPECT_EQ(valid, 1U);
  EXPECT_GE(malformed, 2U) << "the noise and the truncated message cannot parse";
  EXPECT_EQ(sub->counters().rejected, malformed);
  EXPECT_EQ(pub.wait(30s), 0);
}

}  // namespace
}  // namespace axon
