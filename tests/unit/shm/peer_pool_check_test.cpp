// A peer's pool segment is written by another process: the publisher block
// count its owner stored (pool.publishers) is checked before it places any
// table, and every block index read from shared memory is checked against
// that count (issue 15).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <memory>

#include "tests/support/child_process.hpp"
#include "transports/shm/mapped_pool.hpp"
#include "transports/shm/shared_checks.hpp"

namespace axon::shm {
namespace {

class PeerPoolCheck : public ::testing::Test {
 protected:
  PeerPoolCheck() {
    config.domain_id = test::unique_domain();
    config.node_name = "owner";
    config.chunk_classes = {{.payload_bytes = 64, .count = 4}};
    config.publisher_blocks = 4;
    config.connections = 4;
    config.queue_slots = 4;
  }

  /// Maps `owner`'s pool as a peer would (from a duplicate of its memfd).
  Result<std::shared_ptr<MappedPool>> map_as_peer(const MappedPool& owner) const {
    return map_peer_pool(config, kOwner, ::dup(owner.mapping.fd()), "the test's descriptor");
  }

  static constexpr SlotRef kOwner{3, 7};
  ShmConfig config;
};

TEST_F(PeerPoolCheck, AnIntactPoolIsMappedWithItsOwnersBlockCount) {
  auto own = create_own_pool(config, kOwner, 1);
  ASSERT_TRUE(own.ok()) << own.error().message();

  auto sut = map_as_peer(**own);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ((*sut)->block_count(), 4U);
  EXPECT_EQ((*sut)->layout.connections_offset, (*own)->layout.connections_offset);
}

TEST_F(PeerPoolCheck, APoolWithACorruptBlockCountIsRefused) {
  // 0, one past the largest pool.publishers, and a count whose blocks would
  // run past the mapping (4096 blocks are 2.25 MiB; this pool is far smaller).
  for (const std::uint32_t corrupt : {0U, kMaxPublishersPerNode + 1, kMaxPublishersPerNode}) {
    auto own = create_own_pool(config, kOwner, 1);
    ASSERT_TRUE(own.ok()) << own.error().message();
    (*own)->segment->publisher_block_count = corrupt;

    auto sut = map_as_peer(**own);

    ASSERT_FALSE(sut.ok()) << corrupt << " blocks";
    EXPECT_EQ(sut.error().code(), ErrorCode::kIncompatible);
    EXPECT_NE(
        std::string(sut.error().message()).find("corrupt table size (" + std::to_string(corrupt) + " publisher blocks"),
        std::string::npos)
        << sut.error().message();
  }
}

TEST_F(PeerPoolCheck, ABlockIndexIsCheckedAgainstThePoolsOwnCountNotOnlyTheLargest) {
  EXPECT_TRUE(invalid_block_index(3, 4).empty());
  EXPECT_FALSE(invalid_block_index(4, 4).empty()) << "past this pool's blocks, below the largest pool's";
  EXPECT_FALSE(invalid_block_index(kMaxPublishersPerNode, kMaxPublishersPerNode + 1).empty());

  Connection conn;
  conn.block = 5;
  EXPECT_FALSE(invalid_connection(conn, RegistryLimits{}, 4).empty());
  EXPECT_TRUE(invalid_connection(conn, RegistryLimits{}, 6).empty());
}

}  // namespace
}  // namespace axon::shm
