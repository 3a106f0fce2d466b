// The rdma_cm connection between two participants (transports/rdma/
// cm_connection.hpp, cm_listener.hpp) on a real device, with two real
// processes: the test binary itself, exec'd as RdmaCmPeer.ServesOneConnection,
// listens on 10.0.2.16 (host B) while the test connects from 10.0.2.15 (host
// A), both on the Soft-RoCE guest's rxe0. Skipped unless AXON_RDMA_EXPECT_DEVICE
// names the device (ctest rdma.softroce_devices; softroce_stage.sh adds B's address).
#include "transports/rdma/cm_connection.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "tests/support/child_process.hpp"
#include "tests/unit/rdma/registered_memfd.hpp"
#include "transports/rdma/cm_listener.hpp"
#include "transports/rdma/connect_private_data.hpp"

namespace axon::rdma {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

using test::kHostA;
using test::kHostB;
constexpr std::size_t kRegionBytes = std::size_t{1} << 20;
constexpr std::size_t kWriteBytes = 4096;
constexpr std::uint32_t kImmediate = 0x5EED0001U;
constexpr std::uint64_t kAbiHash = 0xAB1AB1AB1AB1AB1ULL;
constexpr std::uint32_t kDepth = 8;
constexpr milliseconds kWait{10000};

const char* device_env() {
  return std::getenv("AXON_RDMA_EXPECT_DEVICE");  // NOLINT(concurrency-mt-unsafe): read before any thread
}

std::byte pattern(std::size_t i) { return static_cast<std::byte>((i * 13 + 5) & 0xFFU); }

std::string describe(const ConnectPrivateData& d) {
  return fmt::format("v{} sender={:#x} incarnation={:#x} abi={:#x} rkey={:#x} base={:#x} length={} depth={} max_msg={}",
                     d.version, d.sender_id, d.incarnation, d.abi_hash, d.rkey, d.base, d.length, d.receive_depth,
                     d.max_message_bytes);
}

ConnectPrivateData own_data(const test::RegisteredMemfd& mem, std::uint64_t sender, std::uint64_t abi) {
  return {.version = kConnectProtocolVersion,
          .sender_id = sender,
          .incarnation = sender ^ 0x5555U,
          .abi_hash = abi,
          .rkey = mem.mr()->rkey,
          .base = reinterpret_cast<std::uintptr_t>(mem.base()),
          .length = mem.bytes(),
          .receive_depth = kDepth,
          .max_message_bytes = mem.max_message_bytes()};
}

QpConfig qp_config(const test::RegisteredMemfd& mem) {
  return {.pd = mem.pd(), .send_cq = mem.cq(), .recv_cq = mem.cq(), .send_depth = kDepth, .recv_depth = kDepth};
}

std::optional<ibv_wc> poll_one(ibv_cq* cq, milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    ibv_wc wc{};
    if (ibv_poll_cq(cq, 1, &wc) == 1) {
      return wc;
    }
  }
  return std::nullopt;
}

// The listening peer (host B): accepts one request whose ABI hash is
// AXON_RDMA_CM_ABI (else rejects it), prints both sides' private data, then
// waits for one write with immediate and checks it.
int serve_one_connection(const std::string& device, std::uint64_t expected_abi) {
  std::string error;
  auto mem = test::RegisteredMemfd::open(device, kRegionBytes, error);
  auto listener = mem ? CmListener::listen({.address = kHostB, .port = 0}) : Error(ErrorCode::kSystem, error);
  if (!listener.ok()) {
    std::printf("ERROR %s\n", std::string(listener.error().message()).c_str());
    return 1;
  }
  pollfd ready{.fd = listener->fd(), .events = POLLIN, .revents = 0};
  auto nothing = listener->next_event([](const ConnectPrivateData&) { return std::optional<RejectReason>(); });
  if (poll(&ready, 1, 0) != 0 || !nothing.ok() || nothing->kind != ListenerEventKind::kNothing) {
    std::printf("ERROR a fresh listener is not quiet: its fd is readable or next_event() is not \"nothing\"\n");
    return 1;
  }
  std::printf("PORT %u\n", listener->port());
  std::fflush(stdout);
  const AcceptCheck check = [&](const ConnectPrivateData& peer) -> std::optional<RejectReason> {
    return peer.abi_hash == expected_abi ? std::nullopt : std::optional(RejectReason::kAbiHash);
  };
  auto event = listener->wait_event(check, kWait);
  if (!event.ok() || event->kind == ListenerEventKind::kRefused) {
    std::printf("REFUSED %s\n", event.ok() ? event->why.c_str() : std::string(event.error().message()).c_str());
    return event.ok() ? 0 : 1;
  }
  if (event->kind != ListenerEventKind::kRequest) {
    std::printf("ERROR no connect request (event %d)\n", static_cast<int>(event->kind));
    return 1;
  }
  ConnectRequest& request = *event->request;
  auto qp = request.create_qp(qp_config(*mem));
  ibv_recv_wr recv{};
  ibv_recv_wr* bad = nullptr;
  if (!qp.ok() || ibv_post_recv(qp.value(), &recv, &bad) != 0) {
    std::printf("ERROR queue pair: %s\n", qp.ok() ? "ibv_post_recv failed" : qp.error().message().data());
    return 1;
  }
  const ConnectPrivateData own = own_data(*mem, 0xB0B0B0B0B0ULL, expected_abi);
  std::printf("PEER %s\nOWN %s\n", describe(request.peer()).c_str(), describe(own).c_str());
  auto connection = std::move(request).accept(own);
  auto established = connection.ok() ? connection->wait_established(kWait) : Result<void>(connection.error());
  if (!established.ok()) {
    std::printf("ERROR %s\n", std::string(established.error().message()).c_str());
    return 1;
  }
  std::printf("ESTABLISHED\n");
  std::fflush(stdout);
  const auto wc = poll_one(mem->cq(), kWait);
  if (!wc || wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
      (wc->wc_flags & IBV_WC_WITH_IMM) == 0 || ntohl(wc->imm_data) != kImmediate || wc->byte_len != kWriteBytes) {
    std::printf("ERROR the write did not arrive as sent (%s)\n", wc ? ibv_wc_status_str(wc->status) : "no completion");
    return 1;
  }
  for (std::size_t i = 0; i < kWriteBytes; ++i) {
    if (mem->base()[i] != pattern(i)) {
      std::printf("ERROR byte %zu differs\n", i);
      return 1;
    }
  }
  std::printf("RECEIVED %zu bytes, immediate %#x\n", kWriteBytes, kImmediate);
  return 0;
}

TEST(RdmaCmPeer, ServesOneConnection) {
  const char* mode = std::getenv("AXON_RDMA_CM_PEER");  // NOLINT(concurrency-mt-unsafe): single-threaded
  if (mode == nullptr || device_env() == nullptr) {
    GTEST_SKIP() << "the listening side of RdmaCmOnDevice (it runs it as a child process)";
  }
  const char* abi = std::getenv("AXON_RDMA_CM_ABI");  // NOLINT(concurrency-mt-unsafe): single-threaded
  EXPECT_EQ(serve_one_connection(device_env(), std::strtoull(abi != nullptr ? abi : "0", nullptr, 16)), 0);
}

// On a host without RDMA (no /dev/infiniband/rdma_cm): the listener and the
// connect say what is missing instead of failing later.
TEST(RdmaCmWithoutDevice, ListenAndConnectNameWhatIsMissing) {
  if (access("/dev/infiniband/rdma_cm", F_OK) == 0) {
    GTEST_SKIP() << "this machine has rdma_cm (RdmaCmOnDevice covers it)";
  }
  auto listener = CmListener::listen({.address = kHostB, .port = 0});
  ASSERT_FALSE(listener.ok());
  EXPECT_NE(listener.error().message().find("rdma_ucm"), std::string_view::npos) << listener.error().message();
  auto connection = CmConnection::connect({.address = kHostA, .port = 0}, {.address = kHostB, .port = 7471}, {},
                                          ConnectPrivateData{});
  ASSERT_FALSE(connection.ok());
  EXPECT_NE(connection.error().message().find("/dev/infiniband/rdma_cm"), std::string_view::npos)
      << connection.error().message();
  EXPECT_FALSE(cm_device_context("rxe0").ok());
}

class RdmaCmOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_env() == nullptr) {
      GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
    }
  }

  // Host B: this binary again, as RdmaCmPeer.ServesOneConnection (exec'd, so
  // it starts with no librdmacm state of ours), expecting `abi`.
  static axon::test::ChildProcess spawn_listener(std::uint64_t abi) {
    return axon::test::ChildProcess::spawn(
        {"/proc/self/exe", "--gtest_filter=RdmaCmPeer.ServesOneConnection"}, [abi]() -> std::string {
          // NOLINTNEXTLINE(concurrency-mt-unsafe): in the forked child, before exec
          if (setenv("AXON_RDMA_CM_PEER", "serve", 1) != 0 ||
              setenv("AXON_RDMA_CM_ABI", fmt::format("{:x}", abi).c_str(), 1) != 0) {  // NOLINT
            return "setenv failed";
          }
          return "";
        });
  }

  static std::uint16_t port_of(axon::test::ChildProcess& child) {
    const auto line = child.wait_for_line("PORT ", kWait);
    EXPECT_TRUE(line) << child.output();
    return line ? static_cast<std::uint16_t>(std::stoul(line->substr(5))) : 0;
  }

  std::unique_ptr<test::RegisteredMemfd> open_host_a() {
    std::string error;
    auto mem = test::RegisteredMemfd::open(device_env(), kRegionBytes, error);
    EXPECT_NE(mem, nullptr) << error;
    return mem;
  }
};

TEST_F(RdmaCmOnDevice, BothSidesSeeEstablishedWithEachOthersDataAndAWriteWithImmediateArrives) {
  auto child = spawn_listener(kAbiHash);
  const std::uint16_t port = port_of(child);
  auto mem = open_host_a();
  ASSERT_NE(port, 0);
  ASSERT_NE(mem, nullptr);
  const ConnectPrivateData own = own_data(*mem, 0xA0A0A0A0A0ULL, kAbiHash);
  auto connection =
      CmConnection::connect({.address = kHostA, .port = 0}, {.address = kHostB, .port = port}, qp_config(*mem), own);
  ASSERT_TRUE(connection.ok()) << connection.error().message();
  const auto established = connection->wait_established(kWait);
  ASSERT_TRUE(established.ok()) << established.error().message() << "\n" << child.output();
  ASSERT_TRUE(connection->peer());
  EXPECT_EQ(child.wait_for_line("PEER ", kWait), "PEER " + describe(own));
  EXPECT_EQ(child.wait_for_line("OWN ", kWait), "OWN " + describe(*connection->peer()));
  EXPECT_EQ(connection->peer()->abi_hash, kAbiHash);
  ASSERT_TRUE(child.wait_for_line("ESTABLISHED", kWait)) << child.output();
  // Nothing more now: "nothing" is a value, and the fd a poller would wait on is quiet.
  const auto quiet = connection->next_event();
  ASSERT_TRUE(quiet.ok()) << quiet.error().message();
  EXPECT_EQ(quiet->kind, ConnectionEventKind::kNothing);
  pollfd ready{.fd = connection->fd(), .events = POLLIN, .revents = 0};
  EXPECT_EQ(poll(&ready, 1, 0), 0);

  for (std::size_t i = 0; i < kWriteBytes; ++i) {
    mem->base()[i] = pattern(i);
  }
  ibv_sge sge{.addr = reinterpret_cast<std::uintptr_t>(mem->base()),
              .length = static_cast<std::uint32_t>(kWriteBytes),
              .lkey = mem->mr()->lkey};
  ibv_send_wr send{};
  send.sg_list = &sge;
  send.num_sge = 1;
  send.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  send.send_flags = IBV_SEND_SIGNALED;
  send.imm_data = htonl(kImmediate);
  send.wr.rdma.remote_addr = connection->peer()->base;  // from the REP's private data
  send.wr.rdma.rkey = connection->peer()->rkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(connection->qp(), &send, &bad), 0);
  const auto wc = poll_one(mem->cq(), kWait);
  ASSERT_TRUE(wc);
  EXPECT_EQ(wc->status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc->status);
  EXPECT_EQ(child.wait(kWait), 0) << child.output();
  std::printf("%s", child.output().c_str());
}

TEST_F(RdmaCmOnDevice, ARequestWithAnotherAbiHashIsRejectedAndTheActiveSideSaysWhy) {
  auto child = spawn_listener(kAbiHash);
  const std::uint16_t port = port_of(child);
  auto mem = open_host_a();
  ASSERT_NE(port, 0);
  ASSERT_NE(mem, nullptr);
  auto connection = CmConnection::connect({.address = kHostA, .port = 0}, {.address = kHostB, .port = port},
                                          qp_config(*mem), own_data(*mem, 0xA1ULL, kAbiHash + 1));
  ASSERT_TRUE(connection.ok()) << connection.error().message();
  const auto established = connection->wait_established(kWait);
  ASSERT_FALSE(established.ok());
  std::printf("active side: %s\n", std::string(established.error().message()).c_str());
  EXPECT_NE(established.error().message().find("rejected"), std::string_view::npos);
  EXPECT_NE(established.error().message().find("ABI hash differs"), std::string_view::npos);
  EXPECT_TRUE(child.wait_for_line("REFUSED the pool layout ABI hash differs", kWait)) << child.output();
  EXPECT_EQ(child.wait(kWait), 0) << child.output();
}

// A request whose private data does not decode (another version here) is
// rejected by the listener's decoder with its reason byte; sent by hand
// (librdmacm directly), since CmConnection only sends what it encodes.
TEST_F(RdmaCmOnDevice, ARequestOfAnotherProtocolVersionIsRejectedWithThatReason) {
  auto child = spawn_listener(kAbiHash);
  const std::uint16_t port = port_of(child);
  auto mem = open_host_a();
  ASSERT_NE(port, 0);
  ASSERT_NE(mem, nullptr);
  auto channel = make_event_channel();
  ASSERT_TRUE(channel.ok()) << channel.error().message();
  auto id = make_cm_id(channel.value().get());
  ASSERT_TRUE(id.ok()) << id.error().message();
  sockaddr_in src = to_sockaddr({.address = kHostA, .port = 0});
  sockaddr_in dst = to_sockaddr({.address = kHostB, .port = port});
  ASSERT_EQ(
      rdma_resolve_addr(id.value().get(), reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst), 2000),
      0);
  auto event = wait_cm_event(channel.value().get(), kWait);
  ASSERT_TRUE(event.ok() && event->kind == CmEventKind::kAddressResolved);
  ASSERT_EQ(rdma_resolve_route(id.value().get(), 2000), 0);
  event = wait_cm_event(channel.value().get(), kWait);
  ASSERT_TRUE(event.ok() && event->kind == CmEventKind::kRouteResolved);
  ASSERT_TRUE(create_rc_qp(id.value().get(), qp_config(*mem)).ok());
  ConnectPrivateBytes bytes = encode_connect_private_data(own_data(*mem, 0xA4ULL, kAbiHash));
  bytes[0] = std::byte{kConnectProtocolVersion + 1};
  rdma_conn_param param = connection_parameters(bytes);
  ASSERT_EQ(rdma_connect(id.value().get(), &param), 0);
  event = wait_cm_event(channel.value().get(), kWait);
  ASSERT_TRUE(event.ok());
  ASSERT_EQ(event->kind, CmEventKind::kRejected) << to_string(event->kind);
  EXPECT_EQ(decode_reject(event->data()), RejectReason::kVersion);
  EXPECT_TRUE(child.wait_for_line(
      fmt::format("REFUSED the peer speaks RDMA connection protocol version {}", kConnectProtocolVersion + 1), kWait))
      << child.output();
  EXPECT_EQ(child.wait(kWait), 0) << child.output();
}

TEST_F(RdmaCmOnDevice, APeerKilledAfterEstablishedIsSeenAsDisconnectedWithinFiveSeconds) {
  auto child = spawn_listener(kAbiHash);
  const std::uint16_t port = port_of(child);
  auto mem = open_host_a();
  ASSERT_NE(port, 0);
  ASSERT_NE(mem, nullptr);
  auto connection = CmConnection::connect({.address = kHostA, .port = 0}, {.address = kHostB, .port = port},
                                          qp_config(*mem), own_data(*mem, 0xA2ULL, kAbiHash));
  ASSERT_TRUE(connection.ok()) << connection.error().message();
  ASSERT_TRUE(connection->wait_established(kWait).ok());
  ASSERT_TRUE(child.wait_for_line("ESTABLISHED", kWait)) << child.output();
  ASSERT_TRUE(connection->established());

  const auto killed = Clock::now();
  child.kill(SIGKILL);
  const auto event = connection->wait_event(milliseconds(5000));
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - killed).count();
  ASSERT_TRUE(event.ok()) << event.error().message();
  std::printf("DISCONNECTED seen %lld ms after SIGKILL of the peer\n", static_cast<long long>(took));
  EXPECT_EQ(event->kind, ConnectionEventKind::kDisconnected) << "nothing (or another event) within 5 s";
  EXPECT_FALSE(connection->established());
  EXPECT_EQ(child.wait(kWait), 128 + SIGKILL);
}

TEST_F(RdmaCmOnDevice, ConnectingToAPortNobodyListensOnFailsWithinTheTimeout) {
  auto mem = open_host_a();
  ASSERT_NE(mem, nullptr);
  const auto start = Clock::now();
  auto connection = CmConnection::connect({.address = kHostA, .port = 0}, {.address = kHostB, .port = 47999},
                                          qp_config(*mem), own_data(*mem, 0xA3ULL, kAbiHash));
  Result<void> established =
      connection.ok() ? connection->wait_established(milliseconds(5000)) : Result<void>(connection.error());
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  ASSERT_FALSE(established.ok());
  std::printf("no listener: %s (after %lld ms)\n", std::string(established.error().message()).c_str(),
              static_cast<long long>(took));
  EXPECT_NE(established.error().code(), ErrorCode::kTimeout) << "neither REJECTED nor UNREACHABLE within 5 s";
  EXPECT_LT(took, 5000);
}

}  // namespace
}  // namespace axon::rdma
