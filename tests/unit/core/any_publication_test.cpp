// Node::advertise_any(): a bytes publisher that joins a topic as the type the domain records for it, so that the
// topic's typed subscribers take its messages as a typed publisher's; refused for a topic no endpoint has, and held
// to the recorded type's size rule. With a declared type (a recording's): creates the topic as that type, with its
// schema, in a domain that does not have it, and refuses a topic of another hash naming both types.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "axon/node.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/one_node_test.hpp"
#include "tests/support/topic_messages.hpp"

namespace axon {
namespace {

class AdvertiseAny : public test::OneNodeTest {
 protected:
  AdvertiseAny() : OneNodeTest("any_publication", {{.payload_bytes = 256, .count = 16}}) {}
};

/// Publishes Heartbeat `sequence`, serialized, through `sut`'s bytes publisher: `typed` (its only subscriber)
/// takes it as the same message.
void expect_typed_subscriber_takes(AnyPublication& sut, Subscriber<schemas::pb::Heartbeat>& typed,
                                   std::uint64_t sequence) {
  schemas::pb::Heartbeat message;
  test::topics::fill_heartbeat(message, sequence);
  const std::string bytes = message.SerializeAsString();
  auto loan = sut.publisher->loan(bytes.size());
  ASSERT_TRUE(loan.ok());
  std::memcpy((*loan).data(), bytes.data(), bytes.size());
  const PublishResult published = sut.publisher->publish(std::move(*loan));

  ASSERT_TRUE(published.ok()) << published.error().message();
  EXPECT_EQ(published->delivered, 1U);
  auto taken = typed.take();
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ((*taken)->SerializeAsString(), bytes);
}

TEST_F(AdvertiseAny, JoinsAsTheRecordedTypeSoATypedSubscriberTakesItsMessages) {
  auto typed = node->subscribe<schemas::pb::Heartbeat>("any/heartbeat");
  ASSERT_TRUE(typed.ok()) << typed.error().message();

  auto sut = node->advertise_any("any/heartbeat");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  const TypeIdentity expected = type_identity_of<schemas::pb::Heartbeat>();
  EXPECT_EQ(sut->topic.type.name, expected.name);
  EXPECT_EQ(sut->topic.type.hash, expected.hash);
  EXPECT_EQ(sut->topic.type.serializer, "protobuf");
  EXPECT_EQ(sut->topic.schema, detail::schema_of<schemas::pb::Heartbeat>());  // the subscriber stored it
  expect_typed_subscriber_takes(*sut, **typed, test::topics::kFirstSequence);
}

TEST_F(AdvertiseAny, RefusesATopicNoEndpointHas) {
  auto sut = node->advertise_any("any/nobody");

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(sut.error().message().find("'any/nobody' does not exist"), std::string::npos) << sut.error().message();
}

TEST_F(AdvertiseAny, HoldsLoansToARawTypesSize) {
  auto typed = node->subscribe<test::topics::Pose>("any/pose");
  ASSERT_TRUE(typed.ok()) << typed.error().message();
  auto sut = node->advertise_any("any/pose");
  ASSERT_TRUE(sut.ok()) << sut.error().message();

  auto wrong = sut->publisher->loan(sizeof(test::topics::Pose) - 1);
  auto right = sut->publisher->loan(sizeof(test::topics::Pose));

  ASSERT_TRUE(wrong.failed());
  EXPECT_EQ(wrong.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(right.ok());
}

DeclaredType declared_heartbeat() {
  return DeclaredType{.type = type_identity_of<schemas::pb::Heartbeat>(),
                      .schema = detail::schema_of<schemas::pb::Heartbeat>(),
                      .max_payload_bytes = 0};
}

TEST_F(AdvertiseAny, DeclaredTypeCreatesTheTopicThatATypedSubscriberThenJoins) {
  auto sut = node->advertise_any("any/declared", {.declared = declared_heartbeat()});
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  auto typed = node->subscribe<schemas::pb::Heartbeat>("any/declared");  // after the publication: no mismatch
  ASSERT_TRUE(typed.ok()) << typed.error().message();

  expect_typed_subscriber_takes(*sut, **typed, test::topics::kFirstSequence + 3);
  EXPECT_EQ(sut->topic.type.hash, type_identity_of<schemas::pb::Heartbeat>().hash);
  auto record = node->find_topic("any/declared");
  ASSERT_TRUE(record.ok()) << record.error().message();
  EXPECT_EQ(record->schema, detail::schema_of<schemas::pb::Heartbeat>());  // stored for tools, as a typed one does
}

TEST_F(AdvertiseAny, DeclaredTypeJoinsATopicOfTheSameHash) {
  auto typed = node->subscribe<schemas::pb::Heartbeat>("any/declared_same");
  ASSERT_TRUE(typed.ok()) << typed.error().message();

  auto sut = node->advertise_any("any/declared_same", {.declared = declared_heartbeat()});

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->topic.type.name, "axon.schemas.pb.Heartbeat");
}

TEST_F(AdvertiseAny, DeclaredTypeOfAnotherHashIsRefusedNamingBothTypes) {
  auto typed = node->subscribe<test::topics::Pose>("any/declared_other");
  ASSERT_TRUE(typed.ok()) << typed.error().message();
  const TypeIdentity odometry = type_identity_of<test::topics::Odometry>();

  auto sut = node->advertise_any("any/declared_other",
                                 {.declared = DeclaredType{.type = odometry, .schema = {}, .max_payload_bytes = 0}});

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kTypeMismatch);
  EXPECT_NE(sut.error().message().find("axon.test.Pose"), std::string::npos) << sut.error().message();
  EXPECT_NE(sut.error().message().find("axon.test.Odometry"), std::string::npos) << sut.error().message();
}

TEST_F(AdvertiseAny, DeclaredRawTypeHoldsLoansToItsSize) {
  const TypeIdentity pose = type_identity_of<test::topics::Pose>();
  auto sut = node->advertise_any("any/declared_pose",
                                 {.declared = DeclaredType{.type = pose, .schema = {}, .max_payload_bytes = 0}});
  ASSERT_TRUE(sut.ok()) << sut.error().message();

  auto wrong = sut->publisher->loan(sizeof(test::topics::Pose) + 1);
  auto typed = node->subscribe<test::topics::Pose>("any/declared_pose");

  ASSERT_TRUE(wrong.failed());
  EXPECT_TRUE(typed.ok()) << typed.error().message();
}

}  // namespace
}  // namespace axon
