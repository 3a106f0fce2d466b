#include "transports/udp/discovery.hpp"

#include <algorithm>
#include <cstring>

#include "src/base/clock.hpp"
#include "src/base/log.hpp"
#include "transports/udp/envelope.hpp"

namespace axon::udp {

Discovery::Discovery(Parts parts, std::optional<UdpSocket> discovery_socket)
    : config_(parts.config),
      sender_id_(parts.sender_id),
      data_socket_(parts.data_socket),
      counters_(parts.counters),
      hosts_(parts.hosts),
      entries_per_page_(std::min<std::size_t>(
          kMaxAnnounceEntries,
          (config_.udp.mtu - 28 - kAnnounceHeaderBytes - (config_.udp.security.key_file.empty() ? 0 : kEnvelopeBytes)) /
              kAnnounceEntryBytes)),
      socket_(std::move(discovery_socket)) {}

std::vector<Endpoint> Discovery::announce_targets() const {
  std::vector<Endpoint> targets;
  if (config_.static_peers.empty()) {
    targets.push_back(Endpoint{.ipv4 = config_.udp.multicast_group, .port = config_.udp.discovery_port});
    return targets;
  }
  for (const std::uint32_t peer : config_.static_peers) {
    targets.push_back(Endpoint{.ipv4 = peer, .port = config_.udp.discovery_port});
  }
  if (!socket_) {  // the owner of this host's discovery port relays to us
    targets.push_back(Endpoint{.ipv4 = config_.host_ipv4, .port = config_.udp.discovery_port});
  }
  return targets;
}

void Discovery::announce(const ReceiveTurn& /*turn*/, std::span<const AnnounceEntry> entries) noexcept {
  Announce a;
  a.domain_id = config_.domain_id;
  a.ipv4 = data_socket_.local().ipv4;
  a.port = data_socket_.local().port;
  a.period_ms = config_.udp.heartbeat_period_ms;
  a.rdma = rdma_;
  const std::size_t host_length = std::min(config_.host.size(), kAnnounceHostBytes - 1);
  std::memcpy(a.host.data(), config_.host.data(), host_length);
  const std::size_t pages = std::max<std::size_t>(1, (entries.size() + entries_per_page_ - 1) / entries_per_page_);
  if (pages > kMaxAnnouncePages) {
    logger().error("udp: node '{}' subscribes to {} topics; announcements carry at most {}", config_.node_name,
                   entries.size(), kMaxAnnouncePages * entries_per_page_);
    return;
  }
  const std::vector<Endpoint> targets = announce_targets();
  a.page_count = static_cast<std::uint8_t>(pages);
  std::array<std::byte, kAnnounceHeaderBytes + kMaxAnnounceEntries * kAnnounceEntryBytes> bytes{};
  for (std::size_t page = 0; page < pages; ++page) {
    a.page = static_cast<std::uint8_t>(page);
    const std::size_t first = std::min(page * entries_per_page_, entries.size());
    const std::size_t count = std::min(entries_per_page_, entries.size() - first);
    const std::size_t size = encode_announce(bytes, sender_id_, a, entries.subspan(first, count));
    for (const Endpoint& to : targets) {
      if (size != 0 && data_socket_.send(std::span(bytes).first(size), to)) {
        NetworkCounterCells::add(counters_.datagrams_sent);
      }
    }
  }
}

RemoteHosts::AnnounceOutcome Discovery::on_announce(const ReceiveTurn& /*turn*/, const ParsedDatagram& datagram,
                                                    std::span<const std::byte> bytes, bool discovery) noexcept {
  const Announce& a = datagram.announce;
  const std::uint64_t sender = datagram.header.sender_id;
  if (a.domain_id != config_.domain_id || sender == sender_id_) {
    return {};  // another domain shares the group, or our own announcement looped back
  }
  const std::int64_t now = monotonic_now_ns();
  if (a.host_name() == config_.host) {
    if (discovery && !config_.static_peers.empty()) {
      local_peers_[sender] = LocalPeer{.endpoint = Endpoint{.ipv4 = a.ipv4, .port = a.port}, .last_heard_ns = now};
    }
    return {};  // this host's participants meet through shared memory
  }
  if (discovery && !config_.static_peers.empty() && (datagram.header.flags & kFlagRelayed) == 0) {
    relay(bytes);
  }
  const RemoteHosts::AnnounceOutcome outcome = hosts_.on_announce(sender, a, now);
  if (outcome.refused) {
    NetworkCounterCells::add(counters_.datagrams_refused);  // an id reused from elsewhere: spoofed
  }
  if (outcome.new_host) {
    NetworkCounterCells::add(counters_.hosts_discovered);
    logger().info("udp: node '{}' found host '{}' at {}", config_.node_name, a.host_name(),
                  Endpoint{.ipv4 = a.ipv4, .port = a.port}.to_string());
  }
  return outcome;
}

void Discovery::relay(std::span<const std::byte> bytes) noexcept {
  // We own this host's discovery port: pass the announcement on to the
  // other participants here, which cannot bind the port themselves.
  std::array<std::byte, kAnnounceHeaderBytes + kMaxAnnounceEntries * kAnnounceEntryBytes> copy{};
  std::memcpy(copy.data(), bytes.data(), std::min(bytes.size(), copy.size()));
  const std::span<std::byte> relayed(copy.data(), std::min(bytes.size(), copy.size()));
  set_relayed_flag(relayed);
  for (const auto& [id, peer] : local_peers_) {
    (void)data_socket_.send(relayed, peer.endpoint);
  }
}

void Discovery::claim_discovery_port(const ReceiveTurn& /*turn*/) noexcept {
  if (config_.static_peers.empty() || socket_) {
    return;
  }
  auto socket = UdpSocket::open(SocketOptions{
      .bind = Endpoint{.ipv4 = config_.host_ipv4, .port = config_.udp.discovery_port}, .reuse_address = false});
  if (socket) {
    socket_ = std::move(*socket);
  }
}

void Discovery::forget_silent_local_peers(const ReceiveTurn& /*turn*/, std::int64_t now_ns,
                                          std::int64_t timeout_ns) noexcept {
  std::erase_if(local_peers_, [&](const auto& peer) { return now_ns - peer.second.last_heard_ns > timeout_ns; });
}

}  // namespace axon::udp
