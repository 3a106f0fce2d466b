// The data plane of one RDMA link (transports/rdma/rdma_link.hpp) between two
// RdmaParticipants in this process, on the Soft-RoCE guest's rxe0: node 'na'
// on host A (10.0.2.15, sender id 0xA1: the active side) and node 'nb' on
// host B (10.0.2.16, 0xB2), each with a real shm pool registered on the
// device and a recording LinkHandler. Control messages go both ways, parsed
// and in order; B grants a chunk of its pool and A writes a chunk it
// published pinned into it: B's handler gets the slot with the bytes intact
// and A's pin is released after the completion (the chunk back with the pool); a write into a slot never
// granted fails the link on B (counted) and A loses it with its pin released;
// a peer that goes away is lost on the survivor. Nothing leaks: no RC queue
// pair of this process is left (`rdma res show qp`). The guest's eth0 taken
// down ends both links at once by the device's IBV_EVENT_PORT_ERR (the
// failure names the port), B's grant is reclaimed, and once eth0 is up the
// links come back (IBV_EVENT_PORT_ACTIVE) and carry a write again.
// Skipped unless AXON_RDMA_EXPECT_DEVICE names the device (ctest
// rdma.softroce_devices; softroce_stage.sh adds B's address).
#include "transports/rdma/rdma_link.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/common/temp_dir.hpp"
#include "tests/unit/rdma/registered_memfd.hpp"
#include "transports/rdma/control_message.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/rdma/link_port.hpp"
#include "transports/rdma/pool_registration.hpp"
#include "transports/rdma/rdma_participant.hpp"
#include "transports/shm/chunk_header.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::rdma {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kWait{10000};
constexpr std::uint64_t kIdA = 0xA1;  // smaller: A connects
constexpr std::uint64_t kIdB = 0xB2;
constexpr std::uint64_t kAbiHash = 0xAB1AB1;
constexpr std::uint32_t kChunkBytes = 4096;
constexpr std::uint32_t kMessageBytes = 3000;

std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr ? std::string() : std::string(value);
}

std::byte pattern(std::uint32_t i) { return static_cast<std::byte>(i * 13 + 5); }

// RC queue pairs of this process the kernel still has (as peer_links_test counts them). The kernel names a QP by
// the task that made it: a participant's thread, so every task of this process counts.
int rc_qps_of_this_process() {
  std::vector<std::string> tasks;
  if (DIR* dir = ::opendir("/proc/self/task"); dir != nullptr) {
    while (const dirent* entry = ::readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): one reader of its own DIR
      if (entry->d_name[0] != '.') {
        tasks.push_back(fmt::format(" pid {} ", entry->d_name));
      }
    }
    ::closedir(dir);
  }
  std::FILE* out = ::popen("rdma res show qp 2>&1", "r");  // NOLINT(cert-env33-c): a fixed command, a test
  if (out == nullptr) {
    return -1;
  }
  int count = 0;
  std::array<char, 512> line{};
  while (std::fgets(line.data(), static_cast<int>(line.size()), out) != nullptr) {
    const std::string text(line.data());
    const bool ours = std::any_of(tasks.begin(), tasks.end(),
                                  [&text](const std::string& pid) { return text.find(pid) != std::string::npos; });
    count += (ours && text.find(" type RC ") != std::string::npos) ? 1 : 0;
  }
  return ::pclose(out) == 0 ? count : -1;
}

struct RecordingHandler final : LinkHandler {
  struct Control {
    ControlKind kind;
    std::uint32_t stream_id;
    OpenFields open;
    std::vector<GrantEntry> grants;
  };

  void on_link_up(LinkPort& link) noexcept override {
    const std::lock_guard lock(mutex);
    up_link = &link;
    ++ups;
    changed.notify_all();
  }
  void on_control(LinkPort& link, const ControlMessage& message) noexcept override {
    Control c{.kind = message.kind, .stream_id = message.stream_id, .open = message.open, .grants = {}};
    for (std::uint32_t i = 0; message.kind == ControlKind::kGrant && i < message.grant.count; ++i) {
      c.grants.push_back(message.grant.entry(i));  // the entries live in the receive slot: copied
    }
    if (const auto hook = control_hook(); hook) {
      hook(link, message);
    }
    const std::lock_guard lock(mutex);
    controls.push_back(std::move(c));
    changed.notify_all();
  }
  void on_write(LinkPort& link, const ResolvedWrite& write) noexcept override {
    if (const auto hook = write_hook(); hook) {
      hook(link, write);
    }
    (void)link.grants().release(GrantRef{.size_class = write.size_class, .slot = write.slot});
    const std::lock_guard lock(mutex);
    writes.push_back(write);
    changed.notify_all();
  }
  void on_link_lost(LinkPort& link) noexcept override {
    const std::uint32_t reclaimed = link.grants().reclaim_all([](const ReclaimedChunk&) {});
    const std::string why = dynamic_cast<RdmaLink&>(link).failure();
    const std::lock_guard lock(mutex);
    reclaimed_on_loss += reclaimed;
    loss_reasons.push_back(why);
    if (up_link == &link) {
      up_link = nullptr;
    }
    ++losses;
    changed.notify_all();
  }

  // Waits until `done()` (called under the mutex) holds; false after kWait.
  bool wait(const std::function<bool()>& done) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, kWait, done);
  }

  // The hooks run on the RDMA thread; set under the mutex (the thread reads
  // them under it), so what they capture was written before they run.
  using ControlHook = std::function<void(LinkPort&, const ControlMessage&)>;
  using WriteHook = std::function<void(LinkPort&, const ResolvedWrite&)>;
  void set_hooks(ControlHook on_control, WriteHook on_write) {
    const std::lock_guard lock(mutex);
    on_control_hook = std::move(on_control);
    on_write_hook = std::move(on_write);
  }
  ControlHook control_hook() {
    const std::lock_guard lock(mutex);
    return on_control_hook;
  }
  WriteHook write_hook() {
    const std::lock_guard lock(mutex);
    return on_write_hook;
  }

  ControlHook on_control_hook;
  WriteHook on_write_hook;
  std::mutex mutex;
  std::condition_variable changed;
  LinkPort* up_link = nullptr;
  int ups = 0;
  int losses = 0;
  std::uint32_t reclaimed_on_loss = 0;
  std::vector<std::string> loss_reasons;  // RdmaLink::failure() of each lost link ("": this side did not end it)
  std::vector<Control> controls;
  std::vector<ResolvedWrite> writes;
};

// One node: its shm pool (8 x 4 KiB) with one publisher, registered on the device, and its participant.
struct Side {
  // Declared so that they go in order: the participant, its handler, the registration, the pool.
  axon::test::TempDir dir{"axon-rdma-link"};
  std::shared_ptr<shm::ShmTransport> transport;
  std::shared_ptr<shm::ShmPublisherPort> port;
  std::shared_ptr<PoolRegistration> registration;
  RecordingHandler handler;
  std::unique_ptr<RdmaParticipant> participant;

  void open(const std::string& name, std::uint32_t domain) {
    auto created = shm::ShmTransport::create(shm::ShmConfig{
        .domain_id = domain, .node_name = name, .shm_dir = dir.path(), .chunk_classes = {{kChunkBytes, 8}}});
    ASSERT_TRUE(created.ok()) << created.error().message();
    transport = std::move(*created);
    auto advertised = transport->advertise({.name = "frames",
                                            .type = TypeIdentity{.name = "bytes", .hash = 1, .size = 1, .align = 1},
                                            .max_payload_bytes = kChunkBytes},
                                           PublisherQos{});
    ASSERT_TRUE(advertised.ok()) << advertised.error().message();
    port = std::dynamic_pointer_cast<shm::ShmPublisherPort>(*advertised);
    ASSERT_NE(port, nullptr);
    in_addr address{};
    const bool parsed = inet_pton(AF_INET, env("AXON_RDMA_EXPECT_IPV4").c_str(), &address) == 1;
    auto registered = PoolRegistration::create(DeviceRequest{.host = name,
                                                             .device = env("AXON_RDMA_EXPECT_DEVICE"),
                                                             .port = 1,
                                                             .gid_index = {},
                                                             .ipv4 = parsed ? ntohl(address.s_addr) : 0},
                                               transport->own_chunk_area(), name);
    ASSERT_TRUE(registered.ok()) << registered.error().message();
    registration = std::make_shared<PoolRegistration>(std::move(*registered));
  }

  void start(const std::string& name, Ipv4Endpoint own, std::uint64_t id, RdmaPeerSource peers, milliseconds recheck) {
    auto started = RdmaParticipant::start(registration, RdmaParticipantOptions{.node_name = name,
                                                                               .own = own,
                                                                               .sender_id = id,
                                                                               .incarnation = 1,
                                                                               .abi_hash = kAbiHash,
                                                                               .peers = std::move(peers),
                                                                               .recheck = recheck,
                                                                               .handler = &handler});
    ASSERT_TRUE(started.ok()) << started.error().message();
    participant = std::move(*started);
  }

  [[nodiscard]] PeerRegion own_region() const {
    return {.base = reinterpret_cast<std::uintptr_t>(registration->base()), .length = registration->length()};
  }
  [[nodiscard]] std::uint64_t free_chunks() const {
    std::uint64_t free = 0;
    for (const PoolClassStats& c : transport->pool_stats()) {
      free += c.free_chunks;
    }
    return free;
  }
  [[nodiscard]] LinkPort* link() {
    const std::lock_guard lock(handler.mutex);
    return handler.up_link;
  }
};

class RdmaLinkOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("AXON_RDMA_EXPECT_DEVICE").empty()) {
      GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
    }
    ASSERT_NO_FATAL_FAILURE(a.open("na", 61));
    ASSERT_NO_FATAL_FAILURE(b.open("nb", 62));
    // Each lists the other once its rdma_cm port is known (at once when fixed).
    a_port.store(fixed_port_a, std::memory_order_relaxed);
    b_port.store(fixed_port_b, std::memory_order_relaxed);
    ASSERT_NO_FATAL_FAILURE(a.start(
        "na", {.address = test::kHostA, .port = fixed_port_a}, kIdA,
        [this](std::vector<RdmaPeer>& out) {
          out.clear();
          if (const auto port = b_port.load(std::memory_order_acquire); port != 0) {  // pairs with the store below
            out.push_back({.sender_id = kIdB, .at = {.address = test::kHostB, .port = port}});
          }
        },
        recheck));
    ASSERT_NO_FATAL_FAILURE(b.start(
        "nb", {.address = test::kHostB, .port = fixed_port_b}, kIdB,
        [this](std::vector<RdmaPeer>& out) {
          out.clear();
          if (const auto port = a_port.load(std::memory_order_acquire); port != 0) {  // pairs with the store below
            out.push_back({.sender_id = kIdA, .at = {.address = test::kHostA, .port = port}});
          }
        },
        recheck));
    a_port.store(a.participant->cm_port(), std::memory_order_release);  // pairs with the loads in the sources
    b_port.store(b.participant->cm_port(), std::memory_order_release);
  }

  // Both links up `ups` times in total; prints how long it took.
  void wait_up(int ups) {
    const auto since = Clock::now();
    ASSERT_TRUE(a.handler.wait([&] { return a.handler.ups == ups && a.handler.up_link != nullptr; }));
    ASSERT_TRUE(b.handler.wait([&] { return b.handler.ups == ups && b.handler.up_link != nullptr; }));
    std::printf("rdma link: up (%d) after %lld ms\n", ups,
                static_cast<long long>(std::chrono::duration_cast<milliseconds>(Clock::now() - since).count()));
  }

  static void send(LinkPort& link, const std::function<std::size_t(std::span<std::byte>)>& encode) {
    std::array<std::byte, kControlSlotBytes> buffer{};
    const std::size_t bytes = encode(buffer);
    ASSERT_NE(bytes, 0U);
    auto sent = link.send_control(std::span<const std::byte>(buffer.data(), bytes));
    ASSERT_TRUE(sent.ok()) << sent.error().message();
    ASSERT_EQ(sent.value(), SendOutcome::kPosted);
  }

  // A loans a chunk, fills kMessageBytes of it, publishes it pinned: what a writer sends.
  SentChunk a_pinned_chunk(LoanedChunk& loaned) {
    auto loan = a.port->loan(kChunkBytes);
    EXPECT_TRUE(loan.ok());
    if (!loan.ok()) {
      return {};
    }
    loaned = *loan;
    for (std::uint32_t i = 0; i < kMessageBytes; ++i) {
      loaned.payload[i] = pattern(i);
    }
    const PublishResult published = a.port->publish_pinned(loaned, kMessageBytes, 0);
    EXPECT_TRUE(published.ok());
    return SentChunk{.port = a.port, .handle = loaned.handle};
  }

  // publish_pinned() of a chunk no local subscriber takes leaves the pin its only holder (the publisher's loan
  // bit is dropped): once unpinned, the chunk is back with the pool (holders 0), free for the next loan.
  static bool no_holder_left(const LoanedChunk& loaned, milliseconds timeout) {
    const auto* header = static_cast<const shm::ChunkHeader*>(loaned.handle);
    const auto until = Clock::now() + timeout;
    while (header->holders.load(std::memory_order_acquire) != 0) {
      if (Clock::now() >= until) {
        return false;
      }
      std::this_thread::sleep_for(milliseconds(1));
    }
    return true;
  }

  // What SetUp() starts with: rdma_cm picks the ports, discovery is asked every 20 ms.
  std::uint16_t fixed_port_a = 0;
  std::uint16_t fixed_port_b = 0;
  milliseconds recheck{20};
  Side a;
  Side b;
  std::atomic<std::uint16_t> a_port{0};
  std::atomic<std::uint16_t> b_port{0};
};

TEST_F(RdmaLinkOnDevice, ControlMessagesGoBothWaysParsedAndInOrder) {
  ASSERT_NO_FATAL_FAILURE(wait_up(1));
  LinkPort& link_a = *a.link();
  LinkPort& link_b = *b.link();
  EXPECT_TRUE(link_a.active());
  EXPECT_FALSE(link_b.active());
  EXPECT_EQ(link_a.peer(), kIdB);
  EXPECT_EQ(link_b.peer(), kIdA);
  EXPECT_EQ(link_a.peer_region().base, b.own_region().base) << "the peer's pool, from its private data";
  const std::uint32_t stream_a = first_stream_id(true);
  const std::uint32_t stream_b = first_stream_id(false);
  const OpenFields open_a{.topic_id = 7, .type_hash = 8, .writer_id = 9, .largest_message_bytes = 4096};
  const OpenFields open_b{.topic_id = 70, .type_hash = 80, .writer_id = 90, .largest_message_bytes = 100};

  send(link_a, [&](std::span<std::byte> out) { return encode_open(out, stream_a, open_a); });
  send(link_b, [&](std::span<std::byte> out) { return encode_open(out, stream_b, open_b); });
  send(link_a, [&](std::span<std::byte> out) { return encode_want(out, stream_a, 3); });
  send(link_a, [&](std::span<std::byte> out) { return encode_close(out, stream_a); });
  send(link_b, [&](std::span<std::byte> out) { return encode_close(out, stream_b); });

  ASSERT_TRUE(b.handler.wait([&] { return b.handler.controls.size() == 3; }));
  ASSERT_TRUE(a.handler.wait([&] { return a.handler.controls.size() == 2; }));
  const std::lock_guard lock_a(a.handler.mutex);
  const std::lock_guard lock_b(b.handler.mutex);
  const auto& at_b = b.handler.controls;
  EXPECT_EQ(at_b[0].kind, ControlKind::kOpen);
  EXPECT_EQ(at_b[0].open, open_a);
  EXPECT_EQ(at_b[1].kind, ControlKind::kWant);
  EXPECT_EQ(at_b[2].kind, ControlKind::kClose);
  for (const auto& c : at_b) {
    EXPECT_EQ(c.stream_id, stream_a);
    EXPECT_FALSE(stream_is_senders_own(false, c.stream_id)) << "B received the stream A sends";
  }
  const auto& at_a = a.handler.controls;
  EXPECT_EQ(at_a[0].kind, ControlKind::kOpen);
  EXPECT_EQ(at_a[0].open, open_b);
  EXPECT_EQ(at_a[1].kind, ControlKind::kClose);
  EXPECT_EQ(at_a[0].stream_id, stream_b);
  EXPECT_EQ(a.participant->counters().control_refusals + b.participant->counters().control_refusals, 0U);
}

TEST_F(RdmaLinkOnDevice, AGrantedWriteLandsIntactAndThePinIsReleasedAfterItsCompletion) {
  // B answers A's OPEN on its RDMA thread as a mirror would: loans a chunk, grants it, sends the GRANT.
  LoanedChunk target{};
  std::uint32_t granted_slot = 0;
  bool intact = false;
  auto on_control = [&](LinkPort& link, const ControlMessage& message) {
    if (message.kind != ControlKind::kOpen) {
      return;
    }
    auto loan = b.port->loan(kChunkBytes);
    ASSERT_TRUE(loan.ok());
    target = *loan;
    std::memset(target.payload, 0, kChunkBytes);
    const GrantResult g = link.grants().grant(0, 0, message.stream_id);
    ASSERT_EQ(g.status, GrantStatus::kGranted);
    granted_slot = g.slot;
    const GrantEntry entry{.address = reinterpret_cast<std::uintptr_t>(target.payload),
                           .capacity_bytes = target.capacity_bytes,
                           .slot = g.slot,
                           .size_class = 0};
    send(link, [&](std::span<std::byte> out) {
      return encode_grant(out, message.stream_id, std::span<const GrantEntry>(&entry, 1), b.own_region());
    });
  };
  auto on_write = [&](LinkPort&, const ResolvedWrite& write) {
    std::array<std::byte, kMessageBytes> expected{};
    for (std::uint32_t i = 0; i < kMessageBytes; ++i) {
      expected[i] = pattern(i);
    }
    intact = write.length == kMessageBytes && std::memcmp(target.payload, expected.data(), kMessageBytes) == 0;
    b.port->discard(target);  // a mirror would publish it
  };
  b.handler.set_hooks(on_control, on_write);
  ASSERT_NO_FATAL_FAILURE(wait_up(1));
  LinkPort& link_a = *a.link();
  const std::uint32_t stream = first_stream_id(true);
  send(link_a, [&](std::span<std::byte> out) {
    return encode_open(out, stream, OpenFields{.topic_id = 1, .largest_message_bytes = kMessageBytes});
  });
  ASSERT_TRUE(a.handler.wait([&] { return !a.handler.controls.empty(); }));
  GrantEntry grant{};
  {
    const std::lock_guard lock(a.handler.mutex);
    ASSERT_EQ(a.handler.controls[0].kind, ControlKind::kGrant);
    ASSERT_EQ(a.handler.controls[0].grants.size(), 1U);
    grant = a.handler.controls[0].grants[0];
  }

  LoanedChunk sent{};
  SentChunk pinned = a_pinned_chunk(sent);
  EXPECT_EQ(static_cast<const shm::ChunkHeader*>(sent.handle)->holders.load(), shm::kNetworkBit)
      << "published pinned, no local subscriber: the pin alone holds it";
  const auto immediate =
      encode_immediate({.size_class = grant.size_class, .slot = grant.slot, .length = kMessageBytes}, kChunkBytes);
  ASSERT_TRUE(immediate);
  const auto posted_at = Clock::now();
  auto posted = link_a.post_write(
      {.local = sent.payload, .length = kMessageBytes, .remote_address = grant.address, .immediate = *immediate},
      pinned);

  ASSERT_TRUE(posted.ok()) << posted.error().message();
  EXPECT_EQ(posted.value(), WriteOutcome::kPosted);
  EXPECT_TRUE(pinned.empty()) << "the link took the pin";
  ASSERT_TRUE(b.handler.wait([&] { return b.handler.writes.size() == 1; }));
  EXPECT_TRUE(no_holder_left(sent, kWait)) << "A's pin is released after the write's completion";
  std::printf(
      "rdma link: a 3000-byte write delivered and its pin released %lld us after the post\n",
      static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - posted_at).count()));
  {
    const std::lock_guard lock(b.handler.mutex);
    const ResolvedWrite& w = b.handler.writes[0];
    EXPECT_EQ(w.slot, granted_slot);
    EXPECT_EQ(w.stream_id, stream);
    EXPECT_EQ(w.length, kMessageBytes);
  }
  EXPECT_TRUE(intact) << "the bytes B's chunk holds are A's";
  EXPECT_EQ(dynamic_cast<RdmaLink&>(link_a).writes_in_flight(), 0U);
  EXPECT_EQ(b.participant->counters().write_refusals, 0U);
}

TEST_F(RdmaLinkOnDevice, AWriteIntoASlotNeverGrantedFailsTheLinkOnTheReceiverAndBothSidesLetGo) {
  ASSERT_NO_FATAL_FAILURE(wait_up(1));
  LinkPort& link_a = *a.link();
  LoanedChunk sent{};
  SentChunk pinned = a_pinned_chunk(sent);
  const auto immediate = encode_immediate({.size_class = 0, .slot = 5, .length = kMessageBytes}, kChunkBytes);
  ASSERT_TRUE(immediate);
  // Inside B's registered pool (its last chunk), so the card accepts it: only B's grant table can refuse it.
  const std::uint64_t inside_b = b.own_region().base + b.own_region().length - kChunkBytes;
  const auto posted_at = Clock::now();

  auto posted = link_a.post_write(
      {.local = sent.payload, .length = kMessageBytes, .remote_address = inside_b, .immediate = *immediate}, pinned);

  ASSERT_TRUE(posted.ok()) << posted.error().message();
  ASSERT_TRUE(b.handler.wait([&] { return b.handler.losses == 1; })) << "B ends the link";
  ASSERT_TRUE(a.handler.wait([&] { return a.handler.losses == 1; })) << "A sees it end";
  std::printf("rdma link: a write into a slot never granted ended the link on both sides %lld ms after the post\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(Clock::now() - posted_at).count()));
  EXPECT_TRUE(no_holder_left(sent, kWait)) << "A's pin is released with its link";
  const RdmaLinkCounters at_b = b.participant->counters();
  EXPECT_EQ(at_b.write_refusals, 1U);
  EXPECT_EQ(at_b.link_failures, 1U);
  EXPECT_EQ(at_b.link_losses, 1U);
  EXPECT_EQ(a.participant->counters().link_losses, 1U);
  {
    const std::lock_guard lock(b.handler.mutex);
    EXPECT_TRUE(b.handler.writes.empty()) << "the refused write never reached the handler";
  }

  // A is the active side: it connects again after its backoff.
  ASSERT_NO_FATAL_FAILURE(wait_up(2));
  a.participant.reset();
  b.participant.reset();
  EXPECT_EQ(a.handler.losses, 2);
  EXPECT_EQ(b.handler.losses, 2);
  EXPECT_EQ(rc_qps_of_this_process(), 0) << "every QP destroyed (-1: `rdma res show qp` failed)";
}

TEST_F(RdmaLinkOnDevice, APeerThatGoesAwayIsLostOnTheSurvivorAndNothingLeaks) {
  ASSERT_NO_FATAL_FAILURE(wait_up(1));
  const auto gone_at = Clock::now();

  b.participant.reset();  // its end disconnects (the DREQ a dying process's kernel sends too)

  ASSERT_TRUE(a.handler.wait([&] { return a.handler.losses == 1 && a.handler.up_link == nullptr; }));
  std::printf("rdma link: the survivor lost the link %lld ms after the peer's end\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(Clock::now() - gone_at).count()));
  EXPECT_EQ(b.handler.losses, 1) << "the peer's own handler heard its link end";
  EXPECT_EQ(a.participant->counters().link_losses, 1U);
  EXPECT_EQ(a.participant->counters().links_up, 0U);
  a.participant.reset();
  EXPECT_EQ(a.handler.losses, 1) << "a link lost is lost once";
  EXPECT_EQ(rc_qps_of_this_process(), 0) << "every QP destroyed (-1: `rdma res show qp` failed)";
}

// The participants' threads wake for discovery only every 5 s here, so a link failed on another thread (a poster's)
// is ended at once only because the failure wakes its thread.
class RdmaLinkOnDeviceSlowRecheck : public RdmaLinkOnDevice {
 protected:
  RdmaLinkOnDeviceSlowRecheck() {
    fixed_port_a = 47351;  // known before either starts: no wait for the next recheck to find the peer
    fixed_port_b = 47352;
    recheck = milliseconds(5000);
  }
};

TEST_F(RdmaLinkOnDeviceSlowRecheck, ALinkFailedOnAnotherThreadIsEndedAtOnceAndReconnected) {
  ASSERT_NO_FATAL_FAILURE(wait_up(1));
  LinkPort& link_a = *a.link();
  const auto failed_at = Clock::now();

  link_a.fail("the test broke it");  // this thread is not A's RDMA thread

  ASSERT_TRUE(a.handler.wait([&] { return a.handler.losses == 1; }));
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - failed_at);
  ASSERT_TRUE(b.handler.wait([&] { return b.handler.losses == 1; })) << "B sees it end (DISCONNECTED)";
  std::printf("rdma link: a link failed on another thread ended %lld ms later\n", static_cast<long long>(took.count()));
  EXPECT_LT(took, milliseconds(500)) << "well before the thread's next 5 s recheck";
  EXPECT_EQ(a.participant->counters().link_failures, 1U);
  EXPECT_EQ(b.participant->counters().link_failures, 0U) << "B did not end it: it was told";
  ASSERT_NO_FATAL_FAILURE(wait_up(2));
}

// The guest's eth0 taken down (rxe0's port 1 with it: rxe raises IBV_EVENT_PORT_ERR, and IBV_EVENT_PORT_ACTIVE when
// it is up again); whatever the test does, it is put up again when this goes, and the GIDs of both "hosts" are back
// before the next test runs.
class InterfaceDown {
 public:
  explicit InterfaceDown(std::string device) : device_(std::move(device)) {
    down_ = std::system("ip link set eth0 down") == 0;  // NOLINT(cert-env33-c,concurrency-mt-unsafe): a test
  }
  ~InterfaceDown() { (void)up(); }
  InterfaceDown(const InterfaceDown&) = delete;
  InterfaceDown& operator=(const InterfaceDown&) = delete;
  InterfaceDown(InterfaceDown&&) = delete;
  InterfaceDown& operator=(InterfaceDown&&) = delete;

  [[nodiscard]] bool down() const { return down_; }
  // Puts eth0 up and waits (at most kWait) until the port is active and both addresses' GIDs are in its table.
  [[nodiscard]] bool up() {
    if (!down_) {
      return true;
    }
    down_ = false;
    if (std::system("ip link set eth0 up") != 0) {  // NOLINT(cert-env33-c,concurrency-mt-unsafe): a test
      return false;
    }
    const auto until = Clock::now() + kWait;
    while (
        !(port_state().find("ACTIVE") != std::string::npos && has_gid("ffff:0a00:020f") && has_gid("ffff:0a00:0210"))) {
      if (Clock::now() >= until) {
        return false;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return true;
  }
  [[nodiscard]] std::string port_state() const { return read_line(port_dir() + "state"); }

 private:
  [[nodiscard]] std::string port_dir() const { return "/sys/class/infiniband/" + device_ + "/ports/1/"; }
  [[nodiscard]] bool has_gid(const std::string& tail) const {
    for (int i = 0; i < 16; ++i) {
      const std::string gid = read_line(port_dir() + "gids/" + std::to_string(i));
      if (gid.size() >= tail.size() && gid.compare(gid.size() - tail.size(), tail.size(), tail) == 0) {
        return true;
      }
    }
    return false;
  }
  static std::string read_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  }

  std::string device_;
  bool down_ = false;
};

// Discovery is asked only every 5 s and no traffic runs when the port goes down: no completion fails and no
// recheck runs, so only the device's async event can end the links at once.
class RdmaLinkOnDevicePortDown : public RdmaLinkOnDevice {
 protected:
  RdmaLinkOnDevicePortDown() {
    fixed_port_a = 47361;
    fixed_port_b = 47362;
    recheck = milliseconds(5000);
  }

  // B answers each OPEN as a mirror would: loans a chunk of its pool, grants it, sends the GRANT; a write into it
  // is checked against the pattern and the chunk discarded (a mirror would publish it).
  void b_grants_on_open() {
    auto on_control = [this](LinkPort& link, const ControlMessage& message) {
      if (message.kind != ControlKind::kOpen) {
        return;
      }
      auto loan = b.port->loan(kChunkBytes);
      ASSERT_TRUE(loan.ok());
      const GrantResult g = link.grants().grant(0, 0, message.stream_id);
      ASSERT_EQ(g.status, GrantStatus::kGranted);
      const GrantEntry entry{.address = reinterpret_cast<std::uintptr_t>(loan->payload),
                             .capacity_bytes = loan->capacity_bytes,
                             .slot = g.slot,
                             .size_class = 0};
      {
        const std::lock_guard lock(granted_mutex);
        granted.push_back({.slot = g.slot, .chunk = *loan});
      }
      send(link, [&](std::span<std::byte> out) {
        return encode_grant(out, message.stream_id, std::span<const GrantEntry>(&entry, 1), b.own_region());
      });
    };
    auto on_write = [this](LinkPort&, const ResolvedWrite& write) {
      const std::lock_guard lock(granted_mutex);
      for (auto it = granted.begin(); it != granted.end(); ++it) {
        if (it->slot != write.slot) {
          continue;
        }
        bool same = write.length == kMessageBytes;
        for (std::uint32_t i = 0; same && i < kMessageBytes; ++i) {
          same = it->chunk.payload[i] == pattern(i);
        }
        writes_intact += same ? 1 : 0;
        b.port->discard(it->chunk);
        granted.erase(it);
        return;
      }
    };
    b.handler.set_hooks(on_control, on_write);
  }

  // A opens a stream on its link; true once B's GRANT is back (the last control A received).
  bool a_opens(GrantEntry& grant) {
    const std::size_t before = [&] {
      const std::lock_guard lock(a.handler.mutex);
      return a.handler.controls.size();
    }();
    send(*a.link(), [&](std::span<std::byte> out) {
      return encode_open(out, first_stream_id(true), OpenFields{.topic_id = 1, .largest_message_bytes = kMessageBytes});
    });
    if (!a.handler.wait([&] { return a.handler.controls.size() > before; })) {
      return false;
    }
    const std::lock_guard lock(a.handler.mutex);
    const RecordingHandler::Control& c = a.handler.controls.back();
    if (c.kind != ControlKind::kGrant || c.grants.size() != 1) {
      return false;
    }
    grant = c.grants[0];
    return true;
  }

  struct Granted {
    std::uint32_t slot = 0;
    LoanedChunk chunk{};
  };
  std::mutex granted_mutex;
  std::vector<Granted> granted;  // B's chunks granted and not yet written
  int writes_intact = 0;
};

TEST_F(RdmaLinkOnDevicePortDown, APortGoingDownEndsTheLinksAtOnceAndTheyComeBackAndCarryDataWhenItIsUp) {
  const std::uint64_t a_free = a.free_chunks();
  const std::uint64_t b_free = b.free_chunks();
  b_grants_on_open();
  ASSERT_NO_FATAL_FAILURE(wait_up(1));
  GrantEntry grant{};
  ASSERT_TRUE(a_opens(grant)) << "B granted A a chunk of its pool";
  EXPECT_EQ(b.free_chunks(), b_free - 1);

  const auto down_at = Clock::now();
  InterfaceDown eth0(env("AXON_RDMA_EXPECT_DEVICE"));
  ASSERT_TRUE(eth0.down()) << "ip link set eth0 down failed";

  ASSERT_TRUE(a.handler.wait([&] { return a.handler.losses == 1; })) << "port " << eth0.port_state();
  ASSERT_TRUE(b.handler.wait([&] { return b.handler.losses == 1; }));
  const auto lost_after = std::chrono::duration_cast<milliseconds>(Clock::now() - down_at);
  std::printf("rdma link: port down, both links lost %lld ms after `ip link set eth0 down` (port %s)\n",
              static_cast<long long>(lost_after.count()), eth0.port_state().c_str());
  {
    // Each side ended its link for the port, or heard the other's end first (its DREQ: no failure of its own).
    const std::string port_down =
        fmt::format("port 1 of {} went down (IBV_EVENT_PORT_ERR)", env("AXON_RDMA_EXPECT_DEVICE"));
    const std::lock_guard lock_a(a.handler.mutex);
    const std::lock_guard lock_b(b.handler.mutex);
    ASSERT_EQ(a.handler.loss_reasons.size(), 1U);
    ASSERT_EQ(b.handler.loss_reasons.size(), 1U);
    const std::string& at_a = a.handler.loss_reasons[0];
    const std::string& at_b = b.handler.loss_reasons[0];
    std::printf("rdma link: A's link ended for \"%s\", B's for \"%s\"\n", at_a.c_str(), at_b.c_str());
    EXPECT_TRUE(at_a == port_down || at_b == port_down) << "A: " << at_a << "; B: " << at_b;
    EXPECT_TRUE(at_a == port_down || at_a.empty()) << at_a;
    EXPECT_TRUE(at_b == port_down || at_b.empty()) << at_b;
  }
  // Both participants of the device's context hear the event, whichever thread read it.
  for (Side* side : {&a, &b}) {
    const auto until = Clock::now() + kWait;
    while (side->participant->counters().port_errors == 0 && Clock::now() < until) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    EXPECT_EQ(side->participant->counters().port_errors, 1U);
  }
  EXPECT_GE(a.participant->counters().link_failures + b.participant->counters().link_failures, 1U);
  EXPECT_EQ(a.participant->counters().links_up, 0U);
  EXPECT_EQ(b.participant->counters().links_up, 0U);
  {
    const std::lock_guard lock(b.handler.mutex);
    EXPECT_EQ(b.handler.reclaimed_on_loss, 1U) << "B's grant to A was taken back with the link";
  }
  {
    const std::lock_guard lock(granted_mutex);  // what B's handler reclaimed, back to its pool as a mirror's would be
    for (Granted& g : granted) {
      b.port->discard(g.chunk);
    }
    granted.clear();
  }
  EXPECT_EQ(b.free_chunks(), b_free);
  EXPECT_EQ(a.free_chunks(), a_free);

  const auto up_at = Clock::now();
  ASSERT_TRUE(eth0.up()) << "eth0 up, port active, both GIDs back (port " << eth0.port_state() << ")";
  const auto port_back = std::chrono::duration_cast<milliseconds>(Clock::now() - up_at);
  ASSERT_NO_FATAL_FAILURE(wait_up(2));
  EXPECT_EQ(rc_qps_of_this_process(), 2) << "the new links' QPs only: the ended ones are destroyed";
  std::printf("rdma link: port up, GIDs back %lld ms and both links up again %lld ms after `ip link set eth0 up`\n",
              static_cast<long long>(port_back.count()),
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(Clock::now() - up_at).count()));

  // The new link carries data: a GRANT for a new OPEN, then a write into it, intact, and A's pin released.
  ASSERT_TRUE(a_opens(grant)) << "B granted A a chunk over the new link";
  LoanedChunk sent{};
  SentChunk pinned = a_pinned_chunk(sent);
  const auto immediate =
      encode_immediate({.size_class = grant.size_class, .slot = grant.slot, .length = kMessageBytes}, kChunkBytes);
  ASSERT_TRUE(immediate);
  auto posted = a.link()->post_write(
      {.local = sent.payload, .length = kMessageBytes, .remote_address = grant.address, .immediate = *immediate},
      pinned);
  ASSERT_TRUE(posted.ok()) << posted.error().message();
  ASSERT_TRUE(b.handler.wait([&] { return b.handler.writes.size() == 1; }));
  EXPECT_TRUE(no_holder_left(sent, kWait)) << "A's pin is released after the write's completion";
  {
    const std::lock_guard lock(granted_mutex);
    EXPECT_EQ(writes_intact, 1);
  }
  EXPECT_EQ(b.free_chunks(), b_free);
  EXPECT_EQ(a.free_chunks(), a_free);
  EXPECT_EQ(a.participant->counters().port_errors, 1U) << "PORT_ACTIVE is not an error";
}

}  // namespace
}  // namespace axon::rdma
