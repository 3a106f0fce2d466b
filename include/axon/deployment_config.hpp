// The deployment configuration: one YAML file that says where each node runs,
// how big its pool is, which QoS and transport each topic uses and how hosts
// find each other. Plain structs; the file format is in docs/configuration.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "axon/options.hpp"
#include "axon/realtime.hpp"
#include "axon/result.hpp"

namespace axon {

/// How a topic's messages reach their subscribers.
enum class TransportKind : std::uint8_t {
  kAuto,  ///< Same host: shared memory; another host: RDMA when both have a device, else UDP.
  kShm,   ///< Shared memory only (subscribers on this host).
  kUdp,   ///< UDP to other hosts; shared memory on this host.
  kRdma,  ///< RDMA between hosts (every host names an rdma_device).
};

/// "auto", "shm", "udp" or "rdma".
[[nodiscard]] std::string_view to_string(TransportKind kind) noexcept;

/// Where an entry was written: 1-based line and column (0: not from a file).
struct ConfigLocation {
  int line = 0;
  int column = 0;
};

struct HostConfig {
  std::string name;
  std::string address;      ///< An IPv4 or IPv6 address.
  std::string rdma_device;  ///< Empty: the host has no RDMA device.
  ConfigLocation location;
};

struct NodeConfig {
  std::string name;
  /// Empty when the file lists no hosts (everything on this one).
  std::string host;
  /// Empty: NodeOptions::chunk_classes, else default_chunk_classes(). With
  /// `chunk_classes: auto`, the classes derived from `publishes`
  /// (docs/configuration.md, "Pool sized from the topics").
  std::vector<ChunkClassConfig> chunk_classes;
  /// `pool.chunk_classes: auto`: chunk_classes were derived from the topics
  /// this node publishes; chunk_class_topics[i] names the topics class i serves.
  bool chunk_classes_auto = false;
  std::vector<std::vector<std::string>> chunk_class_topics;
  /// `publishes:`: the topics this node advertises, each listed under topics:.
  std::vector<std::string> publishes;
  /// Unset: NodeOptions::chunk_fallback, else ChunkFallback{}.
  std::optional<ChunkFallback> chunk_fallback;
  bool prefault_memory = false;
  bool lock_memory = false;
  bool huge_pages = false;
  /// pool.publishers, pool.connections and pool.queue_slots
  /// (NodeOptions::pool_publishers, pool_connections, pool_queue_slots);
  /// unset: the options', else the defaults.
  std::optional<std::uint32_t> publishers;
  std::optional<std::uint32_t> connections;
  std::optional<std::uint32_t> queue_slots;
  /// For the executors of this node: hand to MultiThreadedOptions::worker_thread
  /// or apply_thread_options() (Node::executor_thread_options()).
  ThreadOptions executor_thread;
  ConfigLocation location;
};

struct TopicConfig {
  std::string name;
  TransportKind transport = TransportKind::kAuto;
  /// The QoS advertise()/subscribe() use when the code passes no QoS (see
  /// docs/configuration.md, "Precedence").
  PublisherQos publisher;
  SubscriberQos subscriber;
  /// `rate_hz`: messages per second one publisher sends (0: not given). A
  /// hint: nothing enforces it; it sizes the pools of `chunk_classes: auto`.
  double rate_hz = 0;
  ConfigLocation location;
};

struct UdpConfig {
  /// Multicast discovery (used when static_peers is empty).
  std::string multicast_group = "239.255.0.1";
  std::uint16_t discovery_port = 7400;
  /// Addresses (or host names of `hosts`) to announce to instead of multicast.
  std::vector<std::string> static_peers;
  std::uint32_t heartbeat_period_ms = 100;
  /// A host silent this long is lost (liveliness handlers fire).
  std::uint32_t liveliness_timeout_ms = 1000;
  std::uint32_t send_buffer_bytes = 4U << 20U;
  std::uint32_t receive_buffer_bytes = 4U << 20U;
  /// Largest message sent over UDP (fragmented to the MTU).
  std::uint32_t max_message_bytes = 16U << 20U;
  /// Link MTU: each datagram carries mtu - 28 (IPv4 + UDP) - 64 (axon header) payload bytes.
  std::uint32_t mtu = 1500;
  /// Messages a RELIABLE writer keeps for resends (fewer when its pool runs short).
  std::uint32_t history_depth = 64;
  /// An incomplete message with no new fragment this long is dropped (BEST_EFFORT) or NACKed again (RELIABLE).
  std::uint32_t reassembly_timeout_ms = 500;
  /// After data arrives, the node's UDP thread keeps checking its socket this
  /// long (poll with a zero timeout, sched_yield() between) before it sleeps:
  /// the next message of a steady stream finds it awake, which saves a
  /// CPU wake-up, at the cost of a busy CPU while traffic flows. 0: sleep at once.
  std::uint32_t receive_poll_us = 0;
  /// `security:`: authenticated datagrams and the sources accepted (docs/security.md).
  struct Security {
    /// 32 random bytes (raw or 64 hex digits), mode 0600 or 0400, owned by the node's user; the same on every
    /// host of the domain. Empty: datagrams are not authenticated. Relative: to the config file's directory.
    std::string key_file;
    /// A second key still accepted, not used to send (rotation: two keys valid at once). Empty: none.
    std::string previous_key_file;
    /// Source addresses accepted for discovery and data ("10.0.0.0/24", "192.168.1.7"); empty: any.
    std::vector<std::string> allow;
    /// `encrypt: true`: every datagram is encrypted (AES-256-GCM under the key), not only authenticated, and
    /// datagrams that are only authenticated are refused. Needs key_file; every host must set the same.
    bool encrypt = false;
  } security;
};

/// The `rdma:` section: the port and GID of the hosts' `rdma_device`. A node
/// whose host names a device registers its pool there at start-up.
struct RdmaConfig {
  /// The device's port (1-based).
  std::uint32_t port = 1;
  /// The entry of the port's GID table; unset (`auto`): the RoCE v2 GID that
  /// carries the host's address, else the first RoCE v2 GID.
  std::optional<std::uint32_t> gid_index;
  /// The rdma_cm port each node's RDMA participant listens on (its host's
  /// address); 0: rdma_cm picks a free one. ANNOUNCE tells peers which.
  std::uint16_t cm_port = 0;
};

struct DeploymentConfig {
  /// The file it came from ("" when built in code or from an absent file).
  std::string file;
  /// Empty: NodeOptions::domain_id, AXON_DOMAIN, else 0.
  std::optional<std::uint32_t> domain;
  /// `strict: true`: Node::create refuses a node the file does not list under
  /// nodes: (without it, a node missing from a file that lists others gets a
  /// warning, Node::config_warnings()).
  bool strict = false;
  /// `limits:` (NodeOptions::domain_limits when the code leaves it unset).
  std::optional<DomainLimits> limits;
  std::vector<HostConfig> hosts;
  std::vector<NodeConfig> nodes;
  std::vector<TopicConfig> topics;
  UdpConfig udp;
  RdmaConfig rdma;

  /// Lookups by name; nullptr when absent.
  [[nodiscard]] const HostConfig* find_host(std::string_view name) const noexcept;
  [[nodiscard]] const NodeConfig* find_node(std::string_view name) const noexcept;
  [[nodiscard]] const TopicConfig* find_topic(std::string_view name) const noexcept;
};

/// Parses and validates a deployment file. An empty text is a valid, empty
/// config. Errors (kInvalidArgument) read "NAME:LINE:COLUMN: what is wrong and
/// what is expected". Slow path: allocates.
Result<DeploymentConfig> parse_deployment_config(std::string_view text, std::string_view name_for_errors);

/// Reads and parses `path`. A missing file is an error (kInvalidArgument):
/// callers that want "no file, defaults" simply do not call this.
Result<DeploymentConfig> load_deployment_config(const std::string& path);

}  // namespace axon
