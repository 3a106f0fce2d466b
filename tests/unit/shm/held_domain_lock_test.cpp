// Another process holding the domain lock (stopped, or slow) does not hold
// up this node: check_liveness_now() and a publisher's counters() only try
// the lock (counters() keeps its last count of unconnected subscribers), and
// loan, publish and take never take it. What needs the lock waits for it;
// the service thread retries it without spinning, even with a dead peer to
// reclaim.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "axon/domain_view.hpp"
#include "axon/graph.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::shm {
namespace {

using Clock = std::chrono::steady_clock;

/// Another process (axon_test_peer hold-lock, spawned: this process has
/// threads, so no code runs in a forked copy of it) that holds the domain
/// lock at `path`, as DomainLock takes it, until release().
class LockHolder {
 public:
  explicit LockHolder(const std::string& path)
      : child_(test::ChildProcess::spawn({test::peer_path(), "hold-lock", "path=" + path})) {
    holding_ = child_.wait_for_line("LOCKED", std::chrono::seconds(10)).has_value();
  }

  [[nodiscard]] bool holding() const noexcept { return holding_; }
  /// The child dies holding the lock: the kernel drops it.
  void release() {
    child_.kill(SIGKILL);
    child_.wait(std::chrono::seconds(10));
    holding_ = false;
  }

 private:
  test::ChildProcess child_;
  bool holding_ = false;
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// A transport with a publisher and a subscriber of topic "ticks".
class HeldDomainLock : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = ShmTransport::create(
        ShmConfig{.domain_id = 3, .node_name = "node", .shm_dir = dir.path(), .chunk_classes = {{256, 64}}});
    ASSERT_TRUE(created) << created.error().message();
    transport = std::move(*created);
    auto advertised = transport->advertise(topic, PublisherQos{});
    auto subscribed = transport->subscribe(topic, SubscriberQos{.depth = 16});
    ASSERT_TRUE(advertised && subscribed);
    publisher = std::move(*advertised);
    subscriber = std::move(*subscribed);
  }
  [[nodiscard]] std::string lock_path() const { return dir.path() + "/axon_d3.lock"; }

  test::TempDir dir{"axon-held-lock"};
  const TopicDescriptor topic{
      .name = "ticks", .type = TypeIdentity{.name = "u64", .hash = 1, .size = 8, .align = 8}, .max_payload_bytes = 8};
  std::shared_ptr<ShmTransport> transport;
  std::shared_ptr<PublisherPort> publisher;
  std::shared_ptr<SubscriberPort> subscriber;
};

TEST_F(HeldDomainLock, NeitherLivenessNorCountersNorTheDataPathWaitForIt) {
  const std::uint32_t before = publisher->counters().subscribers_unconnected;  // lock free: counted

  LockHolder holder(lock_path());
  ASSERT_TRUE(holder.holding());
  const auto start = Clock::now();
  transport->check_liveness_now();
  EXPECT_EQ(publisher->counters().subscribers_unconnected, before);  // the last count
  auto loaned = publisher->loan(8);
  ASSERT_TRUE(loaned);
  const std::uint64_t value = 42;
  std::memcpy(loaned->payload, &value, sizeof(value));
  EXPECT_TRUE(publisher->publish(*loaned, sizeof(value), 0));
  auto taken = subscriber->take();
  ASSERT_TRUE(taken);
  std::uint64_t received = 0;
  std::memcpy(&received, taken->payload, sizeof(received));
  EXPECT_EQ(received, value);
  subscriber->release(*taken);
  EXPECT_LT(ms_since(start), 500.0);  // none of it waited for the holder

  // What needs the lock waits for it, and goes on once the holder lets go.
  auto late = std::async(std::launch::async, [&] { return transport->subscribe(topic, SubscriberQos{.depth = 4}); });
  EXPECT_EQ(late.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  holder.release();
  auto joined = late.get();
  EXPECT_TRUE(joined);
}

// Graph events: a snapshot only tries the lock, so a watcher's wait() ends at
// its timeout; once the holder lets go, the owed snapshot is taken.
TEST_F(HeldDomainLock, GraphSnapshotsDoNotWaitForItAndAreTakenOnceItIsFree) {
  GraphSource* graph = transport->graph();
  ASSERT_NE(graph, nullptr);
  GraphWatcher sut(transport, *graph, "ticks");

  LockHolder holder(lock_path());
  ASSERT_TRUE(holder.holding());
  const auto start = Clock::now();
  std::vector<GraphEndpoint> endpoints;
  auto taken = graph->try_snapshot("ticks", endpoints);
  ASSERT_TRUE(taken);
  EXPECT_FALSE(*taken);  // not now: an outcome
  auto waited = sut.wait(std::chrono::milliseconds(50));
  ASSERT_TRUE(waited);
  EXPECT_TRUE(waited->empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_TRUE(sut.changed());  // the snapshot is still owed, retried 1 ms after the last try
  EXPECT_LT(ms_since(start), 500.0);

  holder.release();
  auto events = sut.wait(std::chrono::seconds(5));
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2U);
  EXPECT_EQ(count_endpoints(sut.endpoints(), GraphEndpointKind::kPublisher), 1U);
  EXPECT_EQ(count_endpoints(sut.endpoints(), GraphEndpointKind::kSubscriber), 1U);
  EXPECT_EQ((*events)[0].endpoint.node_name, "node");
  EXPECT_EQ((*events)[0].endpoint.pid, ::getpid());
}

/// CPU seconds this process has used (every thread, user and system).
double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// A peer process publishing "ticks" every 10 ms, forked before this
/// process has a transport (and its threads).
class HeldDomainLockAndADeadPeer : public ::testing::Test {
 protected:
  void SetUp() override {
    peer.emplace(test::ChildProcess::fork_and_run([this] {
      auto created = ShmTransport::create(
          ShmConfig{.domain_id = 3, .node_name = "peer", .shm_dir = dir.path(), .chunk_classes = {{256, 64}}});
      if (!created) {
        return 1;
      }
      auto advertised = (*created)->advertise(topic, PublisherQos{});
      if (!advertised) {
        return 2;
      }
      std::puts("READY");
      std::fflush(stdout);
      for (std::uint64_t n = 0; n < 10'000; ++n) {
        if (auto loaned = (*advertised)->loan(8)) {
          std::memcpy(loaned->payload, &n, sizeof(n));
          (void)(*advertised)->publish(*loaned, sizeof(n), 0);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return 0;
    }));
    ASSERT_TRUE(peer->wait_for_line("READY", std::chrono::seconds(20))) << peer->output();
    auto created = ShmTransport::create(
        ShmConfig{.domain_id = 3, .node_name = "node", .shm_dir = dir.path(), .chunk_classes = {{256, 64}}});
    ASSERT_TRUE(created) << created.error().message();
    transport = std::move(*created);
    auto subscribed = transport->subscribe(topic, SubscriberQos{.depth = 16});
    ASSERT_TRUE(subscribed);
    subscriber = std::move(*subscribed);
  }

  /// True once a message of the peer arrived (we are connected, so this
  /// node's service thread watches the peer's process).
  bool connected_to_peer() {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      if (auto taken = subscriber->take()) {
        subscriber->release(*taken);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  std::size_t publishers_in_graph() {
    std::vector<GraphEndpoint> endpoints;
    auto taken = transport->graph()->try_snapshot("ticks", endpoints);
    return taken && *taken ? count_endpoints(endpoints, GraphEndpointKind::kPublisher) : SIZE_MAX;
  }

  test::TempDir dir{"axon-held-lock-dead-peer"};
  const TopicDescriptor topic{
      .name = "ticks", .type = TypeIdentity{.name = "u64", .hash = 1, .size = 8, .align = 8}, .max_payload_bytes = 8};
  std::optional<test::ChildProcess> peer;
  std::shared_ptr<ShmTransport> transport;
  std::shared_ptr<SubscriberPort> subscriber;
};

// The service thread wants the lock to reclaim the dead peer, and the peer's
// pidfd says so at every wake: it used to retry at once, a core spent for as
// long as the lock was held. It backs off instead, and reclaims once it can.
TEST_F(HeldDomainLockAndADeadPeer, TheServiceThreadWaitsForTheLockWithoutSpinningAndThenReclaims) {
  ASSERT_TRUE(connected_to_peer());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a round after the connection: the peer is watched
  LockHolder holder(dir.path() + "/axon_d3.lock");
  ASSERT_TRUE(holder.holding());
  peer->kill(SIGKILL);
  ASSERT_EQ(peer->wait(std::chrono::seconds(10)), 128 + SIGKILL);

  const double cpu_before = process_cpu_seconds();
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu_ms = (process_cpu_seconds() - cpu_before) * 1000.0;
  const double wall_ms = ms_since(start);

  EXPECT_LT(cpu_ms, wall_ms * 0.1) << "the service thread spun while the lock was held";
  holder.release();
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (publishers_in_graph() != 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(publishers_in_graph(), 0U) << "the dead peer was not reclaimed once the lock was free";
}

// The axon command's reads (read_domain_view) wait for the lock at most
// about 100 ms, then read without it and say so; clean_domain gives up on it
// with an error that says why, and refuses a domain whose node lives.
TEST_F(HeldDomainLock, ADomainViewDoesNotWaitForItAndSaysItWasReadWithoutIt) {
  const DomainAddress address{.domain_id = 3, .shm_dir = dir.path()};
  {
    LockHolder holder(lock_path());
    ASSERT_TRUE(holder.holding());
    const auto start = Clock::now();
    auto view = read_domain_view(address);
    const double waited_ms = ms_since(start);
    ASSERT_TRUE(view) << view.error().message();
    EXPECT_TRUE(view->exists);
    EXPECT_FALSE(view->consistent);
    EXPECT_LT(waited_ms, 5000.0) << "gave up on the lock after its patience";
    ASSERT_EQ(view->topics.size(), 1U);
    EXPECT_EQ(view->topics[0].name, "ticks");
    EXPECT_EQ(view->publishers.size(), 1U);
    EXPECT_EQ(view->subscribers.size(), 1U);

    auto cleaned = clean_domain(address);
    ASSERT_FALSE(cleaned);
    EXPECT_EQ(cleaned.error().code(), ErrorCode::kInUse);
    EXPECT_NE(cleaned.error().message().find("is stopped"), std::string::npos) << cleaned.error().message();
    holder.release();
  }
  auto view = read_domain_view(address);
  ASSERT_TRUE(view) << view.error().message();
  EXPECT_TRUE(view->consistent);
  ASSERT_EQ(view->participants.size(), 1U);
  EXPECT_EQ(view->participants[0].name, "node");
  EXPECT_EQ(view->participants[0].pid, ::getpid());
  EXPECT_TRUE(view->participants[0].alive);
  ASSERT_EQ(view->subscribers.size(), 1U);
  EXPECT_EQ(view->subscribers[0].depth, 16U);

  auto cleaned = clean_domain(address);
  ASSERT_FALSE(cleaned);
  EXPECT_EQ(cleaned.error().code(), ErrorCode::kInUse);
  EXPECT_NE(cleaned.error().message().find("node 'node' (pid " + std::to_string(::getpid()) + ")"), std::string::npos)
      << cleaned.error().message();
}

}  // namespace
}  // namespace axon::shm
