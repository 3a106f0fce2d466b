// No heap allocation in a steady-state service call over raw structs and
// over FlatBuffers tables: the client's call (loan or build, publish, sleep,
// take the reply) and the server's handle_one() (take, handler, loan or build
// and publish the reply), both threads counted, with operator new and malloc
// replaced by counting versions in this executable
// (tests/support/allocation_hooks.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "tests/support/allocation_hooks.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/schema_messages.hpp"
#include "tests/support/service_messages.hpp"

namespace axon {
namespace {

namespace allocations = test::allocations;
using namespace std::chrono_literals;
using test::ModeReply;
using test::ModeRequest;

constexpr std::uint32_t kWarmUp = 50;
constexpr std::uint32_t kMeasured = 500;

/// A node whose service thread runs liveness rounds while calls are counted
/// (the sweep comes every 20 periods, 20 ms here, so a few fall within the
/// measured calls): the rounds must not allocate either.
std::shared_ptr<Node> make_node(const char* name) {
  NodeOptions options;
  options.domain_id = test::unique_domain();
  options.liveness_period_ms = 1;
  return *Node::create(name, options);
}

/// Serves `server` on a thread, warms up with `call(seq)`, then counts the
/// heap allocations of every thread over kMeasured calls.
template <class Server, class Call>
void expect_steady_state_calls_do_not_allocate(Server& server, Call call) {
  std::atomic<bool> stop{false};
  std::thread serving([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      (void)server.handle_one(10ms);
    }
  });
  for (std::uint32_t seq = 1; seq <= kWarmUp; ++seq) {
    ASSERT_TRUE(call(seq));
  }

  allocations::start(allocations::Scope::kAllThreads);  // the client, the server thread, the service thread
  std::uint32_t ok = 0;
  for (std::uint32_t seq = kWarmUp + 1; seq <= kWarmUp + kMeasured; ++seq) {
    ok += call(seq) ? 1 : 0;
  }
  // Each reply was published after the server's work on its request: the
  // client's take of it orders the server thread's allocations before this.
  const std::uint64_t allocated = allocations::stop();
  stop.store(true, std::memory_order_relaxed);
  serving.join();

  EXPECT_EQ(ok, kMeasured);
  if (allocations::kCounted) {
    EXPECT_EQ(allocated, 0U) << "heap allocations in " << kMeasured << " service calls";
  }
}

TEST(ServiceAllocation, ASteadyStateCallOverRawStructsDoesNotAllocate) {
  auto node = make_node("service_alloc");
  auto server = *node->serve<ModeRequest, ModeReply>("alloc/set_mode", [](const ModeRequest& req, ModeReply& rep) {
    rep.seq = req.seq;
    rep.mode_squared = req.mode * req.mode;
  });
  auto sut = *node->client<ModeRequest, ModeReply>("alloc/set_mode");
  ASSERT_EQ(sut->wait_for_server(10s).value(), GraphWait::kMet);
  expect_steady_state_calls_do_not_allocate(*server, [&](std::uint32_t seq) {
    auto loan = sut->loan();
    if (!loan) {
      return false;
    }
    **loan = ModeRequest{.seq = seq, .mode = 3};
    auto reply = sut->call(std::move(*loan), 5s);
    return reply && (*reply)->seq == seq && (*reply)->mode_squared == 9;
  });
  EXPECT_EQ(sut->counters().late_replies_dropped, 0U);
}

TEST(ServiceAllocation, ASteadyStateCallOverFlatBuffersDoesNotAllocate) {
  using test::fb::ObjectList;
  auto node = make_node("service_alloc_fb");
  auto server = *node->serve<ObjectList, ObjectList>(
      "alloc/objects", [](const ObjectList& req, flatbuffers::FlatBufferBuilder& reply) {
        return test::build_object_list(reply, req.header()->sequence() + 1, req.targets()->size());
      });
  auto sut = *node->client<ObjectList, ObjectList>("alloc/objects");
  ASSERT_EQ(sut->wait_for_server(10s).value(), GraphWait::kMet);
  expect_steady_state_calls_do_not_allocate(*server, [&](std::uint32_t seq) {
    auto request = sut->loan_builder();
    if (!request) {
      return false;
    }
    const auto root = test::build_object_list(request->builder(), seq, 32);
    auto reply = sut->call(std::move(*request), root, 5s);
    return reply && test::object_list_ok(**reply, seq + 1, 32);
  });
  EXPECT_EQ(sut->counters().late_replies_dropped, 0U);
}

}  // namespace
}  // namespace axon
