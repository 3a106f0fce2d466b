// A node's UDP participant: its sockets, discovery (multicast or static peers),
// liveliness of remote hosts, the writers of its publishers and the receiving
// side of the topics it receives for its host. One thread drives everything
// that comes from the network; publishers send from their own threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "axon/deployment_config.hpp"
#include "axon/detail/transport_factories.hpp"
#include "axon/network.hpp"
#include "axon/transport.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/nack_planner.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/receiver_lock.hpp"
#include "transports/udp/remote_writer.hpp"
#include "transports/udp/scatter_receive.hpp"
#include "transports/udp/send_context.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/udp_writer.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

struct ParticipantConfig {
  std::uint32_t domain_id = 0;
  std::string node_name;
  std::string host;             ///< This host's name (deployment config).
  std::uint32_t host_ipv4 = 0;  ///< Its address: sockets bind here.
  UdpConfig udp;
  std::vector<std::uint32_t> static_peers;  ///< Resolved; empty: multicast discovery.
};

/// The topic id on the wire: a hash of the topic's name.
[[nodiscard]] std::uint64_t topic_id_of(std::string_view topic_name) noexcept;

/// Thread safety: every public method from any thread.
class Participant final : public detail::NetworkView, public SocketReceiver, private DestinationProvider {
 public:
  static Result<std::shared_ptr<Participant>> create(ParticipantConfig config, std::shared_ptr<shm::ShmTransport> shm);
  ~Participant() override;
  Participant(const Participant&) = delete;
  Participant& operator=(const Participant&) = delete;
  Participant(Participant&&) = delete;
  Participant& operator=(Participant&&) = delete;

  /// A writer for a new publisher of `topic`; remove it before the port goes.
  std::shared_ptr<UdpWriter> add_writer(std::shared_ptr<shm::ShmPublisherPort> local, const TopicDescriptor& topic);
  void remove_writer(const UdpWriter* writer);
  /// A subscriber of `topic` on this node: announced to remote hosts, and one
  /// participant of this host receives the topic for all its subscribers.
  void add_subscription(const TopicDescriptor& topic, bool reliable);
  void remove_subscription(std::string_view topic_name, bool reliable);

  [[nodiscard]] std::vector<TopicRoute> remote_routes(std::string_view topic_name) const override;
  [[nodiscard]] NetworkCounters network_counters() const noexcept override { return counters_.snapshot(); }
  [[nodiscard]] Endpoint data_endpoint() const noexcept { return data_socket_.local(); }

  // SocketReceiver: waiting subscriber threads of this process read the data socket themselves.
  [[nodiscard]] int receive_fd() const noexcept override { return data_socket_.fd(); }
  void begin_wait() noexcept override;
  void end_wait() noexcept override;
  void receive_ready() noexcept override;
  [[nodiscard]] std::size_t expected_datagrams() const noexcept override {
    return last_message_datagrams_.load(std::memory_order_relaxed);  // a hint: any value is safe
  }
  [[nodiscard]] std::size_t max_datagram_bytes() const noexcept override { return datagram_buffer_bytes_; }
  void receive_datagrams(std::span<const ReceivedDatagram> datagrams, bool all_read) noexcept override;

 private:
  struct WriterEntry {
    std::shared_ptr<UdpWriter> writer;
    std::string topic_name;
    TypeIdentity type;
    bool evolution = false;
  };
  struct LocalTopic {
    TopicDescriptor descriptor;
    std::uint32_t subscriptions = 0;
    std::uint32_t reliable = 0;
    std::optional<ReceiverLock> receiver;  ///< Held: this participant receives the topic for its host.
  };
  struct RemoteParticipant {
    std::string host;
    Endpoint endpoint;
    std::int64_t last_heard_ns = 0;
    std::vector<std::vector<AnnounceEntry>> pages;  ///< As announced ...
    std::vector<AnnounceEntry> entries;             ///< ... and all pages in order, rebuilt when one changes.
  };
  struct LocalPeer {  ///< Another participant of this host (static discovery relays to it).
    Endpoint endpoint;
    std::int64_t last_heard_ns = 0;
  };
  struct Loan {
    std::shared_ptr<RemoteWriter> writer;
    LoanedChunk chunk;
  };
  using WriterKey = std::pair<std::uint64_t, std::uint32_t>;  ///< (sender id, writer id)

  Participant(ParticipantConfig config, std::shared_ptr<shm::ShmTransport> shm, UdpSocket data_socket,
              std::optional<UdpSocket> discovery_socket);
  Result<void> start();
  void run() noexcept;
  void wake() noexcept;

  // Network input (participant thread).
  void drain(UdpSocket& socket, bool discovery) noexcept;
  void store_reassembly_counters() noexcept;
  void on_datagram(std::span<const std::byte> bytes, Endpoint from, bool discovery) noexcept;
  /// A parsed datagram; `bytes` is the whole of it, or empty for a fragment
  /// received in place (never an ANNOUNCE).
  void on_parsed(const ParsedDatagram& datagram, std::span<const std::byte> bytes, Endpoint from,
                 bool discovery) noexcept;
  void on_announce(const ParsedDatagram& datagram, std::span<const std::byte> bytes, bool discovery) noexcept;
  void on_data(const ParsedDatagram& datagram) noexcept;
  void on_heartbeat(const ParsedDatagram& datagram) noexcept;
  void on_gap(const ParsedDatagram& datagram) noexcept;
  void on_nack(const ParsedDatagram& datagram, Endpoint from) noexcept;
  /// The writer's entry in remote_writers_, made on its first message; null
  /// when the topic is not received here or the id is another topic's.
  const std::shared_ptr<RemoteWriter>* remote_writer(std::uint64_t sender_id, std::uint32_t writer_id,
                                                     std::uint64_t topic_id) noexcept;

  // Timers (participant thread).
  void announce() noexcept;
  void check_liveliness(std::int64_t now_ns) noexcept;
  void send_nacks(std::int64_t now_ns) noexcept;
  void nack(RemoteWriter& writer, const NackRound& round) noexcept;
  void retry_ownerships() noexcept;
  void update_destinations() noexcept;  // caller holds mutex_
  void lose_participant(std::uint64_t sender_id, const char* why) noexcept;

  // DestinationProvider: loans a chunk of the remote writer's mirror.
  std::optional<Destination> acquire(const MessageKey& key, std::uint64_t topic_id,
                                     std::uint32_t total_bytes) noexcept override;
  void release(const MessageKey& key, const Destination& destination) noexcept override;
  std::optional<Loan> take_loan(std::uint64_t token) noexcept;

  ParticipantConfig config_;
  std::shared_ptr<shm::ShmTransport> shm_;
  std::uint64_t sender_id_;
  UdpSocket data_socket_;
  std::optional<UdpSocket> discovery_socket_;  ///< Multicast: always; static: while we own the port.
  NetworkCounterCells counters_;
  WireLimits limits_;
  std::size_t nack_ranges_;       ///< Ranges per NACK that fit one MTU.
  std::size_t announce_entries_;  ///< Subscriptions per ANNOUNCE that fit one MTU.
  std::int64_t period_ns_;
  std::int64_t liveliness_ns_;

  mutable std::mutex mutex_;  ///< Guards the tables below (not the thread-only state).
  std::vector<WriterEntry> writers_;
  std::map<std::uint64_t, LocalTopic> topics_;
  std::map<std::uint64_t, RemoteParticipant> remote_;
  std::set<std::pair<std::uint64_t, std::uint64_t>> mismatch_reported_;  ///< (participant, topic)
  std::uint32_t next_writer_id_ = 1;
  std::atomic<bool> announce_now_{false};

  /// Waiters asleep on the data socket, and until when the socket stays
  /// theirs after the last one woke (then this thread watches it again).
  std::atomic<int> socket_waiters_{0};
  std::atomic<std::int64_t> socket_lease_until_ns_{0};
  /// Fragments of the message completed last (expected_datagrams()).
  std::atomic<std::uint32_t> last_message_datagrams_{1};
  std::size_t datagram_buffer_bytes_ = 0;  ///< Receive buffer per datagram: the MTU's payload and a margin.
  /// Held by whichever thread receives: the participant thread for its turns
  /// (timers, then what poll() found), a waiter in receive_datagrams(). Lock
  /// order: receive_mutex_, then mutex_, then a writer's mutex.
  std::mutex receive_mutex_;

  // Under receive_mutex_ (the participant thread, or a waiter receiving).
  std::optional<Reassembler> reassembler_;
  std::map<WriterKey, std::shared_ptr<RemoteWriter>> remote_writers_;
  std::map<std::uint64_t, LocalPeer> local_peers_;
  /// The writer whose fragment on_fragment() is placing (its remote_writers_ entry).
  const std::shared_ptr<RemoteWriter>* feeding_ = nullptr;
  std::vector<Loan> loans_;
  std::vector<std::uint64_t> free_loans_;
  std::optional<ScatterReceive> receive_;  ///< Receive buffers; fragments go straight into their chunk.
  ReassemblyCounters seen_reassembly_;

  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace axon::udp
