// Dead-peer detection with real processes: a peer killed with SIGKILL is
// let go of within the liveness period (its pidfd wakes the node's service
// thread), a stopped one (SIGSTOP) is never taken for dead, and an idle node
// makes no periodic wake-ups for liveness.
#include <dirent.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::eventually;
using test::TestMessage;

/// Voluntary context switches of every thread of this process: one per
/// wake-up of a thread that slept.
/// The threads of this process now (their /proc/self/task names).
std::set<std::string> threads_now() {
  std::set<std::string> ids;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) {
    return ids;
  }
  while (const dirent* task = ::readdir(tasks)) {  // NOLINT(concurrency-mt-unsafe): one thread reads `tasks`
    if (task->d_name[0] != '.') {
      ids.insert(task->d_name);
    }
  }
  ::closedir(tasks);
  return ids;
}

/// Voluntary context switches of this process's threads but those in
/// `skip` (the test's own thread, and a sanitizer's background thread that
/// wakes on its own schedule).
std::uint64_t voluntary_switches(const std::set<std::string>& skip) {
  std::uint64_t sum = 0;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) {
    return 0;
  }
  while (const dirent* task = ::readdir(tasks)) {  // NOLINT(concurrency-mt-unsafe): one thread reads `tasks`
    if (task->d_name[0] == '.' || skip.contains(task->d_name)) {
      continue;
    }
    std::ifstream status(std::string("/proc/self/task/") + task->d_name + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("voluntary_ctxt_switches:")) {
        sum += std::stoull(line.substr(line.find(':') + 1));
      }
    }
  }
  ::closedir(tasks);
  return sum;
}

class Liveness : public ::testing::Test {
 protected:
  ChildProcess subscriber_peer() {
    return ChildProcess::spawn({test::peer_path(), "subscribe", "domain=" + std::to_string(domain), "topic=beats",
                                "expect=1000000", "sleep_us=2000", "timeout_ms=20000"});
  }
  std::shared_ptr<Node> make_node(std::uint32_t liveness_period_ms) {
    NodeOptions options;
    options.domain_id = domain;
    options.liveness_period_ms = liveness_period_ms;
    auto node = Node::create("liveness", options);
    EXPECT_TRUE(node.ok()) << node.error().message();
    return *node;
  }
  void TearDown() override { EXPECT_TRUE(test::domain_files(domain).empty()); }
  std::uint32_t domain = test::unique_domain();
};

TEST_F(Liveness, APeerKilledWithSigkillIsLetGoOfWithinTheLivenessPeriod) {
  // A long period: the rounds of old (one every period) would take up to
  // 3 s; the pidfd tells the service thread at once.
  auto node = make_node(3000);
  auto pub = node->advertise<TestMessage>("beats");
  ASSERT_TRUE(pub.ok());
  auto victim = subscriber_peer();
  ASSERT_TRUE(victim.wait_for_line("READY", 10s));
  ASSERT_TRUE(eventually([&] { return (*pub)->subscriber_count() == 1; }, 10s));
  std::this_thread::sleep_for(100ms);  // let the activity-driven round watch the peer

  const auto killed_at = std::chrono::steady_clock::now();
  victim.kill(SIGKILL);
  ASSERT_TRUE(eventually([&] { return (*pub)->subscriber_count() == 0; }, 10s));
  const auto took = std::chrono::steady_clock::now() - killed_at;
  EXPECT_LT(took, 1500ms) << "half the liveness period: event-driven, not the periodic round";
  EXPECT_EQ(victim.wait(10s), 128 + SIGKILL);
}

TEST_F(Liveness, AStoppedPeerIsNotDeclaredDead) {
  auto node = make_node(20);
  auto pub = node->advertise<TestMessage>("beats");
  ASSERT_TRUE(pub.ok());
  auto peer = subscriber_peer();
  ASSERT_TRUE(peer.wait_for_line("READY", 10s));
  ASSERT_TRUE(eventually([&] { return (*pub)->subscriber_count() == 1; }, 10s));

  peer.kill(SIGSTOP);
  std::this_thread::sleep_for(1500ms);  // 75 liveness periods, more than one sweep (20 periods)
  EXPECT_EQ((*pub)->subscriber_count(), 1U) << "stopped is not dead";
  peer.kill(SIGCONT);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ((*pub)->subscriber_count(), 1U);
  peer.kill(SIGKILL);
  EXPECT_TRUE(eventually([&] { return (*pub)->subscriber_count() == 0; }, 10s));
}

TEST_F(Liveness, AnIdleNodeMakesNoPeriodicWakeUps) {
  // TSan starts its background thread (which wakes on its own schedule) at
  // the first pthread_create: make that happen before the snapshot.
  std::thread([] {}).join();
  const std::set<std::string> not_the_nodes = threads_now();  // this thread, and a sanitizer's
  auto node = make_node(50);
  auto pub = node->advertise<TestMessage>("beats");
  ASSERT_TRUE(pub.ok());
  auto peer = subscriber_peer();
  ASSERT_TRUE(peer.wait_for_line("READY", 10s));
  ASSERT_TRUE(eventually([&] { return (*pub)->subscriber_count() == 1; }, 10s));
  std::this_thread::sleep_for(200ms);

  const std::uint64_t before = voluntary_switches(not_the_nodes);
  std::this_thread::sleep_for(2s);
  const std::uint64_t woke = voluntary_switches(not_the_nodes) - before;
  // Only the node's threads count: the sweep (every 20 liveness periods,
  // 1 s) wakes them about twice. A round every liveness period would be 40.
  EXPECT_LE(woke, 8U) << "wake-ups of an idle node's threads in 2 s";
}

}  // namespace
}  // namespace axon
