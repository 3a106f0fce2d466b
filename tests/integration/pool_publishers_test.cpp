// Publishers per node (issue 15): the publisher blocks of a node's pool are
// its pool.publishers (NodeOptions::pool_publishers, default 32, 1..4096).
// A node advertises that many topics and the next one is refused naming the
// key; a value out of range is refused when the node starts.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;

struct Tick {
  std::uint64_t n = 0;
};

class PoolPublishers : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm"; }

  [[nodiscard]] NodeOptions small_node(std::optional<std::uint32_t> publishers) const {
    NodeOptions options;
    options.domain_id = domain;
    options.chunk_classes = {{.payload_bytes = 64, .count = 4}};
    options.pool_connections = 4;
    options.pool_queue_slots = 4;
    options.pool_publishers = publishers;
    return options;
  }

  /// Advertises topics t0, t1, ... until one is refused or `limit` + 1 were
  /// tried: how many succeeded, and the refusal.
  static std::size_t advertise_until_refused(Node& node, std::size_t limit,
                                             std::vector<std::shared_ptr<Publisher<Tick>>>& publishers,
                                             std::optional<Error>& refusal) {
    for (std::size_t t = 0; t <= limit; ++t) {
      auto pub = node.advertise<Tick>("t" + std::to_string(t));
      if (!pub) {
        refusal = pub.error();
        return t;
      }
      publishers.push_back(std::move(*pub));
    }
    return limit + 1;
  }

  std::uint32_t domain = test::unique_domain();
};

TEST_F(PoolPublishers, ANodeWithPoolPublishers100AdvertisesAHundredTopicsAndRefusesThe101stNamingTheKey) {
  auto sut = Node::create("hub", small_node(100));
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  std::vector<std::shared_ptr<Publisher<Tick>>> publishers;
  std::optional<Error> refusal;

  const std::size_t advertised = advertise_until_refused(**sut, 100, publishers, refusal);

  EXPECT_EQ(advertised, 100U);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->code(), ErrorCode::kLimitReached);
  const std::string message(refusal->message());
  EXPECT_NE(message.find("already has 100 publishers, its pool.publishers: raise pool.publishers of node 'hub'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("NodeOptions::pool_publishers, at most 4096"), std::string::npos) << message;
  // Every publisher works: the last block is as usable as the first.
  for (auto& pub : publishers) {
    ASSERT_TRUE(pub->publish(Tick{.n = 1}).ok());
  }
}

TEST_F(PoolPublishers, ADroppedPublisherGivesItsBlockBack) {
  auto sut = Node::create("hub", small_node(2));
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  auto first = (*sut)->advertise<Tick>("a");
  auto second = (*sut)->advertise<Tick>("b");
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_FALSE((*sut)->advertise<Tick>("c").ok()) << "pool.publishers 2";

  (*first).reset();

  // The node's service thread frees the retired block (its next round).
  EXPECT_TRUE(test::eventually([&] { return (*sut)->advertise<Tick>("c").ok(); }, 30s))
      << "the block of a destroyed publisher is reused";
}

TEST_F(PoolPublishers, TheDefaultIs32) {
  auto sut = Node::create("hub", small_node(std::nullopt));
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  std::vector<std::shared_ptr<Publisher<Tick>>> publishers;
  std::optional<Error> refusal;

  EXPECT_EQ(advertise_until_refused(**sut, 32, publishers, refusal), 32U);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_NE(std::string(refusal->message()).find("its pool.publishers"), std::string::npos) << refusal->message();
}

TEST_F(PoolPublishers, AValueOutOfRangeIsRefusedAtStartNamingTheKeyAndTheRange) {
  for (const std::uint32_t publishers : {0U, 4097U}) {
    auto sut = Node::create("hub", small_node(publishers));

    ASSERT_FALSE(sut.ok()) << publishers;
    EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
    const std::string message(sut.error().message());
    EXPECT_NE(message.find("pool.publishers is " + std::to_string(publishers) + ", allowed 1..4096"), std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace axon
