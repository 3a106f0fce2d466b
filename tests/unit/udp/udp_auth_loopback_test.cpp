// Authenticated datagrams between two "hosts" of one process on loopback (no
// root needed): traffic flows under a key, small and 4 MiB messages whole and
// in order (the envelope does not keep fragments from landing in place); a
// node with another key or none neither receives nor injects; forged,
// replayed, corrupted and plain datagrams and sources outside the allow-list
// are dropped and counted. The same with real processes on virtual hosts:
// tests/integration/udp_auth_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "axon/axon.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/patterned_message.hpp"
#include "tests/support/test_messages.hpp"
#include "tests/support/two_host_loopback.hpp"
#include "tests/support/udp_socket.hpp"
#include "transports/udp/envelope.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::routed_to;
using test::TestMessage;

struct BigMessage : test::PatternedMessage<4U << 20U, 4096, 31> {
  static constexpr std::string_view kAxonTypeName = "axon_test::AuthBigMessage";
};

std::array<std::byte, udp::kKeyBytes> key_bytes(std::uint8_t seed) {
  std::array<std::byte, udp::kKeyBytes> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>(seed * 31 + i * 7);
  }
  return bytes;
}

void write_key(const std::filesystem::path& path, std::uint8_t seed) {
  const auto bytes = key_bytes(seed);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
}

/// A copy of `config` whose udp security line is `security` (an empty string: none), as NAME.
std::filesystem::path variant(const std::filesystem::path& config, const std::string& name,
                              const std::string& security) {
  std::ifstream in(config);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("  security: ");
  text = text.substr(0, at) + (security.empty() ? "" : "  security: " + security + "\n");
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

/// The receiver's data socket on beta (127.0.0.2): the one port there that is not discovery's.
std::uint16_t data_port_of_beta(std::uint16_t discovery_port) {
  for (const std::uint16_t port : test::own_udp_ports_bound_to("127.0.0.2")) {
    if (port != discovery_port) {
      return port;
    }
  }
  return 0;
}

class UdpAuthLoopback : public ::testing::Test {
 protected:
  void SetUp() override {
    write_key(dir / "domain.key", 1);
    write_key(dir / "other.key", 2);
  }

  std::shared_ptr<Node> node(const std::string& name, const std::string& shm) const { return hosts.node(name, shm); }

  test::TwoHostLoopback hosts{"axon_udp_auth",
                              {.topics = R"(  - {name: big, reliability: reliable, depth: 8}
  - {name: small, reliability: reliable, depth: 256}
)",
                               .liveliness_timeout_ms = 1000,
                               .history_depth = 512,
                               .security = "{key_file: domain.key, allow: [127.0.0.1, 127.0.0.2]}"}};
  const std::filesystem::path dir = hosts.config().parent_path();
};

TEST_F(UdpAuthLoopback, SmallAndFourMebibyteReliableMessagesArriveWholeAndInOrderUnderAKey) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto small_sub = receiver->subscribe<TestMessage>("small", {.depth = 256});
  auto big_sub = receiver->subscribe<BigMessage>("big");
  auto small_pub = sender->advertise<TestMessage>("small");
  auto big_pub = sender->advertise<BigMessage>("big");
  ASSERT_TRUE(small_sub && big_sub && small_pub && big_pub);
  ASSERT_TRUE(eventually([&] { return routed_to(*sender, "big", "beta") && routed_to(*sender, "small", "beta"); }, 5s))
      << "beta never announced itself under the key";

  constexpr std::uint64_t kSmall = 200;
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

  constexpr std::uint64_t kBig = 4;
  std::uint64_t next_big = 1;
  auto drain = [&] {
    while (auto sample = (*big_sub)->take()) {
      EXPECT_TRUE(intact(**sample)) << "message " << (*sample)->sequence << " is corrupt";
      EXPECT_EQ((*sample)->sequence, next_big);
      ++next_big;
    }
  };
  for (std::uint64_t i = 1; i <= kBig; ++i) {
    LoanResult<Loan<BigMessage>> loan = kPoolExhausted;
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
  }
  EXPECT_GT(receiver->network_counters().fragments_in_place, 0U) << "fragments no longer land in their chunk";
}

TEST_F(UdpAuthLoopback, ANodeWithAnotherKeyNeitherReceivesNorInjects) {
  const auto stranger_config = variant(hosts.config(), "stranger.yaml", "{key_file: other.key}");
  auto receiver = node_with("receiver", stranger_config, hosts.shm_dir("b"));
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<TestMessage>("small", {.depth = 256});
  auto publisher = sender->advertise<TestMessage>("small");
  auto stranger_publisher = receiver->advertise<TestMessage>("small_back");
  auto keyed_subscriber = sender->subscribe<TestMessage>("small_back");
  ASSERT_TRUE(subscriber && publisher && stranger_publisher && keyed_subscriber);

  // Both announce every 20 ms; each counts the other's datagrams as forged.
  ASSERT_TRUE(eventually(
      [&] { return sender->network_counters().auth_failures > 5 && receiver->network_counters().auth_failures > 5; },
      5s))
      << "sender auth_failures " << sender->network_counters().auth_failures << ", receiver "
      << receiver->network_counters().auth_failures;
  for (std::uint64_t i = 1; i <= 20; ++i) {
    (void)(*publisher)->publish(TestMessage{});
    (void)(*stranger_publisher)->publish(TestMessage{});
    std::this_thread::sleep_for(5ms);
  }
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE((*subscriber)->take()) << "the node with another key received a message";
  EXPECT_FALSE((*keyed_subscriber)->take()) << "the node with another key injected a message";
  EXPECT_FALSE(routed_to(*sender, "small", "beta"));
  EXPECT_EQ(sender->network_counters().hosts_discovered, 0U);
  EXPECT_EQ(receiver->network_counters().hosts_discovered, 0U);
}

TEST_F(UdpAuthLoopback, ANodeWithoutAKeyIsCountedAsUnauthenticatedAndInjectsNothing) {
  const auto plain_config = variant(hosts.config(), "plain.yaml", "");
  auto receiver = node_with("receiver", plain_config, hosts.shm_dir("b"));
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto plain_publisher = receiver->advertise<TestMessage>("small_back");
  auto keyed_subscriber = sender->subscribe<TestMessage>("small_back");
  ASSERT_TRUE(plain_publisher && keyed_subscriber);

  ASSERT_TRUE(eventually([&] { return sender->network_counters().unauthenticated > 5; }, 5s))
      << "unauthenticated " << sender->network_counters().unauthenticated;
  for (int i = 0; i < 20; ++i) {
    (void)(*plain_publisher)->publish(TestMessage{});
  }
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE((*keyed_subscriber)->take());
  EXPECT_EQ(sender->network_counters().hosts_discovered, 0U);
  // The plain node's parser refuses the keyed node's envelopes as not axon's.
  EXPECT_GT(receiver->network_counters().datagrams_refused, 0U);
}

TEST_F(UdpAuthLoopback, ForgedReplayedCorruptedPlainAndDisallowedDatagramsAreDroppedAndCounted) {
  auto receiver = node("receiver", "b");
  auto sender = node("sender", "a");
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<TestMessage>("small", {.depth = 256});
  ASSERT_TRUE(subscriber);
  ASSERT_TRUE(eventually([&] { return receiver->network_counters().hosts_discovered == 1; }, 5s));
  const std::uint16_t port = data_port_of_beta(hosts.port());
  ASSERT_NE(port, 0) << "no data socket bound to 127.0.0.2";

  // A heartbeat sealed with the domain's key, as a node that has it would send.
  std::array<std::byte, udp::kHeartbeatBytes> heartbeat{};
  ASSERT_NE(
      udp::encode_heartbeat(heartbeat, 0x5EED,
                            udp::Heartbeat{.topic_id = 1, .first_sequence = 1, .last_sequence = 1, .writer_id = 1}),
      0U);
  const udp::EnvelopeSealer keyed(*udp::make_datagram_key(key_bytes(1)));
  udp::EnvelopeBytes envelope{};
  ASSERT_TRUE(keyed.seal(envelope, heartbeat, {}));
  std::vector<std::byte> sealed(envelope.begin(), envelope.end());
  sealed.insert(sealed.end(), heartbeat.begin(), heartbeat.end());
  // A datagram the receiver has not seen, one byte changed: the tag catches it. (A changed copy of one it has
  // seen is a replay: the window is checked first.)
  ASSERT_TRUE(keyed.seal(envelope, heartbeat, {}));
  std::vector<std::byte> corrupted(envelope.begin(), envelope.end());
  corrupted.insert(corrupted.end(), heartbeat.begin(), heartbeat.end());
  corrupted[udp::kEnvelopeBytes + 30] ^= std::byte{0x40};
  const udp::EnvelopeSealer stranger(*udp::make_datagram_key(key_bytes(2)));
  ASSERT_TRUE(stranger.seal(envelope, heartbeat, {}));
  std::vector<std::byte> forged(envelope.begin(), envelope.end());
  forged.insert(forged.end(), heartbeat.begin(), heartbeat.end());

  auto allowed = test::UdpSocket::bind("127.0.0.1");
  auto outsider = test::UdpSocket::bind("127.0.0.3");
  ASSERT_TRUE(allowed && outsider);
  const NetworkCounters before = receiver->network_counters();
  ASSERT_TRUE(allowed->send_to("127.0.0.2", port, sealed));
  ASSERT_TRUE(allowed->send_to("127.0.0.2", port, sealed));  // replayed
  ASSERT_TRUE(allowed->send_to("127.0.0.2", port, corrupted));
  ASSERT_TRUE(allowed->send_to("127.0.0.2", port, forged));
  ASSERT_TRUE(allowed->send_to("127.0.0.2", port, heartbeat));  // plain, no envelope
  ASSERT_TRUE(outsider->send_to("127.0.0.2", port, sealed));    // a source outside the allow-list

  ASSERT_TRUE(eventually(
      [&] {
        const NetworkCounters c = receiver->network_counters();
        return c.replays > before.replays && c.auth_failures >= before.auth_failures + 2 &&
               c.unauthenticated > before.unauthenticated && c.not_allowed > before.not_allowed;
      },
      5s))
      << "replays " << receiver->network_counters().replays << ", auth_failures "
      << receiver->network_counters().auth_failures << ", unauthenticated "
      << receiver->network_counters().unauthenticated << ", not_allowed " << receiver->network_counters().not_allowed
      << " (port " << port << ")";
  const NetworkCounters after = receiver->network_counters();
  EXPECT_EQ(after.replays - before.replays, 1U);
  EXPECT_EQ(after.auth_failures - before.auth_failures, 2U);
  EXPECT_EQ(after.unauthenticated - before.unauthenticated, 1U);
  EXPECT_EQ(after.not_allowed - before.not_allowed, 1U);
}

TEST_F(UdpAuthLoopback, AnAllowListWithoutTheSendersAddressShutsItOut) {
  // Both nodes' file allows beta (127.0.0.2) only: beta drops alpha's datagrams, alpha accepts beta's.
  const auto beta_only = variant(hosts.config(), "beta_only.yaml", "{key_file: domain.key, allow: [127.0.0.2]}");
  auto receiver = node_with("receiver", beta_only, hosts.shm_dir("b"));
  auto sender = node_with("sender", beta_only, hosts.shm_dir("a"));
  ASSERT_TRUE(receiver && sender);
  auto subscriber = receiver->subscribe<TestMessage>("small", {.depth = 256});
  auto publisher = sender->advertise<TestMessage>("small");
  ASSERT_TRUE(subscriber && publisher);

  ASSERT_TRUE(eventually([&] { return receiver->network_counters().not_allowed > 5; }, 5s))
      << "not_allowed " << receiver->network_counters().not_allowed;
  EXPECT_TRUE(eventually([&] { return sender->network_counters().hosts_discovered == 1; }, 5s))
      << "alpha should hear beta";
  for (int i = 0; i < 20; ++i) {
    (void)(*publisher)->publish(TestMessage{});
  }
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE((*subscriber)->take()) << "beta took a message from a host outside its allow-list";
  EXPECT_EQ(receiver->network_counters().hosts_discovered, 0U);
  EXPECT_EQ(sender->network_counters().not_allowed, 0U);
}

TEST_F(UdpAuthLoopback, AKeyFileOthersMayReadIsRefusedAtNodeCreateWithTheFix) {
  ASSERT_EQ(::chmod((dir / "domain.key").c_str(), 0640), 0);
  NodeOptions options = hosts.options("a");
  auto created = Node::create("sender", options);
  ASSERT_FALSE(created);
  const std::string message(created.error().message());
  EXPECT_NE(message.find("has mode 0640"), std::string::npos) << message;
  EXPECT_NE(message.find("chmod 600 " + (dir / "domain.key").string()), std::string::npos) << message;
}

TEST_F(UdpAuthLoopback, AMissingKeyFileIsRefusedAtNodeCreateNamingIt) {
  std::filesystem::remove(dir / "domain.key");
  auto created = Node::create("sender", hosts.options("a"));
  ASSERT_FALSE(created);
  EXPECT_NE(created.error().message().find((dir / "domain.key").string() + "' cannot be opened"), std::string::npos)
      << created.error().message();
}

}  // namespace
}  // namespace axon
