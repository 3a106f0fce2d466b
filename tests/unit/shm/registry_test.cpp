#include "transports/shm/registry.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <optional>

#include "tests/support/expect_error.hpp"
#include "tests/support/held_domain_lock.hpp"
#include "tests/support/registry_memory.hpp"

namespace axon::shm {
namespace {

struct RegistryFixture : ::testing::Test {
  RegistryFixture() : sut(memory.registry()) {}
  /// The guard the registry's calls ask for: a real lock, held by the test.
  const DomainLockGuard& held() { return lock.held(); }
  static TopicDescriptor topic(std::string name, std::string type, std::uint64_t hash) {
    return TopicDescriptor{
        .name = std::move(name),
        .type = TypeIdentity{.name = std::move(type), .hash = hash, .size = 8, .align = 8, .version = 0},
        .max_payload_bytes = 8};
  }
  test_support::HeldDomainLock lock{"axon-registry"};
  test_support::RegistryMemory memory;
  Registry sut;
};

TEST_F(RegistryFixture, FindsATopicByNameOnceCreated) {
  auto first = sut.find_or_add_topic(held(), topic("lidar", "Cloud", 1));
  auto second = sut.find_or_add_topic(held(), topic("lidar", "Cloud", 1));
  auto other = sut.find_or_add_topic(held(), topic("radar", "Cloud", 1));
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_NE(*first, *other);
}

TEST_F(RegistryFixture, RefusesAnotherTypeAndNamesBothTypes) {
  ASSERT_TRUE(sut.find_or_add_topic(held(), topic("objects", "perception::ObjectList", 0x11)).ok());
  auto refused = sut.find_or_add_topic(held(), topic("objects", "perception::OldObjectList", 0x22));
  test::expect_error_naming(refused, ErrorCode::kTypeMismatch,
                            {"perception::ObjectList", "perception::OldObjectList", "objects"});
}

TEST_F(RegistryFixture, AcceptsAnotherSchemaOfTheSameTypeOnlyWhenEvolutionIsAllowed) {
  auto v1 = topic("cmd", "axon.ControlCommand", 1);
  v1.type.serializer = "protobuf";
  ASSERT_TRUE(sut.find_or_add_topic(held(), v1).ok());
  auto v2 = topic("cmd", "axon.ControlCommand", 2);
  v2.type.serializer = "protobuf";
  EXPECT_EQ(sut.find_or_add_topic(held(), v2).error().code(), ErrorCode::kTypeMismatch);
  v2.allow_compatible_evolution = true;
  EXPECT_TRUE(sut.find_or_add_topic(held(), v2).ok());
  auto renamed = topic("cmd", "axon.OtherCommand", 3);
  renamed.type.serializer = "protobuf";
  renamed.allow_compatible_evolution = true;
  EXPECT_EQ(sut.find_or_add_topic(held(), renamed).error().code(), ErrorCode::kTypeMismatch) << "names must match";
}

TEST_F(RegistryFixture, RawStructsNeverEvolve) {
  ASSERT_TRUE(sut.find_or_add_topic(held(), topic("pose", "Pose", 1)).ok());
  auto changed = topic("pose", "Pose", 2);
  changed.allow_compatible_evolution = true;
  EXPECT_EQ(sut.find_or_add_topic(held(), changed).error().code(), ErrorCode::kTypeMismatch);
}

TEST_F(RegistryFixture, RejectsEmptyAndOverlongTopicNames) {
  EXPECT_EQ(sut.find_or_add_topic(held(), topic("", "T", 1)).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(sut.find_or_add_topic(held(), topic(std::string(kMaxTopicNameBytes, 'x'), "T", 1)).error().code(),
            ErrorCode::kInvalidArgument);
}

TEST_F(RegistryFixture, BumpsTheTopicVersionWhenPublishersComeAndGo) {
  auto participant = sut.add_participant(held(), self_identity(), "test", 0);
  auto t = sut.find_or_add_topic(held(), topic("a", "T", 1));
  const std::uint64_t v0 = sut.topic_version(*t);
  auto pub = sut.add_publisher(held(), *t, *participant, 0);
  ASSERT_TRUE(pub.ok());
  const std::uint64_t v1 = sut.topic_version(*t);
  EXPECT_GT(v1, v0);
  ASSERT_TRUE(sut.add_subscriber(held(), *t, *participant, {}).ok());
  EXPECT_EQ(sut.topic_version(*t), v1) << "subscribers do not disturb publisher discovery";
  sut.remove_publisher(held(), pub->slot);
  EXPECT_GT(sut.topic_version(*t), v1);
}

TEST_F(RegistryFixture, FreesATopicWhenItsLastEndpointLeavesSoTheTypeMayChange) {
  auto participant = sut.add_participant(held(), self_identity(), "test", 0);
  auto t = sut.find_or_add_topic(held(), topic("a", "Old", 1));
  auto sub = sut.add_subscriber(held(), *t, *participant, {});
  sut.remove_subscriber(held(), sub->slot);
  EXPECT_TRUE(sut.find_or_add_topic(held(), topic("a", "New", 2)).ok());
}

TEST_F(RegistryFixture, EndpointEntriesNameTheirStatisticsEntry) {
  auto p = sut.add_participant(held(), self_identity(), "test", 0);
  auto t = sut.find_or_add_topic(held(), topic("a", "T", 1));
  auto pub = sut.add_publisher(held(), *t, *p, 5);
  auto sub = sut.add_subscriber(held(), *t, *p, {}, {}, 7);
  ASSERT_TRUE(pub.ok() && sub.ok());
  EXPECT_EQ(sut.publisher(held(), pub->slot).stats_slot, 5U) << "a publisher's is its pool block";
  EXPECT_EQ(sut.subscriber(held(), sub->slot).stats_slot, 7U);
  auto unnamed = sut.add_subscriber(held(), *t, *p, {});
  ASSERT_TRUE(unnamed.ok());
  EXPECT_EQ(sut.subscriber(held(), unnamed->slot).stats_slot, kNoStatsSlot);
}

TEST_F(RegistryFixture, RemovingAParticipantRemovesItsEndpoints) {
  auto p = sut.add_participant(held(), self_identity(), "test", 0);
  auto t = sut.find_or_add_topic(held(), topic("a", "T", 1));
  auto pub = sut.add_publisher(held(), *t, *p, 0);
  auto sub = sut.add_subscriber(held(), *t, *p, {});
  sut.remove_participant(held(), p->slot);
  EXPECT_FALSE(sut.participant_is(held(), *p));
  EXPECT_FALSE(sut.subscriber_is(held(), *sub));
  EXPECT_EQ(sut.publisher(held(), pub->slot).state, EntryState::kFree);
  EXPECT_EQ(sut.active_participants(held()), 0U);
}

TEST_F(RegistryFixture, ANewOccupantOfASlotHasANewGeneration) {
  auto first = sut.add_participant(held(), self_identity(), "one", 0);
  sut.remove_participant(held(), first->slot);
  auto second = sut.add_participant(held(), self_identity(), "two", 0);
  EXPECT_EQ(first->slot, second->slot);
  EXPECT_NE(first->generation, second->generation);
  EXPECT_FALSE(sut.participant_is(held(), *first));
}

TEST_F(RegistryFixture, ReportsParticipantsWhoseProcessDied) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::_exit(0);
  }
  ProcessIdentity dead{.pid = child, .start_time = 0};
  // Read the child's identity before reaping: a zombie already counts as dead.
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(sut.add_participant(held(), self_identity(), "alive", 0).ok());
  ASSERT_TRUE(sut.add_participant(held(), dead, "dead", 0).ok());
  const auto found = sut.dead_participants(held());
  ASSERT_EQ(found.size(), 1U);
  EXPECT_STREQ(sut.participant(held(), found[0]).name, "dead");
}

TEST(ProcessIdentity, ARecycledPidWithAnotherStartTimeIsNotAlive) {
  ProcessIdentity self = self_identity();
  EXPECT_TRUE(is_alive(self));
  self.start_time += 1;
  EXPECT_FALSE(is_alive(self));
}

TEST(ProcessIdentity, AZombieIsNotAlive) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::_exit(0);
  }
  // Wait until it has exited but do not reap it yet.
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT);
  EXPECT_FALSE(is_alive({.pid = child, .start_time = 0}));
  int status = 0;
  ::waitpid(child, &status, 0);
}

}  // namespace
}  // namespace axon::shm
