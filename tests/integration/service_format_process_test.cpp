// FlatBuffers and Protobuf services between real processes, the same tests
// for both formats: calls get their own replies (FlatBuffers: the server
// reads the request in the caller's shared memory and the caller reads the
// reply in the server's), a timed-out call's late reply is dropped, and a
// server killed with SIGKILL mid-request fails the call with kNoServer well
// before its timeout. Children are forked before this process starts threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/process_maps.hpp"
#include "tests/support/schema_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using Clock = std::chrono::steady_clock;

constexpr const char* kService = "svc/objects";
constexpr const char* kServerNode = "objects_server";
constexpr const char* kCallerNode = "objects_caller";
constexpr std::uint32_t kTargets = 64;
constexpr std::uint64_t kStuck = 0xDEAD;       ///< A request's sequence: the handler never returns.
constexpr std::uint64_t kSlow = 1'000'000;     ///< From this sequence on the handler takes 300 ms.
constexpr std::uint64_t kAnswer = 1000;        ///< The reply's sequence: the request's plus this...
constexpr std::uint64_t kCopiedAnswer = 2000;  ///< ...or this when the request was not read in place.

NodeOptions options_for(std::uint32_t domain) {
  NodeOptions o;
  o.domain_id = domain;
  return o;
}

/// What the handler does before it answers `sequence`.
void act_on(std::uint64_t sequence) {
  if (sequence == kStuck) {
    std::printf("STUCK\n");
    std::fflush(stdout);
    for (;;) {
      pause();  // until SIGKILL
    }
  }
  if (sequence >= kSlow) {
    std::this_thread::sleep_for(300ms);
  }
}

struct FlatBuffersFormat {
  using Message = test::fb::ObjectList;

  static auto handler(std::uint32_t domain) {
    return [caller_pool = test::pool_file_of(domain, kCallerNode)](const Message& request,
                                                                   flatbuffers::FlatBufferBuilder& reply) {
      const std::uint64_t sequence = request.header()->sequence();
      act_on(sequence);
      const bool in_place = test::inside_mapping(&request, caller_pool);
      return test::build_object_list(reply, sequence + (in_place ? kAnswer : kCopiedAnswer), kTargets);
    };
  }
  static Result<Reply<Message>> call(Client<Message, Message>& client, std::uint64_t sequence,
                                     std::chrono::nanoseconds timeout) {
    auto request = client.loan_builder();
    if (!request) {
      return request.error();
    }
    const auto root = test::build_object_list(request->builder(), sequence, kTargets);
    return client.call(std::move(*request), root, timeout);
  }
  static bool answers(const Message& reply, std::uint64_t sequence, std::uint32_t domain) {
    return test::object_list_ok(reply, sequence + kAnswer, kTargets) &&
           test::inside_mapping(&reply, test::pool_file_of(domain, kServerNode));
  }
};

struct ProtobufFormat {
  using Message = test::pb::ObjectList;

  static auto handler(std::uint32_t /*domain*/) {
    return [](const Message& request, Message& reply) {
      const std::uint64_t sequence = request.header().sequence();
      act_on(sequence);
      test::fill_object_list(reply, sequence + kAnswer, static_cast<std::uint32_t>(request.targets_size()));
    };
  }
  static Result<Reply<Message>> call(Client<Message, Message>& client, std::uint64_t sequence,
                                     std::chrono::nanoseconds timeout) {
    Message request;
    test::fill_object_list(request, sequence, kTargets);
    return client.call(request, timeout);
  }
  static bool answers(const Message& reply, std::uint64_t sequence, std::uint32_t /*domain*/) {
    return test::object_list_ok(reply, sequence + kAnswer, kTargets);
  }
};

template <class Format>
class FormatServices : public ::testing::Test {
 protected:
  using Message = typename Format::Message;

  void SetUp() override {
    test_domain = test::unique_domain();
    const std::uint32_t domain = test_domain;
    server_process.emplace(ChildProcess::fork_and_run([domain] { return serve(domain); }));
    auto node = Node::create(kCallerNode, options_for(test_domain));  // after the fork: it starts threads
    ASSERT_TRUE(node) << node.error().message();
    caller_node = *node;
    auto client = caller_node->client<Message, Message>(kService);
    ASSERT_TRUE(client) << client.error().message();
    caller = *client;
    ASSERT_TRUE(caller->wait_for_server(10s).value() == GraphWait::kMet) << server_process->output();
  }
  /// Kills the server (if still there) and waits until this node saw it
  /// reclaimed, so that this process, leaving last, removes the domain's files.
  void TearDown() override {
    server_process->kill(SIGKILL);
    (void)server_process->wait(10s);
    auto gone =
        caller_node->wait_for_endpoints(detail::request_topic(kService), GraphEndpointKind::kSubscriber, 0, 10s);
    EXPECT_TRUE(gone && *gone == GraphWait::kMet);
  }

  static int serve(std::uint32_t domain) {
    auto node = Node::create(kServerNode, options_for(domain));
    if (!node) {
      return 1;
    }
    auto server = (*node)->serve<Message, Message>(kService, Format::handler(domain));
    if (!server) {
      std::printf("ERROR %s\n", std::string(server.error().message()).c_str());
      return 2;
    }
    std::printf("SERVING\n");
    std::fflush(stdout);
    const auto end = Clock::now() + 30s;
    while (Clock::now() < end) {
      if (!(*server)->handle_one(100ms)) {
        return 3;
      }
    }
    return 0;
  }

  std::uint32_t test_domain = 0;
  std::optional<ChildProcess> server_process;
  std::shared_ptr<Node> caller_node;
  std::shared_ptr<Client<Message, Message>> caller;
};

using Formats = ::testing::Types<FlatBuffersFormat, ProtobufFormat>;
TYPED_TEST_SUITE(FormatServices, Formats);

TYPED_TEST(FormatServices, CallsAcrossProcessesGetTheirOwnRepliesReadInPlace) {
  for (std::uint64_t seq = 1; seq <= 20; ++seq) {
    auto reply = TypeParam::call(*this->caller, seq, 5s);
    ASSERT_TRUE(reply) << reply.error().message() << "\n" << this->server_process->output();
    EXPECT_TRUE(TypeParam::answers(**reply, seq, this->test_domain))
        << "call " << seq << ": a reply that is not this call's answer, or (FlatBuffers) that was not read in place";
  }
  const ClientCounters counters = this->caller->counters();
  EXPECT_EQ(counters.calls, 20U);
  EXPECT_EQ(counters.replies, 20U);
  EXPECT_EQ(counters.late_replies_dropped, 0U);
}

TYPED_TEST(FormatServices, ATimedOutCallsLateReplyIsDroppedAndTheNextCallGetsItsOwn) {
  const auto start = Clock::now();
  auto slow = TypeParam::call(*this->caller, kSlow, 50ms);
  ASSERT_FALSE(slow);
  EXPECT_EQ(slow.error().code(), ErrorCode::kTimeout) << slow.error().message();
  EXPECT_GE(Clock::now() - start, 50ms);
  auto fast = TypeParam::call(*this->caller, 2, 5s);
  ASSERT_TRUE(fast) << fast.error().message();
  EXPECT_TRUE(TypeParam::answers(**fast, 2, this->test_domain));
  const ClientCounters counters = this->caller->counters();
  EXPECT_EQ(counters.timeouts, 1U);
  EXPECT_EQ(counters.late_replies_dropped, 1U);
  EXPECT_EQ(counters.replies, 1U);
}

TYPED_TEST(FormatServices, AServerKilledMidRequestFailsTheCallWithNoServerBeforeItsTimeout) {
  std::thread killer([server = &*this->server_process] {
    if (server->wait_for_line("STUCK", 10s)) {
      server->kill(SIGKILL);
    }
  });
  const auto start = Clock::now();
  auto reply = TypeParam::call(*this->caller, kStuck, 30s);
  killer.join();
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), ErrorCode::kNoServer) << reply.error().message();
  EXPECT_LT(Clock::now() - start, 10s) << "the caller waited for its timeout instead of noticing the server died";
  EXPECT_EQ(this->caller->counters().servers_lost, 1U);
}

}  // namespace
}  // namespace axon
