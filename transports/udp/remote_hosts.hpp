// The remote participants this one knows from their announcements: where they
// receive, what they subscribe to, when they were last heard. Discovery fills
// it, liveliness empties it, writers ask it where their topics go.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "axon/transport.hpp"
#include "transports/udp/udp_counters.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/udp_writer.hpp"
#include "transports/udp/wire_format.hpp"

namespace axon::udp {

/// What a writer publishes: matched against remote subscriptions.
struct WriterTopic {
  std::uint64_t topic_id = 0;
  std::string topic_name;
  TypeIdentity type;
  bool evolution = false;  ///< allow_compatible_evolution
};

/// A remote subscription of another type than the writer's, seen for the first time.
struct TypeMismatch {
  std::string host;
  std::uint64_t their_type_hash = 0;
};

/// What one remote participant (of another host) has of a topic, as it
/// announced it: for graph events.
struct RemoteEndpoints {
  std::uint64_t participant = 0;  ///< Its sender id.
  std::string host;
  std::uint32_t publishers = 0;
  std::uint32_t subscribers = 0;
};

/// A remote participant that announces RDMA reachability: where its RDMA
/// participant listens (RemoteHosts::rdma_reachable()).
struct RdmaReachablePeer {
  std::uint64_t participant = 0;  ///< Its sender id.
  std::string host;
  std::uint32_t ipv4 = 0;  ///< Its announced address (host order).
  std::uint16_t cm_port = 0;
};

/// Thread safety: every method from any thread. Its mutex is a leaf: held
/// only inside these methods, which call no other class of the participant
/// (and log nothing). Every change bumps generation(), so that destinations
/// computed from an older state can be told apart (UdpWriter::set_destinations).
class RemoteHosts {
 public:
  struct AnnounceOutcome {
    bool refused = false;          ///< A known id from another endpoint or host: spoofed or stale.
    bool new_participant = false;  ///< First announcement of this sender.
    bool new_host = false;         ///< ... and the first participant of its host.
    bool changed = false;          ///< Its subscriptions changed: writers' destinations must be updated.
  };
  /// Page `a.page` of `sender`'s announcement, heard at `now_ns`.
  AnnounceOutcome on_announce(std::uint64_t sender, const Announce& a, std::int64_t now_ns);

  /// Any other datagram of `sender` from `from`: false when the sender is
  /// unknown or announced another endpoint; else notes that it was heard.
  bool heard(std::uint64_t sender, Endpoint from, std::int64_t now_ns) noexcept;
  [[nodiscard]] std::optional<Endpoint> endpoint_of(std::uint64_t sender) const noexcept;
  /// Whether `sender` is reachable by RDMA, as its latest announcement said; nullopt when unknown.
  [[nodiscard]] std::optional<RdmaReachability> rdma_of(std::uint64_t sender) const noexcept;
  /// Replaces `out` with the participants whose latest announcement says
  /// reachable by RDMA (allocates only when `out` must grow, and for names).
  void rdma_reachable(std::vector<RdmaReachablePeer>& out) const;
  /// Participants not heard for longer than `timeout_ns`.
  [[nodiscard]] std::vector<std::uint64_t> silent(std::int64_t now_ns, std::int64_t timeout_ns) const;

  struct Removed {
    std::string host;
    bool host_gone = false;  ///< It was the host's last participant.
  };
  std::optional<Removed> remove(std::uint64_t sender);

  /// Remote hosts that subscribe to `topic_id` and whose receiver of it is elected (writers send there).
  [[nodiscard]] std::vector<RemoteRoute> routes(std::uint64_t topic_id) const;

  struct Destinations {
    std::vector<WriterDestination> destinations;
    std::vector<TypeMismatch> new_mismatches;  ///< Not reported before: the caller logs and counts them.
    std::uint64_t generation = 0;              ///< The state they were computed from.
  };
  /// The participants of other hosts than `own_host` that publish or subscribe `topic_id`.
  [[nodiscard]] std::vector<RemoteEndpoints> endpoints_of(std::uint64_t topic_id, std::string_view own_host) const;

  /// Where a writer of `topic` sends: one destination per host whose receiver is elected.
  Destinations destinations_for(const WriterTopic& topic);

 private:
  struct Participant {
    std::string host;
    Endpoint endpoint;
    std::int64_t last_heard_ns = 0;
    RdmaReachability rdma;                          ///< As last announced (it may change).
    std::vector<std::vector<AnnounceEntry>> pages;  ///< As announced ...
    std::vector<AnnounceEntry> entries;             ///< ... and all pages in order, rebuilt when one changes.
  };
  /// Stores page `a.page`; true when the participant's entries changed.
  static bool store_page(Participant& remote, const Announce& a);
  /// `sender`'s `field` under the mutex; nullopt when unknown (endpoint_of(), rdma_of()).
  template <class Field>
  [[nodiscard]] std::optional<Field> field_of(std::uint64_t sender, Field Participant::*field) const noexcept;

  mutable std::mutex mutex_;
  std::map<std::uint64_t, Participant> remote_;                          ///< Guarded by mutex_.
  std::set<std::pair<std::uint64_t, std::uint64_t>> mismatch_reported_;  ///< (participant, topic); mutex_.
  std::uint64_t generation_ = 0;                                         ///< Guarded by mutex_.
};

}  // namespace axon::udp
