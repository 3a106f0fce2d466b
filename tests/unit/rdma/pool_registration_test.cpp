// The node's own pool chunks registered for RDMA (pool_registration.hpp).
// On this host (no device): a class of 256 MiB or more is refused before any
// device is looked at, the span check holds at its edges, the chunk area of
// a real node's pool is its chunks and nothing else, and registration from
// the config's request says there is no RDMA device. In the Soft-RoCE guest
// (RdmaPoolOnDevice, ctest rdma.softroce_devices): a real node's pool is
// registered, a WRITE WITH IMMEDIATE from one of its chunks into another
// lands where a subscriber of the node reads it, a write just before the
// chunks is refused by the device, and the pin check refuses the pool as an
// unprivileged user under `ulimit -l 64`.
#include "transports/rdma/pool_registration.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/common/temp_dir.hpp"
#include "tests/unit/rdma/loopback_qp.hpp"
#include "transports/rdma/device_list.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/rdma/pin_limit.hpp"
#include "transports/shm/chunk_header.hpp"
#include "transports/shm/shm_transport.hpp"

namespace axon::rdma {
namespace {

constexpr std::uint32_t k256MiB = std::uint32_t{1} << 28;

std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr ? std::string() : std::string(value);
}

/// A described area (no memory behind it): the class check reads the classes only.
shm::ChunkArea area_of(const std::vector<std::uint32_t>& capacities) {
  shm::ChunkArea area{.base = nullptr, .bytes = 0, .class_count = static_cast<std::uint32_t>(capacities.size())};
  for (std::size_t i = 0; i < capacities.size(); ++i) {
    area.classes[i] = {
        .payload_capacity = capacities[i], .chunk_count = 1, .stride = capacities[i] + 64, .first_offset = area.bytes};
    area.bytes += area.classes[i].stride;
  }
  return area;
}

/// A node's shared-memory transport with one topic published and subscribed.
struct Node {
  explicit Node(std::vector<ChunkClassConfig> classes) {
    auto created = shm::ShmTransport::create(shm::ShmConfig{
        .domain_id = 7, .node_name = "camera", .shm_dir = dir.path(), .chunk_classes = std::move(classes)});
    if (!created.ok()) {
      ADD_FAILURE() << created.error().message();
      return;
    }
    transport = std::move(*created);
    auto advertised = transport->advertise(topic, PublisherQos{});
    auto subscribed = transport->subscribe(topic, SubscriberQos{.depth = 4});
    if (!advertised.ok() || !subscribed.ok()) {
      ADD_FAILURE() << "advertise/subscribe failed";
      return;
    }
    publisher = std::move(*advertised);
    subscriber = std::move(*subscribed);
  }

  axon::test::TempDir dir{"axon-rdma-pool"};
  const TopicDescriptor topic{.name = "frames",
                              .type = TypeIdentity{.name = "bytes", .hash = 1, .size = 1, .align = 1},
                              .max_payload_bytes = 4096};
  std::shared_ptr<shm::ShmTransport> transport;
  std::shared_ptr<PublisherPort> publisher;
  std::shared_ptr<SubscriberPort> subscriber;
};

TEST(RdmaPoolRegistration, RefusesAChunkClassOf256MiBOrMoreNamingTheClassAndTheKey) {
  const auto sut = check_classes_receivable(area_of({4096, 16U << 20, k256MiB}), "camera");

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("node 'camera'"), std::string::npos) << message;
  EXPECT_NE(message.find("nodes[].pool.chunk_classes entry 2"), std::string::npos) << message;
  EXPECT_NE(message.find("268435456 bytes, 256 MiB"), std::string::npos) << message;
  EXPECT_NE(message.find("cannot be received over RDMA"), std::string::npos) << message;
}

TEST(RdmaPoolRegistration, AcceptsClassesJustBelow256MiB) {
  // The largest capacity a pool can have below 256 MiB (a multiple of the cache line).
  EXPECT_TRUE(check_classes_receivable(area_of({256, k256MiB - 64}), "camera").ok());
  EXPECT_TRUE(check_classes_receivable(area_of({256, 4096, 65536, 1U << 20, 4U << 20, 16U << 20}), "camera").ok());
}

TEST(RdmaPoolRegistration, SpanInsideHoldsAtTheEdgesAndNeverOverflows) {
  constexpr std::uintptr_t base = 0x1000;
  constexpr std::size_t length = 0x100;
  EXPECT_TRUE(span_inside(base, length, base, length));
  EXPECT_TRUE(span_inside(base, length, base + 0xFF, 1));
  EXPECT_TRUE(span_inside(base, length, base + length, 0));
  EXPECT_FALSE(span_inside(base, length, base + 0xFF, 2));
  EXPECT_FALSE(span_inside(base, length, base - 1, 1));
  EXPECT_FALSE(span_inside(base, length, base - 1, 0));
  EXPECT_FALSE(span_inside(base, length, base, length + 1));
  EXPECT_FALSE(span_inside(base, length, base + 1, std::numeric_limits<std::size_t>::max()));
  EXPECT_FALSE(span_inside(base, length, std::numeric_limits<std::uintptr_t>::max(), 2));
}

TEST(RdmaPoolRegistration, TheOwnChunkAreaIsTheNodesChunksAndNothingElse) {
  Node node({{256, 8}, {4096, 4}});
  ASSERT_NE(node.publisher, nullptr);

  const shm::ChunkArea sut = node.transport->own_chunk_area();

  ASSERT_EQ(sut.class_count, 2U);
  std::uint64_t next = 0;
  for (const shm::ChunkClassExtent& c : sut.class_list()) {
    EXPECT_EQ(c.first_offset, next) << "the classes follow each other from the area's start";
    EXPECT_EQ(c.stride, sizeof(shm::ChunkHeader) + c.payload_capacity);
    next += std::uint64_t{c.stride} * c.chunk_count;
  }
  EXPECT_EQ(sut.bytes, next) << "the area ends with the last chunk";
  EXPECT_EQ(sut.classes[0].payload_capacity, 256U);
  EXPECT_EQ(sut.classes[1].payload_capacity, 4096U);
  EXPECT_EQ(sut.classes[1].chunk_count, 4U);

  // A loaned chunk's header is where the area says chunk k of its class is.
  auto loaned = node.publisher->loan(4096);
  ASSERT_TRUE(loaned.ok());
  const std::byte* header = loaned->payload - sizeof(shm::ChunkHeader);
  ASSERT_GE(header, sut.base + sut.classes[1].first_offset);
  const auto into_class = static_cast<std::uint64_t>(header - sut.base) - sut.classes[1].first_offset;
  EXPECT_EQ(into_class % sut.classes[1].stride, 0U);
  EXPECT_LT(into_class / sut.classes[1].stride, sut.classes[1].chunk_count);
  EXPECT_TRUE(span_inside(reinterpret_cast<std::uintptr_t>(sut.base), sut.bytes,
                          reinterpret_cast<std::uintptr_t>(loaned->payload), loaned->capacity_bytes));
  node.publisher->discard(*loaned);
}

TEST(RdmaPoolRegistration, WithoutADeviceRegistrationSaysThereIsNone) {
  auto devices = list_devices();
  ASSERT_TRUE(devices.ok()) << devices.error().message();
  if (!devices->empty()) {
    GTEST_SKIP() << "this machine has RDMA devices (" << devices->front().name << ")";
  }
  Node node({{4096, 4}});
  ASSERT_NE(node.publisher, nullptr);

  const auto sut = PoolRegistration::create(
      DeviceRequest{.host = "lidar-soc", .device = "rxe0", .port = 1, .gid_index = {}, .ipv4 = 0},
      node.transport->own_chunk_area(), "camera");

  ASSERT_TRUE(sut.failed());
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("host 'lidar-soc': no RDMA device found"), std::string::npos) << message;
}

TEST(RdmaPoolRegistration, RefusesAnUnreceivableClassBeforeLookingForADevice) {
  const auto sut = PoolRegistration::create(
      DeviceRequest{.host = "lidar-soc", .device = "no-such-device", .port = 1, .gid_index = {}, .ipv4 = 0},
      area_of({4096, k256MiB}), "camera");

  ASSERT_TRUE(sut.failed());
  EXPECT_NE(std::string(sut.error().message()).find("nodes[].pool.chunk_classes entry 1"), std::string::npos)
      << sut.error().message();
}

/// The guest's device and address (softroce_stage.sh), or empty.
DeviceRequest guest_request() {
  in_addr address{};
  const std::string ipv4 = env("AXON_RDMA_EXPECT_IPV4");
  const bool ok = inet_pton(AF_INET, ipv4.c_str(), &address) == 1;
  return {.host = "guest",
          .device = env("AXON_RDMA_EXPECT_DEVICE"),
          .port = 1,
          .gid_index = {},
          .ipv4 = ok ? ntohl(address.s_addr) : 0};
}

/// A real node's pool (8 x 4 KiB) registered on the guest's device, with a
/// loopback queue pair pair on its protection domain: the write tests' set-up.
struct RegisteredPool {
  Node node{{{4096, 8}}};
  std::optional<PoolRegistration> registration;
  CqHandle cq;
  test::LoopbackQpPair qps;

  void open(const DeviceRequest& request) {
    ASSERT_NE(node.publisher, nullptr);
    auto registered = PoolRegistration::create(request, node.transport->own_chunk_area(), "camera");
    ASSERT_TRUE(registered.ok()) << registered.error().message();
    registration.emplace(std::move(*registered));
    cq = CqHandle(ibv_create_cq(registration->context(), 16, nullptr, nullptr, 0));
    ASSERT_NE(cq, nullptr);
    ASSERT_TRUE(qps.open(registration->pd(), cq.get(), registration->device()));
  }
};

TEST(RdmaPoolOnDevice, AWriteWithImmediateIntoAChunkLandsWhereTheNodesSubscriberReadsIt) {
  const DeviceRequest request = guest_request();
  if (request.device.empty()) {
    GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
  }
  RegisteredPool pool;
  ASSERT_NO_FATAL_FAILURE(pool.open(request));
  Node& node = pool.node;
  const PoolRegistration& sut = *pool.registration;
  const CqHandle& cq = pool.cq;
  test::LoopbackQpPair& qps = pool.qps;

  // A publisher's chunk (the source) and a chunk a mirror would be granted (the target).
  auto source = node.publisher->loan(4096);
  auto target = node.publisher->loan(4096);
  ASSERT_TRUE(source.ok() && target.ok());
  ASSERT_TRUE(sut.contains(source->payload, source->capacity_bytes));
  ASSERT_TRUE(sut.contains(target->payload, target->capacity_bytes));
  constexpr std::uint32_t kLength = 3000;
  for (std::uint32_t i = 0; i < kLength; ++i) {
    source->payload[i] = static_cast<std::byte>(i * 13 + 5);
  }
  std::memset(target->payload, 0, kLength);
  const auto imm = encode_immediate({.size_class = 0, .slot = 1, .length = kLength}, 4096);
  ASSERT_TRUE(imm);

  ASSERT_TRUE(qps.write_with_immediate(
      {.addr = reinterpret_cast<std::uintptr_t>(source->payload), .length = kLength, .lkey = sut.lkey()},
      reinterpret_cast<std::uintptr_t>(target->payload), sut.rkey(), *imm, 1, 2));
  const std::vector<ibv_wc> done = test::poll_completions(cq.get(), 2);

  ASSERT_EQ(done.size(), 2U);
  for (const ibv_wc& wc : done) {
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    if (wc.wr_id == 2) {
      ASSERT_TRUE((wc.wc_flags & IBV_WC_WITH_IMM) != 0);
      const auto fields = decode_immediate(ntohl(wc.imm_data), std::array<std::uint32_t, 1>{4096});
      ASSERT_TRUE(fields);
      EXPECT_EQ(fields->length, kLength);
      EXPECT_EQ(fields->slot, 1U);
    }
  }
  // Published as it is, the chunk reaches the node's subscriber with the bytes the card wrote.
  ASSERT_TRUE(node.publisher->publish(*target, kLength, 0));
  auto taken = node.subscriber->take();
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->info.payload_bytes, kLength);
  EXPECT_EQ(std::memcmp(taken->payload, source->payload, kLength), 0)
      << "the subscriber does not see what the write put in the pool";
  node.subscriber->release(*taken);
  node.publisher->discard(*source);
}

TEST(RdmaPoolOnDevice, TheDeviceRefusesAWriteJustBeforeTheChunks) {
  const DeviceRequest request = guest_request();
  if (request.device.empty()) {
    GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
  }
  RegisteredPool pool;
  ASSERT_NO_FATAL_FAILURE(pool.open(request));
  Node& node = pool.node;
  const PoolRegistration& sut = *pool.registration;
  const CqHandle& cq = pool.cq;
  test::LoopbackQpPair& qps = pool.qps;
  auto source = node.publisher->loan(64);
  ASSERT_TRUE(source.ok());
  // The 64 bytes before the first chunk: the end of the pool's directory (its free-list heads).
  const std::byte* before = sut.base() - 64;
  ASSERT_FALSE(sut.contains(before, 64));

  ASSERT_TRUE(qps.write_with_immediate(
      {.addr = reinterpret_cast<std::uintptr_t>(source->payload), .length = 64, .lkey = sut.lkey()},
      reinterpret_cast<std::uintptr_t>(before), sut.rkey(), 0, 1, 2));
  // The receiver's posted receive may be flushed first: wait for the send's completion.
  std::optional<ibv_wc> send_done;
  for (int polls = 0; polls < 2 && !send_done; ++polls) {
    for (const ibv_wc& wc : test::poll_completions(cq.get(), 1)) {
      if (wc.wr_id == 1) {
        send_done = wc;
      }
    }
  }

  ASSERT_TRUE(send_done.has_value()) << "no completion of the write";
  EXPECT_EQ(send_done->status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(send_done->status);
  node.publisher->discard(*source);
}

// The stage's second run (user 65534, `ulimit -l 64`, AXON_RDMA_EXPECT_PIN_REFUSAL=1):
// the pool's 133 KiB of chunks are refused by the pin check with RLIMIT_MEMLOCK
// in the message. As root (CAP_IPC_LOCK) the same pool registers.
TEST(RdmaPoolOnDevice, ThePinCheckRefusesAPoolAboveTheMemlockLimit) {
  const DeviceRequest request = guest_request();
  if (request.device.empty()) {
    GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
  }
  const bool expect_refusal = !env("AXON_RDMA_EXPECT_PIN_REFUSAL").empty();
  Node node({{4096, 32}});
  ASSERT_NE(node.publisher, nullptr);
  const shm::ChunkArea area = node.transport->own_chunk_area();
  ASSERT_GT(area.bytes, std::size_t{64} << 10);

  const auto sut = PoolRegistration::create(request, area, "camera");

  const bool predicted = check_can_pin(area.bytes, "the pool").ok();
  EXPECT_EQ(sut.ok(), predicted) << (sut.ok() ? std::string("registered") : std::string(sut.error().message()));
  if (expect_refusal) {
    ASSERT_TRUE(sut.failed()) << "the pool registered under `ulimit -l 64` without CAP_IPC_LOCK";
    const std::string message(sut.error().message());
    std::printf("uid %u: %s\n", getuid(), message.c_str());
    EXPECT_NE(message.find("RLIMIT_MEMLOCK"), std::string::npos) << message;
    EXPECT_NE(message.find("the pool of node 'camera' (32 chunks"), std::string::npos) << message;
    EXPECT_EQ(sut.error().code(), ErrorCode::kNoSpace);
  } else {
    EXPECT_TRUE(sut.ok()) << sut.error().message();
  }
}

}  // namespace
}  // namespace axon::rdma
