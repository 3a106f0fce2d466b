// Encrypted datagrams (`udp: security: encrypt: true`) between two "hosts" of
// one process on loopback (no root needed): small and 1 MiB RELIABLE messages
// arrive whole and in order, their fragments still read straight into their
// chunk and decrypted there; a node with the same key but without `encrypt`
// and an encrypting one refuse each other's datagrams, each counted under its
// own reason and said once in the log with the fix; a node with
// `encrypt: true` but no key file is refused at start. What a capture on the
// wire sees, and loss: tests/integration/udp_encrypt_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/log_capture.hpp"
#include "tests/support/patterned_message.hpp"
#include "tests/support/test_messages.hpp"
#include "tests/support/two_host_loopback.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::routed_to;
using test::TestMessage;

/// 1 MiB, every third byte checked: 767 fragments of 1368 bytes each, 456 checked bytes in each.
struct MebibyteMessage : test::PatternedMessage<1U << 20U, 3, 13> {
  static constexpr std::string_view kAxonTypeName = "axon_test::EncryptedMebibyte";
};

void write_key(const std::filesystem::path& path) {
  std::array<char, 32> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>(11 * i + 5);
  }
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
}

/// A copy of `config` whose udp security line is `security`, as NAME.
std::filesystem::path variant(const std::filesystem::path& config, const std::string& name,
                              const std::string& security) {
  std::ifstream in(config);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = text.substr(0, text.find("  security: ")) + "  security: " + security + "\n";
  const std::filesystem::path out = config.parent_path() / name;
  std::ofstream(out) << text;
  return out;
}

std::shared_ptr<Node> node_with(const std::string& name, const std::filesystem::path& config, const std::string& shm) {
  NodeOptions options;
  options.config_path = config.string();
  options.shm_dir = shm;
  auto created = Node::create(name, options);
  EXPECT_TRUE(created) << created.error().message();
  return created ? *created : nullptr;
}

class UdpEncryptLoopback : public ::testing::Test {
 protected:
  void SetUp() override { write_key(dir / "domain.key"); }

  std::shared_ptr<Node> node(const std::string& name, const std::string& shm) const { return hosts.node(name, shm); }

  test::TwoHostLoopback hosts{"axon_udp_encrypt",
                              {.topics = R"(  - {name: mebibyte, reliability: reliable, depth: 8}
  - {name: small, reliability: reliable, depth: 256}
)",
                               .liveliness_timeout_ms = 1000,
                               .history_depth = 512,
                               .security = "{key_file: domain.key, encrypt: true, allow: [127.0.0.1, 127.0.0.2]}"}};
  const std::filesystem::path dir = hosts.config().parent_path();
};

TEST_F(UdpEncryptLoopback, SmallAndMebibyteReliableMessagesArriveWholeAndInOrderEncrypted) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto small_sub = receiver->subscribe<TestMessage>("small", {.depth = 256});
  auto big_sub = receiver->subscribe<MebibyteMessage>("mebibyte");
  auto small_pub = sender->advertise<TestMessage>("small");
  auto big_pub = sender->advertise<MebibyteMessage>("mebibyte");
  ASSERT_TRUE(small_sub && big_sub && small_pub && big_pub);
  ASSERT_TRUE(
      eventually([&] { return routed_to(*sender, "mebibyte", "beta") && routed_to(*sender, "small", "beta"); }, 5s))
      << "beta never announced itself encrypted";
  // Data from a sender the receiver has not heard announce yet is refused: wait until discovery went both ways.
  ASSERT_TRUE(eventually([&] { return receiver->network_counters().hosts_discovered == 1; }, 5s))
      << "beta never heard alpha";

  constexpr std::uint64_t kSmall = 200;  // below the queue depth (256): keep-last drops nothing
  for (std::uint64_t i = 1; i <= kSmall; ++i) {
    auto loan = (*small_pub)->loan();
    ASSERT_TRUE(loan);
    test::fill(**loan, 1, i);
    ASSERT_TRUE((*small_pub)->publish(std::move(*loan)));
  }
  std::uint64_t next_small = 1;
  ASSERT_TRUE(eventually(
      [&] {
        while (auto sample = (*small_sub)->take()) {
          EXPECT_TRUE(test::intact(**sample));
          EXPECT_EQ((*sample)->sequence, next_small);
          ++next_small;
        }
        return next_small > kSmall;
      },
      5s))
      << "received " << next_small - 1 << " of " << kSmall;

  constexpr std::uint64_t kBig = 12;
  std::uint64_t next_big = 1;
  auto drain = [&] {
    while (auto sample = (*big_sub)->take()) {
      EXPECT_TRUE(intact(**sample)) << "message " << (*sample)->sequence << " is corrupt";
      EXPECT_EQ((*sample)->sequence, next_big);
      ++next_big;
    }
  };
  for (std::uint64_t i = 1; i <= kBig; ++i) {
    LoanResult<Loan<MebibyteMessage>> loan = kPoolExhausted;
    ASSERT_TRUE(eventually(
        [&] {
          drain();
          loan = (*big_pub)->loan();
          return static_cast<bool>(loan);
        },
        5s));
    fill(**loan, i);
    ASSERT_TRUE((*big_pub)->publish(std::move(*loan)));
  }
  ASSERT_TRUE(eventually(
      [&] {
        drain();
        return next_big > kBig;
      },
      10s))
      << "received " << next_big - 1 << " of " << kBig;

  for (const auto* n : {receiver.get(), sender.get()}) {
    const NetworkCounters c = n->network_counters();
    EXPECT_EQ(c.auth_failures, 0U);
    EXPECT_EQ(c.replays, 0U);
    EXPECT_EQ(c.not_allowed, 0U);
    EXPECT_EQ(c.unauthenticated, 0U);
    EXPECT_EQ(c.not_encrypted, 0U);
    EXPECT_EQ(c.unexpectedly_encrypted, 0U);
  }
  EXPECT_GT(receiver->network_counters().fragments_in_place, 0U) << "encrypted fragments no longer land in their chunk";
}

TEST_F(UdpEncryptLoopback, NodesWithTheSameKeyButNotTheSameEncryptRefuseEachOtherAndSaySo) {
  const test::LogCapture log(spdlog::level::warn);
  {
    const auto authenticating = variant(hosts.config(), "authenticating.yaml", "{key_file: domain.key}");
    auto receiver = node_with("receiver", authenticating, hosts.shm_dir("b"));
    auto sender = node("sender", "a");
    ASSERT_TRUE(receiver && sender);
    auto subscriber = receiver->subscribe<TestMessage>("small", {.depth = 256});
    auto publisher = sender->advertise<TestMessage>("small");
    auto back_publisher = receiver->advertise<TestMessage>("small_back");
    auto back_subscriber = sender->subscribe<TestMessage>("small_back");
    ASSERT_TRUE(subscriber && publisher && back_publisher && back_subscriber);

    // Both announce every 20 ms: each refuses the other's under a reason of its own, not as forged.
    ASSERT_TRUE(eventually(
        [&] {
          return sender->network_counters().not_encrypted > 5 &&
                 receiver->network_counters().unexpectedly_encrypted > 5;
        },
        5s))
        << "sender not_encrypted " << sender->network_counters().not_encrypted << ", receiver unexpectedly_encrypted "
        << receiver->network_counters().unexpectedly_encrypted;
    for (std::uint64_t i = 1; i <= 20; ++i) {
      (void)(*publisher)->publish(TestMessage{});
      (void)(*back_publisher)->publish(TestMessage{});
      std::this_thread::sleep_for(5ms);
    }
    std::this_thread::sleep_for(300ms);
    EXPECT_FALSE((*subscriber)->take()) << "an authenticating node took an encrypted message";
    EXPECT_FALSE((*back_subscriber)->take()) << "an encrypting node took a message that was not encrypted";
    EXPECT_EQ(sender->network_counters().hosts_discovered, 0U);
    EXPECT_EQ(receiver->network_counters().hosts_discovered, 0U);
    EXPECT_EQ(sender->network_counters().auth_failures, 0U);
    EXPECT_EQ(receiver->network_counters().auth_failures, 0U);
  }  // the nodes' threads log through the capture's sink: they end before it is read
  const std::string text = log.text();
  EXPECT_NE(text.find("refused an encrypted datagram from 127.0.0.1:"), std::string::npos) << text;
  EXPECT_NE(text.find("refused an authenticated but unencrypted datagram from 127.0.0.2:"), std::string::npos) << text;
  EXPECT_NE(text.find("Both hosts must set the same encrypt"), std::string::npos) << text;
  const auto said = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(said("refused an encrypted datagram"), 1U) << "said once, not per datagram";
  EXPECT_EQ(said("refused an authenticated but unencrypted datagram"), 1U);
}

TEST_F(UdpEncryptLoopback, EncryptWithoutAKeyFileIsRefusedAtNodeCreateWithTheFix) {
  const auto keyless = variant(hosts.config(), "keyless.yaml", "{encrypt: true}");
  NodeOptions options;
  options.config_path = keyless.string();
  options.shm_dir = hosts.shm_dir("a");
  auto created = Node::create("sender", options);
  ASSERT_FALSE(created);
  const std::string message(created.error().message());
  EXPECT_NE(message.find("encrypt: true needs a key_file"), std::string::npos) << message;
  EXPECT_NE(message.find("keyless.yaml:"), std::string::npos) << "the file and line: " << message;
}

}  // namespace
}  // namespace axon
