// The live statistics segment between real processes: a child node publishes
// and takes, this process (which has no node, and holds the domain lock
// while it reads) sees the counters and the latency of every take; the file
// goes when the node closes, and after a SIGKILL when another node's liveness
// round reclaims the participant; corrupt files are errors, never crashes.
#include "transports/shm/endpoint_stats.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "src/base/clock.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/support/eventually.hpp"
#include "transports/shm/domain_lock.hpp"
#include "transports/shm/endpoint_stats_reader.hpp"
#include "transports/shm/stats_layout.hpp"
#include "transports/shm/take_clock.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using shm::StatsEndpointKind;

struct Tick {
  std::uint64_t n = 0;
};

/// Published 20 us apart: take() measures every one (kLatencyMeasureGapNs).
constexpr std::uint64_t kMessages = 200;
/// Then published back to back: take() measures a sample of them.
constexpr std::uint64_t kBurst = 1000;

NodeOptions options_for(std::uint32_t domain, const std::string& shm_dir = {}) {
  NodeOptions options;
  options.domain_id = domain;
  options.chunk_classes = {{.payload_bytes = 64, .count = 64}};
  options.liveness_period_ms = 10;
  options.shm_dir = shm_dir;
  return options;
}

/// A node that publishes kMessages ticks on "stats/ticks" and takes them
/// all itself, then waits to be killed (at most 60 s).
int publish_and_take_child(std::uint32_t domain) {
  auto node = Node::create("stats_child", options_for(domain));
  if (!node) {
    return 2;
  }
  auto pub = (*node)->advertise<Tick>("stats/ticks");
  auto sub = (*node)->subscribe<Tick>("stats/ticks", {.depth = 256});
  if (!pub || !sub) {
    return 3;
  }
  std::uint64_t taken = 0;
  for (std::uint64_t i = 1; i <= kMessages + kBurst; ++i) {
    if (!(*pub)->publish(Tick{.n = i})) {
      return 4;
    }
    while (auto sample = (*sub)->take()) {
      ++taken;
    }
    if (i <= kMessages) {
      std::this_thread::sleep_for(20us);
    }
  }
  std::printf("DONE %llu\n", static_cast<unsigned long long>(taken));
  std::fflush(stdout);
  std::this_thread::sleep_for(60s);
  return 0;
}

const shm::ParticipantStatsSnapshot* find_node(const shm::DomainStatsSnapshot& stats, const std::string& name) {
  const auto it = std::ranges::find_if(stats.participants, [&](const auto& p) { return p.node_name == name; });
  return it == stats.participants.end() ? nullptr : &*it;
}

const shm::EndpointStatsSnapshot* find_endpoint(const shm::ParticipantStatsSnapshot& p, StatsEndpointKind kind) {
  const auto it = std::ranges::find_if(p.endpoints, [&](const auto& e) { return e.kind == kind; });
  return it == p.endpoints.end() ? nullptr : &*it;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

TEST(EndpointStats, AReaderProcessSeesTheCountersAndLatencyOfAnotherProcessWithoutTheDomainLock) {
  const std::uint32_t domain = test::unique_domain();
  // Forked before this process starts threads.
  auto child = test::ChildProcess::fork_and_run([domain] { return publish_and_take_child(domain); });
  const auto done = child.wait_for_line("DONE", 20s);
  const std::int64_t done_at_ns = monotonic_now_ns();  // the child published and took everything before
  ASSERT_TRUE(done) << child.output();
  ASSERT_EQ(*done, "DONE " + std::to_string(kMessages + kBurst));

  // The reader never takes the domain lock: hold it all along.
  shm::DomainLock lock("/dev/shm/axon_d" + std::to_string(domain) + ".lock", 0600);
  std::optional<Result<shm::DomainLockGuard>> held(lock.lock());
  ASSERT_TRUE(*held) << held->error().message();

  shm::DomainStatsSnapshot stats;
  // The refreshed counters come from the child's service thread, each endpoint's in its turn: wait for a refresh
  // of both after the child said DONE. Waiting for the subscriber's alone once read a publisher entry that counted
  // no subscriber (TSan run; its refresh was not checked to be after DONE then).
  ASSERT_TRUE(test::eventually(
      [&] {
        auto read = shm::read_domain_stats(domain, "/dev/shm");
        if (!read) {
          ADD_FAILURE() << read.error().message();
          return true;
        }
        stats = std::move(*read);
        const auto* p = find_node(stats, "stats_child");
        const auto* sub = p == nullptr ? nullptr : find_endpoint(*p, StatsEndpointKind::kSubscriber);
        const auto* pub = p == nullptr ? nullptr : find_endpoint(*p, StatsEndpointKind::kPublisher);
        return sub != nullptr && pub != nullptr && sub->refreshed_at_ns > done_at_ns &&
               pub->refreshed_at_ns > done_at_ns && sub->subscriber.queue.queued == kMessages + kBurst;
      },
      5s));
  EXPECT_TRUE(stats.problems.empty()) << stats.problems.front();
  const auto* p = find_node(stats, "stats_child");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->pid, child.pid());
  EXPECT_TRUE(p->alive);
  EXPECT_EQ(p->domain_id, domain);
  EXPECT_TRUE(p->skipped.empty());
  ASSERT_EQ(p->endpoints.size(), 2U);

  const auto* pub = find_endpoint(*p, StatsEndpointKind::kPublisher);
  ASSERT_NE(pub, nullptr);
  EXPECT_EQ(pub->topic, "stats/ticks");
  EXPECT_EQ(pub->publisher.published, kMessages + kBurst);
  EXPECT_EQ(pub->published_bytes, (kMessages + kBurst) * sizeof(Tick));
  EXPECT_EQ(pub->publisher.totals.queued, kMessages + kBurst);
  EXPECT_EQ(pub->publisher.totals.dropped_full + pub->publisher.totals.dropped_oldest, 0U);
  EXPECT_EQ(pub->subscribers, 1U);
  EXPECT_EQ(pub->endpoint_id, (std::uint64_t{pub->registry_slot} << 32) | pub->registry_generation);

  const auto* sub = find_endpoint(*p, StatsEndpointKind::kSubscriber);
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->topic, "stats/ticks");
  EXPECT_EQ(sub->topic_slot, pub->topic_slot);
  EXPECT_EQ(sub->depth, 256U);
  EXPECT_EQ(sub->subscriber.taken, kMessages + kBurst);
  EXPECT_EQ(sub->subscriber.rejected, 0U);
  EXPECT_EQ(sub->fill, 0U);
  EXPECT_EQ(sub->publishers, 1U);
  EXPECT_GE(sub->subscriber.queue.high_water, 1U);
  // Every take of the spaced messages is in the histogram, and some of the burst.
  EXPECT_GE(sub->latency.count, kMessages);
  EXPECT_LE(sub->latency.count, kMessages + kBurst);
  EXPECT_GT(sub->latency.max_ns, 0U);
  EXPECT_LE(sub->latency.p50_ns, sub->latency.p99_ns);
  EXPECT_LE(sub->latency.p99_ns, sub->latency.max_ns);
  EXPECT_LT(sub->latency.max_ns, 1'000'000'000U) << "publish and take a second apart in one loop";

  held.reset();  // the lock, for the node below
  child.kill(SIGKILL);
  EXPECT_EQ(child.wait(5s), 128 + SIGKILL);
  // A node joining a domain whose only participant died removes its files
  // (the registry afresh), and leaving removes its own.
  EXPECT_TRUE(Node::create("cleaner", options_for(domain)));
  EXPECT_TRUE(test::domain_files(domain).empty());
}

TEST(EndpointStats, ASigkilledNodesSegmentIsRemovedByTheNextLivenessRound) {
  const std::uint32_t domain = test::unique_domain();
  auto child = test::ChildProcess::fork_and_run([domain] { return publish_and_take_child(domain); });
  ASSERT_TRUE(child.wait_for_line("DONE", 20s)) << child.output();
  auto before = shm::read_domain_stats(domain, "/dev/shm");
  ASSERT_TRUE(before);
  ASSERT_EQ(before->participants.size(), 1U);
  const std::string path = before->participants[0].path;

  child.kill(SIGKILL);
  ASSERT_EQ(child.wait(5s), 128 + SIGKILL);
  // Nobody reclaimed it yet: the reader reports it, and not as a participant.
  auto dead = shm::read_domain_stats(domain, "/dev/shm");
  ASSERT_TRUE(dead);
  EXPECT_TRUE(dead->participants.empty());
  ASSERT_EQ(dead->problems.size(), 1U);
  EXPECT_NE(dead->problems[0].find("is gone"), std::string::npos) << dead->problems[0];

  {
    auto survivor = Node::create("survivor", options_for(domain));
    ASSERT_TRUE(survivor) << survivor.error().message();
    // The survivor removed the dead child's files (and, being alone, made
    // the domain afresh: it may be participant 0 generation 1 again, the
    // same file name, now its own).
    shm::DomainStatsSnapshot after;
    EXPECT_TRUE(test::eventually(
        [&] {
          auto read = shm::read_domain_stats(domain, "/dev/shm");
          after = read ? std::move(*read) : shm::DomainStatsSnapshot{};
          return read && after.problems.empty() && after.participants.size() == 1;
        },
        5s))
        << (after.problems.empty() ? std::string("no problem") : after.problems.front());
    ASSERT_EQ(after.participants.size(), 1U);
    EXPECT_EQ(after.participants[0].node_name, "survivor");
    EXPECT_EQ(after.participants[0].pid, ::getpid());
  }
  EXPECT_TRUE(test::domain_files(domain).empty());
}

TEST(EndpointStats, ANodeRemovesItsSegmentWhenItCloses) {
  const std::uint32_t domain = test::unique_domain();
  std::string path;
  {
    auto node = Node::create("closing", options_for(domain));
    ASSERT_TRUE(node) << node.error().message();
    auto stats = shm::read_domain_stats(domain, "/dev/shm");
    ASSERT_TRUE(stats);
    ASSERT_EQ(stats->participants.size(), 1U);
    path = stats->participants[0].path;
    EXPECT_TRUE(file_exists(path));
    EXPECT_TRUE(stats->participants[0].endpoints.empty());
  }
  EXPECT_FALSE(file_exists(path));
  EXPECT_TRUE(test::domain_files(domain).empty());
}

TEST(EndpointStats, AReaderKilledWhileReadingLeavesNothingBehind) {
  const std::uint32_t domain = test::unique_domain();
  auto reader = test::ChildProcess::fork_and_run([domain] {
    std::printf("READING\n");
    std::fflush(stdout);
    for (;;) {
      (void)shm::read_domain_stats(domain, "/dev/shm");
    }
    return 0;
  });
  auto node = Node::create("read_while_killed", options_for(domain));
  ASSERT_TRUE(node) << node.error().message();
  auto pub = (*node)->advertise<Tick>("stats/killed");
  ASSERT_TRUE(pub);
  const std::vector<std::string> files = test::domain_files(domain);
  ASSERT_TRUE(reader.wait_for_line("READING", 10s));
  std::this_thread::sleep_for(50ms);  // some reads with the node's segment there
  reader.kill(SIGKILL);
  EXPECT_EQ(reader.wait(5s), 128 + SIGKILL);
  EXPECT_EQ(test::domain_files(domain), files);
}

/// A node's statistics segment copied into a file of the test's own, to be
/// corrupted there.
class CorruptStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto node = Node::create("corrupt_source", options_for(domain_, dir_.path()));
    ASSERT_TRUE(node) << node.error().message();
    node_ = std::move(*node);
    auto pub = node_->advertise<Tick>("stats/corrupt");
    auto sub = node_->subscribe<Tick>("stats/corrupt");
    ASSERT_TRUE(pub && sub);
    pub_ = std::move(*pub);
    sub_ = std::move(*sub);
    auto stats = shm::read_domain_stats(domain_, dir_.path());
    ASSERT_TRUE(stats) << stats.error().message();
    ASSERT_EQ(stats->participants.size(), 1U);
    // Another domain's name: read_domain_stats() of ours does not list it.
    copy_ = dir_.path() + "/copy.stats";
    std::filesystem::copy_file(stats->participants[0].path, copy_);
    ASSERT_TRUE(shm::read_participant_stats(copy_, monotonic_now_ns())) << "the intact copy reads";
  }

  template <class T>
  void write_at(std::size_t offset, const T& value) const {
    const int fd = ::open(copy_.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, &value, sizeof(value), static_cast<off_t>(offset)), static_cast<ssize_t>(sizeof(value)));
    ::close(fd);
  }

  [[nodiscard]] Result<shm::ParticipantStatsSnapshot> read() const {
    return shm::read_participant_stats(copy_, monotonic_now_ns());
  }

  /// Where subscriber entry 0 is in the copy.
  [[nodiscard]] std::size_t subscriber_offset() const {
    return shm::StatsLayout::of(kDefaultPoolPublishers, kDefaultSubscribers).subscribers_offset;
  }

  static constexpr std::uint32_t kDefaultPoolPublishers = 32;
  static constexpr std::uint32_t kDefaultSubscribers = 4096;
  std::uint32_t domain_ = test::unique_domain();
  test::TempDir dir_{"axon-stats"};
  std::shared_ptr<Node> node_;
  std::shared_ptr<Publisher<Tick>> pub_;
  std::shared_ptr<Subscriber<Tick>> sub_;
  std::string copy_;
};

TEST_F(CorruptStatsTest, AWrongMagicIsAnError) {
  write_at(offsetof(shm::StatsSegment, header), std::uint64_t{0x1234});
  auto sut = read();
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error().code(), ErrorCode::kIncompatible);
  EXPECT_NE(sut.error().message().find("not an axon segment"), std::string_view::npos) << sut.error().message();
}

TEST_F(CorruptStatsTest, ACapacityOutOfRangeIsAnError) {
  write_at(offsetof(shm::StatsSegment, subscriber_capacity), std::uint32_t{0xFFFFFFFF});
  auto sut = read();
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error().code(), ErrorCode::kIncompatible);
}

TEST_F(CorruptStatsTest, ACapacityThatDoesNotMatchTheFilesSizeIsAnError) {
  write_at(offsetof(shm::StatsSegment, publisher_capacity), std::uint32_t{31});
  auto sut = read();
  ASSERT_FALSE(sut);
  EXPECT_NE(sut.error().message().find("need"), std::string_view::npos) << sut.error().message();
}

TEST_F(CorruptStatsTest, MoreSubscriberEntriesInUseThanTheTableHasIsAnError) {
  write_at(offsetof(shm::StatsSegment, subscribers_reserved), std::uint32_t{kDefaultSubscribers + 1});
  EXPECT_FALSE(read());
}

TEST_F(CorruptStatsTest, ATruncatedFileIsAnError) {
  ASSERT_EQ(::truncate(copy_.c_str(), 100), 0);
  EXPECT_FALSE(read());
  ASSERT_EQ(::truncate(copy_.c_str(), 64 * 1024), 0);
  EXPECT_FALSE(read());
}

TEST_F(CorruptStatsTest, ACorruptEntryIsSkippedWithWhyAndTheOthersAreRead) {
  const std::size_t entry = subscriber_offset();
  write_at(entry + offsetof(shm::SubscriberStats, identity) + offsetof(shm::StatsIdentity, depth),
           std::uint32_t{100'000});
  auto sut = read();
  ASSERT_TRUE(sut) << sut.error().message();
  ASSERT_EQ(sut->skipped.size(), 1U);
  EXPECT_NE(sut->skipped[0].find("subscriber entry 0 is corrupt"), std::string::npos) << sut->skipped[0];
  ASSERT_EQ(sut->endpoints.size(), 1U);
  EXPECT_EQ(sut->endpoints[0].kind, StatsEndpointKind::kPublisher);
}

TEST_F(CorruptStatsTest, AnUnterminatedTopicNameIsSkipped) {
  const std::size_t entry = subscriber_offset();
  const std::size_t topic = entry + offsetof(shm::SubscriberStats, identity) + offsetof(shm::StatsIdentity, topic);
  for (std::size_t i = 0; i < shm::kMaxTopicNameBytes; ++i) {
    write_at(topic + i, 'x');
  }
  auto sut = read();
  ASSERT_TRUE(sut);
  EXPECT_EQ(sut->skipped.size(), 1U);
}

TEST_F(CorruptStatsTest, TheDomainReaderListsACorruptFileAsAProblemAndReadsTheRest) {
  const std::string corrupt = dir_.path() + "/axon_d" + std::to_string(domain_) + "_p99_g1.stats";
  std::filesystem::copy_file(copy_, corrupt);
  const int fd = ::open(corrupt.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::uint64_t garbage = 0;
  ASSERT_EQ(::pwrite(fd, &garbage, sizeof(garbage), 0), static_cast<ssize_t>(sizeof(garbage)));
  ::close(fd);
  auto sut = shm::read_domain_stats(domain_, dir_.path());
  ASSERT_TRUE(sut);
  ASSERT_EQ(sut->participants.size(), 1U);
  EXPECT_EQ(sut->participants[0].node_name, "corrupt_source");
  ASSERT_EQ(sut->problems.size(), 1U);
  EXPECT_NE(sut->problems[0].find(corrupt), std::string::npos) << sut->problems[0];
  ::unlink(corrupt.c_str());
}

TEST(EndpointStats, TheNetworkCountersAreReadBackByNameAsWrittenAndAbsentUntilWritten) {
  const test::TempDir dir("axon-stats-net");
  const std::string path = shm::stats_path(dir.path(), 7, 1, 1);
  auto stats = shm::EndpointStats::create(path, {.domain_id = 7, .node_name = "net"}, 2, 4, 0600, "");
  ASSERT_TRUE(stats) << stats.error().message();
  auto before = shm::read_participant_stats(path, monotonic_now_ns());
  ASSERT_TRUE(before) << before.error().message();
  EXPECT_EQ(before->network_at_ns, 0) << "a node without a network transport shows none";

  // Each counter a value of its own: a field stored in another's slot, or left out, reads back wrong.
  NetworkCounters written;
  for (std::size_t i = 0; i < kNetworkCounterFields.size(); ++i) {
    written.*kNetworkCounterFields[i].member = 1000 + (i * 7);
  }
  (*stats)->write_network(written, 12345);
  auto after = shm::read_participant_stats(path, monotonic_now_ns());
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_EQ(after->network_at_ns, 12345);
  for (const NetworkCounterField& field : kNetworkCounterFields) {
    EXPECT_EQ(after->network.*field.member, written.*field.member) << field.name;
  }
}

TEST(NetworkCounterFields, NameEveryCounterOnceWithItsOwnName) {
  std::vector<std::string_view> names;
  NetworkCounters marked;
  for (const NetworkCounterField& field : kNetworkCounterFields) {
    names.push_back(field.name);
    EXPECT_EQ(marked.*field.member, 0U) << field.name << " is listed twice";
    marked.*field.member = 1;
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "a name is used twice";
}

TEST(EndpointStats, TheDomainReaderFailsForADirectoryThatCannotBeListed) {
  auto sut = shm::read_domain_stats(1, "/nonexistent/axon-stats");
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error().code(), ErrorCode::kSystem);
}

TEST(TakeClock, FollowsTheMonotonicClockWithinAMicrosecond) {
  shm::TakeClock sut;
  const std::int64_t end = monotonic_now_ns() + (3 * shm::TakeClock::kCalibrateNs);
  std::int64_t worst = 0;
  int calls = 0;
  for (std::int64_t before = monotonic_now_ns(); before < end; before = monotonic_now_ns()) {
    const std::int64_t stamp = sut.now_ns();
    const std::int64_t after = monotonic_now_ns();
    // Past calibration the stamp is extrapolated: it must lie between the two reads.
    worst = std::max({worst, before - stamp, stamp - after});
    if (++calls % 1000 == 0) {
      std::this_thread::yield();  // never starve the other core
    }
  }
  EXPECT_LT(worst, 1'000) << "ns outside [before, after] at worst, " << calls << " calls, counter "
                          << (shm::TakeClock::counter_usable() ? "used" : "not usable");
}

}  // namespace
}  // namespace axon
