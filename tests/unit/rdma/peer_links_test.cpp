// One rdma_cm link per peer participant (transports/rdma/peer_links.hpp) on a
// real device: two PeerLinks in this process, host A on 10.0.2.15 (the
// smaller sender id: the active side) and host B on 10.0.2.16, both on the
// Soft-RoCE guest's rxe0; and a peer process (this binary exec'd again as
// RdmaPeerLinksPeer.ServesUntilKilled) that is SIGKILLed and restarted, as
// either side.
// Skipped unless AXON_RDMA_EXPECT_DEVICE names the device (ctest
// rdma.softroce_devices; softroce_stage.sh adds B's address).
#include "transports/rdma/peer_links.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/allocation_hooks.hpp"
#include "tests/support/child_process.hpp"
#include "tests/unit/rdma/registered_memfd.hpp"

namespace axon::rdma {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

using test::kHostA;
using test::kHostB;
constexpr std::uint16_t kPeerPort = 47310;  // the child's listener: the same port for each of its incarnations
constexpr std::size_t kRegionBytes = std::size_t{1} << 16;
constexpr std::uint64_t kAbiHash = 0xAB1AB1AB1AB1AB1ULL;
constexpr std::uint64_t kIdA = 0xA1;  // smaller: A connects
constexpr std::uint64_t kIdB = 0xB2;
constexpr std::uint32_t kDepth = 8;
constexpr milliseconds kWait{10000};
constexpr milliseconds kQuiet{500};  // how long nothing more may happen after the links settled

const char* device_env() {
  return std::getenv("AXON_RDMA_EXPECT_DEVICE");  // NOLINT(concurrency-mt-unsafe): read before any thread
}

// One participant's links, with its PD, CQ and region, and what it saw.
struct Side {
  std::unique_ptr<test::RegisteredMemfd> mem;
  std::optional<PeerLinks> links;
  std::vector<LinkEvent> events;
  std::vector<ibv_qp*> qps_given;  // on_qp's calls
  std::vector<int> fds;

  std::string open(std::uint32_t address, std::uint16_t port, std::uint64_t sender, std::uint64_t incarnation,
                   std::uint64_t abi) {
    std::string error;
    mem = test::RegisteredMemfd::open(device_env(), kRegionBytes, error);
    if (mem == nullptr) {
      return error;
    }
    PeerLinksOptions options{
        .own = {.address = address, .port = port},
        .qp = {.pd = mem->pd(), .send_cq = mem->cq(), .recv_cq = mem->cq(), .send_depth = kDepth, .recv_depth = kDepth},
        .own_data = {.version = kConnectProtocolVersion,
                     .sender_id = sender,
                     .incarnation = incarnation,
                     .abi_hash = abi,
                     .rkey = mem->mr()->rkey,
                     .base = reinterpret_cast<std::uintptr_t>(mem->base()),
                     .length = mem->bytes(),
                     .receive_depth = kDepth,
                     .max_message_bytes = mem->max_message_bytes()},
        .on_qp = [this](std::uint64_t, ibv_qp* qp) -> Result<void> {
          qps_given.push_back(qp);
          return {};
        }};
    auto made = PeerLinks::listen(std::move(options));
    if (!made.ok()) {
      return std::string(made.error().message());
    }
    links.emplace(std::move(made.value()));
    return "";
  }

  [[nodiscard]] std::size_t count(LinkEventKind kind) const {
    return static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(), [kind](const LinkEvent& e) { return e.kind == kind; }));
  }
  [[nodiscard]] const LinkEvent* first(LinkEventKind kind) const {
    const auto it = std::find_if(events.begin(), events.end(), [kind](const LinkEvent& e) { return e.kind == kind; });
    return it == events.end() ? nullptr : &*it;
  }
};

std::string describe(const std::vector<LinkEvent>& events) {
  std::string s;
  for (const LinkEvent& e : events) {
    s += fmt::format("[{} peer={:#x} qp={} active={} was_up={} why='{}' reason={} status={} {}] ",
                     e.kind == LinkEventKind::kUp     ? "up"
                     : e.kind == LinkEventKind::kLost ? "lost"
                                                      : "refused",
                     e.peer, static_cast<const void*>(e.qp), e.active, e.was_up, to_string(e.why),
                     e.reason ? std::string(to_string(*e.reason)) : "-", e.status, e.detail);
  }
  return s;
}

// Steps every side (polling their fds, bounded by their deadlines) until
// `done` holds or `timeout` ran out; returns whether it held.
bool pump(const std::vector<Side*>& sides, milliseconds timeout, const std::function<bool()>& done) {
  const auto until = Clock::now() + timeout;
  std::vector<pollfd> ready;
  for (;;) {
    for (Side* side : sides) {
      auto stepped = side->links->step(Clock::now(), side->events);
      EXPECT_TRUE(stepped.ok()) << stepped.error().message();
    }
    if (done()) {
      return true;
    }
    const auto now = Clock::now();
    if (now >= until) {
      return false;
    }
    auto wake = until;
    ready.clear();
    for (Side* side : sides) {
      side->links->poll_fds(side->fds);
      for (const int fd : side->fds) {
        ready.push_back({.fd = fd, .events = POLLIN, .revents = 0});
      }
      if (const auto d = side->links->next_deadline(); d && *d < wake) {
        wake = *d;
      }
    }
    const auto left = std::chrono::duration_cast<milliseconds>(wake - now).count();
    (void)poll(ready.data(), ready.size(), static_cast<int>(std::clamp<long long>(left, 0, 50)));
  }
}

// RC queue pairs of this process the kernel still has (iproute2's `rdma res
// show qp`, which the Soft-RoCE stage requires): what nothing leaks means.
int rc_qps_of_this_process() {
  std::FILE* out = ::popen("rdma res show qp 2>&1", "r");  // NOLINT(cert-env33-c): a fixed command, a test
  if (out == nullptr) {
    return -1;
  }
  const std::string pid = fmt::format(" pid {} ", ::getpid());
  int count = 0;
  std::array<char, 512> line{};
  while (std::fgets(line.data(), static_cast<int>(line.size()), out) != nullptr) {
    const std::string text(line.data());
    count += (text.find(pid) != std::string::npos && text.find(" type RC ") != std::string::npos) ? 1 : 0;
  }
  return ::pclose(out) == 0 ? count : -1;
}

// The two QPs are the two ends of one RC connection.
void expect_connected(ibv_qp* a, ibv_qp* b) {
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  ASSERT_EQ(ibv_query_qp(a, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(attr.dest_qp_num, b->qp_num);
  ASSERT_EQ(ibv_query_qp(b, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(attr.dest_qp_num, a->qp_num);
}

// On a host without RDMA (no /dev/infiniband/rdma_cm): listen() says what is missing.
TEST(RdmaPeerLinksWithoutDevice, ListenNamesWhatIsMissing) {
  if (access("/dev/infiniband/rdma_cm", F_OK) == 0) {
    GTEST_SKIP() << "this machine has rdma_cm (RdmaPeerLinksOnDevice covers it)";
  }
  auto sut = PeerLinks::listen({.own = {.address = kHostA, .port = 0}, .qp = {}, .own_data = {}, .on_qp = {}});
  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("rdma_ucm"), std::string_view::npos) << sut.error().message();
}

class RdmaPeerLinksOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_env() == nullptr) {
      GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
    }
  }

  void open_both(std::uint64_t abi_b = kAbiHash) {
    const std::string ea = a.open(kHostA, 0, kIdA, 1, kAbiHash);
    ASSERT_EQ(ea, "");
    const std::string eb = b.open(kHostB, 0, kIdB, 1, abi_b);
    ASSERT_EQ(eb, "");
  }
  void a_wants_b() { a.links->want(kIdB, {.address = kHostB, .port = b.links->port()}); }
  void b_wants_a() { b.links->want(kIdA, {.address = kHostA, .port = a.links->port()}); }
  bool both_up(milliseconds timeout) {
    return pump({&a, &b}, timeout, [&] { return a.count(LinkEventKind::kUp) > 0 && b.count(LinkEventKind::kUp) > 0; });
  }
  void settle() {
    const std::size_t na = a.events.size();
    const std::size_t nb = b.events.size();
    (void)pump({&a, &b}, kQuiet, [] { return false; });
    EXPECT_EQ(a.events.size(), na) << "A after settling: " << describe(a.events);
    EXPECT_EQ(b.events.size(), nb) << "B after settling: " << describe(b.events);
  }

  Side a;
  Side b;
};

enum class Order : std::uint8_t { kActiveFirst, kPassiveFirst, kAtOnce };

class RdmaPeerLinksOnDeviceOrder : public RdmaPeerLinksOnDevice, public ::testing::WithParamInterface<Order> {};

TEST_P(RdmaPeerLinksOnDeviceOrder, OneLinkComesUpOnceWithOneQueuePairEachSideAndTheSmallerIdConnects) {
  open_both();
  if (GetParam() == Order::kActiveFirst) {
    a_wants_b();
    (void)pump({&a, &b}, milliseconds(300), [] { return false; });
    EXPECT_EQ(b.count(LinkEventKind::kUp), 0U) << "B did not want A yet: " << describe(b.events);
    b_wants_a();
  } else if (GetParam() == Order::kPassiveFirst) {
    b_wants_a();
    (void)pump({&a, &b}, milliseconds(300), [] { return false; });
    EXPECT_EQ(b.links->connections(), 0U) << "B is the passive side: it must not connect";
    EXPECT_TRUE(b.events.empty()) << describe(b.events);
    a_wants_b();
  } else {
    a_wants_b();
    b_wants_a();
  }
  ASSERT_TRUE(both_up(kWait)) << "A: " << describe(a.events) << "\nB: " << describe(b.events);
  settle();

  EXPECT_EQ(a.events.size(), 1U) << describe(a.events);
  EXPECT_EQ(b.events.size(), 1U) << describe(b.events);
  const LinkEvent* up_a = a.first(LinkEventKind::kUp);
  const LinkEvent* up_b = b.first(LinkEventKind::kUp);
  ASSERT_NE(up_a, nullptr);
  ASSERT_NE(up_b, nullptr);
  EXPECT_TRUE(up_a->active);
  EXPECT_FALSE(up_b->active);
  EXPECT_EQ(up_a->peer, kIdB);
  EXPECT_EQ(up_a->peer_data.sender_id, kIdB);
  EXPECT_EQ(up_a->peer_data.rkey, b.mem->mr()->rkey);
  EXPECT_EQ(up_b->peer, kIdA);
  EXPECT_EQ(up_b->peer_data.base, reinterpret_cast<std::uintptr_t>(a.mem->base()));
  EXPECT_EQ(a.links->connections(), 1U);
  EXPECT_EQ(b.links->connections(), 1U);
  EXPECT_EQ(a.qps_given, std::vector<ibv_qp*>{up_a->qp}) << "one queue pair on A, given to the caller once";
  EXPECT_EQ(b.qps_given, std::vector<ibv_qp*>{up_b->qp}) << "one queue pair on B, given to the caller once";
  expect_connected(up_a->qp, up_b->qp);

  // Idle links: stepping and polling allocate nothing (the participant's thread will do this in its loop).
  axon::test::allocations::start();
  for (int i = 0; i < 100; ++i) {
    for (Side* side : {&a, &b}) {
      (void)side->links->step(Clock::now(), side->events);
      side->links->poll_fds(side->fds);
      (void)side->links->next_deadline();
    }
  }
  const std::uint64_t allocated = axon::test::allocations::stop();
  if (axon::test::allocations::kCounted) {
    EXPECT_EQ(allocated, 0U) << "allocations in 100 idle steps of both sides";
  }
  EXPECT_EQ(a.events.size() + b.events.size(), 2U) << "nothing happened while idle";
}

INSTANTIATE_TEST_SUITE_P(, RdmaPeerLinksOnDeviceOrder,
                         ::testing::Values(Order::kActiveFirst, Order::kPassiveFirst, Order::kAtOnce),
                         [](const ::testing::TestParamInfo<Order>& info) {
                           return info.param == Order::kActiveFirst    ? std::string("ActiveWantsFirst")
                                  : info.param == Order::kPassiveFirst ? std::string("PassiveWantsFirst")
                                                                       : std::string("BothAtOnce");
                         });

TEST_F(RdmaPeerLinksOnDevice, AnotherAbiHashIsRejectedWithTheReasonOnBothSidesAndNotRetried) {
  open_both(kAbiHash + 1);
  a_wants_b();
  b_wants_a();
  ASSERT_TRUE(
      pump({&a, &b}, kWait, [&] { return a.count(LinkEventKind::kLost) > 0 && b.count(LinkEventKind::kRefused) > 0; }))
      << "A: " << describe(a.events) << "\nB: " << describe(b.events);
  settle();

  ASSERT_EQ(a.events.size(), 1U) << describe(a.events);
  EXPECT_EQ(a.events[0].why, LinkLoss::kRejected);
  EXPECT_EQ(a.events[0].reason, RejectReason::kAbiHash);
  EXPECT_FALSE(a.events[0].was_up);
  ASSERT_EQ(b.events.size(), 1U) << describe(b.events);
  EXPECT_EQ(b.events[0].kind, LinkEventKind::kRefused);
  EXPECT_EQ(b.events[0].peer, kIdA);
  EXPECT_EQ(b.events[0].reason, RejectReason::kAbiHash);
  EXPECT_FALSE(a.links->next_deadline()) << "a refusal with an axon reason is not retried";
  EXPECT_EQ(a.links->connections(), 0U);
  EXPECT_EQ(b.links->connections(), 0U);
}

TEST_F(RdmaPeerLinksOnDevice, ForgetDisconnectsThePeerWhichSeesItLost) {
  open_both();
  a_wants_b();
  b_wants_a();
  ASSERT_TRUE(both_up(kWait)) << "A: " << describe(a.events) << "\nB: " << describe(b.events);
  ibv_qp* const qp_a = a.first(LinkEventKind::kUp)->qp;
  a.events.clear();
  b.events.clear();

  a.links->forget(kIdB, a.events);
  ASSERT_EQ(a.events.size(), 1U) << describe(a.events);
  EXPECT_EQ(a.events[0].kind, LinkEventKind::kLost);
  EXPECT_EQ(a.events[0].why, LinkLoss::kForgotten);
  EXPECT_EQ(a.events[0].qp, qp_a) << "the QP the caller reclaims";
  EXPECT_TRUE(a.events[0].was_up);
  EXPECT_EQ(a.links->connections(), 0U);
  ASSERT_TRUE(pump({&a, &b}, kWait, [&] { return b.count(LinkEventKind::kLost) > 0; })) << describe(b.events);
  settle();
  ASSERT_EQ(b.events.size(), 1U) << describe(b.events);
  EXPECT_EQ(b.events[0].why, LinkLoss::kDisconnected);
  EXPECT_TRUE(b.events[0].was_up);
  EXPECT_EQ(a.events.size(), 1U) << "A forgot B: no reconnection. " << describe(a.events);
  EXPECT_EQ(b.links->connections(), 0U);
  EXPECT_EQ(rc_qps_of_this_process(), 0) << "both QPs destroyed (-1: `rdma res show qp` failed)";
}

// A new incarnation of A (same sender id) connects while B still holds the
// old link (the old A stopped stepping: as if its host had died unnoticed):
// B reports the old link lost (kReplaced, its QP destroyed) before the new one up.
TEST_F(RdmaPeerLinksOnDevice, ANewIncarnationOfThePeerReplacesTheOldLinkWhichIsReportedLostFirst) {
  open_both();
  a_wants_b();
  b_wants_a();
  ASSERT_TRUE(both_up(kWait)) << "A: " << describe(a.events) << "\nB: " << describe(b.events);
  ibv_qp* const old_qp = b.first(LinkEventKind::kUp)->qp;
  b.events.clear();

  Side a2;
  ASSERT_EQ(a2.open(kHostA, 0, kIdA, 2, kAbiHash), "");
  a2.links->want(kIdB, {.address = kHostB, .port = b.links->port()});
  ASSERT_TRUE(pump({&a2, &b}, kWait, [&] { return b.count(LinkEventKind::kUp) > 0; })) << describe(b.events);
  ASSERT_EQ(b.events.size(), 2U) << describe(b.events);
  EXPECT_EQ(b.events[0].kind, LinkEventKind::kLost);
  EXPECT_EQ(b.events[0].why, LinkLoss::kReplaced);
  EXPECT_EQ(b.events[0].qp, old_qp);
  EXPECT_TRUE(b.events[0].was_up);
  EXPECT_EQ(b.events[1].kind, LinkEventKind::kUp);
  EXPECT_EQ(b.events[1].peer_data.incarnation, 2U);
  EXPECT_EQ(b.links->connections(), 1U);
  ASSERT_EQ(a2.count(LinkEventKind::kUp), 1U) << describe(a2.events);
  expect_connected(a2.first(LinkEventKind::kUp)->qp, b.events[1].qp);
  a2.links.reset();  // before A's old link reconnects: only one A may want B
}

// Who the SIGKILL test's two processes are: the parent (host A) and the
// peer process (host B); the smaller sender id connects.
struct KillRoles {
  std::uint64_t parent = 0;
  std::uint64_t peer = 0;
};
KillRoles kill_roles(bool parent_connects) {
  return parent_connects ? KillRoles{.parent = kIdA, .peer = kIdB} : KillRoles{.parent = kIdB, .peer = 0x01};
}

// The peer process: host B at kPeerPort, incarnation AXON_RDMA_LINKS_PEER,
// the roles of AXON_RDMA_LINKS_PARENT_CONNECTS, wanting host A at
// AXON_RDMA_LINKS_A_PORT; prints "LISTENING <steady_clock ticks>", then
// "UP <incarnation>" once its link is up, and keeps stepping until killed.
int serve_until_killed(std::uint64_t incarnation, std::uint16_t port_a, const KillRoles& roles) {
  Side b;
  if (const std::string e = b.open(kHostB, kPeerPort, roles.peer, incarnation, kAbiHash); !e.empty()) {
    std::printf("ERROR %s\n", e.c_str());
    return 1;
  }
  std::printf("LISTENING %lld\n", static_cast<long long>(Clock::now().time_since_epoch().count()));
  std::fflush(stdout);
  b.links->want(roles.parent, {.address = kHostA, .port = port_a});
  const bool up = pump({&b}, kWait, [&] { return b.count(LinkEventKind::kUp) > 0; });
  std::printf("%s %llu %s\n", up ? "UP" : "ERROR not up:", static_cast<unsigned long long>(incarnation),
              describe(b.events).c_str());
  std::fflush(stdout);
  (void)pump({&b}, milliseconds(30000), [] { return false; });
  return 0;
}

TEST(RdmaPeerLinksPeer, ServesUntilKilled) {
  const char* incarnation = std::getenv("AXON_RDMA_LINKS_PEER");          // NOLINT(concurrency-mt-unsafe): one thread
  const char* port = std::getenv("AXON_RDMA_LINKS_A_PORT");               // NOLINT(concurrency-mt-unsafe): one thread
  const char* connects = std::getenv("AXON_RDMA_LINKS_PARENT_CONNECTS");  // NOLINT(concurrency-mt-unsafe)
  if (incarnation == nullptr || port == nullptr || connects == nullptr || device_env() == nullptr) {
    GTEST_SKIP() << "the peer process of RdmaPeerLinksOnDeviceKill (it runs it as a child process)";
  }
  EXPECT_EQ(serve_until_killed(std::strtoull(incarnation, nullptr, 10),
                               static_cast<std::uint16_t>(std::strtoul(port, nullptr, 10)),
                               kill_roles(std::string(connects) == "1")),
            0);
}

axon::test::ChildProcess spawn_peer(std::uint64_t incarnation, std::uint16_t port_a, bool parent_connects) {
  return axon::test::ChildProcess::spawn(
      {"/proc/self/exe", "--gtest_filter=RdmaPeerLinksPeer.ServesUntilKilled"}, [=]() -> std::string {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): in the forked child, before exec
        if (setenv("AXON_RDMA_LINKS_PEER", std::to_string(incarnation).c_str(), 1) != 0 ||
            setenv("AXON_RDMA_LINKS_A_PORT", std::to_string(port_a).c_str(), 1) != 0 ||        // NOLINT
            setenv("AXON_RDMA_LINKS_PARENT_CONNECTS", parent_connects ? "1" : "0", 1) != 0) {  // NOLINT
          return "setenv failed";
        }
        return "";
      });
}

// The parameter: whether this process (host A) is the active side.
class RdmaPeerLinksOnDeviceKill : public RdmaPeerLinksOnDevice, public ::testing::WithParamInterface<bool> {};

TEST_P(RdmaPeerLinksOnDeviceKill, APeerKilledIsSeenLostAndItsNextIncarnationReconnects) {
  const bool connects = GetParam();
  const KillRoles roles = kill_roles(connects);
  ASSERT_EQ(a.open(kHostA, 0, roles.parent, 1, kAbiHash), "");
  auto first = spawn_peer(1, a.links->port(), connects);
  ASSERT_TRUE(first.wait_for_line("LISTENING", kWait)) << first.output();
  a.links->want(roles.peer, {.address = kHostB, .port = kPeerPort});
  ASSERT_TRUE(pump({&a}, kWait, [&] { return a.count(LinkEventKind::kUp) > 0; })) << describe(a.events);
  ASSERT_TRUE(first.wait_for_line("UP 1", kWait)) << first.output();
  EXPECT_EQ(a.first(LinkEventKind::kUp)->peer_data.incarnation, 1U);
  EXPECT_EQ(a.first(LinkEventKind::kUp)->active, connects);
  ibv_qp* const first_qp = a.first(LinkEventKind::kUp)->qp;
  a.events.clear();

  const auto killed = Clock::now();
  first.kill(SIGKILL);
  ASSERT_TRUE(pump({&a}, milliseconds(5000), [&] { return a.count(LinkEventKind::kLost) > 0; }))
      << "not lost within 5 s: " << describe(a.events);
  const auto lost_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - killed).count();
  std::printf("peer links (%s side): the SIGKILLed peer was reported lost %lld ms after the kill\n",
              connects ? "active" : "passive", static_cast<long long>(lost_ms));
  ASSERT_EQ(a.events.size(), 1U) << describe(a.events);
  EXPECT_EQ(a.events[0].why, LinkLoss::kDisconnected);
  EXPECT_TRUE(a.events[0].was_up);
  EXPECT_EQ(a.events[0].qp, first_qp);
  EXPECT_EQ(first.wait(kWait), 128 + SIGKILL);
  a.events.clear();

  // While the peer is away the active side's attempts are refused by B's host and retried; the passive side waits.
  (void)pump({&a}, milliseconds(400), [] { return false; });
  if (connects) {
    EXPECT_GE(a.count(LinkEventKind::kLost), 1U) << "A retries while the peer is away: " << describe(a.events);
  } else {
    EXPECT_TRUE(a.events.empty()) << "the passive side does not connect: " << describe(a.events);
    EXPECT_EQ(a.links->connections(), 0U);
  }
  EXPECT_EQ(a.count(LinkEventKind::kUp), 0U);

  const auto restarted = Clock::now();
  auto second = spawn_peer(2, a.links->port(), connects);
  ASSERT_TRUE(pump({&a}, kWait, [&] { return a.count(LinkEventKind::kUp) > 0; })) << describe(a.events);
  const auto up_at = Clock::now();
  const auto listening = second.wait_for_line("LISTENING ", kWait);
  ASSERT_TRUE(listening) << second.output();
  // steady_clock is CLOCK_MONOTONIC, the same in both processes.
  const Clock::time_point listening_at{Clock::duration(std::stoll(listening->substr(10)))};
  const auto back_ms = std::chrono::duration_cast<milliseconds>(up_at - restarted).count();
  const auto after_listen_ms = std::chrono::duration_cast<milliseconds>(up_at - listening_at).count();
  std::printf(
      "peer links (%s side): up again %lld ms after the new peer process started, %lld ms after it listened (%zu "
      "attempts failed before: %s)\n",
      connects ? "active" : "passive", static_cast<long long>(back_ms), static_cast<long long>(after_listen_ms),
      a.count(LinkEventKind::kLost), describe(a.events).c_str());
  EXPECT_LE(after_listen_ms, (kReconnectMost + milliseconds(1000)).count())
      << "the retries are at most 2 s apart, so the link is back within about 2 s of the peer listening";
  ASSERT_TRUE(second.wait_for_line("UP 2", kWait)) << second.output();
  const LinkEvent* up = a.first(LinkEventKind::kUp);
  EXPECT_EQ(up->peer_data.incarnation, 2U) << "the new incarnation's data";
  EXPECT_EQ(up->active, connects);
  EXPECT_EQ(a.links->connections(), 1U);
  EXPECT_EQ(rc_qps_of_this_process(), 1) << "only the new link's QP: the lost one's and the failed attempts' are "
                                            "destroyed (-1: `rdma res show qp` failed)";
  for (const LinkEvent& e : a.events) {
    EXPECT_TRUE(e.kind == LinkEventKind::kUp || (e.kind == LinkEventKind::kLost && !e.was_up))
        << "only failed attempts before the link came back: " << describe(a.events);
  }
}

INSTANTIATE_TEST_SUITE_P(, RdmaPeerLinksOnDeviceKill, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("ThisSideConnects") : std::string("ThePeerConnects");
                         });

}  // namespace
}  // namespace axon::rdma
