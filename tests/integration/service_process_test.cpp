// Services (request/response) between real processes: replies routed back
// to their caller only, timeouts, no server, a server killed while it holds
// a request (the caller gets an error at once, not at its timeout), late
// replies dropped and counted, and two client processes that each get only
// their own replies. Children are forked before this process starts threads.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/service_messages.hpp"
#include "transports/shm/domain_lock.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::ModeReply;
using test::ModeRequest;
using Clock = std::chrono::steady_clock;

constexpr const char* kService = "svc/set_mode";

NodeOptions options_for(std::uint32_t domain) {
  NodeOptions o;
  o.domain_id = domain;
  return o;
}

void handle(const ModeRequest& request, ModeReply& reply) {
  if (request.delay_ms == ModeRequest::kStuck) {
    std::printf("STUCK\n");
    std::fflush(stdout);
    for (;;) {
      pause();  // until SIGKILL
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(request.delay_ms));
  reply = ModeReply{.client = request.client,
                    .seq = request.seq,
                    .server_pid = static_cast<std::int32_t>(getpid()),
                    .mode_squared = request.mode * request.mode};
}

/// A server process: handle_one() in a loop, or an executor; ends after 30 s.
int server_child(std::uint32_t domain, bool executor) {
  auto node = Node::create("mode_server", options_for(domain));
  if (!node) {
    return 1;
  }
  auto server = (*node)->serve<ModeRequest, ModeReply>(kService, handle);
  if (!server) {
    std::printf("ERROR %s\n", std::string(server.error().message()).c_str());
    return 2;
  }
  std::printf("SERVING\n");
  std::fflush(stdout);
  if (executor) {
    SingleThreadedExecutor exec;
    if (!exec.add(*server)) {
      return 3;
    }
    return exec.spin_for(30s) ? 0 : 4;
  }
  const auto end = Clock::now() + 30s;
  while (Clock::now() < end) {
    if (!(*server)->handle_one(100ms)) {
      return 5;
    }
  }
  return 0;
}

struct Caller {
  std::shared_ptr<Node> node;
  std::shared_ptr<Client<ModeRequest, ModeReply>> client;
};

Caller make_caller(std::uint32_t domain, const std::string& name) {
  auto node = Node::create(name, options_for(domain));
  EXPECT_TRUE(node) << node.error().message();
  auto client = (*node)->client<ModeRequest, ModeReply>(kService);
  EXPECT_TRUE(client) << client.error().message();
  EXPECT_TRUE((*client)->wait_for_server(10s).value() == GraphWait::kMet);
  return {*node, *client};
}

/// Kills the server and waits until `node` saw it reclaimed, so that this
/// process, leaving last, removes the domain's files.
void end_server(ChildProcess& server, Node& node) {
  server.kill(SIGKILL);
  EXPECT_EQ(server.wait(10s), 128 + SIGKILL);
  auto gone = node.wait_for_endpoints(detail::request_topic(kService), GraphEndpointKind::kSubscriber, 0, 10s);
  EXPECT_TRUE(gone && *gone == GraphWait::kMet);
}

TEST(Services, ACallWithoutAServerFailsAtOnceWithNoServer) {
  const std::uint32_t domain = test::unique_domain();
  auto node = Node::create("lonely_client", options_for(domain));
  ASSERT_TRUE(node);
  auto sut = (*node)->client<ModeRequest, ModeReply>(kService);
  ASSERT_TRUE(sut) << sut.error().message();
  const auto start = Clock::now();
  auto reply = (*sut)->call(ModeRequest{.client = 1, .seq = 1}, 5s);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), ErrorCode::kNoServer) << reply.error().message();
  EXPECT_LT(Clock::now() - start, 1s);
}

// Found by the serializers tour under TSan: a call made while another
// process held the domain lock could not read the graph and failed at once
// with kNoServer although a server was there. It now waits for the graph.
TEST(Services, ACallWhileTheDomainLockIsBusyWaitsForTheGraphInsteadOfFailing) {
  const std::uint32_t domain = test::unique_domain();
  auto node = Node::create("busy_lock", options_for(domain));
  ASSERT_TRUE(node);
  auto server = (*node)->serve<ModeRequest, ModeReply>(kService, handle);
  ASSERT_TRUE(server) << server.error().message();
  auto sut = (*node)->client<ModeRequest, ModeReply>(kService);
  ASSERT_TRUE(sut) << sut.error().message();
  // Another open file of the domain's lock keeps it from the node as
  // another process would; taken and let go (100 ms into the call) by one
  // thread, as a lock must be.
  std::promise<bool> locked;
  std::thread holder([&] {
    shm::DomainLock other("/dev/shm/axon_d" + std::to_string(domain) + ".lock", 0600);
    auto held = other.lock();
    locked.set_value(held.ok());
    std::this_thread::sleep_for(100ms);
  });
  if (!locked.get_future().get()) {
    holder.join();
    FAIL() << "could not take the domain lock";
  }
  std::thread serving([&] { (void)(*server)->handle_one(5s); });
  auto reply = (*sut)->call(ModeRequest{.client = 3, .seq = 1, .mode = 4}, 5s);
  holder.join();
  serving.join();
  ASSERT_TRUE(reply) << reply.error().message();
  EXPECT_EQ((*reply)->mode_squared, 16U);
}

TEST(Services, CallsAcrossProcessesGetTheirReplies) {
  const std::uint32_t domain = test::unique_domain();
  auto server = ChildProcess::fork_and_run([domain] { return server_child(domain, /*executor=*/true); });
  Caller sut = make_caller(domain, "caller");
  for (std::uint32_t seq = 1; seq <= 20; ++seq) {
    auto reply = sut.client->call(ModeRequest{.client = 7, .seq = seq, .mode = seq}, 5s);
    ASSERT_TRUE(reply) << reply.error().message() << "\n" << server.output();
    EXPECT_EQ((*reply)->client, 7U);
    EXPECT_EQ((*reply)->seq, seq);
    EXPECT_EQ((*reply)->mode_squared, seq * seq);
    EXPECT_EQ((*reply)->server_pid, server.pid());
  }
  const ClientCounters counters = sut.client->counters();
  EXPECT_EQ(counters.calls, 20U);
  EXPECT_EQ(counters.replies, 20U);
  EXPECT_EQ(counters.late_replies_dropped, 0U);
  end_server(server, *sut.node);
}

TEST(Services, ALoanedRequestIsSentInPlace) {
  const std::uint32_t domain = test::unique_domain();
  auto server = ChildProcess::fork_and_run([domain] { return server_child(domain, /*executor=*/false); });
  Caller sut = make_caller(domain, "loaning_caller");
  auto loan = sut.client->loan();
  ASSERT_TRUE(loan);
  **loan = ModeRequest{.client = 3, .seq = 1, .mode = 9};
  auto id = sut.client->send(std::move(*loan));
  ASSERT_TRUE(id) << id.error().message();
  auto reply = sut.client->wait(*id, 5s);
  ASSERT_TRUE(reply) << reply.error().message();
  EXPECT_EQ((*reply)->mode_squared, 81U);
  EXPECT_EQ(reply.value().call_id(), id->value);
  end_server(server, *sut.node);
}

TEST(Services, ATimedOutCallsLateReplyIsDroppedAndCountedNeverTakenForTheNextAnswer) {
  const std::uint32_t domain = test::unique_domain();
  auto server = ChildProcess::fork_and_run([domain] { return server_child(domain, /*executor=*/false); });
  Caller sut = make_caller(domain, "impatient_caller");
  const auto start = Clock::now();
  auto slow = sut.client->call(ModeRequest{.client = 1, .seq = 1, .delay_ms = 300}, 50ms);
  ASSERT_FALSE(slow);
  EXPECT_EQ(slow.error().code(), ErrorCode::kTimeout) << slow.error().message();
  EXPECT_GE(Clock::now() - start, 50ms);
  // The server answers the first request (late) before this one.
  auto fast = sut.client->call(ModeRequest{.client = 1, .seq = 2}, 5s);
  ASSERT_TRUE(fast) << fast.error().message();
  EXPECT_EQ((*fast)->seq, 2U);
  const ClientCounters counters = sut.client->counters();
  EXPECT_EQ(counters.timeouts, 1U);
  EXPECT_EQ(counters.late_replies_dropped, 1U);
  EXPECT_EQ(counters.replies, 1U);
  end_server(server, *sut.node);
}

TEST(Services, AServerKilledMidRequestFailsTheCallWithNoServerBeforeItsTimeout) {
  const std::uint32_t domain = test::unique_domain();
  auto server = ChildProcess::fork_and_run([domain] { return server_child(domain, /*executor=*/false); });
  Caller sut = make_caller(domain, "abandoned_caller");
  std::thread killer([&server] {
    if (server.wait_for_line("STUCK", 10s)) {
      server.kill(SIGKILL);
    }
  });
  const auto start = Clock::now();
  auto reply = sut.client->call(ModeRequest{.client = 1, .seq = 1, .delay_ms = ModeRequest::kStuck}, 30s);
  killer.join();
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), ErrorCode::kNoServer) << reply.error().message();
  EXPECT_LT(Clock::now() - start, 10s) << "the caller waited for its timeout instead of noticing the server died";
  EXPECT_EQ(sut.client->counters().servers_lost, 1U);
  auto after = sut.client->call(ModeRequest{.client = 1, .seq = 2}, 1s);
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code(), ErrorCode::kNoServer);
}

/// A client process: `calls` calls as client `id`; exits 0 when every reply
/// was its own, in order.
int client_child(std::uint32_t domain, std::uint32_t id, std::uint32_t calls) {
  auto node = Node::create("mode_client_" + std::to_string(id), options_for(domain));
  if (!node) {
    return 1;
  }
  auto client = (*node)->client<ModeRequest, ModeReply>(kService);
  if (!client || (*client)->wait_for_server(10s).value() != GraphWait::kMet) {
    return 2;
  }
  for (std::uint32_t seq = 1; seq <= calls; ++seq) {
    auto reply = (*client)->call(ModeRequest{.client = id, .seq = seq, .mode = id}, 5s);
    if (!reply) {
      std::printf("ERROR call %u: %s\n", seq, std::string(reply.error().message()).c_str());
      return 3;
    }
    if ((*reply)->client != id || (*reply)->seq != seq) {
      std::printf("ERROR call %u got the reply of client %u call %u\n", seq, (*reply)->client, (*reply)->seq);
      return 4;
    }
  }
  const ClientCounters counters = (*client)->counters();
  std::printf("DONE replies=%llu late=%llu\n", static_cast<unsigned long long>(counters.replies),
              static_cast<unsigned long long>(counters.late_replies_dropped));
  return counters.replies == calls && counters.late_replies_dropped == 0 ? 0 : 5;
}

TEST(Services, TwoClientProcessesEachGetOnlyTheirOwnReplies) {
  const std::uint32_t domain = test::unique_domain();
  auto server = ChildProcess::fork_and_run([domain] { return server_child(domain, /*executor=*/true); });
  auto first = ChildProcess::fork_and_run([domain] { return client_child(domain, 1, 100); });
  auto second = ChildProcess::fork_and_run([domain] { return client_child(domain, 2, 100); });
  auto node = Node::create("clients_test", options_for(domain));  // after the forks: it starts threads
  ASSERT_TRUE(node);
  EXPECT_EQ(first.wait(20s), 0) << first.output() << server.output();
  EXPECT_EQ(second.wait(20s), 0) << second.output() << server.output();
  end_server(server, **node);
}

TEST(Services, ASecondServerOfOneServiceIsRefusedNamingTheFirst) {
  const std::uint32_t domain = test::unique_domain();
  auto server = ChildProcess::fork_and_run([domain] { return server_child(domain, /*executor=*/false); });
  Caller caller = make_caller(domain, "second_server");
  auto sut = caller.node->serve<ModeRequest, ModeReply>(kService, handle);
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error().code(), ErrorCode::kLimitReached);
  EXPECT_NE(sut.error().message().find("mode_server"), std::string_view::npos) << sut.error().message();
  end_server(server, *caller.node);
}

}  // namespace
}  // namespace axon
