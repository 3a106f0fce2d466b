// How participants find each other: ANNOUNCEs sent to the multicast group or
// the static peers, heard on the discovery socket (or relayed to the data
// socket by the participant of this host that owns the discovery port), and
// stored in RemoteHosts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>

#include "transports/udp/receive_path.hpp"
#include "transports/udp/remote_hosts.hpp"
#include "transports/udp/udp_counters.hpp"
#include "transports/udp/udp_settings.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

/// Thread safety: the holder of the receive turn (its methods take one).
class Discovery {
 public:
  struct Parts {
    const ParticipantConfig& config;
    std::uint64_t sender_id;
    UdpSocket& data_socket;
    NetworkCounterCells& counters;
    RemoteHosts& hosts;
  };
  /// `discovery_socket`: multicast, always; static peers: only while this participant owns the port.
  Discovery(Parts parts, std::optional<UdpSocket> discovery_socket);

  /// Sends this participant's ANNOUNCE (as many pages as `entries` need).
  void announce(const ReceiveTurn& turn, std::span<const AnnounceEntry> entries) noexcept;
  /// What the next announcements say of this participant's RDMA reachability
  /// (valid: see RdmaReachability). Until set: not reachable.
  void set_rdma(const ReceiveTurn& /*turn*/, RdmaReachability rdma) noexcept { rdma_ = rdma; }
  /// An ANNOUNCE heard on the discovery socket (`discovery`) or the data socket.
  RemoteHosts::AnnounceOutcome on_announce(const ReceiveTurn& turn, const ParsedDatagram& datagram,
                                           std::span<const std::byte> bytes, bool discovery) noexcept;
  /// Static discovery: the first participant of a host to bind the discovery
  /// port hears the others' announcements and relays them; tried each period.
  void claim_discovery_port(const ReceiveTurn& turn) noexcept;
  void forget_silent_local_peers(const ReceiveTurn& turn, std::int64_t now_ns, std::int64_t timeout_ns) noexcept;
  [[nodiscard]] UdpSocket* discovery_socket() noexcept { return socket_ ? &*socket_ : nullptr; }

 private:
  struct LocalPeer {  ///< Another participant of this host (static discovery relays to it).
    Endpoint endpoint;
    std::int64_t last_heard_ns = 0;
  };
  void relay(std::span<const std::byte> bytes) noexcept;
  [[nodiscard]] std::vector<Endpoint> announce_targets() const;

  const ParticipantConfig& config_;
  const std::uint64_t sender_id_;
  UdpSocket& data_socket_;
  NetworkCounterCells& counters_;
  RemoteHosts& hosts_;
  const std::size_t entries_per_page_;  ///< Subscriptions per ANNOUNCE that fit one MTU.
  std::optional<UdpSocket> socket_;
  std::map<std::uint64_t, LocalPeer> local_peers_;
  RdmaReachability rdma_;
};

}  // namespace axon::udp
