// Valid deployment files: the full example (and its copy in the docs),
// defaults, the values each key turns into, and which transport a topic
// takes between two hosts.
#include "axon/deployment_config.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "src/config/transport_choice.hpp"

namespace axon {
namespace {

TEST(DeploymentConfig, AnEmptyFileIsValidAndGivesEveryDefault) {
  for (const char* text : {"", "# nothing but a comment\n", "---\n"}) {
    auto sut = parse_deployment_config(text, "empty.yaml");
    ASSERT_TRUE(sut.ok()) << sut.error().message();
    EXPECT_FALSE(sut->domain.has_value());
    EXPECT_TRUE(sut->hosts.empty());
    EXPECT_TRUE(sut->nodes.empty());
    EXPECT_TRUE(sut->topics.empty());
    EXPECT_EQ(sut->udp.multicast_group, "239.255.0.1");
    EXPECT_EQ(sut->udp.discovery_port, 7400);
    EXPECT_EQ(sut->udp.heartbeat_period_ms, 100U);
    EXPECT_EQ(sut->udp.max_message_bytes, 16U << 20U);
    EXPECT_EQ(sut->udp.mtu, 1500U);
    EXPECT_EQ(sut->udp.history_depth, 64U);
    EXPECT_EQ(sut->udp.reassembly_timeout_ms, 500U);
    EXPECT_EQ(sut->udp.receive_poll_us, 0U);  // the UDP thread sleeps when idle
    EXPECT_TRUE(sut->udp.security.key_file.empty());
    EXPECT_FALSE(sut->udp.security.encrypt) << "datagrams go in clear unless encrypt: true";
  }
}

TEST(DeploymentConfig, ReadsUdpSecurityWithEncryption) {
  auto sut = parse_deployment_config(
      "udp:\n  security: {key_file: domain.key, previous_key_file: old.key, encrypt: true, allow: [10.0.0.0/24]}\n",
      "secure.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->udp.security.key_file, "domain.key");
  EXPECT_EQ(sut->udp.security.previous_key_file, "old.key");
  EXPECT_TRUE(sut->udp.security.encrypt);
  EXPECT_EQ(sut->udp.security.allow, std::vector<std::string>{"10.0.0.0/24"});
  auto plain = parse_deployment_config("udp:\n  security: {key_file: domain.key, encrypt: false}\n", "plain.yaml");
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_FALSE(plain->udp.security.encrypt);
}

TEST(DeploymentConfig, ReadsTheFullExampleOfTheDocumentation) {
  auto sut = load_deployment_config(AXON_SOURCE_DIR "/examples/deployment.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->domain, 7U);
  ASSERT_EQ(sut->hosts.size(), 2U);
  EXPECT_EQ(sut->hosts[0].address, "10.0.0.1");
  EXPECT_EQ(sut->hosts[0].rdma_device, "mlx5_0");
  EXPECT_TRUE(sut->hosts[1].rdma_device.empty());

  const NodeConfig* perception = sut->find_node("perception");
  ASSERT_NE(perception, nullptr);
  EXPECT_EQ(perception->host, "controller");
  ASSERT_EQ(perception->chunk_classes.size(), 2U);
  EXPECT_EQ(perception->chunk_classes[0].payload_bytes, 4096U);
  EXPECT_EQ(perception->chunk_classes[0].count, 256U);
  EXPECT_EQ(perception->chunk_classes[1].payload_bytes, 2U << 20U);
  EXPECT_TRUE(perception->prefault_memory);
  EXPECT_FALSE(perception->lock_memory);
  EXPECT_EQ(perception->executor_thread.cpu_affinity, (std::vector<int>{2, 3}));
  EXPECT_EQ(perception->executor_thread.sched_fifo_priority, 80);
  EXPECT_EQ(sut->find_node("display")->host, "cockpit");
  const NodeConfig* planning = sut->find_node("planning");
  ASSERT_NE(planning, nullptr);
  EXPECT_EQ(planning->publishes, std::vector<std::string>{"planning/trajectory"});
  EXPECT_TRUE(planning->chunk_classes_auto);
  ASSERT_EQ(planning->chunk_classes.size(), 1U);
  EXPECT_EQ(planning->chunk_classes[0].payload_bytes, 16U << 10U);
  EXPECT_EQ(planning->chunk_classes[0].count, 26U) << "depth 16 + durability 4 + 1 loan + 50 Hz x 100 ms";

  const TopicConfig* objects = sut->find_topic("perception/objects");
  ASSERT_NE(objects, nullptr);
  EXPECT_EQ(objects->transport, TransportKind::kAuto);
  EXPECT_EQ(objects->subscriber.depth, 8U);
  EXPECT_EQ(objects->subscriber.overflow, Overflow::kDropOldest);
  EXPECT_EQ(objects->subscriber.deadline_ns, 50'000'000);
  EXPECT_EQ(objects->publisher.max_payload_bytes, 64U << 10U);

  const TopicConfig* trajectory = sut->find_topic("planning/trajectory");
  ASSERT_NE(trajectory, nullptr);
  EXPECT_EQ(trajectory->subscriber.reliability, Reliability::kReliable);
  EXPECT_EQ(trajectory->subscriber.block_timeout_ns, 5'000'000);
  EXPECT_EQ(trajectory->publisher.durability, Durability::kTransientLocal);
  EXPECT_EQ(trajectory->publisher.durability_depth, 4U);
  EXPECT_DOUBLE_EQ(trajectory->rate_hz, 50.0);

  const TopicConfig* video = sut->find_topic("display/video");
  ASSERT_NE(video, nullptr);
  EXPECT_EQ(video->transport, TransportKind::kUdp);
  EXPECT_EQ(video->subscriber.overflow, Overflow::kLatestOnly);
  EXPECT_EQ(video->subscriber.verification, Verification::kNever);

  EXPECT_EQ(sut->udp.multicast_group, "239.255.0.7");
  EXPECT_EQ(sut->udp.receive_buffer_bytes, 8U << 20U);
  EXPECT_TRUE(sut->udp.static_peers.empty());
  EXPECT_EQ(sut->udp.mtu, 1500U);
  EXPECT_EQ(sut->udp.history_depth, 64U);
  EXPECT_EQ(sut->udp.reassembly_timeout_ms, 500U);
  EXPECT_EQ(sut->rdma.port, 1U);
  EXPECT_FALSE(sut->rdma.gid_index.has_value());
  EXPECT_EQ(sut->rdma.cm_port, 0U) << "rdma_cm picks the port";
}

TEST(DeploymentConfig, ReadsRdmaCmPortAndTheEdgesOfItsRange) {
  auto sut = parse_deployment_config("hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  cm_port: 47400\n", "t.yaml");
  auto lowest = parse_deployment_config("hosts: [{name: a, rdma_device: rxe0}]\nrdma: {cm_port: 0}\n", "t.yaml");
  auto highest = parse_deployment_config("hosts: [{name: a, rdma_device: rxe0}]\nrdma: {cm_port: 65535}\n", "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->rdma.cm_port, 47400U);
  ASSERT_TRUE(lowest.ok()) << lowest.error().message();
  EXPECT_EQ(lowest->rdma.cm_port, 0U);
  ASSERT_TRUE(highest.ok()) << highest.error().message();
  EXPECT_EQ(highest->rdma.cm_port, 65535U);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DeploymentConfig, TheDocumentationQuotesTheExampleAsItIs) {
  const std::string doc = read_file(AXON_SOURCE_DIR "/docs/configuration.md");
  std::string example = read_file(AXON_SOURCE_DIR "/examples/deployment.yaml");
  example.erase(0, example.find("domain:"));  // the file's header comment is not quoted

  const std::size_t section = doc.find("## Full example");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = doc.find("```yaml\n", section);
  ASSERT_NE(begin, std::string::npos);
  const std::size_t body = begin + std::string("```yaml\n").size();
  const std::size_t end = doc.find("```", body);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(body, end - body), example)
      << "docs/configuration.md, \"Full example\", must quote examples/deployment.yaml from `domain:` on";
}

TEST(DeploymentConfig, KeysLeftOutOfATopicKeepTheCodeDefaults) {
  auto sut = parse_deployment_config("topics:\n  - name: a\n", "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->topics[0].transport, TransportKind::kAuto);
  EXPECT_EQ(sut->topics[0].subscriber, SubscriberQos{});
  EXPECT_EQ(sut->topics[0].publisher, PublisherQos{});
  EXPECT_EQ(sut->topics[0].location.line, 2);
}

TEST(DeploymentConfig, ReadsANodesChunkFallbackPolicy) {
  auto sut = parse_deployment_config(
      "nodes:\n  - name: a\n    pool: {chunk_fallback: {max_classes: 2, max_ratio: 0}}\n  - name: b\n", "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_TRUE(sut->nodes[0].chunk_fallback.has_value());
  EXPECT_EQ(*sut->nodes[0].chunk_fallback, (ChunkFallback{.max_classes = 2, .max_ratio = 0}));
  EXPECT_FALSE(sut->nodes[1].chunk_fallback.has_value()) << "unset: NodeOptions, else the default";
}

TEST(DeploymentConfig, ANodeOfTheOnlyHostNeedNotNameIt) {
  auto sut = parse_deployment_config("hosts: [{name: robot}]\nnodes: [{name: a}]\n", "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->hosts[0].address, "127.0.0.1");
  EXPECT_EQ(sut->nodes[0].host, "robot");
}

TEST(DeploymentConfig, AcceptsStaticPeersByHostNameOrAddressAndIpv6) {
  auto sut = parse_deployment_config(
      "hosts:\n  - {name: a, address: 'fd00::1'}\n  - {name: b, address: 10.0.0.2}\n"
      "udp:\n  discovery:\n    static_peers: [a, 10.0.0.9]\n    port: 9000\n",
      "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->udp.static_peers, (std::vector<std::string>{"a", "10.0.0.9"}));
  EXPECT_EQ(sut->udp.discovery_port, 9000);
}

TEST(DeploymentConfig, AcceptsFractionalMillisecondsAndSizesWithUnits) {
  auto sut = parse_deployment_config(
      "topics:\n  - {name: a, overflow: block_publisher, block_timeout_ms: 0.25, quarantine_after_ms: 2}\n"
      "udp: {send_buffer_bytes: 1.5 MiB, max_message_bytes: 65536}\n",
      "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->topics[0].subscriber.block_timeout_ns, 250'000);
  EXPECT_EQ(sut->topics[0].subscriber.quarantine_after_ns, 2'000'000);
  EXPECT_EQ(sut->udp.send_buffer_bytes, 1572864U);
  EXPECT_EQ(sut->udp.max_message_bytes, 65536U);
}

TEST(DeploymentConfig, ReadsTheUdpTransportKeys) {
  auto sut = parse_deployment_config(
      "udp:\n  mtu: 9000\n  history_depth: 4096\n  reassembly_timeout_ms: 1200\n  max_message_bytes: 16 MiB\n"
      "  receive_poll_us: 250\n",
      "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->udp.mtu, 9000U);
  EXPECT_EQ(sut->udp.history_depth, 4096U);
  EXPECT_EQ(sut->udp.reassembly_timeout_ms, 1200U);
  EXPECT_EQ(sut->udp.max_message_bytes, 16U << 20U);
  EXPECT_EQ(sut->udp.receive_poll_us, 250U);
}

TEST(DeploymentConfig, AcceptsTheMtuBounds) {
  for (const std::uint32_t mtu : {576U, 65535U}) {
    auto sut = parse_deployment_config("udp: {mtu: " + std::to_string(mtu) + "}\n", "t.yaml");

    ASSERT_TRUE(sut.ok()) << sut.error().message();
    EXPECT_EQ(sut->udp.mtu, mtu);
  }
}

TEST(DeploymentConfig, AcceptsNodesOnSeveralHostsWithAddressesOfOneFamily) {
  const char* files[] = {
      // IPv4, multicast discovery (the default group).
      "hosts:\n  - {name: a, address: 10.0.0.1}\n  - {name: b, address: 10.0.0.2}\n"
      "nodes:\n  - {name: n1, host: a}\n  - {name: n2, host: b}\n",
      // Loopback addresses and static peers.
      "hosts:\n  - {name: a, address: 127.0.0.1}\n  - {name: b, address: 127.0.0.2}\n"
      "nodes:\n  - {name: n1, host: a}\n  - {name: n2, host: b}\nudp:\n  discovery: {static_peers: [a, b]}\n",
      // IPv6 with an IPv6 group.
      "hosts:\n  - {name: a, address: 'fd00::1'}\n  - {name: b, address: 'fd00::2'}\n"
      "nodes:\n  - {name: n1, host: a}\n  - {name: n2, host: b}\nudp:\n  discovery: {multicast_group: 'ff15::a'}\n",
      // A host without nodes needs no address; nor do hosts when every node is on one.
      "hosts:\n  - {name: a, address: 10.0.0.1}\n  - {name: b, address: 10.0.0.2}\n  - {name: spare}\n"
      "nodes:\n  - {name: n1, host: a}\n  - {name: n2, host: b}\n",
      "hosts:\n  - {name: a}\n  - {name: b, address: 'fd00::2'}\nnodes:\n  - {name: n1, host: a}\n",
  };
  for (const char* text : files) {
    auto sut = parse_deployment_config(text, "t.yaml");

    EXPECT_TRUE(sut.ok()) << text << "\n" << sut.error().message();
  }
}

TEST(ConfigTransportBetween, SameHostIsSharedMemoryWhateverTheTopicSays) {
  auto config =
      parse_deployment_config("topics:\n  - {name: u, transport: udp}\n  - {name: s, transport: shm}\n", "t.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message();

  for (const char* topic : {"u", "s", "absent"}) {
    EXPECT_EQ(detail::transport_between(&*config, topic, "a", "a"), TransportKind::kShm) << topic;
    EXPECT_EQ(detail::transport_between(&*config, topic, "", ""), TransportKind::kShm) << topic;
  }
  EXPECT_EQ(detail::transport_between(nullptr, "any", "", ""), TransportKind::kShm);
}

TEST(ConfigTransportBetween, BetweenHostsWithDevicesAutoAndRdmaAreRdmaUdpIsUdpAndShmStays) {
  auto config = parse_deployment_config(
      "hosts:\n  - {name: a, address: 10.0.0.1, rdma_device: mlx5_0}\n"
      "  - {name: b, address: 10.0.0.2, rdma_device: mlx5_1}\n"
      "topics:\n  - {name: auto, transport: auto}\n  - {name: udp, transport: udp}\n"
      "  - {name: shm, transport: shm}\n  - {name: rdma, transport: rdma}\n",
      "t.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message();

  EXPECT_EQ(detail::transport_between(&*config, "auto", "a", "b"), TransportKind::kRdma)
      << "auto picks RDMA when both hosts have an RDMA device";
  EXPECT_EQ(detail::transport_between(&*config, "absent", "a", "b"), TransportKind::kRdma) << "absent is auto";
  EXPECT_EQ(detail::transport_between(&*config, "rdma", "a", "b"), TransportKind::kRdma);
  EXPECT_EQ(detail::transport_between(&*config, "rdma", "a", "a"), TransportKind::kShm) << "one host: shared memory";
  EXPECT_EQ(detail::transport_between(&*config, "udp", "b", "a"), TransportKind::kUdp);
  EXPECT_EQ(detail::transport_between(&*config, "shm", "a", "b"), std::nullopt);
}

TEST(ConfigTransportBetween, AutoIsRdmaBetweenTwoHostsWithDevicesAndUdpWhenEitherHasNone) {
  auto config = parse_deployment_config(
      "hosts:\n  - {name: a, address: 10.0.0.1, rdma_device: mlx5_0}\n"
      "  - {name: b, address: 10.0.0.2, rdma_device: mlx5_1}\n  - {name: c, address: 10.0.0.3}\n"
      "topics:\n  - {name: auto, transport: auto}\n  - {name: udp, transport: udp}\n",
      "t.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message();

  EXPECT_EQ(detail::transport_between(&*config, "auto", "a", "b"), TransportKind::kRdma)
      << "both name a device: c without one does not change the pair a-b";
  EXPECT_EQ(detail::transport_between(&*config, "auto", "b", "a"), TransportKind::kRdma);
  EXPECT_EQ(detail::transport_between(&*config, "absent", "a", "b"), TransportKind::kRdma) << "absent is auto";
  EXPECT_EQ(detail::transport_between(&*config, "auto", "a", "c"), TransportKind::kUdp) << "c has no device";
  EXPECT_EQ(detail::transport_between(&*config, "auto", "c", "a"), TransportKind::kUdp) << "c has no device";
  EXPECT_EQ(detail::transport_between(&*config, "absent", "b", "c"), TransportKind::kUdp);
  EXPECT_EQ(detail::transport_between(&*config, "auto", "a", "not-in-the-file"), TransportKind::kUdp)
      << "a host the file does not name has no device";
  EXPECT_EQ(detail::transport_between(&*config, "udp", "a", "b"), TransportKind::kUdp) << "udp stays udp";
}

TEST(ConfigTransportBeyond, IsRdmaOnlyWhenEveryOtherHostIsReachedByRdma) {
  auto config = parse_deployment_config(
      "hosts:\n  - {name: a, address: 10.0.0.1, rdma_device: mlx5_0}\n"
      "  - {name: b, address: 10.0.0.2, rdma_device: mlx5_1}\n  - {name: c, address: 10.0.0.3}\n"
      "topics:\n  - {name: auto, transport: auto}\n  - {name: shm, transport: shm}\n",
      "t.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message();
  auto two = parse_deployment_config(
      "hosts:\n  - {name: a, address: 10.0.0.1, rdma_device: mlx5_0}\n"
      "  - {name: b, address: 10.0.0.2, rdma_device: mlx5_1}\n",
      "t.yaml");
  ASSERT_TRUE(two.ok()) << two.error().message();

  EXPECT_EQ(detail::transport_beyond(&*config, "auto", "a"), TransportKind::kUdp) << "b by RDMA, c by UDP";
  EXPECT_EQ(detail::transport_beyond(&*config, "auto", "c"), TransportKind::kUdp);
  EXPECT_EQ(detail::transport_beyond(&*config, "shm", "a"), std::nullopt);
  EXPECT_EQ(detail::transport_beyond(&*two, "auto", "a"), TransportKind::kRdma);
  EXPECT_EQ(detail::transport_beyond(nullptr, "auto", ""), TransportKind::kShm);
}

TEST(DeploymentConfig, RdmaSectionDefaultsToPortOneAndAutoGid) {
  auto sut = parse_deployment_config("hosts: [{name: a, rdma_device: rxe0}]\n", "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->rdma.port, 1U);
  EXPECT_FALSE(sut->rdma.gid_index.has_value());
}

TEST(DeploymentConfig, ReadsRdmaPortAndGidIndex) {
  auto sut =
      parse_deployment_config("hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  port: 2\n  gid_index: 3\n", "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->rdma.port, 2U);
  ASSERT_TRUE(sut->rdma.gid_index.has_value());
  EXPECT_EQ(*sut->rdma.gid_index, 3U);
}

TEST(DeploymentConfig, ReadsRdmaGidIndexAutoAndTheEdgesOfEachRange) {
  auto sut = parse_deployment_config("hosts: [{name: a, rdma_device: rxe0}]\nrdma:\n  port: 255\n  gid_index: auto\n",
                                     "t.yaml");
  auto lowest =
      parse_deployment_config("hosts: [{name: a, rdma_device: rxe0}]\nrdma: {port: 1, gid_index: 0}\n", "t.yaml");
  auto highest = parse_deployment_config("hosts: [{name: a, rdma_device: rxe0}]\nrdma: {gid_index: 255}\n", "t.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->rdma.port, 255U);
  EXPECT_FALSE(sut->rdma.gid_index.has_value());
  ASSERT_TRUE(lowest.ok()) << lowest.error().message();
  EXPECT_EQ(lowest->rdma.port, 1U);
  EXPECT_EQ(lowest->rdma.gid_index, std::optional<std::uint32_t>(0));
  ASSERT_TRUE(highest.ok()) << highest.error().message();
  EXPECT_EQ(highest->rdma.gid_index, std::optional<std::uint32_t>(255));
}

TEST(DeploymentConfig, NamesEachTransport) {
  EXPECT_EQ(to_string(TransportKind::kAuto), "auto");
  EXPECT_EQ(to_string(TransportKind::kShm), "shm");
  EXPECT_EQ(to_string(TransportKind::kUdp), "udp");
  EXPECT_EQ(to_string(TransportKind::kRdma), "rdma");
}

}  // namespace
}  // namespace axon
