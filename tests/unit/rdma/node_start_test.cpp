// Node::create of a node whose host names an rdma_device: the node's pool is
// registered with the device at start-up (src/node_transport.cpp), and the
// device, port and pin-limit errors stop the start with the config's file
// and position; the pool stays pinned as long as the node lives, and a
// host without a device pins nothing. Guest only (RdmaNodeStartOnDevice,
// ctest rdma.softroce_devices: rxe0 on 10.0.2.15); the host's case, no
// device at all, is in tests/unit/config/node_config_test.cpp.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "axon/axon.hpp"
#include "src/base/log.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/support/log_capture.hpp"
#include "transports/rdma/pin_limit.hpp"

namespace axon {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr ? std::string() : std::string(value);
}

/// A deployment of one host, the guest, whose entry names `device`, with
/// node 'camera' on it (a pool of `chunks` x 4 KiB) and `extra` after.
struct GuestDeployment {
  GuestDeployment(const std::string& device, std::uint32_t chunks, const std::string& extra = "") {
    options.domain_id = 41;
    options.shm_dir = dir.path();
    options.config_path =
        dir.write("deployment.yaml", "hosts:\n  - {name: guest, address: " + env("AXON_RDMA_EXPECT_IPV4") +
                                         ", rdma_device: " + device +
                                         "}\n"
                                         "nodes:\n  - name: camera\n    pool:\n      chunk_classes: "
                                         "[{payload_bytes: 4 KiB, count: " +
                                         std::to_string(chunks) + "}]\n" + extra);
  }

  test::TempDir dir{"axon-rdma-node"};
  NodeOptions options;
};

/// "0a00:020f" for 10.0.2.15: an IPv4 address as the last 4 bytes of a GID.
std::string ipv4_in_gid(const std::string& ipv4) {
  std::array<std::uint8_t, 4> bytes{};
  if (::inet_pton(AF_INET, ipv4.c_str(), bytes.data()) != 1) {
    return "(not IPv4: " + ipv4 + ")";
  }
  return fmt::format("{:02x}{:02x}:{:02x}{:02x}", bytes[0], bytes[1], bytes[2], bytes[3]);
}

/// Options of a node in `domain` whose shared memory and config (`yaml`) are in `dir`.
NodeOptions options_in(const test::TempDir& dir, std::uint32_t domain, const std::string& yaml) {
  NodeOptions options;
  options.domain_id = domain;
  options.shm_dir = dir.path();
  options.config_path = dir.write("deployment.yaml", yaml);
  return options;
}

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

#define SKIP_OFF_THE_GUEST()                                                                                 \
  if (env("AXON_RDMA_EXPECT_DEVICE").empty()) {                                                              \
    GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)"; \
  }

TEST(RdmaNodeStartOnDevice, ANodeWhoseHostNamesTheDeviceStartsAndLogsItsPoolsRegistration) {
  SKIP_OFF_THE_GUEST();
  const std::string device = env("AXON_RDMA_EXPECT_DEVICE");
  GuestDeployment deployment(device, 8);
  test::LogCapture log{spdlog::level::info};

  const std::size_t pinned_before = rdma::current_pin_allowance().pinned_bytes;

  auto sut = Node::create("camera", deployment.options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_GE(rdma::current_pin_allowance().pinned_bytes, pinned_before + 33280) << "the pool is pinned while it lives";
  (*sut).reset();
  EXPECT_EQ(rdma::current_pin_allowance().pinned_bytes, pinned_before) << "the node's end unpins its pool";
  const std::string text = log.text();
  EXPECT_TRUE(has(text, "node 'camera': RDMA device " + device + " port 1 GID index ")) << text;
  // auto: the RoCE v2 GID that carries the host's address.
  EXPECT_TRUE(has(text, "(RoCE v2, 0000:0000:0000:0000:0000:ffff:" + ipv4_in_gid(env("AXON_RDMA_EXPECT_IPV4")) + ")"))
      << text;
  // 8 chunks of 4 KiB, each with its 64-byte header.
  EXPECT_TRUE(has(text, "registered the pool's 32.5 KiB (33280 bytes) for remote writes")) << text;
}

// With another host in the file the node's transport is UDP's, which wraps the shared-memory one: the
// registration must last as long as that, and go with it. (The stage gives the guest 10.0.2.16 as well.)
TEST(RdmaNodeStartOnDevice, ANodeReachingAnotherHostKeepsItsPoolRegisteredAsLongAsItLives) {
  SKIP_OFF_THE_GUEST();
  test::TempDir dir{"axon-rdma-node"};
  const NodeOptions options =
      options_in(dir, 42,
                 "hosts:\n  - {name: guest, address: " + env("AXON_RDMA_EXPECT_IPV4") +
                     ", rdma_device: " + env("AXON_RDMA_EXPECT_DEVICE") +
                     "}\n  - {name: other, address: 10.0.2.16}\n"
                     "nodes:\n  - name: camera\n    host: guest\n    pool:\n      chunk_classes: "
                     "[{payload_bytes: 4 KiB, count: 8}]\n  - {name: display, host: other}\n"
                     "udp:\n  discovery: {static_peers: [guest, other], port: 27400}\n");
  const std::size_t pinned_before = rdma::current_pin_allowance().pinned_bytes;

  auto sut = Node::create("camera", options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ((*sut)->transport_for("any"), TransportKind::kUdp) << "data goes by UDP";
  EXPECT_GE(rdma::current_pin_allowance().pinned_bytes, pinned_before + 33280);
  (*sut).reset();
  EXPECT_EQ(rdma::current_pin_allowance().pinned_bytes, pinned_before);
}

TEST(RdmaNodeStartOnDevice, ANodeWhoseHostNamesNoDeviceRegistersNothing) {
  SKIP_OFF_THE_GUEST();
  test::TempDir dir{"axon-rdma-node"};
  const NodeOptions options =
      options_in(dir, 41, "hosts:\n  - {name: guest, address: " + env("AXON_RDMA_EXPECT_IPV4") + "}\n");
  test::LogCapture log{spdlog::level::info};
  const std::size_t pinned_before = rdma::current_pin_allowance().pinned_bytes;

  auto sut = Node::create("camera", options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(rdma::current_pin_allowance().pinned_bytes, pinned_before);
  EXPECT_FALSE(has(log.text(), "RDMA device")) << log.text();
}

TEST(RdmaNodeStartOnDevice, RefusesADeviceThisMachineLacksListingThoseItHas) {
  SKIP_OFF_THE_GUEST();
  GuestDeployment deployment("mlx5_0", 8);

  auto sut = Node::create("camera", deployment.options);

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(sut.error().message());
  EXPECT_TRUE(has(message, deployment.options.config_path +
                               ":2:5: host 'guest': hosts[].rdma_device names "
                               "'mlx5_0', but this machine has no RDMA device of that "
                               "name; present: " +
                               env("AXON_RDMA_EXPECT_DEVICE")))
      << message;
}

// A `transport: rdma` topic between two hosts, host b's entry naming a device the machine lacks: a node
// of host a starts and sends the topic by RDMA; one of host b is refused, naming the key, the device and those
// present. (rxe0 stays: later tests of the same boot need it.)
TEST(RdmaNodeStartOnDevice, RefusesANodeOfAnRdmaTopicWhoseHostNamesAnAbsentDeviceAndStartsTheOtherHostsNode) {
  SKIP_OFF_THE_GUEST();
  const std::string device = env("AXON_RDMA_EXPECT_DEVICE");
  test::TempDir dir{"axon-rdma-node"};
  const NodeOptions options =
      options_in(dir, 43,
                 "hosts:\n  - {name: a, address: " + env("AXON_RDMA_EXPECT_IPV4") + ", rdma_device: " + device +
                     "}\n  - {name: b, address: 10.0.2.16, rdma_device: rxe9}\n"
                     "nodes:\n  - {name: na, host: a}\n  - {name: nb, host: b}\n"
                     "topics:\n  - {name: far, transport: rdma}\n"
                     "udp:\n  discovery: {static_peers: [a, b], port: 27440}\n");

  auto refused = Node::create("nb", options);
  auto started = Node::create("na", options);

  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(refused.error().message());
  EXPECT_TRUE(has(message, options.config_path +
                               ":3:5: host 'b': hosts[].rdma_device names 'rxe9', but this machine has no RDMA "
                               "device of that name; present: " +
                               device))
      << message;
  ASSERT_TRUE(started.ok()) << started.error().message();
  EXPECT_EQ((*started)->transport_for("far"), TransportKind::kRdma);
}

TEST(RdmaNodeStartOnDevice, RefusesAPortTheDeviceLacksNamingTheKey) {
  SKIP_OFF_THE_GUEST();
  const std::string device = env("AXON_RDMA_EXPECT_DEVICE");
  GuestDeployment deployment(device, 8, "rdma:\n  port: 2\n");

  auto sut = Node::create("camera", deployment.options);

  ASSERT_FALSE(sut.ok());
  const std::string message(sut.error().message());
  EXPECT_TRUE(has(message, "host 'guest': rdma.port is 2, but device " + device + " has ports 1..1")) << message;
}

TEST(RdmaNodeStartOnDevice, RefusesAGidIndexThatIsNotRoceV2NamingTheKey) {
  SKIP_OFF_THE_GUEST();
  GuestDeployment deployment(env("AXON_RDMA_EXPECT_DEVICE"), 8, "rdma:\n  gid_index: 200\n");

  auto sut = Node::create("camera", deployment.options);

  ASSERT_FALSE(sut.ok());
  const std::string message(sut.error().message());
  EXPECT_TRUE(has(message, "host 'guest': rdma.gid_index is 200, but GID 200 of")) << message;
}

// The stage's second run (user 65534, `ulimit -l 64`, AXON_RDMA_EXPECT_PIN_REFUSAL=1): a pool of
// 32 x 4 KiB (133 KiB with the headers) is more than 64 KiB may pin, so the node does not start.
// As root (first run): it starts.
TEST(RdmaNodeStartOnDevice, ThePinCheckRefusesTheNodesStartWhenItsPoolExceedsTheMemlockLimit) {
  SKIP_OFF_THE_GUEST();
  const bool expect_refusal = !env("AXON_RDMA_EXPECT_PIN_REFUSAL").empty();
  GuestDeployment deployment(env("AXON_RDMA_EXPECT_DEVICE"), 32);

  auto sut = Node::create("camera", deployment.options);

  if (!expect_refusal) {
    EXPECT_TRUE(sut.ok()) << sut.error().message();
    return;
  }
  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kNoSpace);
  const std::string message(sut.error().message());
  EXPECT_TRUE(has(message, deployment.options.config_path + ":2:5: ")) << message;
  EXPECT_TRUE(has(message, "cannot register the pool of node 'camera'")) << message;
  EXPECT_TRUE(has(message, "RLIMIT_MEMLOCK")) << message;
}

}  // namespace
}  // namespace axon
