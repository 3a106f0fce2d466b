// A domain's limits (NodeOptions::domain_limits, the deployment file's
// `limits:`): the first node sets them, later joiners read them from the
// registry, one past each is refused naming the key that raises it, a joiner
// asking for others is refused naming both, and a registry head whose limits
// do not fit its file is refused as damaged (never used to index a table).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/test_messages.hpp"
#include "transports/shm/registry_layout.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::TestMessage;

constexpr DomainLimits kSmall{.nodes = 2, .topics = 3, .publishers = 2, .subscribers = 2};

class RegistryLimitsTest : public test::PeerDomainTest {
 protected:
  void TearDown() override {
    EXPECT_TRUE(test::domain_files(domain).empty()) << "a refused or recovered domain left files in /dev/shm";
  }
  [[nodiscard]] NodeOptions options(std::optional<DomainLimits> limits = kSmall) const {
    NodeOptions o;
    o.domain_id = domain;
    o.chunk_classes = {{.payload_bytes = 256, .count = 8}};
    o.domain_limits = limits;
    return o;
  }
  [[nodiscard]] std::string registry_path() const { return "/dev/shm/axon_d" + std::to_string(domain) + "_registry"; }

  /// Writes `limits` over the registry head's, as a stray process could.
  void overwrite_limits(const shm::RegistryLimits& limits) const {
    const int fd = ::open(registry_path().c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::pwrite(fd, &limits, sizeof(limits), offsetof(shm::RegistrySegment, limits)),
              static_cast<ssize_t>(sizeof(limits)));
    ::close(fd);
  }
  /// Ends a test whose registry it damaged: the owner is killed, and a new
  /// node replaces the registry (no live process holds it) and, leaving
  /// last, removes the domain's files.
  void kill_owner_and_recover(test::ChildProcess& owner) const {
    owner.kill(SIGKILL);
    ASSERT_EQ(owner.wait(10s), 128 + SIGKILL);
    auto recovered = Node::create("recovered", options(std::nullopt));
    EXPECT_TRUE(recovered.ok()) << recovered.error().message();
  }
};

void expect_names_key(const Error& error, const std::string& count_and_what, const std::string& key) {
  EXPECT_EQ(error.code(), ErrorCode::kLimitReached);
  const std::string message(error.message());
  EXPECT_NE(message.find("the domain already has " + count_and_what), std::string::npos) << message;
  EXPECT_NE(message.find("raise limits." + key + " in the deployment file"), std::string::npos) << message;
  EXPECT_NE(message.find("NodeOptions::domain_limits." + key), std::string::npos) << message;
}

TEST_F(RegistryLimitsTest, ASmallDomainRefusesTheNodePastItsLimitNamingTheKey) {
  auto first = Node::create("first", options());
  auto second = Node::create("second", options(std::nullopt));  // takes the domain's limits
  ASSERT_TRUE(first.ok() && second.ok());

  auto third = Node::create("third", options(std::nullopt));

  ASSERT_FALSE(third.ok());
  expect_names_key(third.error(), "2 participants (nodes)", "nodes");
}

TEST_F(RegistryLimitsTest, ASmallDomainRefusesTheTopicPastItsLimitNamingTheKey) {
  auto node = Node::create("node", options());
  ASSERT_TRUE(node.ok()) << node.error().message();
  std::vector<std::shared_ptr<Subscriber<TestMessage>>> subs;
  for (const char* topic : {"a", "b"}) {
    auto sub = (*node)->subscribe<TestMessage>(topic);
    ASSERT_TRUE(sub.ok()) << sub.error().message();
    subs.push_back(*sub);
  }
  auto pub = (*node)->advertise<TestMessage>("c");
  ASSERT_TRUE(pub.ok()) << pub.error().message();

  auto extra = (*node)->advertise<TestMessage>("d");

  ASSERT_FALSE(extra.ok());
  expect_names_key(extra.error(), "3 topics", "topics");
}

TEST_F(RegistryLimitsTest, ASmallDomainRefusesThePublisherAndSubscriberPastTheirLimitsNamingTheKeys) {
  auto node = Node::create("node", options());
  ASSERT_TRUE(node.ok()) << node.error().message();
  auto pub1 = (*node)->advertise<TestMessage>("a");
  auto pub2 = (*node)->advertise<TestMessage>("a");
  auto sub1 = (*node)->subscribe<TestMessage>("a");
  auto sub2 = (*node)->subscribe<TestMessage>("a");
  ASSERT_TRUE(pub1.ok() && pub2.ok() && sub1.ok() && sub2.ok());

  auto pub3 = (*node)->advertise<TestMessage>("a");
  auto sub3 = (*node)->subscribe<TestMessage>("a");

  ASSERT_FALSE(pub3.ok());
  expect_names_key(pub3.error(), "2 publishers", "publishers");
  ASSERT_FALSE(sub3.ok());
  expect_names_key(sub3.error(), "2 subscribers", "subscribers");
}

TEST_F(RegistryLimitsTest, AJoinerThatAsksForOtherLimitsIsRefusedNamingBoth) {
  auto first = Node::create("first", options());
  ASSERT_TRUE(first.ok()) << first.error().message();

  auto other = Node::create("other", options(DomainLimits{}));

  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code(), ErrorCode::kIncompatible);
  const std::string message(other.error().message());
  EXPECT_NE(message.find("asks for limits nodes 256, topics 2048, publishers 4096, subscribers 4096"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("was created with nodes 2, topics 3, publishers 2, subscribers 2"), std::string::npos)
      << message;
}

TEST_F(RegistryLimitsTest, AJoinerThatAsksForOtherPublishersPerTopicIsRefusedNamingBoth) {
  auto first = Node::create("first", options(DomainLimits{}));
  ASSERT_TRUE(first.ok()) << first.error().message();

  auto other = Node::create("other", options(DomainLimits{.publishers_per_topic = 80}));

  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code(), ErrorCode::kIncompatible);
  const std::string message(other.error().message());
  EXPECT_NE(message.find("asks for limits nodes 256, topics 2048, publishers 4096, subscribers 4096, "
                         "publishers_per_topic 80"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("publishers_per_topic 64 (the first node sets them)"), std::string::npos) << message;
}

TEST_F(RegistryLimitsTest, PublishersPerTopicOutOfRangeIsRefusedNamingTheKeyAndRange) {
  auto created = Node::create("node", options(DomainLimits{.publishers_per_topic = 1025}));

  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(created.error().message())
                .find("limits.publishers_per_topic (NodeOptions::domain_limits.publishers_per_topic) is 1025; it "
                      "must be 1..1024"),
            std::string::npos)
      << created.error().message();
}

TEST_F(RegistryLimitsTest, LimitsOutOfRangeAreRefusedNamingTheKeyAndRange) {
  auto created = Node::create("node", options(DomainLimits{.topics = 0}));

  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(created.error().message())
                .find("limits.topics (NodeOptions::domain_limits.topics) is 0; it "
                      "must be 1..65536"),
            std::string::npos)
      << created.error().message();
}

TEST_F(RegistryLimitsTest, TheDomainsLimitsSizeItsRegistryFile) {
  auto node = Node::create("node", options());
  ASSERT_TRUE(node.ok()) << node.error().message();

  const std::size_t expected =
      shm::RegistryLayout::of({.participants = 2, .topics = 3, .publishers = 2, .subscribers = 2}).total_bytes;
  EXPECT_EQ(std::filesystem::file_size(registry_path()), expected);
  EXPECT_LT(expected, 4096U);  // a 192-byte head and 2 x 104 + 3 x 320 + 2 x 64 + 2 x 128 bytes of tables
}

TEST_F(RegistryLimitsTest, AJoinerRefusesARegistryWhoseLimitsNeedMoreThanItsFile) {
  auto owner = peer("node", {});  // default limits
  ASSERT_TRUE(owner.wait_for_line("READY", 10s)) << owner.output();
  overwrite_limits({.participants = 4096, .topics = 65536, .publishers = 65536, .subscribers = 65536});

  auto joiner = Node::create("joiner", options(std::nullopt));

  ASSERT_FALSE(joiner.ok()) << "a registry whose limits do not fit its file was used";
  const std::string message(joiner.error().message());
  EXPECT_NE(message.find("is damaged (it has " + std::to_string(shm::RegistryLayout::of({}).total_bytes) +
                         " bytes, but its limits (nodes 4096, topics 65536, publishers 65536, subscribers 65536, "
                         "publishers_per_topic 64) need"),
            std::string::npos)
      << message;
  EXPECT_EQ(owner.wait(100ms), -1) << "the owner keeps running";
  kill_owner_and_recover(owner);
}

TEST_F(RegistryLimitsTest, AJoinerRefusesARegistryWhoseLimitsAreOutOfRange) {
  auto owner = peer("node", {});
  ASSERT_TRUE(owner.wait_for_line("READY", 10s)) << owner.output();
  overwrite_limits({.participants = 0, .topics = 0xFFFF'FFFFU, .publishers = 1, .subscribers = 1});

  auto joiner = Node::create("joiner", options(std::nullopt));

  ASSERT_FALSE(joiner.ok());
  EXPECT_NE(std::string(joiner.error().message()).find("are out of range"), std::string::npos)
      << joiner.error().message();
  kill_owner_and_recover(owner);
}

TEST_F(RegistryLimitsTest, ADamagedRegistryWhoseOwnerDiedIsReplacedWithTheJoinersLimits) {
  {
    auto owner = peer("node", {});
    ASSERT_TRUE(owner.wait_for_line("READY", 10s)) << owner.output();
    overwrite_limits({.participants = 4096, .topics = 65536, .publishers = 65536, .subscribers = 65536});
    owner.kill(SIGKILL);
    ASSERT_EQ(owner.wait(10s), 128 + SIGKILL);
  }

  auto joiner = Node::create("joiner", options());

  ASSERT_TRUE(joiner.ok()) << joiner.error().message();
  EXPECT_EQ(std::filesystem::file_size(registry_path()),
            shm::RegistryLayout::of({.participants = 2, .topics = 3, .publishers = 2, .subscribers = 2}).total_bytes);
}

}  // namespace
}  // namespace axon
