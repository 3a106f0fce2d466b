// The virtual hosts themselves (tests/support/common/netns.hpp): reachable by
// unicast and multicast, a /dev/shm per host, packet loss on demand, nothing
// left behind. Needs root; skipped otherwise.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "tests/support/host_process.hpp"
#include "tests/support/udp_socket.hpp"
#include "tests/support/virtual_hosts_test.hpp"

namespace axon::test {
namespace {

using std::chrono::milliseconds;

constexpr std::uint16_t kProbePort = 7555;
constexpr const char* kProbeGroup = "239.255.77.1";

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::span<const std::byte> bytes_of(const std::string& text) { return std::as_bytes(std::span(text)); }

/// On its host: joins the probe group, prints READY, then waits for one
/// unicast and one multicast datagram and prints what came.
int receive_unicast_and_multicast(const std::string& own_address) {
  auto socket = UdpSocket::bind("0.0.0.0", kProbePort);
  if (!socket || !socket->join(kProbeGroup, own_address)) {
    std::printf("ERROR cannot listen on %u\n", kProbePort);
    return 2;
  }
  std::printf("READY\n");
  std::fflush(stdout);
  std::array<std::byte, 256> buffer{};
  bool unicast = false;
  bool multicast = false;
  for (int i = 0; i < 100 && !(unicast && multicast); ++i) {
    if (const auto n = socket->receive(buffer, milliseconds(100))) {
      const std::string text(reinterpret_cast<const char*>(buffer.data()), *n);
      unicast = unicast || text == "unicast";
      multicast = multicast || text == "multicast";
    }
  }
  std::printf("GOT unicast=%d multicast=%d\n", unicast ? 1 : 0, multicast ? 1 : 0);
  return unicast && multicast ? 0 : 1;
}

TEST_F(VirtualHostsTest, HostsReachEachOtherByUnicastAndMulticast) {
  auto hosts = VirtualHosts::create({.hosts = 3});
  ASSERT_TRUE(hosts) << hosts.error().message();
  std::vector<ChildProcess> receivers;
  for (std::size_t k = 1; k < 3; ++k) {
    const std::string address = hosts->host(k).address;
    receivers.push_back(run_on_host(*hosts, k, [address] { return receive_unicast_and_multicast(address); }));
    ASSERT_TRUE(receivers.back().wait_for_line("READY", milliseconds(10'000))) << receivers.back().output();
  }

  auto sender = run_on_host(*hosts, 0, [&]() -> int {
    auto socket = UdpSocket::bind();
    if (!socket) {
      return 2;
    }
    for (int round = 0; round < 20; ++round) {  // a few times: the first may meet an unresolved neighbour
      for (std::size_t k = 1; k < 3; ++k) {
        (void)socket->send_to(hosts->host(k).address, kProbePort, bytes_of("unicast"));
      }
      (void)socket->send_to(kProbeGroup, kProbePort, bytes_of("multicast"));
      ::usleep(20'000);
    }
    return 0;
  });

  EXPECT_EQ(sender.wait(milliseconds(10'000)), 0);
  for (auto& r : receivers) {
    EXPECT_EQ(r.wait(milliseconds(10'000)), 0) << r.output();
    EXPECT_NE(r.output().find("GOT unicast=1 multicast=1"), std::string::npos) << r.output();
  }
}

TEST_F(VirtualHostsTest, GivesEachHostItsOwnDevShmSharedByItsProcesses) {
  auto hosts = VirtualHosts::create({.hosts = 2});
  ASSERT_TRUE(hosts) << hosts.error().message();
  const std::string probe = "/dev/shm/axon_netns_probe_" + std::to_string(::getpid());

  auto writer = run_on_host(*hosts, 0, [&] { return std::ofstream(probe).good() ? 0 : 1; });
  ASSERT_EQ(writer.wait(milliseconds(10'000)), 0) << writer.output();
  auto same_host = run_on_host(*hosts, 0, [&] { return exists(probe) ? 0 : 1; });
  auto other_host = run_on_host(*hosts, 1, [&] { return exists(probe) ? 1 : 0; });

  EXPECT_EQ(same_host.wait(milliseconds(10'000)), 0) << "a second process on host 0 does not see its /dev/shm";
  EXPECT_EQ(other_host.wait(milliseconds(10'000)), 0) << "host 1 sees host 0's /dev/shm";
  EXPECT_FALSE(exists(probe)) << "the test's own /dev/shm got host 0's file";
}

TEST_F(VirtualHostsTest, DropsIncomingPacketsWithInjectedLossUntilRemoved) {
  auto hosts = VirtualHosts::create({.hosts = 2, .topology = Topology::kVethPair});
  ASSERT_TRUE(hosts) << hosts.error().message();
  ASSERT_TRUE(hosts->add_packet_loss(1, 0.5)) << "iptables in a network namespace";

  // Counts datagrams "1".."400" until "end", which is resent until it gets through.
  auto count_received = [&]() -> int {
    auto socket = UdpSocket::bind(hosts->host(1).address, kProbePort);
    if (!socket) {
      return 2;
    }
    std::printf("READY\n");
    std::fflush(stdout);
    std::array<std::byte, 64> buffer{};
    int received = 0;
    for (;;) {
      const auto n = socket->receive(buffer, milliseconds(5'000));
      if (!n || std::string(reinterpret_cast<const char*>(buffer.data()), *n) == "end") {
        break;
      }
      ++received;
    }
    std::printf("RECEIVED %d\n", received);
    return 0;
  };
  auto send_400 = [&]() -> int {
    auto socket = UdpSocket::bind();
    for (int i = 1; i <= 400 && socket; ++i) {
      (void)socket->send_to(hosts->host(1).address, kProbePort, bytes_of(std::to_string(i)));
      ::usleep(200);  // well below what the receive buffer holds
    }
    for (int i = 0; i < 50 && socket; ++i) {
      (void)socket->send_to(hosts->host(1).address, kProbePort, bytes_of("end"));
    }
    return socket ? 0 : 2;
  };
  auto received_with = [&]() -> int {
    auto receiver = run_on_host(*hosts, 1, count_received);
    if (!receiver.wait_for_line("READY", milliseconds(10'000))) {
      return -1;
    }
    auto sender = run_on_host(*hosts, 0, send_400);
    sender.wait(milliseconds(20'000));
    const auto line = receiver.wait_for_line("RECEIVED", milliseconds(20'000));
    return line ? std::stoi(line->substr(9)) : -1;
  };

  const int lossy = received_with();
  EXPECT_GT(lossy, 100) << "50 % loss dropped far more than half";
  EXPECT_LT(lossy, 300) << "50 % loss dropped far less than half";
  ASSERT_TRUE(hosts->remove_packet_loss(1, 0.5));
  EXPECT_EQ(received_with(), 400);
}

TEST_F(VirtualHostsTest, DeletesNamespacesAndMountsWhenDestroyed) {
  std::vector<std::string> paths;
  {
    auto hosts = VirtualHosts::create({.hosts = 3});
    ASSERT_TRUE(hosts) << hosts.error().message();
    for (std::size_t k = 0; k < hosts->size(); ++k) {
      paths.push_back("/run/netns/" + hosts->host(k).netns);
      paths.push_back(hosts->host(k).shm_dir);
    }
    for (const auto& p : paths) {
      EXPECT_TRUE(exists(p)) << p;
    }
  }
  for (const auto& p : paths) {
    EXPECT_FALSE(exists(p)) << p << " left behind";
  }
}

TEST_F(VirtualHostsTest, SweepsWhatAKilledCreatorLeftBehind) {
  // A child makes hosts and dies by SIGKILL: its destructor never runs.
  auto creator = ChildProcess::fork_and_run([]() -> int {
    auto hosts = VirtualHosts::create({.hosts = 2});
    if (!hosts) {
      std::printf("ERROR %s\n", std::string(hosts.error().message()).c_str());
      return 2;
    }
    std::printf("MADE %s %s\n", hosts->host(0).netns.c_str(), hosts->host(0).shm_dir.c_str());
    std::fflush(stdout);
    ::raise(SIGKILL);
    return 0;
  });
  const auto made = creator.wait_for_line("MADE", milliseconds(20'000));
  ASSERT_TRUE(made) << creator.output();
  creator.wait(milliseconds(10'000));
  const std::string netns = made->substr(5, made->find(' ', 5) - 5);
  const std::string shm_dir = made->substr(made->find(' ', 5) + 1);
  ASSERT_TRUE(exists("/run/netns/" + netns)) << "the killed creator left nothing to sweep";

  EXPECT_EQ(sweep_leftover_virtual_hosts(), "");

  EXPECT_FALSE(exists("/run/netns/" + netns));
  EXPECT_FALSE(exists(shm_dir));
}

}  // namespace
}  // namespace axon::test
