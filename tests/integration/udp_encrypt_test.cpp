// Encrypted datagrams (`udp: security: encrypt: true`) across virtual hosts
// (network namespaces, real axon_net_peer processes; needs root, skipped
// otherwise): a capture on the subscriber's host (an AF_PACKET socket on its
// interface) sees the known bytes of the messages' bodies when datagrams are
// only authenticated, and none of them when they are encrypted, while the
// subscriber gets every message whole; RELIABLE messages still arrive all
// and in order under 10 % loss. The loopback version:
// tests/unit/udp/udp_encrypt_loopback_test.cpp.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/support/deployment_yaml.hpp"
#include "tests/support/host_process.hpp"
#include "tests/support/net_messages.hpp"
#include "tests/support/peer_summary.hpp"
#include "tests/support/virtual_hosts_test.hpp"

namespace axon::test {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kStartTimeout{15'000};
constexpr milliseconds kExitTimeout{15'000};
/// The publisher's id: its messages' body words are net_body_word(kPublisherId, sequence, i).
constexpr std::uint32_t kPublisherId = 0x5EC12E7U;
/// 64 KiB messages: 48 fragments each, so the capture sees the bodies of fragments after the first too.
constexpr std::size_t kBytes = 65536;

std::vector<std::string> message_args(std::uint64_t count, std::uint64_t timeout_ms) {
  return {"--topic", "net/secret",          "--bytes",      std::to_string(kBytes),
          "--count", std::to_string(count), "--timeout-ms", std::to_string(timeout_ms)};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Every body word of messages 1..count of kPublisherId, sorted: the known bytes to look for on the wire.
std::vector<std::uint64_t> known_words(std::uint64_t count) {
  std::vector<std::uint64_t> words;
  for (std::uint64_t sequence = 1; sequence <= count; ++sequence) {
    for (std::size_t i = 0; i < NetMessage<kBytes>::kWords; ++i) {
      words.push_back(net_body_word(kPublisherId, sequence, i));
    }
  }
  std::sort(words.begin(), words.end());
  return words;
}

struct Capture {
  std::size_t packets = 0;   ///< IPv4 UDP packets seen on the interface, both directions.
  std::size_t bytes = 0;     ///< Their UDP payload bytes.
  std::size_t matching = 0;  ///< Packets holding 8 bytes, at any offset, that are a known body word.
};

/// Set by SIGTERM in the capturing process: the test has what it waited for, the capture ends.
volatile std::sig_atomic_t capture_stop = 0;
extern "C" void stop_capture(int /*signal*/) { capture_stop = 1; }

/// On a virtual host: every IPv4 UDP packet on `interface` until SIGTERM (at most `longest`), searched for `words`.
/// Ended by the test once the subscriber has every message, not after a fixed time: a slow run (a sanitizer, a
/// loaded machine) would otherwise stop capturing before the last messages crossed.
Capture capture(const std::string& interface, const std::vector<std::uint64_t>& words, milliseconds longest) {
  Capture seen;
  (void)std::signal(SIGTERM, stop_capture);
  const int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));  // IP packets, no link header
  if (fd < 0) {
    return seen;
  }
  sockaddr_ll at{};
  at.sll_family = AF_PACKET;
  at.sll_protocol = htons(ETH_P_IP);
  at.sll_ifindex = static_cast<int>(::if_nametoindex(interface.c_str()));
  const int buffer = 64 << 20;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  if (at.sll_ifindex == 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof(at)) != 0) {
    ::close(fd);
    return seen;
  }
  std::printf("CAPTURING on %s\n", interface.c_str());
  std::fflush(stdout);
  const auto end = std::chrono::steady_clock::now() + longest;
  std::vector<std::byte> packet(70000);
  for (;;) {
    // Once told to stop, what the socket still holds is read too (it crossed the wire before the stop).
    const bool stopping = capture_stop != 0 || std::chrono::steady_clock::now() >= end;
    pollfd readable{.fd = fd, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&readable, 1, stopping ? 0 : 50);
    if (ready == 0 && stopping) {
      break;
    }
    if (ready <= 0) {
      continue;  // nothing yet, or the stop signal interrupted the wait
    }
    const ssize_t n = ::recv(fd, packet.data(), packet.size(), 0);
    if (n < 28 || std::to_integer<int>(packet[9]) != IPPROTO_UDP) {
      continue;
    }
    const std::size_t udp = (std::to_integer<std::size_t>(packet[0]) & 0x0FU) * 4 + 8;
    ++seen.packets;
    seen.bytes += static_cast<std::size_t>(n) - std::min(udp, static_cast<std::size_t>(n));
    for (std::size_t i = udp; i + 8 <= static_cast<std::size_t>(n); ++i) {
      std::uint64_t word = 0;
      std::memcpy(&word, packet.data() + i, sizeof(word));  // little-endian, as the message's words in memory
      if (std::binary_search(words.begin(), words.end(), word)) {
        ++seen.matching;
        break;
      }
    }
  }
  ::close(fd);
  return seen;
}

class UdpEncryptTest : public VirtualHostsTest {
 protected:
  void SetUp() override {
    VirtualHostsTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    auto hosts = VirtualHosts::create({.hosts = 2});
    ASSERT_TRUE(hosts) << hosts.error().message();
    virtual_hosts.emplace(std::move(*hosts));
    std::ofstream(key, std::ios::binary) << std::string(32, 'e');
    ASSERT_EQ(::chmod(key.c_str(), 0600), 0);
  }

  std::string config(const std::string& name, const std::string& security) const {
    Deployment d;
    d.domain = unique_domain();
    d.nodes = {{"pub", 0}, {"sub", 1}};
    d.topics = {{.name = "net/secret", .reliability = "reliable", .depth = 64, .history = "keep_all"}};
    d.security = security;
    return config_dir.write(name, to_yaml(d, *virtual_hosts));
  }

  ChildProcess start_peer(std::size_t k, const std::string& config, const std::string& node, const std::string& role,
                          const std::vector<std::string>& args) {
    std::vector<std::string> argv{net_peer_path(), "--config", config, "--node", node, "--role", role};
    argv.insert(argv.end(), args.begin(), args.end());
    return spawn_on_host(*virtual_hosts, k, argv);
  }

  static std::optional<PeerSummary> line_of(ChildProcess& p, const std::string& word, milliseconds timeout) {
    const auto line = p.wait_for_line(word, timeout);
    if (!line) {
      return std::nullopt;
    }
    std::printf("  %s\n", line->c_str());
    return PeerSummary(*line);
  }

  /// Runs a publisher on host 0 and a subscriber on host 1 under `security` while host 1 captures; returns what the
  /// capture saw, after checking that every message arrived whole and in order.
  std::optional<Capture> run_and_capture(const std::string& name, const std::string& security) {
    constexpr std::uint64_t kCount = 150;
    const std::string file = config(name + ".yaml", security);
    const std::vector<std::uint64_t> words = known_words(kCount);
    ChildProcess sub = start_peer(1, file, "sub", "subscriber", message_args(kCount, 60'000));
    EXPECT_TRUE(sub.wait_for_line("READY", kStartTimeout)) << sub.output();
    const std::string interface = virtual_hosts->host(1).interface;
    ChildProcess capturer = run_on_host(*virtual_hosts, 1, [&] {
      const Capture seen = capture(interface, words, milliseconds(120'000));
      std::printf("CAPTURED packets=%zu bytes=%zu matching=%zu\n", seen.packets, seen.bytes, seen.matching);
      return seen.packets == 0 ? 1 : 0;
    });
    EXPECT_TRUE(capturer.wait_for_line("CAPTURING", milliseconds(10'000))) << capturer.output();
    ChildProcess pub =
        start_peer(0, file, "pub", "publisher",
                   message_args(kCount, 60'000) +
                       std::vector<std::string>{"--rate-hz", "100", "--wait-subscribers", "1", "--linger-ms", "60000",
                                                "--publisher-id", std::to_string(kPublisherId)});
    const auto s = line_of(sub, "SUMMARY", milliseconds(60'000));
    capturer.kill(SIGTERM);  // every message crossed the wire (or never will): the capture has what it needs
    const auto captured = line_of(capturer, "CAPTURED", milliseconds(20'000));
    pub.kill(SIGTERM);
    pub.wait(kExitTimeout);
    EXPECT_EQ(capturer.wait(kExitTimeout), 0) << capturer.output();
    if (!s || !captured) {
      ADD_FAILURE() << "subscriber: " << sub.output() << "\ncapturer: " << capturer.output();
      return std::nullopt;
    }
    EXPECT_EQ(s->number("received"), kCount) << s->line();
    EXPECT_EQ(s->number("missing"), 0U) << s->line();
    EXPECT_EQ(s->number("out_of_order"), 0U) << s->line();
    EXPECT_EQ(s->number("corrupt"), 0U) << s->line();
    EXPECT_EQ(s->number("auth_failures") + s->number("not_encrypted") + s->number("unexpectedly_encrypted"), 0U)
        << s->line();
    EXPECT_EQ(sub.wait(kExitTimeout), 0);
    return Capture{.packets = captured->number("packets"),
                   .bytes = captured->number("bytes"),
                   .matching = captured->number("matching")};
  }

  std::optional<VirtualHosts> virtual_hosts;
  TempDir config_dir{"axon-udp-encrypt"};
  std::string key = config_dir.path() + "/domain.key";
};

TEST_F(UdpEncryptTest, ACaptureOnTheWireSeesThePayloadWhenAuthenticatedAndNoneOfItWhenEncrypted) {
  const auto authenticated = run_and_capture("authenticated", "{key_file: " + key + "}");
  const auto encrypted = run_and_capture("encrypted", "{key_file: " + key + ", encrypt: true}");
  ASSERT_TRUE(authenticated && encrypted);

  // 150 messages of 48 fragments: thousands of packets each time, well beyond the bodies' 9.6 MiB.
  EXPECT_GT(authenticated->bytes, std::size_t{150} * kBytes * 9 / 10);
  EXPECT_GT(encrypted->bytes, std::size_t{150} * kBytes * 9 / 10);
  EXPECT_GT(authenticated->matching, authenticated->packets / 2)
      << "authenticated only: the payload is on the wire in clear (the capture works)";
  EXPECT_EQ(encrypted->matching, 0U) << "encrypted: a known 8-byte word of a body appeared on the wire";
}

TEST_F(UdpEncryptTest, ReliableEncryptedMessagesArriveAllAndInOrderDespiteTenPercentLoss) {
  const std::string config = this->config("lossy.yaml", "{key_file: " + key + ", encrypt: true}");
  ASSERT_TRUE(virtual_hosts->add_packet_loss(1, 0.1));
  constexpr std::uint64_t kCount = 150;
  const auto args = message_args(kCount, 90'000);
  ChildProcess sub = start_peer(1, config, "sub", "subscriber", args);
  ASSERT_TRUE(sub.wait_for_line("READY", kStartTimeout)) << sub.output();
  ChildProcess pub =
      start_peer(0, config, "pub", "publisher",
                 args + std::vector<std::string>{"--rate-hz", "50", "--wait-subscribers", "1", "--linger-ms", "90000"});

  const auto s = line_of(sub, "SUMMARY", milliseconds(90'000));
  pub.kill(SIGTERM);
  const auto p = line_of(pub, "PUBLISHER", kExitTimeout);
  pub.wait(kExitTimeout);

  ASSERT_TRUE(s) << "subscriber: " << sub.output();
  EXPECT_EQ(s->number("received"), kCount) << s->line();
  EXPECT_EQ(s->number("first"), 1U) << s->line();
  EXPECT_EQ(s->number("last"), kCount) << s->line();
  EXPECT_EQ(s->number("missing"), 0U) << s->line();
  EXPECT_EQ(s->number("out_of_order"), 0U) << s->line();
  EXPECT_EQ(s->number("duplicates"), 0U) << s->line();
  EXPECT_EQ(s->number("corrupt"), 0U) << s->line();
  EXPECT_EQ(s->number("messages_lost"), 0U) << s->line();
  EXPECT_GT(s->number("nacks_sent"), 0U) << "10 % loss and no NACK? " << s->line();
  EXPECT_EQ(s->number("auth_failures"), 0U) << s->line();
  EXPECT_EQ(sub.wait(kExitTimeout), 0);
  ASSERT_TRUE(p) << "publisher: " << pub.output();
  EXPECT_GT(p->number("fragments_resent"), 0U) << p->line();
}

}  // namespace
}  // namespace axon::test
