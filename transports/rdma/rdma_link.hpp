// The data plane of one RDMA link (docs/design/rdma-transport.md, "Built: the
// link"): a LinkPort over one connected RC queue pair of PeerLinks, driven
// by the participant's RDMA thread.
//
// - Created in PeerLinks' on_qp (before the peer can send): its control ring
//   (kLinkGrantBudget + kLinkControlReceives receive slots, kLinkControlSends
//   send slots), every receive posted. up() (the link's kUp event: the peer's
//   private data) makes the grant table of this node's pool and the peer's
//   region, rkey and largest message.
// - handle(completion) on the RDMA thread: a control message is parsed and
//   handed to the handler, a write resolved against the grant table and
//   handed over, then the receive is posted again; a refused one fails the
//   link (counted). A send completion frees its control slot and unpins every
//   chunk whose write it covers (WriteLedger). An error completion fails the
//   link. Receives that complete before up() (the passive side's QP is
//   ready before its ESTABLISHED event) wait, in order, until up().
// - A failed link does nothing more for the handler; the participant tears
//   it down (not inside a callback): the QP destroyed first (PeerLinks), then
//   release_all() unpins what the card might still have read, then
//   on_link_lost(), then the link (its ring, registered memory) is freed.
//
// Thread safety: send_control(), post_write(), fail(), failed() from any
// thread: `mutex_` (process-local, never held across a call to another
// process or to the handler) orders them with the RDMA thread's reposts and
// completions. Everything else from the RDMA thread. create() and up()
// allocate; nothing else does in the steady state (a failure formats its
// reason once).
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "axon/result.hpp"
#include "transports/rdma/completion.hpp"
#include "transports/rdma/connect_private_data.hpp"
#include "transports/rdma/control_ring.hpp"
#include "transports/rdma/link_port.hpp"
#include "transports/rdma/pool_registration.hpp"
#include "transports/rdma/send_queue_budget.hpp"
#include "transports/rdma/write_ledger.hpp"

namespace axon::rdma {

/// Faults of every link of a participant, in total. Relaxed atomics: plain
/// statistics, written by the RDMA thread (and a poster's failed post),
/// read from any thread; nothing else is published through them.
struct LinkFaultCounters {
  std::atomic<std::uint64_t> control_refusals{0};   ///< Control messages the parser refused.
  std::atomic<std::uint64_t> write_refusals{0};     ///< Writes the grant table refused.
  std::atomic<std::uint64_t> completion_errors{0};  ///< Completions with an error status, or unexpected.
};

class RdmaLink final : public LinkPort {
 public:
  /// The link of `peer` over `qp` (already created on `registration`'s PD):
  /// its control ring, every receive posted. `own_max_message_bytes` is the
  /// port's max_msg_sz this side told the peer (write chains are cut at it).
  /// `handler` (may be null: messages are parsed and dropped) and `faults`
  /// outlive the link. `wake_fd` (an eventfd, or -1) is written once when
  /// the link fails, so that the RDMA thread ends it even when a poster's
  /// thread failed it. Allocates, registers memory.
  [[nodiscard]] static Result<std::unique_ptr<RdmaLink>> create(const PoolRegistration& registration,
                                                                std::uint64_t peer, ibv_qp* qp,
                                                                std::uint32_t own_max_message_bytes,
                                                                LinkHandler* handler, LinkFaultCounters& faults,
                                                                int wake_fd = -1);

  /// The link is ESTABLISHED with `peer_data`; this side connected when
  /// `active`. Makes the grant table and then handles the receives that came
  /// before (on_link_up() is the caller's, before this). Allocates.
  [[nodiscard]] Result<void> up(const ConnectPrivateData& peer_data, bool active);
  /// Hands the handler what completed before up(); call right after
  /// on_link_up().
  void deliver_early_receives() noexcept;

  /// One completion of this link's queue pair (RDMA thread).
  void handle(const Completion& completion) noexcept;

  /// The queue pair is destroyed: unpins every chunk a write still held.
  /// Returns how many.
  std::uint32_t release_all() noexcept;

  [[nodiscard]] bool is_up() const noexcept { return grants_.has_value(); }
  [[nodiscard]] bool failed() const noexcept;
  /// Why the link failed ("" while it did not).
  [[nodiscard]] std::string failure() const;
  [[nodiscard]] ibv_qp* qp() const noexcept { return qp_; }
  [[nodiscard]] std::uint32_t qp_num() const noexcept { return qp_num_; }
  /// Writes posted and not yet known complete (their chunks pinned).
  [[nodiscard]] std::uint32_t writes_in_flight() const;

  // LinkPort
  [[nodiscard]] std::uint64_t peer() const noexcept override { return peer_; }
  [[nodiscard]] bool active() const noexcept override { return active_; }
  [[nodiscard]] PeerRegion peer_region() const noexcept override { return peer_region_; }
  [[nodiscard]] Result<SendOutcome> send_control(std::span<const std::byte> message) noexcept override;
  [[nodiscard]] Result<WriteOutcome> post_write(const LinkWrite& write, SentChunk& pinned) noexcept override;
  [[nodiscard]] GrantTable& grants() noexcept override { return *grants_; }
  [[nodiscard]] GrantedSlots& granted_slots() noexcept override { return granted_slots_; }
  void fail(std::string_view why) noexcept override;
  /// Its queue pair is about to be destroyed (PeerLinks' on_qp_gone):
  /// from now on send_control() and post_write() refuse (a failure that
  /// wakes nobody: the teardown is under way), so no thread posts on it.
  void close() noexcept;

 private:
  RdmaLink(const PoolRegistration& registration, std::uint64_t peer, ibv_qp* qp, std::uint32_t own_max_message_bytes,
           LinkHandler* handler, LinkFaultCounters& faults, int wake_fd, ControlRing ring);

  void handle_receive(const Completion& c) noexcept;
  void handle_send(const Completion& c) noexcept;
  void repost(std::uint32_t slot) noexcept;
  void fail_locked(std::string_view why) noexcept;
  void record(std::uint64_t sequence, SentChunk& pinned) noexcept;  // under mutex_
  [[nodiscard]] Error closed_error() const;

  const PoolRegistration& registration_;
  const std::uint64_t peer_;
  ibv_qp* const qp_;
  const std::uint32_t qp_num_;
  const std::uint32_t own_max_message_bytes_;
  LinkHandler* const handler_;
  LinkFaultCounters& faults_;
  const int wake_fd_;

  // Set by up() (RDMA thread), before the handler hears of the link.
  bool active_ = false;
  PeerRegion peer_region_{};
  std::uint32_t peer_rkey_ = 0;
  std::optional<GrantTable> grants_;
  GrantedSlots granted_slots_;
  std::vector<Completion> early_;  ///< Receives before up(); reserved for every receive slot.

  mutable std::mutex mutex_;  // ring_'s send side and reposts, budget_, ledger_, failure_
  ControlRing ring_;
  SendQueueBudget budget_;
  WriteLedger ledger_;
  std::string failure_;  // "" while the link works
};

}  // namespace axon::rdma
