// A loan publishes through the publisher that lent it (issue 13, item 5b):
// a Loan<T> or FlatBuffers builder of publisher A given to publisher B is
// refused with kInvalidArgument and stays with the caller, so no chunk ever
// records the wrong publisher block or is looked up in the wrong pool.
#include <gtest/gtest.h>

#include <string>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/schema_messages.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon {
namespace {

struct Pose {
  double x = 0;
  std::uint64_t stamp = 0;
};

using ObjectList = test::fb::ObjectList;

NodeOptions options_for(std::uint32_t domain) {
  return test::pool_options(domain, {{.payload_bytes = 256, .count = 8}, {.payload_bytes = 4096, .count = 4}});
}

using test::total_free;

class PublisherOwnership : public ::testing::Test {
 protected:
  void TearDown() override {
    a.reset();
    b.reset();
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }
  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> a = *Node::create("node_a", options_for(domain));
  std::shared_ptr<Node> b = *Node::create("node_b", options_for(domain));
};

TEST_F(PublisherOwnership, ALoanOfAPublisherOfAnotherNodeIsRefusedAndStaysWithTheCaller) {
  auto lender = a->advertise<Pose>("pose/a");
  auto other = b->advertise<Pose>("pose/b");
  auto sub_a = b->subscribe<Pose>("pose/a");
  auto sub_b = a->subscribe<Pose>("pose/b");
  ASSERT_TRUE(lender.ok() && other.ok() && sub_a.ok() && sub_b.ok());
  auto loan = lender->loan();
  ASSERT_TRUE(loan.ok());
  loan->stamp = 42;

  auto refused = other->publish(std::move(*loan));

  ASSERT_FALSE(refused.ok()) << "the chunk is in node_a's pool; node_b's subscribers would read another chunk";
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(refused.error().message());
  EXPECT_NE(message.find("topic 'pose/b'"), std::string::npos) << message;
  EXPECT_NE(message.find("of topic 'pose/a'"), std::string::npos) << message;
  EXPECT_FALSE(sub_b->take().ok()) << "nothing was sent on pose/b";
  EXPECT_EQ((*loan)->stamp, 42U) << "the loan stays with the caller";
  auto sent = lender->publish(std::move(*loan));
  ASSERT_TRUE(sent.ok()) << sent.error().message();
  auto sample = sub_a->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->stamp, 42U);
}

TEST_F(PublisherOwnership, ALoanOfAnotherPublisherOfTheSameTopicIsRefusedAndNoChunkLeaks) {
  auto first = a->advertise<Pose>("pose");
  auto second = a->advertise<Pose>("pose");
  auto sub = b->subscribe<Pose>("pose");
  ASSERT_TRUE(first.ok() && second.ok() && sub.ok());
  const std::uint32_t free_at_start = total_free(*a);
  {
    auto loan = first->loan();
    ASSERT_TRUE(loan.ok());

    auto refused = second->publish(std::move(*loan));

    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(refused.error().message()).find("another publisher (of topic 'pose')"), std::string::npos)
        << refused.error().message();
  }  // dropped: back to its own publisher
  EXPECT_FALSE(sub->take().ok());
  EXPECT_EQ(total_free(*a), free_at_start) << "the dropped loan went back to the pool";
}

TEST_F(PublisherOwnership, AnEmptyLoanIsRefused) {
  auto pub = a->advertise<Pose>("pose");
  ASSERT_TRUE(pub.ok());
  auto loan = pub->loan();
  ASSERT_TRUE(loan.ok());
  ASSERT_TRUE(pub->publish(std::move(*loan)).ok());

  auto again = pub->publish(std::move(*loan));  // NOLINT(bugprone-use-after-move): the point of the test

  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(again.error().message()).find("this loan is empty"), std::string::npos);
}

TEST_F(PublisherOwnership, ABuilderOfAnotherPublisherIsRefusedAndStaysWithTheCaller) {
  auto lender = a->advertise<ObjectList>("objects/a");
  auto other = b->advertise<ObjectList>("objects/b");
  auto sub_b = a->subscribe<ObjectList>("objects/b");
  ASSERT_TRUE(lender.ok() && other.ok() && sub_b.ok());
  auto builder = lender->loan_builder(1000);
  ASSERT_TRUE(builder.ok());
  auto root = test::build_object_list(builder->builder(), 3, 16);

  auto refused = other->publish(std::move(*builder), root);

  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(refused.error().message()).find("topic 'objects/b'"), std::string::npos)
      << refused.error().message();
  EXPECT_FALSE(sub_b->take().ok());
  EXPECT_TRUE(lender->publish(std::move(*builder), root).ok()) << "the builder is still the lender's to publish";
}

TEST_F(PublisherOwnership, TheSharedMemoryPortRefusesAChunkItDidNotLoan) {
  auto transport_a = shm::ShmTransport::create(
      {.domain_id = domain, .node_name = "port_a", .chunk_classes = {{.payload_bytes = 256, .count = 8}}});
  auto transport_b = shm::ShmTransport::create(
      {.domain_id = domain, .node_name = "port_b", .chunk_classes = {{.payload_bytes = 256, .count = 8}}});
  ASSERT_TRUE(transport_a.ok() && transport_b.ok());
  const TopicDescriptor topic{.name = "raw", .type = Serializer<Pose>::identity(), .max_payload_bytes = sizeof(Pose)};
  auto port_a = (*transport_a)->advertise(topic, {});
  auto port_b = (*transport_b)->advertise(topic, {});
  auto port_a2 = (*transport_a)->advertise(topic, {});
  ASSERT_TRUE(port_a.ok() && port_b.ok() && port_a2.ok());
  auto chunk = (*port_a)->loan(sizeof(Pose));
  ASSERT_TRUE(chunk.ok());

  auto other_pool = (*port_b)->publish(*chunk, sizeof(Pose));
  auto other_block = (*port_a2)->publish(*chunk, sizeof(Pose));

  ASSERT_FALSE(other_pool.ok());
  EXPECT_EQ(other_pool.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_FALSE(other_block.ok());
  EXPECT_EQ(other_block.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE((*port_a)->publish(*chunk, sizeof(Pose)).ok()) << "the lender still owns it";
}

}  // namespace
}  // namespace axon
