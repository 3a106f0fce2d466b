// One rdma_cm RC connection per peer participant (docs/design/rdma-transport.md,
// "One queue pair per pair of nodes", "Connection set-up", "Faults"): the
// participant's listener, the peers discovery reported (want/forget), and
// what happens to each link, as values.
//
// - want(peer, endpoint): the side with the smaller sender id connects
//   (peer_link_rules.hpp), the other waits for the request. A request from a
//   sender id nobody wanted yet is accepted if it validates (its private data
//   decodes, the same ABI hash, a larger sender id than ours, at most
//   kMaxUnwantedLinks of them) and held; it is reported up once wanted.
//   Refused requests are rejected with the RejectReason (the peer sees it).
// - A link that ends (DISCONNECTED, REJECTED, UNREACHABLE, DEVICE_REMOVAL, a
//   set-up step failing) is reported lost and its queue pair destroyed (the
//   CM id owns it). The active side of a peer still wanted tries again after
//   ReconnectBackoff's delay; a rejection with an axon reason other than
//   "not expected", or a REP that names another participant or ABI hash,
//   stops the retries until the endpoint changes (or forget + want). The
//   passive side simply accepts the next request; a request from a peer that
//   has a link (a new incarnation, or a reconnect this side has not noticed
//   yet) replaces it: the old link is reported lost (kReplaced) first.
// - forget(peer): disconnects (the peer sees DISCONNECTED) and drops.
//
// A lost event's `qp` was destroyed before step()/forget() returned (or, while
// the port is down, moved to the error state and parked: port_down()): none of
// its outstanding work requests will complete any more (but as flushes), so
// the caller takes back every chunk and receive buffer it had given that
// queue pair.
//
// Thread safety: one thread (the participant's, later); no thread of its
// own. step() and poll_fds() do not allocate while nothing happens (events
// and set-up allocate).
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "axon/result.hpp"
#include "transports/rdma/cm_connection.hpp"
#include "transports/rdma/cm_listener.hpp"
#include "transports/rdma/connect_private_data.hpp"
#include "transports/rdma/peer_link_rules.hpp"

namespace axon::rdma {

/// Requests of peers nobody wanted yet that are held at most at once; more
/// are rejected (kNotExpected) until discovery names them.
inline constexpr std::size_t kMaxUnwantedLinks = 16;

enum class LinkEventKind : std::uint8_t {
  kUp,       ///< The link is ESTABLISHED: `qp` may carry traffic, `peer_data` is the peer's.
  kLost,     ///< The link (or an attempt) ended; `qp` (if not null) is destroyed.
  kRefused,  ///< This side rejected a request from `peer` (0: data that did not decode) with `reason`.
};

enum class LinkLoss : std::uint8_t {
  kDisconnected,   ///< The peer disconnected (or died: its kernel sends the DREQ).
  kRejected,       ///< The peer rejected our request (`reason`: axon's, else the CM's, e.g. nobody listens).
  kUnreachable,    ///< Address, route or connection error, or no answer.
  kDeviceRemoval,  ///< The RDMA device went away.
  kReplaced,       ///< A new request of the same peer replaced this link.
  kForgotten,      ///< forget() dropped it.
  kPeerMismatch,   ///< The REP named another sender id (`reason` kSenderId) or ABI hash (kAbiHash).
  kFailed,         ///< A set-up step failed; `detail` says which.
  kLinkFailed,     ///< fail() ended it: the link broke on this side (`detail`: a refused message, a failed completion).
};

[[nodiscard]] const char* to_string(LinkLoss why) noexcept;

struct LinkEvent {
  LinkEventKind kind = LinkEventKind::kUp;
  std::uint64_t peer = 0;
  ConnectPrivateData peer_data{};  ///< kUp: what the peer sent (REQ or REP).
  ibv_qp* qp = nullptr;            ///< kUp: the link's QP; kLost: the destroyed QP (null: none was made).
  bool active = false;             ///< This side connected.
  bool was_up = false;             ///< kLost: the link had been reported up.
  LinkLoss why = LinkLoss::kDisconnected;
  std::optional<RejectReason> reason{};  ///< kRejected, kPeerMismatch, kRefused: why.
  int status = 0;                        ///< The CM's status (kRejected: its reject reason).
  std::string detail{};                  ///< kFailed, kRefused: in words.
};

/// Called once per link as soon as its QP exists, before the peer can send on
/// it (the passive side: before accept()), so that the caller posts its
/// receives; an error fails the link (kFailed).
using QpReady = std::function<Result<void>(std::uint64_t peer, ibv_qp* qp)>;
/// Called right before a QP that on_qp saw is destroyed, so that the caller
/// stops every other thread from posting on it (its lost event comes after
/// step() or forget() returns, too late for that).
using QpGone = std::function<void(std::uint64_t peer, ibv_qp* qp)>;

struct PeerLinksOptions {
  Ipv4Endpoint own;               ///< This host's address and the rdma_cm port to listen on (0: any).
  QpConfig qp;                    ///< Every link's QP: the participant's PD and CQs (cm_device_context()).
  ConnectPrivateData own_data;    ///< What this participant tells each peer (its sender id, ABI hash, ...).
  QpReady on_qp;                  ///< May be empty.
  QpGone on_qp_gone;              ///< May be empty.
  ReconnectBackoff backoff = {};  ///< The active side's retry schedule.
};

class PeerLinks {
 public:
  using Clock = std::chrono::steady_clock;

  /// Listens on `options.own`. Allocates.
  [[nodiscard]] static Result<PeerLinks> listen(PeerLinksOptions options);

  /// The bound rdma_cm port (host order).
  [[nodiscard]] std::uint16_t port() const noexcept { return listener_.port(); }

  /// Discovery found `peer` at `at`. Again with the same endpoint: nothing;
  /// with another one: the active side connects there next (retries re-armed).
  /// Allocates for a new peer.
  void want(std::uint64_t peer, Ipv4Endpoint at);
  /// Discovery lost `peer`: disconnects, destroys the QP and reports it lost
  /// (kForgotten) in `events` when there was a connection.
  void forget(std::uint64_t peer, std::vector<LinkEvent>& events);

  /// This side ends the link of `peer` whose QP is `qp` (a broken peer or
  /// queue pair): disconnects (the peer sees DISCONNECTED), destroys the QP
  /// and reports it lost (kLinkFailed, `detail`). The active side of a peer
  /// still wanted connects again after its backoff; the passive side accepts
  /// the peer's next request. False when `qp` is not that peer's link now
  /// (already dropped: its loss was reported).
  bool fail(std::uint64_t peer, const ibv_qp* qp, std::string detail, std::vector<LinkEvent>& events);

  /// The device's port went down (IBV_EVENT_PORT_ERR): no connection is
  /// attempted until port_up(), whatever the backoff says, and a link that
  /// ends meanwhile (fail() after the port event, say) is parked: its QP is
  /// moved to the error state (the card touches none of its buffers any
  /// more) and reported lost as usual, but its rdma_cm id, and the QP with
  /// it, is destroyed only by port_up(). Destroying it sends a DREQ, and on
  /// Soft-RoCE a connection management datagram sent while the port is down
  /// leaves the device unable to connect again until reboot (measured:
  /// docs/design/rdma-transport.md, "Faults").
  void port_down() noexcept { port_down_ = true; }
  /// The port came back (IBV_EVENT_PORT_ACTIVE): the parked connections are
  /// disconnected and destroyed, and every active side of a peer still
  /// wanted connects at the next step(), its count of failures started
  /// again. Refused peers stay refused.
  void port_up();

  /// Replaces `fds` with the fds to poll for reading (the listener, each
  /// connection). Allocates only when `fds` must grow.
  void poll_fds(std::vector<int>& fds) const;
  /// When step() must run next even if no fd is ready (an active side's
  /// retry); nullopt: only fds.
  [[nodiscard]] std::optional<Clock::time_point> next_deadline() const noexcept;
  /// Handles every event ready now and every retry due at `now`, never
  /// waiting; appends what the caller must know to `events`. An error only
  /// when the listener fails (its channel, or its device removed); the links'
  /// own failures are events.
  [[nodiscard]] Result<void> step(Clock::time_point now, std::vector<LinkEvent>& events);

  /// Connections held now (wanted or not), for tests and stats.
  [[nodiscard]] std::size_t connections() const noexcept;

 private:
  struct Link {
    std::uint64_t peer = 0;
    bool wanted = false;
    bool active = false;
    Ipv4Endpoint at{};
    std::optional<CmConnection> connection{};
    bool qp_given = false;  // on_qp saw this connection's QP
    bool up = false;        // reported kUp
    std::uint32_t failures = 0;
    bool stopped = false;  // no more retries (a refusal that will not change)
    Clock::time_point retry_at{};
  };

  PeerLinks(PeerLinksOptions options, CmListener listener)
      : options_(std::move(options)), listener_(std::move(listener)) {}

  [[nodiscard]] Link* find(std::uint64_t peer) noexcept;
  [[nodiscard]] std::optional<RejectReason> check(const ConnectPrivateData& peer);
  void accept(ConnectRequest request, Clock::time_point now, std::vector<LinkEvent>& events);
  void start_connect(Link& link, Clock::time_point now, std::vector<LinkEvent>& events);
  void drain(Link& link, Clock::time_point now, std::vector<LinkEvent>& events);
  [[nodiscard]] bool give_qp(Link& link, Clock::time_point now, std::vector<LinkEvent>& events);
  void drop(Link& link, Clock::time_point now, LinkEvent lost, std::vector<LinkEvent>& events);

  PeerLinksOptions options_;
  CmListener listener_;
  std::vector<Link> links_;
  std::uint64_t last_checked_ = 0;    // the sender id the listener's check saw last
  bool port_down_ = false;            // port_down() until port_up(): no attempts, ended links parked
  std::vector<CmConnection> parked_;  // ended while the port was down: QP in error, destroyed by port_up()
};

}  // namespace axon::rdma
