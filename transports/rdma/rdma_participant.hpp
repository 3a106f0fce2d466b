// A node's RDMA participant (docs/design/rdma-transport.md, "Where it plugs
// in", "One queue pair per pair of nodes", "Built: the participant"): the
// completion queue on the pool registration's device, a PeerLinks listening
// on the host's address, and one thread that connects a queue pair to every
// peer participant discovery lists as reachable by RDMA, and forgets those
// it no longer lists. Each link is an RdmaLink (rdma_link.hpp): the thread
// polls the one completion queue of every link through its channel, routes
// each completion to its link by queue pair number, and hands what arrives to
// `options.handler`; a link that fails, or that PeerLinks reports lost, is
// torn down by the thread (QP, pins, on_link_lost(), the link).
//
// It sees nothing of discovery: the composition root passes `peers`, a
// function the thread calls every recheck period (it must be thread-safe
// and cheap: udp::Participant::rdma_reachable() under RemoteHosts' mutex).
//
// Thread safety: start() and the destructor from one thread; cm_port() and
// counters() from any thread. The handler is called on the thread, and by the
// destructor (on_link_lost() of the links still up) after the thread ended.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "axon/result.hpp"
#include "transports/rdma/completion_queue.hpp"
#include "transports/rdma/completion_turn.hpp"
#include "transports/rdma/device_events.hpp"
#include "transports/rdma/peer_links.hpp"
#include "transports/rdma/pool_registration.hpp"
#include "transports/rdma/rdma_link.hpp"

namespace axon::rdma {

/// A remote participant discovery says is reachable by RDMA, and where.
struct RdmaPeer {
  std::uint64_t sender_id = 0;
  Ipv4Endpoint at{};
};

/// Replaces its argument with the peers reachable now.
using RdmaPeerSource = std::function<void(std::vector<RdmaPeer>&)>;

/// Each link's receive queue: a receive per grant out and per control
/// message in flight (link_port.hpp).
inline constexpr std::uint32_t kLinkReceiveDepth = kLinkGrantBudget + kLinkControlReceives;
/// Links (queue pairs) a participant holds at most at once, wanted or not; a
/// QP beyond is refused in on_qp (its attempt fails). Bounds the CQ below.
inline constexpr std::uint32_t kMaxRdmaLinks = 32;
/// The completion queue's depth, shared by every link's two queues: every
/// work request of every link may be outstanding at once, so it never
/// overflows (an overflow breaks every link). 32 x (256 + 96) = 11264 (rxe
/// allows 32767 (RXE_MAX_CQE), mlx5 4M).
inline constexpr int kParticipantCqDepth = static_cast<int>(kMaxRdmaLinks * (kLinkSendDepth + kLinkReceiveDepth));
/// How often the thread asks `peers` again when no link event wakes it.
inline constexpr std::chrono::milliseconds kPeerRecheck{100};

struct RdmaParticipantOptions {
  std::string node_name;          ///< In log lines.
  Ipv4Endpoint own;               ///< The host's address and rdma.cm_port (0: rdma_cm picks).
  std::uint64_t sender_id = 0;    ///< The UDP participant's: the same id on both transports.
  std::uint64_t incarnation = 0;  ///< Grows from one start of the node to the next.
  std::uint64_t abi_hash = 0;     ///< The pool layout's (shm::layout_abi_hash()).
  RdmaPeerSource peers;
  std::chrono::milliseconds recheck = kPeerRecheck;
  /// The links' streams (null: the links carry nothing, their receives are
  /// posted all the same and a peer's write is refused). Outlives the participant.
  LinkHandler* handler = nullptr;
  /// The handler's retries (InboundStreams::tick()), on the thread after
  /// each pass over the link events; true while something still waits, and
  /// the thread calls it again after `tick_period`. Empty: none.
  std::function<bool()> tick;
  std::chrono::microseconds tick_period{100};
};

/// What a user sees of the links (NetworkCounters).
struct RdmaLinkCounters {
  std::uint64_t links_up = 0;           ///< Links up now.
  std::uint64_t link_losses = 0;        ///< Links that were up and were lost, in total.
  std::uint64_t link_failures = 0;      ///< Links this side ended (a refused message, a failed completion).
  std::uint64_t control_refusals = 0;   ///< Control messages of peers the parser refused.
  std::uint64_t write_refusals = 0;     ///< Writes of peers whose immediate the grant table refused.
  std::uint64_t completion_errors = 0;  ///< Completions with an error status (flushes too) or unexpected.
  std::uint64_t completions_on_waiting_threads = 0;  ///< Polled and handled by spinning subscribers (CompletionTurn).
  std::uint64_t port_errors = 0;  ///< Times the device said the links' port went down (IBV_EVENT_PORT_ERR).
};

class RdmaParticipant final : private CompletionPoller {
 public:
  /// Creates the completion queue on `registration`'s context, listens, and
  /// starts the thread. `registration` is kept until the participant is
  /// gone (the QPs are destroyed before its PD).
  [[nodiscard]] static Result<std::unique_ptr<RdmaParticipant>> start(
      std::shared_ptr<const PoolRegistration> registration, RdmaParticipantOptions options);

  /// Stops the thread, disconnects every link, destroys their QPs, then the
  /// completion queue; the registration's last holder frees the PD.
  ~RdmaParticipant();
  RdmaParticipant(const RdmaParticipant&) = delete;
  RdmaParticipant& operator=(const RdmaParticipant&) = delete;
  RdmaParticipant(RdmaParticipant&&) = delete;
  RdmaParticipant& operator=(RdmaParticipant&&) = delete;

  /// The bound rdma_cm port: what ANNOUNCE tells the peers.
  [[nodiscard]] std::uint16_t cm_port() const noexcept { return cm_port_; }
  [[nodiscard]] RdmaLinkCounters counters() const noexcept;
  /// The turn at the completion queue that busy-spinning subscribers of
  /// RDMA topics take to poll it themselves (RdmaWaitSource). It outlives
  /// the participant (shared): after the participant, it polls nothing.
  [[nodiscard]] std::shared_ptr<CompletionTurn> completion_turn() const noexcept { return turn_; }

 private:
  RdmaParticipant(std::shared_ptr<const PoolRegistration> registration, RdmaParticipantOptions options,
                  CompChannelHandle channel, CompletionQueue cq);
  void run() noexcept;
  /// ppoll() on `ready` until one is ready or `wake`; with `leased` (the
  /// spinners hold the lease), the lease's looks at them are made here and
  /// it sleeps on while they still poll. ppoll()'s result.
  int sleep(std::vector<pollfd>& ready, PeerLinks::Clock::time_point wake, SpinnerWatch* leased);
  /// want()s what `peers` lists, forget()s what it no longer lists.
  void follow_discovery(std::vector<LinkEvent>& events);
  void report(const std::vector<LinkEvent>& events);
  /// What the events mean for the RdmaLinks: up (grant table, on_link_up),
  /// lost (pins, on_link_lost, the link freed).
  void apply(const std::vector<LinkEvent>& events);
  /// on_qp: the link's ring, its receives posted.
  [[nodiscard]] Result<void> link_ready(std::uint64_t peer, ibv_qp* qp);
  /// PeerLinks is about to destroy `qp`: its link stops taking posts.
  void link_closing(const ibv_qp* qp) noexcept;
  /// Takes the channel's events (re-arming), then polls the CQ until empty,
  /// each completion to its link. False when the CQ or channel broke.
  [[nodiscard]] Result<void> drain_completions();
  /// CompletionPoller, for a spinner holding the turn: one batch polled and
  /// routed (a CQ error is left to the thread's next drain, which reports it).
  std::size_t poll_batch() noexcept override;
  /// Hands `c` to its link (none: its QP was destroyed, nothing is left to do).
  void route(const Completion& c) noexcept;
  /// Ends every link that failed (PeerLinks::fail): lost events in `events`.
  void end_failed_links(std::vector<LinkEvent>& events);
  /// Acts on the device's async events (async_event.hpp): fails the links a
  /// QP event or our port going down breaks, retries connections when the
  /// port is back. An error when RDMA must stop (CQ_ERR, DEVICE_FATAL).
  [[nodiscard]] Result<void> handle_device_events();
  /// RDMA stops for good: logs why, counts the links up as lost, ends them.
  void give_up(std::string_view what, std::string_view why);
  [[nodiscard]] RdmaLink* link_of(std::uint32_t qp_num) noexcept;
  [[nodiscard]] std::string where(std::uint64_t peer) const;
  void stop_links();

  // Declared in the order they must outlive one another: the registration
  // (PD) longest, then the channel, the CQ, the links (their QPs).
  std::shared_ptr<const PoolRegistration> registration_;
  RdmaParticipantOptions options_;
  CompChannelHandle channel_;
  CompletionQueue cq_;
  LinkFaultCounters faults_;
  /// Taken by the thread for each pass, by spinners for one batch: whoever
  /// holds it is "the RDMA thread" of the links and their handler.
  std::shared_ptr<CompletionTurn> turn_ = std::make_shared<CompletionTurn>();
  /// The turn holder's (the destructor's once the thread ended): one per QP given by on_qp,
  /// until its loss is applied. Reserved for kMaxRdmaLinks.
  std::vector<std::unique_ptr<RdmaLink>> rdma_links_;
  std::vector<Completion> batch_;              ///< The turn holder's poll batch (kPollBatch).
  std::vector<ibv_async_event> device_batch_;  ///< The thread's: what device_events_ took.
  std::uint32_t own_max_message_bytes_ = 0;
  // Destroyed before rdma_links_ (declared after): each QP goes before its link's ring.
  std::optional<PeerLinks> links_;
  std::uint16_t cm_port_ = 0;
  std::map<std::uint64_t, Ipv4Endpoint> wanted_;  ///< The thread's: the peers it gave links_.want().
  std::vector<RdmaPeer> listed_;                  ///< The thread's: the last answer of `peers`.

  // Statistics: relaxed, written by the thread only; no other data is
  // published through them (counters() reads them from any thread).
  std::atomic<std::uint64_t> links_up_{0};
  std::atomic<std::uint64_t> link_losses_{0};
  std::atomic<std::uint64_t> link_failures_{0};
  std::atomic<std::uint64_t> port_errors_{0};

  int stop_fd_ = -1;  ///< eventfd: written once by the destructor, polled by the thread.
  int wake_fd_ = -1;  ///< eventfd: a link written on its failure (any thread), polled by the thread.
  /// The device's async events for this participant (after wake_fd_: it writes it).
  std::unique_ptr<DeviceEventInbox> device_events_;
  std::thread thread_;
};

/// "10.0.2.16:47311".
[[nodiscard]] std::string to_string(const Ipv4Endpoint& e);

}  // namespace axon::rdma
