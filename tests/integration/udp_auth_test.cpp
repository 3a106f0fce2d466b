// Authenticated datagrams across virtual hosts (network namespaces, real
// axon_net_peer processes; needs root, skipped otherwise): a keyed publisher
// (host 0) and subscriber (host 1) lose nothing while a node with another key,
// then a node without one, and an attacker (all on host 2) sending
// captured (replayed), corrupted and spoofed datagrams are all dropped and
// counted; a key file others may read is refused. The loopback version:
// tests/unit/udp/udp_auth_loopback_test.cpp.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

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
#include "tests/support/garbage_datagrams.hpp"
#include "tests/support/host_process.hpp"
#include "tests/support/peer_summary.hpp"
#include "tests/support/udp_socket.hpp"
#include "tests/support/virtual_hosts_test.hpp"

namespace axon::test {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kStartTimeout{15'000};
constexpr milliseconds kExitTimeout{15'000};
/// Datagrams the attacker captures on the subscriber's host and sends again.
constexpr std::size_t kCaptured = 40;

void write_key(const std::string& path, char fill, mode_t mode) {
  std::ofstream(path, std::ios::binary) << std::string(32, fill);
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

class UdpAuthTest : public VirtualHostsTest {
 protected:
  void SetUp() override {
    VirtualHostsTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    auto hosts = VirtualHosts::create({.hosts = 3});
    ASSERT_TRUE(hosts) << hosts.error().message();
    virtual_hosts.emplace(std::move(*hosts));
    write_key(key, 'k', 0600);
    write_key(other_key, 'o', 0600);
  }

  Deployment deployment(const std::string& security) const {
    Deployment d;
    d.domain = unique_domain();
    d.nodes = {{"pub", 0}, {"sub", 1}, {"stranger", 2}, {"intruder", 2}};
    d.topics = {{.name = "net/keyed", .reliability = "reliable", .depth = 64, .history = "keep_all"}};
    d.security = security;
    return d;
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

  std::optional<VirtualHosts> virtual_hosts;
  TempDir config_dir{"axon-udp-auth"};
  std::string key = config_dir.path() + "/domain.key";
  std::string other_key = config_dir.path() + "/other.key";
};

std::vector<std::string> message_args(std::uint64_t count, std::uint64_t timeout_ms) {
  return {"--topic", "net/keyed",           "--bytes",      "2048",
          "--count", std::to_string(count), "--timeout-ms", std::to_string(timeout_ms)};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// On the subscriber's host: copies of UDP datagrams that arrive for `port`
/// and start with the envelope's magic, as a raw IP socket sees them.
std::vector<std::vector<std::byte>> capture(std::uint16_t port, std::size_t count, milliseconds timeout) {
  std::vector<std::vector<std::byte>> captured;
  const int fd = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) {
    return captured;
  }
  const auto end = std::chrono::steady_clock::now() + timeout;
  std::vector<std::byte> packet(70000);
  while (captured.size() < count && std::chrono::steady_clock::now() < end) {
    pollfd readable{.fd = fd, .events = POLLIN, .revents = 0};
    if (::poll(&readable, 1, 100) <= 0) {
      continue;
    }
    const ssize_t n = ::recv(fd, packet.data(), packet.size(), 0);
    if (n < 28) {
      continue;
    }
    const std::size_t ip_bytes = (std::to_integer<std::size_t>(packet[0]) & 0x0FU) * 4;
    std::uint16_t destination = 0;
    std::memcpy(&destination, packet.data() + ip_bytes + 2, 2);
    const std::size_t payload = ip_bytes + 8;
    if (ntohs(destination) != port || static_cast<std::size_t>(n) < payload + 4 ||
        std::memcmp(packet.data() + payload, "AXNS", 4) != 0) {
      continue;
    }
    captured.emplace_back(packet.begin() + static_cast<std::ptrdiff_t>(payload), packet.begin() + n);
  }
  ::close(fd);
  return captured;
}

TEST_F(UdpAuthTest, AKeyedPairLosesNothingWhileStrangersAndForgedReplayedAndCorruptedDatagramsAreDropped) {
  const Deployment d = deployment("{key_file: " + key + "}");
  const std::string config = config_dir.write("keyed.yaml", to_yaml(d, *virtual_hosts));
  Deployment stranger_d = d;
  stranger_d.security = "{key_file: " + other_key + "}";
  const std::string stranger_config = config_dir.write("stranger.yaml", to_yaml(stranger_d, *virtual_hosts));
  Deployment plain_d = d;
  plain_d.security.clear();
  const std::string plain_config = config_dir.write("plain.yaml", to_yaml(plain_d, *virtual_hosts));

  constexpr std::uint64_t kCount = 1500;  // 7.5 s at 200 Hz: the attacks happen while it flows
  ChildProcess sub = start_peer(1, config, "sub", "subscriber", message_args(kCount, 60'000));
  ASSERT_TRUE(sub.wait_for_line("READY", kStartTimeout)) << sub.output();
  // The stranger listens for the first 5 s of the traffic; then the intruder takes its host (on one host the
  // intruder's messages would reach it through shared memory, as any local node's).
  ChildProcess stranger = start_peer(2, stranger_config, "stranger", "subscriber", message_args(kCount, 5'000));
  ASSERT_TRUE(stranger.wait_for_line("READY", kStartTimeout)) << stranger.output();
  ChildProcess pub =
      start_peer(0, config, "pub", "publisher",
                 message_args(kCount, 60'000) +
                     std::vector<std::string>{"--rate-hz", "200", "--wait-subscribers", "1", "--linger-ms", "60000"});
  ASSERT_TRUE(sub.wait_for_line("FIRST", milliseconds(20'000))) << sub.output();
  const auto st = line_of(stranger, "SUMMARY", milliseconds(30'000));
  // A node without the key publishes the same topic from host 2 while the keyed traffic flows.
  ChildProcess intruder =
      start_peer(2, plain_config, "intruder", "publisher",
                 message_args(300, 20'000) + std::vector<std::string>{"--rate-hz", "100", "--wait-subscribers", "0"});
  ASSERT_TRUE(intruder.wait_for_line("READY", kStartTimeout)) << "intruder: " << intruder.output();

  // The subscriber's data socket: bound to host 1's address on a port other than discovery's.
  const std::string target = virtual_hosts->host(1).address;
  const std::string captured_file = config_dir.path() + "/captured.bin";
  ChildProcess capturer = run_on_host(*virtual_hosts, 1, [&] {
    std::uint16_t data_port = 0;
    for (const std::uint16_t port : udp_ports_bound_to(target)) {
      data_port = port != d.discovery_port ? port : data_port;
    }
    const auto captured = capture(data_port, kCaptured, milliseconds(5'000));
    std::ofstream out(captured_file, std::ios::binary);
    for (const auto& datagram : captured) {
      const auto size = static_cast<std::uint32_t>(datagram.size());
      out.write(reinterpret_cast<const char*>(&size), sizeof(size));
      out.write(reinterpret_cast<const char*>(datagram.data()), static_cast<std::streamsize>(datagram.size()));
    }
    std::printf("CAPTURED %zu port=%u\n", captured.size(), data_port);
    return captured.empty() ? 1 : 0;
  });
  const auto captured_line = capturer.wait_for_line("CAPTURED", milliseconds(10'000));
  ASSERT_EQ(capturer.wait(kExitTimeout), 0) << capturer.output();
  ASSERT_TRUE(captured_line) << capturer.output();
  const std::size_t captured = std::stoul(captured_line->substr(9));
  const auto data_port = static_cast<std::uint16_t>(std::stoul(captured_line->substr(captured_line->find("=") + 1)));

  // From host 2: every captured datagram again (replays), corrupted (in its payload: a replay still; in its counter:
  // forged), and
  // the parser test's garbage (no envelope: spoofed), at the data and the discovery port.
  const auto garbage = garbage_datagrams(static_cast<std::uint32_t>(::getpid()));
  ChildProcess attacker = run_on_host(*virtual_hosts, 2, [&]() -> int {
    auto socket = UdpSocket::bind();
    if (!socket) {
      return 2;
    }
    std::ifstream in(captured_file, std::ios::binary);
    std::uint32_t size = 0;
    int failed = 0;
    while (in.read(reinterpret_cast<char*>(&size), sizeof(size))) {
      std::vector<std::byte> datagram(size);
      in.read(reinterpret_cast<char*>(datagram.data()), size);
      failed += socket->send_to(target, data_port, datagram) ? 0 : 1;
      // A payload byte changed: still a replay (the window is checked before the tag).
      datagram[datagram.size() / 2 + 20] ^= std::byte{0x10};
      failed += socket->send_to(target, data_port, datagram) ? 0 : 1;
      // The counter's high byte changed too (a counter not seen yet): the tag fails.
      datagram[23] ^= std::byte{0x01};
      failed += socket->send_to(target, data_port, datagram) ? 0 : 1;
      ::usleep(500);
    }
    for (const std::uint16_t port : {data_port, d.discovery_port}) {
      for (const auto& g : garbage) {
        failed += socket->send_to(target, port, g.bytes) ? 0 : 1;
        ::usleep(500);
      }
    }
    return failed == 0 ? 0 : 1;
  });
  ASSERT_EQ(attacker.wait(milliseconds(30'000)), 0) << attacker.output();

  const auto s = line_of(sub, "SUMMARY", milliseconds(60'000));
  pub.kill(SIGTERM);
  pub.wait(kExitTimeout);
  intruder.kill(SIGTERM);
  intruder.wait(kExitTimeout);
  ASSERT_TRUE(s) << "subscriber: " << sub.output();
  // Nothing lost, nothing of the intruder's or the attacker's taken for a message.
  EXPECT_EQ(s->number("received"), kCount) << s->line();
  EXPECT_EQ(s->number("first"), 1U) << s->line();
  EXPECT_EQ(s->number("last"), kCount) << s->line();
  EXPECT_EQ(s->number("missing"), 0U) << s->line();
  EXPECT_EQ(s->number("out_of_order"), 0U) << s->line();
  EXPECT_EQ(s->number("duplicates"), 0U) << s->line();
  EXPECT_EQ(s->number("corrupt"), 0U) << s->line();
  EXPECT_EQ(s->number("hosts_discovered"), 1U) << "only the keyed publisher's host: " << s->line();
  // Each captured datagram was accepted once already: sent again it is a replay (a few may have been lost in the
  // socket buffer the first time, then the copy is new).
  EXPECT_GE(s->number("replays"), 2 * captured * 9 / 10) << captured << " captured, sent again twice: " << s->line();
  EXPECT_GE(s->number("auth_failures"), captured) << captured << " with a corrupted counter: " << s->line();
  EXPECT_EQ(sub.wait(kExitTimeout), 0) << "the subscriber did not survive the attacks";
  ASSERT_TRUE(st) << "stranger: " << stranger.output();
  EXPECT_EQ(st->number("received"), 0U) << "the node with another key received: " << st->line();
  EXPECT_GT(st->number("auth_failures"), 0U) << "the keyed nodes' datagrams: " << st->line();
  // No envelope: the garbage (its oversized datagrams refused before, as too long) and the intruder's datagrams.
  EXPECT_GT(s->number("unauthenticated") + s->number("datagrams_refused"), 2 * garbage.size()) << s->line();
}

TEST_F(UdpAuthTest, AKeyFileOthersMayReadIsRefusedWithTheFix) {
  ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
  const Deployment d = deployment("{key_file: " + key + "}");
  const std::string config = config_dir.write("keyed.yaml", to_yaml(d, *virtual_hosts));
  ChildProcess pub = start_peer(0, config, "pub", "publisher", message_args(1, 5'000));
  const auto error = pub.wait_for_line("ERROR", kStartTimeout);
  ASSERT_TRUE(error) << pub.output();
  EXPECT_NE(error->find("has mode 0644"), std::string::npos) << *error;
  EXPECT_NE(error->find("chmod 600 " + key), std::string::npos) << *error;
  EXPECT_NE(pub.wait(kExitTimeout), 0);
}

}  // namespace
}  // namespace axon::test
