// `axon network`: the network counters of nodes that reach another host, read by the axon command (another
// process) from each node's statistics segment. Two hosts on loopback (tests/support/two_host_loopback.hpp): what
// the command prints for each host's node is what that node's Node::network_counters() says, and refused datagrams
// are marked as dropped traffic.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/common/run_command.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/patterned_message.hpp"
#include "tests/support/test_messages.hpp"
#include "tests/support/two_host_loopback.hpp"

namespace axon::tools {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::TestMessage;

const std::string kAxon = AXON_CLI;

class AxonNetwork : public ::testing::Test {
 protected:
  /// `axon --domain D ARGS...` as a process that sees host `shm` (a: alpha, b: beta).
  [[nodiscard]] test::CommandOutput axon_on(const std::string& shm, std::vector<std::string> args) const {
    const std::vector<std::string> prefix = {"env", "AXON_SHM_DIR=" + hosts.shm_dir(shm), kAxon, "--domain",
                                             std::to_string(hosts.domain())};
    args.insert(args.begin(), prefix.begin(), prefix.end());
    return test::run_command(args);
  }

  /// The counter `name` of node `node` in `axon network --json` on host `shm`; -1 when the node is not listed.
  [[nodiscard]] std::int64_t counter_on(const std::string& shm, const std::string& node,
                                        const std::string& name) const {
    const test::CommandOutput run = axon_on(shm, {"network", "--json"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    for (const YAML::Node& entry : YAML::Load(run.output)["nodes"]) {
      if (entry["node"].as<std::string>() == node) {
        return entry["counters"][name].as<std::int64_t>();
      }
    }
    return -1;
  }

  test::TwoHostLoopback hosts{"axon_cli_network",
                              {.topics = "  - {name: cli/net, reliability: reliable, depth: 64}\n"}};
};

TEST_F(AxonNetwork, PrintsEachNodesCountersAsItsProcessCountsThem) {
  std::shared_ptr<Node> receiver = hosts.node("receiver", "b");
  std::shared_ptr<Node> sender = hosts.node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<TestMessage>("cli/net", {.depth = 64});
  auto publisher = sender->advertise<TestMessage>("cli/net");
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(eventually([&] { return test::routed_to(*sender, "cli/net", "beta"); }, 5s));
  constexpr std::uint64_t kCount = 40;
  for (std::uint64_t i = 1; i <= kCount; ++i) {
    TestMessage message;
    test::fill(message, 1, i);
    ASSERT_TRUE((*publisher)->publish(message));
  }
  std::uint64_t taken = 0;
  ASSERT_TRUE(eventually(
      [&] {
        while ((*subscriber)->take()) {
          ++taken;
        }
        return taken == kCount;
      },
      5s))
      << taken;
  const std::uint64_t sent = sender->network_counters().messages_sent;
  const std::uint64_t received = receiver->network_counters().messages_received;
  ASSERT_GE(sent, kCount);
  ASSERT_EQ(received, kCount);

  // The nodes copy their counters once a second: within a few seconds the command prints these very figures,
  // each node on its own host only.
  EXPECT_TRUE(
      eventually([&] { return counter_on("a", "sender", "messages_sent") == static_cast<std::int64_t>(sent); }, 5s))
      << axon_on("a", {"network", "--json"}).output;
  EXPECT_TRUE(eventually(
      [&] { return counter_on("b", "receiver", "messages_received") == static_cast<std::int64_t>(received); }, 5s))
      << axon_on("b", {"network", "--json"}).output;
  EXPECT_EQ(counter_on("a", "receiver", "messages_received"), -1) << "beta's node is not on alpha";
  EXPECT_GT(counter_on("a", "sender", "datagrams_sent"), 0);

  const test::CommandOutput text = axon_on("b", {"network", "receiver"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("node receiver (pid " + std::to_string(::getpid()) + ")"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("messages_received"), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("messages_lost"), std::string::npos) << "a counter that is 0 is left out:\n"
                                                                  << text.output;
  EXPECT_NE(text.output.find("counters are 0: --all lists them"), std::string::npos) << text.output;
  const test::CommandOutput all = axon_on("b", {"network", "receiver", "--all"});
  EXPECT_NE(all.output.find("messages_lost"), std::string::npos) << all.output;
}

TEST_F(AxonNetwork, MarksRefusedDatagramsAsDroppedTraffic) {
  std::shared_ptr<Node> receiver = hosts.node("receiver", "b");
  std::shared_ptr<Node> sender = hosts.node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<TestMessage>("cli/net", {.depth = 64});
  auto publisher = sender->advertise<TestMessage>("cli/net");
  ASSERT_TRUE(subscriber && publisher);
  // As the loopback tests do before their garbage: discovery went both ways, so beta's node reads its port.
  ASSERT_TRUE(eventually([&] { return test::routed_to(*sender, "cli/net", "beta"); }, 5s));
  ASSERT_TRUE(eventually([&] { return receiver->network_counters().hosts_discovered == 1; }, 5s));
  // Random bytes at beta's discovery port, which its node owns: refused by the parser and counted.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(hosts.port());
  to.sin_addr.s_addr = htonl(0x7F000002U);
  constexpr int kGarbage = 7;
  for (int i = 0; i < kGarbage; ++i) {
    const std::array<std::uint8_t, 40> bytes{static_cast<std::uint8_t>(i), 0xFF, 0x13};
    ASSERT_EQ(::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to)),
              static_cast<ssize_t>(bytes.size()));
  }
  ::close(fd);
  ASSERT_TRUE(eventually([&] { return receiver->network_counters().datagrams_refused >= kGarbage; }, 5s));
  const std::uint64_t refused = receiver->network_counters().datagrams_refused;

  ASSERT_TRUE(eventually(
      [&] { return counter_on("b", "receiver", "datagrams_refused") == static_cast<std::int64_t>(refused); }, 5s))
      << axon_on("b", {"network", "--json"}).output;
  const test::CommandOutput text = axon_on("b", {"network"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  const std::size_t row = text.output.find("datagrams_refused");
  ASSERT_NE(row, std::string::npos) << text.output;
  const std::string line = text.output.substr(row, text.output.find('\n', row) - row);
  EXPECT_NE(line.find(std::to_string(refused)), std::string::npos) << line;
  EXPECT_NE(line.find("dropped"), std::string::npos) << line;
}

TEST_F(AxonNetwork, ANodeWithoutNetworkCountersIsAnErrorThatSaysWhy) {
  std::shared_ptr<Node> receiver = hosts.node("receiver", "b");
  ASSERT_NE(receiver, nullptr);

  const test::CommandOutput missing = axon_on("b", {"network", "sender"});
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("no node 'sender' with network counters"), std::string::npos) << missing.output;

  const test::CommandOutput nobody = axon_on("a", {"network"});  // alpha runs no node
  EXPECT_EQ(nobody.exit_code, 0) << nobody.output;
  EXPECT_NE(nobody.output.find("reaches another host"), std::string::npos) << nobody.output;
}

}  // namespace
}  // namespace axon::tools
