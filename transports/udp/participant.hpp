// A node's UDP participant: its sockets and the thread that drives everything
// coming from the network, wired from parts with one job each:
//   LocalTopics   the node's subscriptions and which of them it receives for its host;
//   WriterTable   the writers of its publishers (UdpWriter: sending, resends);
//   RemoteHosts   the remote participants it knows (Discovery fills it, liveliness empties it);
//   Discovery     sending and hearing ANNOUNCEs;
//   ReceivePath   reading the sockets, reassembly, the mirrors, NACK rounds,
//                 and waiting threads that read the data socket themselves.
// Lock order is structural: the receive lock (ReceivePath) is the only one
// held while another part is called; every other part's mutex is a leaf.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "axon/transport.hpp"
#include "transports/shm/shm_ports.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/discovery.hpp"
#include "transports/udp/local_topics.hpp"
#include "transports/udp/receive_path.hpp"
#include "transports/udp/remote_hosts.hpp"
#include "transports/udp/udp_counters.hpp"
#include "transports/udp/udp_settings.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/udp_writer.hpp"
#include "transports/udp/writer_table.hpp"

namespace axon::udp {

/// Thread safety: every public method from any thread.
class Participant final : private AnnounceHandler {
 public:
  static Result<std::shared_ptr<Participant>> create(ParticipantConfig config, std::shared_ptr<shm::ShmTransport> shm);
  ~Participant() override;
  Participant(const Participant&) = delete;
  Participant& operator=(const Participant&) = delete;
  Participant(Participant&&) = delete;
  Participant& operator=(Participant&&) = delete;

  /// A writer for a new publisher of `topic`; remove it before the port goes.
  /// With `carried_by`, another transport sends its messages to the hosts
  /// `carried_to` names: the writer is announced and matched as any, sends
  /// them nothing, and tells `carried_by` which of its receiving participants
  /// are there (UdpWriter::carry_elsewhere()); it sends to the other hosts.
  std::shared_ptr<UdpWriter> add_writer(std::shared_ptr<shm::ShmPublisherPort> local, const TopicDescriptor& topic,
                                        UdpWriter::DestinationListener carried_by = {},
                                        UdpWriter::CarriedHost carried_to = {});
  void remove_writer(const UdpWriter* writer);
  /// A subscriber of `topic` on this node: announced to remote hosts, and one
  /// participant of this host receives the topic for all its subscribers.
  void add_subscription(const TopicDescriptor& topic, const SubscriptionQos& qos);
  void remove_subscription(std::string_view topic_name, const SubscriptionQos& qos);
  /// The topic with its subscribers' strictest QoS when this participant
  /// receives it for its host (the receiver lock decides, for RDMA streams as
  /// for datagrams); nullopt otherwise. From any thread.
  [[nodiscard]] std::optional<ReceivedTopic> received_topic(std::uint64_t topic_id) const {
    return topics_.received_topic(topic_id);
  }

  [[nodiscard]] std::vector<RemoteRoute> remote_routes(std::string_view topic_name) const;
  /// The participants of other hosts that publish or subscribe `topic_name`,
  /// as their announcements said (UdpGraph reports them).
  [[nodiscard]] std::vector<RemoteEndpoints> remote_endpoints(std::string_view topic_name) const;
  /// Announces from now on whether this participant is reachable by RDMA, and
  /// at which rdma_cm port (the RDMA participant's listener, once bound).
  /// kInvalidArgument when `reachable` and the port disagree (RdmaReachability).
  /// Until called: not reachable.
  Result<void> set_rdma_reachability(RdmaReachability rdma);
  /// A remote participant's RDMA reachability, as it last announced it; nullopt when unknown.
  [[nodiscard]] std::optional<RdmaReachability> remote_rdma(std::uint64_t sender_id) const noexcept {
    return hosts_.rdma_of(sender_id);
  }
  /// Replaces `out` with the remote participants that announce RDMA
  /// reachability (the RDMA participant connects to them).
  void rdma_reachable(std::vector<RdmaReachablePeer>& out) const { hosts_.rdma_reachable(out); }
  /// This participant's id in every datagram (random per incarnation).
  [[nodiscard]] std::uint64_t sender_id() const noexcept { return sender_id_; }
  [[nodiscard]] UdpCounters counters() const noexcept { return counters_.snapshot(); }
  [[nodiscard]] Endpoint data_endpoint() const noexcept { return data_socket_.local(); }
  /// What threads waiting for a subscriber of this process sleep on (the data socket).
  [[nodiscard]] WaitSource* wait_source() noexcept { return receive_->wait_source(); }

 private:
  Participant(ParticipantConfig config, std::shared_ptr<shm::ShmTransport> shm, UdpSocket data_socket);
  Result<void> start(std::optional<UdpSocket> discovery_socket, DatagramSecurity security);
  void run() noexcept;
  void wake() noexcept;
  /// The timers of one period: receiver locks, ANNOUNCE, heartbeats, liveliness.
  void on_period(const ReceiveTurn& turn, std::int64_t now_ns) noexcept;
  void lose_participant(const ReceiveTurn& turn, std::uint64_t sender_id, const char* why) noexcept;
  /// Remote endpoints came or went: moves this host's graph word.
  void graph_moved() noexcept;
  /// Recomputes where `writers` send from RemoteHosts, and logs new type mismatches.
  void update_destinations(const std::vector<WriterEntry>& writers) noexcept;
  void on_announce(const ReceiveTurn& turn, const ParsedDatagram& datagram, std::span<const std::byte> bytes,
                   bool discovery) noexcept override;

  const ParticipantConfig config_;
  std::shared_ptr<shm::ShmTransport> shm_;
  const std::uint64_t sender_id_;
  UdpSocket data_socket_;
  NetworkCounterCells counters_;
  const std::int64_t period_ns_;
  const std::int64_t liveliness_ns_;

  /// Held while remote subscriptions change in hosts_ and the writers'
  /// destinations follow, and while remote_routes() reads hosts_: a route it
  /// reports is in the writers' destinations, so a publish after it sends
  /// there (a reliable subscriber matched before a message gets it). Taken
  /// with the receive turn or alone, before RemoteHosts' and the writers' mutexes.
  mutable std::mutex matching_mutex_;
  LocalTopics topics_;
  WriterTable writers_;
  RemoteHosts hosts_;
  std::unique_ptr<ReceivePath> receive_;
  std::optional<Discovery> discovery_;  ///< Used with the receive turn held.

  std::atomic<bool> announce_now_{false};
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace axon::udp
