// Graph events between real processes: a publisher (and a subscriber) of
// another process appearing, leaving, and leaving by SIGKILL, seen by a
// watcher that sleeps on the registry's graph word (no polling), by
// wait_for_endpoints() and by an executor's graph subscription. The child
// and the test steer each other through the graph itself (a "ctl" topic),
// so no step depends on a sleep.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/test_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::TestMessage;

NodeOptions options_for(std::uint32_t domain) {
  NodeOptions o;
  o.domain_id = domain;
  return o;
}

/// The next event of `watcher` (waiting up to 10 s), or nullopt.
std::optional<GraphEvent> next_event(GraphWatcher& watcher, std::vector<GraphEvent>& queued) {
  while (queued.empty()) {
    auto found = watcher.wait(10s);
    if (!found || found->empty()) {
      return std::nullopt;
    }
    queued.assign(found->begin(), found->end());
  }
  GraphEvent e = queued.front();
  queued.erase(queued.begin());
  return e;
}

/// The child: advertises "graph/topic", drops it once the test subscribes
/// "graph/ctl", advertises it again once the test unsubscribed, then waits
/// to be killed.
int publisher_child(std::uint32_t domain) {
  auto node = Node::create("graph_child", options_for(domain));
  if (!node) {
    return 1;
  }
  auto pub = (*node)->advertise<TestMessage>("graph/topic");
  if (!pub) {
    return 2;
  }
  std::printf("ADVERTISED\n");
  std::fflush(stdout);
  auto ctl = (*node)->wait_for_endpoints("graph/ctl", GraphEndpointKind::kSubscriber, 1, 15s);
  if (!ctl || *ctl != GraphWait::kMet) {
    return 3;
  }
  pub.value().reset();
  auto gone = (*node)->wait_for_endpoints("graph/ctl", GraphEndpointKind::kSubscriber, 0, 15s);
  if (!gone || *gone != GraphWait::kMet) {
    return 4;
  }
  auto again = (*node)->advertise<TestMessage>("graph/topic");
  if (!again) {
    return 5;
  }
  std::printf("ADVERTISED AGAIN\n");
  std::fflush(stdout);
  for (;;) {
    pause();  // until SIGKILL
  }
}

TEST(GraphEvents, APublisherOfAnotherProcessAppearsLeavesAndLeavesBySigkill) {
  const std::uint32_t domain = test::unique_domain();
  // Forked before this process starts threads (the node's service thread).
  auto child = ChildProcess::fork_and_run([domain] { return publisher_child(domain); });
  auto node = Node::create("graph_test", options_for(domain));
  ASSERT_TRUE(node) << node.error().message();
  auto sut = (*node)->watch_graph("graph/topic");
  ASSERT_TRUE(sut) << sut.error().message();
  std::vector<GraphEvent> queued;

  auto appeared = next_event(*sut, queued);
  ASSERT_TRUE(appeared) << child.output();
  EXPECT_EQ(appeared->change, GraphChange::kAppeared);
  EXPECT_EQ(appeared->topic, "graph/topic");
  EXPECT_EQ(appeared->endpoint.kind, GraphEndpointKind::kPublisher);
  EXPECT_EQ(appeared->endpoint.node_name, "graph_child");
  EXPECT_EQ(appeared->endpoint.pid, child.pid());

  auto ctl = (*node)->subscribe<TestMessage>("graph/ctl");  // tells the child to drop its publisher
  ASSERT_TRUE(ctl);
  auto left = next_event(*sut, queued);
  ASSERT_TRUE(left) << child.output();
  EXPECT_EQ(left->change, GraphChange::kLeft);
  EXPECT_EQ(left->endpoint.endpoint_id, appeared->endpoint.endpoint_id);
  EXPECT_EQ(left->endpoint.node_name, "graph_child");

  ctl.value().reset();  // tells the child to advertise again
  auto back = next_event(*sut, queued);
  ASSERT_TRUE(back) << child.output();
  EXPECT_EQ(back->change, GraphChange::kAppeared);
  EXPECT_EQ(back->endpoint.pid, child.pid());
  ASSERT_TRUE(child.wait_for_line("ADVERTISED AGAIN", 10s)) << child.output();

  child.kill(SIGKILL);
  // The liveness round of this node (every 50 ms) removes the dead
  // participant's entries, which moves the graph word.
  auto killed = next_event(*sut, queued);
  ASSERT_TRUE(killed) << "no event after SIGKILL";
  EXPECT_EQ(killed->change, GraphChange::kLeft);
  EXPECT_EQ(killed->endpoint.endpoint_id, back->endpoint.endpoint_id);
  EXPECT_EQ(killed->endpoint.pid, child.pid());
  EXPECT_EQ(child.wait(5s), 128 + SIGKILL);
  EXPECT_TRUE(sut->endpoints().empty());
}

TEST(GraphEvents, WaitForEndpointsTimesOutAsAnOutcome) {
  const std::uint32_t domain = test::unique_domain();
  auto node = Node::create("graph_timeout", options_for(domain));
  ASSERT_TRUE(node) << node.error().message();
  const auto start = std::chrono::steady_clock::now();
  auto sut = (*node)->wait_for_endpoints("graph/nobody", GraphEndpointKind::kPublisher, 1, 100ms);
  ASSERT_TRUE(sut) << sut.error().message();
  EXPECT_EQ(*sut, GraphWait::kTimedOut);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  auto none = (*node)->wait_for_endpoints("graph/nobody", GraphEndpointKind::kPublisher, 0, 100ms);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, GraphWait::kMet);
}

/// The child: subscribes "graph/exec" and exits once the test publishes on "graph/ctl".
int subscriber_child(std::uint32_t domain) {
  auto node = Node::create("graph_sub_child", options_for(domain));
  if (!node) {
    return 1;
  }
  auto sub = (*node)->subscribe<TestMessage>("graph/exec");
  if (!sub) {
    return 2;
  }
  auto ctl = (*node)->wait_for_endpoints("graph/ctl", GraphEndpointKind::kPublisher, 1, 15s);
  return ctl && *ctl == GraphWait::kMet ? 0 : 3;
}

TEST(GraphEvents, AnExecutorRunsTheGraphCallbackWhenASubscriberOfAnotherProcessComesAndGoes) {
  const std::uint32_t domain = test::unique_domain();
  auto child = ChildProcess::fork_and_run([domain] { return subscriber_child(domain); });
  auto node = Node::create("graph_exec", options_for(domain));
  ASSERT_TRUE(node) << node.error().message();
  std::vector<GraphEvent> seen;
  SingleThreadedExecutor executor(ExecutorOptions{.wait_strategy = WaitStrategy::blocking()});
  std::shared_ptr<Publisher<TestMessage>> ctl;
  auto sut = (*node)->on_graph_event("graph/exec", [&](const GraphEvent& e) {
    seen.push_back(e);
    if (e.change == GraphChange::kAppeared) {
      ctl = *(*node)->advertise<TestMessage>("graph/ctl");  // tells the child to leave
    } else {
      executor.stop();
    }
  });
  ASSERT_TRUE(sut) << sut.error().message();
  ASSERT_TRUE(executor.add(*sut));
  ASSERT_TRUE(executor.spin_for(15s));
  ASSERT_EQ(seen.size(), 2U) << child.output();
  EXPECT_EQ(seen[0].change, GraphChange::kAppeared);
  EXPECT_EQ(seen[0].endpoint.kind, GraphEndpointKind::kSubscriber);
  EXPECT_EQ(seen[0].endpoint.node_name, "graph_sub_child");
  EXPECT_EQ(seen[1].change, GraphChange::kLeft);
  EXPECT_EQ(seen[1].endpoint.pid, child.pid());
  EXPECT_EQ(child.wait(10s), 0) << child.output();
}

}  // namespace
}  // namespace axon
