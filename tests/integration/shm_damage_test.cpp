// Damage from outside and idle recovery, with real processes: a SIGKILLed
// subscriber's chunks come back while the publisher is idle; corrupt values in
// the registry or a pool are skipped, not dereferenced; a registry truncated
// under running nodes is survived, and a stale truncated one is replaced.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/peer_domain_test.hpp"
#include "tests/support/test_messages.hpp"
#include "transports/shm/pool_segment.hpp"
#include "transports/shm/registry_layout.hpp"
#include "transports/shm/shared_checks.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::TestMessage;

/// The start of this process's mapping of the memfd named `name`, or nullptr.
std::byte* mapping_of(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/memfd:" + name + " ") != std::string::npos) {
      return reinterpret_cast<std::byte*>(std::stoull(line.substr(0, line.find('-')), nullptr, 16));
    }
  }
  return nullptr;
}

/// The bytes of a registry with the default limits.
const std::size_t kRegistryBytes = shm::RegistryLayout::of({}).total_bytes;

/// A writable mapping of a domain's registry file (default limits), as a
/// stray process would have.
class RegistryFile {
 public:
  explicit RegistryFile(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CLOEXEC)) {
    if (fd_ >= 0) {
      void* base = ::mmap(nullptr, kRegistryBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
      segment_ = base == MAP_FAILED ? nullptr : static_cast<shm::RegistrySegment*>(base);
    }
  }
  ~RegistryFile() {
    if (segment_ != nullptr) {
      ::munmap(segment_, kRegistryBytes);
    }
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  RegistryFile(const RegistryFile&) = delete;
  RegistryFile& operator=(const RegistryFile&) = delete;
  [[nodiscard]] shm::RegistrySegment* get() const { return segment_; }
  /// Its publisher table (at the default layout's offset).
  [[nodiscard]] std::span<shm::EndpointEntry> publishers() const {
    const shm::RegistryLayout layout = shm::RegistryLayout::of({});
    return {reinterpret_cast<shm::EndpointEntry*>(reinterpret_cast<std::byte*>(segment_) + layout.publishers_offset),
            layout.limits.publishers};
  }

 private:
  int fd_ = -1;
  shm::RegistrySegment* segment_ = nullptr;
};

class ShmDamage : public test::PeerDomainTest {
 protected:
  NodeOptions options() const {
    NodeOptions o;
    o.domain_id = domain;
    o.liveness_period_ms = 10;
    return o;
  }
  [[nodiscard]] std::string registry_path() const { return "/dev/shm/axon_d" + std::to_string(domain) + "_registry"; }
  /// Writes `pool_block` into every active publisher entry of the registry
  /// (at least one), as a damaged or hostile process could.
  void set_pool_block_of_active_publishers(std::uint32_t pool_block) const {
    RegistryFile registry(registry_path());
    ASSERT_NE(registry.get(), nullptr);
    bool corrupted = false;
    for (auto& entry : registry.publishers()) {
      if (entry.state == shm::EntryState::kActive) {
        entry.pool_block = pool_block;
        corrupted = true;
      }
    }
    ASSERT_TRUE(corrupted);
  }
  void TearDown() override {
    // A damaged domain may keep its files; the tests' own processes are gone.
    for (const auto& name : test::domain_files(domain)) {
      ::unlink(("/dev/shm/" + name).c_str());
    }
  }
};

// Issue 13 item 7.
TEST_F(ShmDamage, AnIdlePublisherGetsTheChunksOfAKilledSubscriberBackWithinAFewLivenessPeriods) {
  auto node = Node::create("publisher", options());
  ASSERT_TRUE(node.ok()) << node.error().message();
  const std::uint32_t free_at_start = test::total_free(**node);
  auto pub = (*node)->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub.ok());
  auto victim = peer("hold", {"count=10"});
  ASSERT_TRUE(victim.wait_for_line("READY", 10s));
  ASSERT_TRUE(eventually([&] { return (*pub)->subscriber_count() == 1; }, 10s));
  for (std::uint64_t seq = 1; seq <= 20; ++seq) {
    TestMessage m;
    test::fill(m, 1, seq);
    ASSERT_TRUE((*pub)->publish(m).ok());
  }
  ASSERT_TRUE(victim.wait_for_line("HOLDING 10", 10s)) << victim.output();
  EXPECT_EQ(test::total_free(**node), free_at_start - 20);

  victim.kill(SIGKILL);
  ASSERT_EQ(victim.wait(10s), 128 + SIGKILL);

  // No publish from here on: the node's service thread reclaims.
  EXPECT_TRUE(eventually([&] { return test::total_free(**node) == free_at_start; }, 5s))
      << test::total_free(**node) << " of " << free_at_start << " chunks free";
  EXPECT_EQ((*pub)->subscriber_count(), 0U);
}

// Issue 13 item 8: a 4-byte write into the registry file.
TEST_F(ShmDamage, ACorruptPoolBlockInTheRegistryIsSkippedByAJoiningSubscriber) {
  auto publisher = peer("publish", {"count=1", "wait_subs=0", "linger_ms=20000"});
  ASSERT_TRUE(publisher.wait_for_line("PUBLISHED", 10s)) << publisher.output();
  ASSERT_NO_FATAL_FAILURE(set_pool_block_of_active_publishers(0x40000000));
  // The joiner runs in a child: on a crash the test fails instead of dying.
  auto joiner = test::ChildProcess::fork_and_run([&] {
    auto node = Node::create("joiner", options());
    if (!node) {
      std::printf("ERROR %s\n", std::string(node.error().message()).c_str());
      return 1;
    }
    auto sub = (*node)->subscribe<TestMessage>("objects");
    if (!sub) {
      return 2;
    }
    const std::uint32_t publishers = (*sub)->publisher_count();
    const auto reports = shm::corruption_reports(shm::Corruption::kPublisherEntry);
    std::printf("JOINED publishers=%u reports=%llu\n", publishers, static_cast<unsigned long long>(reports));
    return publishers == 0 && reports > 0 ? 0 : 3;
  });
  EXPECT_EQ(joiner.wait(20s), 0) << joiner.output();
}

// Issue 15: a pool_block below the largest pool.publishers (4096) but past
// the blocks the publisher's pool has (its stored count, 32 here) is checked
// against that count, not only against the maximum.
TEST_F(ShmDamage, APoolBlockPastThePeersOwnBlockCountIsSkippedByAJoiningSubscriber) {
  auto publisher = peer("publish", {"count=1", "wait_subs=0", "linger_ms=20000"});
  ASSERT_TRUE(publisher.wait_for_line("PUBLISHED", 10s)) << publisher.output();
  ASSERT_NO_FATAL_FAILURE(set_pool_block_of_active_publishers(shm::kDefaultPublishersPerNode + 7));
  auto joiner = test::ChildProcess::fork_and_run([&] {
    auto node = Node::create("joiner", options());
    if (!node) {
      std::printf("ERROR %s\n", std::string(node.error().message()).c_str());
      return 1;
    }
    auto sub = (*node)->subscribe<TestMessage>("objects");
    if (!sub) {
      return 2;
    }
    // The check needs the publisher's pool, which the service thread maps
    // after the first look: take() looks again once it is mapped.
    const bool reported = eventually(
        [&] {
          (void)(*sub)->take();
          return shm::corruption_reports(shm::Corruption::kPublisherEntry) > 0;
        },
        15s);
    const std::uint32_t publishers = (*sub)->publisher_count();
    std::printf("JOINED publishers=%u reported=%d\n", publishers, reported ? 1 : 0);
    return publishers == 0 && reported ? 0 : 3;
  });
  EXPECT_EQ(joiner.wait(30s), 0) << joiner.output();
}

// Issue 13 item 8: connection_of_bit in a pool, written by the process that
// created the connection, indexes the publisher's connections.
TEST_F(ShmDamage, ACorruptConnectionIndexInThePoolIsSkippedByThePublisher) {
  auto subscriber = peer("subscribe", {"expect=1000000", "timeout_ms=20000"});
  ASSERT_TRUE(subscriber.wait_for_line("READY", 10s)) << subscriber.output();
  auto publisher = test::ChildProcess::fork_and_run([&] {
    auto node = Node::create("pub", options());
    if (!node) {
      return 1;
    }
    auto pub = (*node)->advertise<TestMessage>("objects");
    if (!pub || !eventually([&] { return (*pub)->subscriber_count() == 1; }, 10s)) {
      return 2;
    }
    std::byte* base = mapping_of("axon_pool_d" + std::to_string(domain) + "_pub");
    if (base == nullptr) {
      return 3;
    }
    const auto* segment = reinterpret_cast<shm::PoolSegment*>(base);
    const auto layout =
        shm::PoolLayout::of(segment->publisher_block_count, segment->connection_count, segment->queue_slot_count);
    reinterpret_cast<shm::PublisherBlock*>(base + layout.blocks_offset)[0].connection_of_bit[0].store(0xFFFE);
    for (std::uint64_t seq = 1; seq <= 3; ++seq) {
      TestMessage m;
      test::fill(m, 1, seq);
      if (!(*pub)->publish(m)) {
        return 4;
      }
    }
    const auto reports = shm::corruption_reports(shm::Corruption::kConnectionIndex);
    std::printf("PUBLISHED subscribers=%u reports=%llu\n", (*pub)->subscriber_count(),
                static_cast<unsigned long long>(reports));
    return reports > 0 && (*pub)->subscriber_count() == 0 ? 0 : 5;
  });
  EXPECT_EQ(publisher.wait(20s), 0) << publisher.output();
}

// Issue 13 item 8: a connection's bit (a shift amount) in a peer's pool.
TEST_F(ShmDamage, AConnectionWithACorruptBitIsNotLinkedByItsSubscriber) {
  auto subscriber_node = Node::create("sub", options());
  auto publisher_node = Node::create("pub", options());
  ASSERT_TRUE(subscriber_node.ok() && publisher_node.ok());
  auto sub = (*subscriber_node)->subscribe<TestMessage>("objects");
  ASSERT_TRUE(sub.ok());
  // The publisher connects the existing subscriber; the subscriber links
  // the connection at its next take().
  auto pub = (*publisher_node)->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub.ok());
  std::byte* base = mapping_of("axon_pool_d" + std::to_string(domain) + "_pub");
  ASSERT_NE(base, nullptr);
  shm::Connection* conn = nullptr;
  const auto* segment = reinterpret_cast<shm::PoolSegment*>(base);
  const auto layout =
      shm::PoolLayout::of(segment->publisher_block_count, segment->connection_count, segment->queue_slot_count);
  auto* table = reinterpret_cast<shm::Connection*>(base + layout.connections_offset);
  for (std::uint32_t i = 0; i < layout.connections; ++i) {
    if (table[i].state.load() == shm::ConnectionState::kActive) {
      conn = &table[i];
    }
  }
  ASSERT_NE(conn, nullptr);
  conn->bit = 200;

  EXPECT_FALSE((*sub)->take().ok());
  EXPECT_EQ((*sub)->publisher_count(), 0U) << "a link with a garbage holder mask would release others' chunks";
  EXPECT_GT(shm::corruption_reports(shm::Corruption::kConnection), 0U);
}

// Issue 15: a ring's slot range (written by the connection's creator, maybe
// another process) is checked against this process's view of the slot area.
TEST_F(ShmDamage, ARingWhoseSlotRangeLeavesTheAreaIsNeverIndexedAndNeverBlocksItsPublisher) {
  auto subscriber_node = Node::create("sub", options());
  auto publisher_node = Node::create("pub", options());
  ASSERT_TRUE(subscriber_node.ok() && publisher_node.ok());
  auto sub = (*subscriber_node)->subscribe<TestMessage>("objects", {.depth = 2});
  ASSERT_TRUE(sub.ok());
  auto pub = (*publisher_node)->advertise<TestMessage>("objects");
  ASSERT_TRUE(pub.ok());
  EXPECT_FALSE((*sub)->take().ok());  // links the connection
  std::byte* base = mapping_of("axon_pool_d" + std::to_string(domain) + "_pub");
  ASSERT_NE(base, nullptr);
  const auto* segment = reinterpret_cast<shm::PoolSegment*>(base);
  const auto layout =
      shm::PoolLayout::of(segment->publisher_block_count, segment->connection_count, segment->queue_slot_count);
  auto* table = reinterpret_cast<shm::Connection*>(base + layout.connections_offset);
  shm::Connection* conn = nullptr;
  for (std::uint32_t i = 0; i < layout.connections; ++i) {
    if (table[i].state.load() == shm::ConnectionState::kActive) {
      conn = &table[i];
    }
  }
  ASSERT_NE(conn, nullptr);
  // What a stray write could leave: a range far past the area's 4096 slots
  // (an empty area given to reset() touches no slot).
  conn->ring.reset({}, 1U << 30, 8, 8);

  std::uint64_t dropped = 0;
  for (int i = 0; i < 10; ++i) {
    auto status = (*pub)->publish(TestMessage{});
    ASSERT_TRUE(status.ok()) << status.error().message();
    dropped += status->dropped;
  }

  EXPECT_EQ(dropped, 10U) << "nothing can be pushed to the corrupt ring";
  EXPECT_FALSE((*sub)->take().ok()) << "nor popped from it";
  EXPECT_FALSE((*sub)->has_data());
}

// Issue 13 item 9: a cleanup script truncates the registry under running nodes.
TEST_F(ShmDamage, ARegistryTruncatedUnderRunningNodesIsSurvivedAndTheirDataKeepsFlowing) {
  auto subscriber = peer("subscribe", {"expect=3000", "report_every=250", "overflow=block", "timeout_ms=40000"});
  ASSERT_TRUE(subscriber.wait_for_line("READY", 10s)) << subscriber.output();
  auto publisher = peer("publish", {"count=3000", "interval_us=1000", "wait_subs=1", "linger_ms=1000"});
  ASSERT_TRUE(subscriber.wait_for_line("PROGRESS 500", 20s)) << subscriber.output();

  ASSERT_EQ(::truncate(registry_path().c_str(), 0), 0);
  ASSERT_TRUE(subscriber.wait_for_line("PROGRESS 1250", 20s)) << subscriber.output();
  ASSERT_EQ(::truncate(registry_path().c_str(), kRegistryBytes / 2), 0);
  ASSERT_TRUE(subscriber.wait_for_line("PROGRESS 1500", 20s)) << subscriber.output();

  // A joiner is told what happened and what to do (forks are over: this
  // process may have threads from here on).
  auto joiner = Node::create("joiner", options());
  ASSERT_FALSE(joiner.ok());
  const std::string message(joiner.error().message());
  EXPECT_NE(message.find(registry_path()), std::string::npos) << message;
  EXPECT_NE(message.find("is damaged"), std::string::npos) << message;
  EXPECT_NE(message.find("stop every axon process of domain " + std::to_string(domain)), std::string::npos) << message;

  // Both survive, and every message arrives, in order and intact.
  const auto result = subscriber.wait_for_line("RESULT", 40s);
  ASSERT_TRUE(result) << subscriber.output();
  EXPECT_NE(result->find("received=3000 publishers=1 errors=0"), std::string::npos) << *result;
  EXPECT_EQ(subscriber.wait(10s), 0) << subscriber.output();
  EXPECT_TRUE(publisher.wait_for_line("PUBLISHED 3000", 10s)) << publisher.output();
  EXPECT_EQ(publisher.wait(10s), 0) << publisher.output();
}

// Issue 13 item 9, within one process: the node's own endpoints keep their
// data, new ones get an error that says what happened.
TEST_F(ShmDamage, ANodeWhoseRegistryWasTruncatedKeepsItsDataAndRefusesNewEndpoints) {
  auto node = Node::create("node", options());
  ASSERT_TRUE(node.ok()) << node.error().message();
  auto sub = (*node)->subscribe<TestMessage>("objects");
  auto pub = (*node)->advertise<TestMessage>("objects");
  ASSERT_TRUE(sub.ok() && pub.ok());
  ASSERT_EQ((*sub)->publisher_count(), 1U);  // linked before the damage

  ASSERT_EQ(::truncate(registry_path().c_str(), 0), 0);
  std::this_thread::sleep_for(100ms);  // liveness rounds on the damaged registry close nothing

  for (std::uint64_t seq = 1; seq <= 10; ++seq) {
    TestMessage m;
    test::fill(m, 1, seq);
    auto status = (*pub)->publish(m);
    ASSERT_TRUE(status.ok());
    EXPECT_EQ(status->delivered, 1U);
    auto s = (*sub)->take();
    ASSERT_TRUE(s.ok()) << "message " << seq << ": " << s.error().message();
    EXPECT_EQ(s->sequence, seq);
  }
  EXPECT_EQ((*sub)->publisher_count(), 1U);
  auto late = (*node)->advertise<TestMessage>("other");
  ASSERT_FALSE(late.ok());
  EXPECT_NE(std::string(late.error().message()).find("was damaged"), std::string::npos) << late.error().message();
  EXPECT_FALSE((*node)->subscribe<TestMessage>("other").ok());
}

// Issue 13 item 10: the owners died, then the registry was truncated.
TEST_F(ShmDamage, ATruncatedRegistryWhoseOwnersAreDeadIsReplacedByTheNextNode) {
  {
    auto first = peer("node", {});
    ASSERT_TRUE(first.wait_for_line("READY", 10s));
    first.kill(SIGKILL);
    ASSERT_EQ(first.wait(10s), 128 + SIGKILL);
  }
  ASSERT_EQ(::truncate(registry_path().c_str(), kRegistryBytes / 2), 0);

  auto node = Node::create("next", options());
  ASSERT_TRUE(node.ok()) << node.error().message();
  struct stat st {};
  ASSERT_EQ(::stat(registry_path().c_str(), &st), 0);
  EXPECT_EQ(static_cast<std::size_t>(st.st_size), kRegistryBytes);
  auto sub = (*node)->subscribe<TestMessage>("objects");
  auto pub = (*node)->advertise<TestMessage>("objects");
  ASSERT_TRUE(sub.ok() && pub.ok());
  TestMessage m;
  test::fill(m, 1, 1);
  ASSERT_EQ((*pub)->publish(m)->delivered, 1U);
  EXPECT_TRUE((*sub)->take().ok());
}

// Issue 13 item 10: the same with a live owner is an error that names the fix.
TEST_F(ShmDamage, ATruncatedRegistryWithALiveOwnerIsAnErrorThatSaysWhatToDo) {
  auto owner = peer("node", {});
  ASSERT_TRUE(owner.wait_for_line("READY", 10s));
  ASSERT_EQ(::truncate(registry_path().c_str(), kRegistryBytes / 2), 0);

  auto node = Node::create("next", options());
  ASSERT_FALSE(node.ok());
  const std::string message(node.error().message());
  EXPECT_NE(message.find(registry_path()), std::string::npos) << message;
  EXPECT_NE(message.find("it has " + std::to_string(kRegistryBytes / 2) +
                         " bytes, but its limits (nodes 256, topics 2048, publishers 4096, subscribers 4096, "
                         "publishers_per_topic 64) need " +
                         std::to_string(kRegistryBytes)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("stop every axon process of domain " + std::to_string(domain)), std::string::npos) << message;
  EXPECT_NE(message.find("Remove " + registry_path() + " by hand only when no process of the domain runs"),
            std::string::npos)
      << message;
  // The owner was not disturbed: it is still running.
  EXPECT_EQ(owner.wait(100ms), -1);
}

}  // namespace
}  // namespace axon
