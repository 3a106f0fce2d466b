// ANNOUNCE's RDMA reachability end to end: what one participant is told to
// announce (set_rdma_reachability) is what a participant of another host
// reads for it after discovery (remote_rdma), over real sockets between two
// "hosts" of this process on loopback (127.0.0.1 and 127.0.0.2, static peers),
// each with its own shared-memory directory.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "tests/support/eventually.hpp"
#include "tests/support/two_host_loopback.hpp"
#include "tests/support/udp_socket.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/participant.hpp"
#include "transports/udp/remote_hosts.hpp"

namespace axon::udp {
namespace {

using namespace std::chrono_literals;
using test::eventually;

constexpr std::uint32_t kAlpha = 0x7F000001U;  // 127.0.0.1
constexpr std::uint32_t kBeta = 0x7F000002U;   // 127.0.0.2

class RdmaAnnounce : public ::testing::Test {
 protected:
  /// The participant of node `name` on `host` at `ipv4`, its shared memory in `shm` (a or b).
  std::shared_ptr<Participant> participant(const std::string& name, const std::string& host, std::uint32_t ipv4,
                                           const std::string& shm) {
    auto transport = shm::ShmTransport::create(shm::ShmConfig{
        .domain_id = hosts.domain(), .node_name = name, .shm_dir = hosts.shm_dir(shm), .chunk_classes = {{256, 16}}});
    EXPECT_TRUE(transport) << transport.error().message();
    if (!transport) {
      return nullptr;
    }
    ParticipantConfig config{.domain_id = hosts.domain(),
                             .node_name = name,
                             .host = host,
                             .host_ipv4 = ipv4,
                             .udp = {},
                             .static_peers = {ipv4 == kAlpha ? kBeta : kAlpha}};
    config.udp.discovery_port = hosts.port();
    config.udp.heartbeat_period_ms = 20;
    auto created = Participant::create(std::move(config), *transport);
    EXPECT_TRUE(created) << created.error().message();
    return created ? *created : nullptr;
  }

  test::TwoHostLoopback hosts{"axon_rdma_announce", {.topics = ""}};
};

TEST_F(RdmaAnnounce, ARemoteParticipantsAnnouncedRdmaPortIsReadAfterDiscovery) {
  auto alpha = participant("sender", "alpha", kAlpha, "a");
  auto beta = participant("receiver", "beta", kBeta, "b");
  ASSERT_TRUE(alpha && beta);
  const std::uint64_t alpha_id = alpha->sender_id();

  // Before anything is set: discovered, not reachable by RDMA.
  ASSERT_TRUE(eventually([&] { return beta->remote_rdma(alpha_id).has_value(); }, 5s)) << "beta never heard alpha";
  EXPECT_EQ(*beta->remote_rdma(alpha_id), RdmaReachability{});
  ASSERT_TRUE(eventually([&] { return alpha->remote_rdma(beta->sender_id()).has_value(); }, 5s));

  ASSERT_TRUE(alpha->set_rdma_reachability({.cm_port = 7471, .reachable = true}));

  const RdmaReachability announced{.cm_port = 7471, .reachable = true};
  ASSERT_TRUE(eventually([&] { return beta->remote_rdma(alpha_id) == announced; }, 5s))
      << "beta reads port " << beta->remote_rdma(alpha_id)->cm_port;
  EXPECT_EQ(alpha->remote_rdma(beta->sender_id()), RdmaReachability{}) << "beta announced nothing of RDMA";
  EXPECT_EQ(beta->remote_rdma(alpha_id + 1), std::nullopt) << "an id nobody announced";

  // And when RDMA goes away, the next announcement says so.
  ASSERT_TRUE(alpha->set_rdma_reachability({}));
  EXPECT_TRUE(eventually([&] { return beta->remote_rdma(alpha_id) == RdmaReachability{}; }, 5s));
  EXPECT_EQ(beta->counters().datagrams_refused, 0U);
}

TEST_F(RdmaAnnounce, AReachabilityTheWireWouldRefuseIsRefusedAndNotAnnounced) {
  auto alpha = participant("sender", "alpha", kAlpha, "a");
  ASSERT_TRUE(alpha);
  ASSERT_TRUE(alpha->set_rdma_reachability({.cm_port = 7471, .reachable = true}));

  const auto no_port = alpha->set_rdma_reachability({.cm_port = 0, .reachable = true});
  const auto no_flag = alpha->set_rdma_reachability({.cm_port = 7471, .reachable = false});

  ASSERT_FALSE(no_port);
  EXPECT_EQ(no_port.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(no_port.error().message().find("rdma.cm_port"), std::string::npos) << no_port.error().message();
  ASSERT_FALSE(no_flag);
  EXPECT_EQ(no_flag.error().code(), ErrorCode::kInvalidArgument);
  // What was set before stays announced: beta, started after the refusals,
  // hears it (an invalid value would have made the encoder refuse every ANNOUNCE).
  auto beta = participant("receiver", "beta", kBeta, "b");
  ASSERT_TRUE(beta);
  const RdmaReachability announced{.cm_port = 7471, .reachable = true};
  EXPECT_TRUE(eventually([&] { return beta->remote_rdma(alpha->sender_id()) == announced; }, 5s));
  EXPECT_EQ(beta->counters().datagrams_refused, 0U);
}

// A peer of wire version 2 (ANNOUNCE's bytes 76..79 reserved there) is
// refused and counted like any other version, never half read; the same
// announcement at version 3 is heard, its reachability kept.
TEST_F(RdmaAnnounce, AnAnnouncementOfTheLastWireVersionIsRefusedAndCountedNotHeard) {
  auto beta = participant("receiver", "beta", kBeta, "b");
  ASSERT_TRUE(beta);
  constexpr std::uint64_t kGamma = 0x6A6A6A6A6A6A6A6AULL;
  Announce a{.domain_id = hosts.domain(), .ipv4 = 0x7F000003U, .port = 7400, .period_ms = 20};
  std::memcpy(a.host.data(), "gamma", 5);
  a.rdma = RdmaReachability{.cm_port = 7471, .reachable = true};
  std::array<std::byte, kAnnounceHeaderBytes> bytes{};
  ASSERT_EQ(encode_announce(bytes, kGamma, a, {}), bytes.size());
  auto socket = test::UdpSocket::bind("127.0.0.3");
  ASSERT_TRUE(socket) << socket.error().message();

  std::array<std::byte, kAnnounceHeaderBytes> old_version = bytes;
  old_version[4] = std::byte{kWireVersion - 1};
  // Until beta has claimed its host's discovery port (static peers: within a period).
  ASSERT_TRUE(eventually(
      [&] {
        EXPECT_TRUE(socket->send_to("127.0.0.2", hosts.port(), old_version));
        std::this_thread::sleep_for(5ms);
        return beta->counters().datagrams_refused > 0;
      },
      5s));
  EXPECT_EQ(beta->remote_rdma(kGamma), std::nullopt) << "a refused announcement was stored";

  ASSERT_TRUE(socket->send_to("127.0.0.2", hosts.port(), bytes));
  EXPECT_TRUE(eventually([&] { return beta->remote_rdma(kGamma) == a.rdma; }, 5s));
}

}  // namespace
}  // namespace axon::udp
