// A node's RDMA participant (docs/design/rdma-transport.md, "Where it plugs
// in", "One queue pair per pair of nodes", "Built: the participant"): the
// completion queue on the pool registration's device, a PeerLinks listening
// on the host's address, and one thread that connects a queue pair to every
// peer participant discovery lists as reachable by RDMA, and forgets those
// it no longer lists. No data goes over the links yet (topics go by UDP).
//
// It sees nothing of discovery: the composition root passes `peers`, a
// function the thread calls every recheck period (it must be thread-safe
// and cheap: udp::Participant::rdma_reachable() under RemoteHosts' mutex).
//
// Thread safety: start() and the destructor from one thread; cm_port() and
// counters() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "axon/result.hpp"
#include "transports/rdma/completion_queue.hpp"
#include "transports/rdma/peer_links.hpp"
#include "transports/rdma/pool_registration.hpp"

namespace axon::rdma {

/// A remote participant discovery says is reachable by RDMA, and where.
struct RdmaPeer {
  std::uint64_t sender_id = 0;
  Ipv4Endpoint at{};
};

/// Replaces its argument with the peers reachable now.
using RdmaPeerSource = std::function<void(std::vector<RdmaPeer>&)>;

/// Each link's queue depths (nothing is posted on them yet).
inline constexpr std::uint32_t kLinkQueueDepth = 16;
/// The completion queue's depth, shared by every link's two queues.
inline constexpr int kParticipantCqDepth = 1024;
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
};

/// What a user sees of the links (NetworkCounters).
struct RdmaLinkCounters {
  std::uint64_t links_up = 0;     ///< Links up now.
  std::uint64_t link_losses = 0;  ///< Links that were up and were lost, in total.
};

class RdmaParticipant {
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

 private:
  RdmaParticipant(std::shared_ptr<const PoolRegistration> registration, RdmaParticipantOptions options,
                  CompChannelHandle channel, CompletionQueue cq);
  void run() noexcept;
  /// want()s what `peers` lists, forget()s what it no longer lists.
  void follow_discovery(std::vector<LinkEvent>& events);
  void report(const std::vector<LinkEvent>& events);
  [[nodiscard]] std::string where(std::uint64_t peer) const;
  void stop_links();

  // Declared in the order they must outlive one another: the registration
  // (PD) longest, then the channel, the CQ, the links (their QPs).
  std::shared_ptr<const PoolRegistration> registration_;
  RdmaParticipantOptions options_;
  CompChannelHandle channel_;
  CompletionQueue cq_;
  std::optional<PeerLinks> links_;
  std::uint16_t cm_port_ = 0;
  std::map<std::uint64_t, Ipv4Endpoint> wanted_;  ///< The thread's: the peers it gave links_.want().
  std::vector<RdmaPeer> listed_;                  ///< The thread's: the last answer of `peers`.

  // Statistics: relaxed, written by the thread only; no other data is
  // published through them (counters() reads them from any thread).
  std::atomic<std::uint64_t> links_up_{0};
  std::atomic<std::uint64_t> link_losses_{0};

  int stop_fd_ = -1;  ///< eventfd: written once by the destructor, polled by the thread.
  std::thread thread_;
};

/// "10.0.2.16:47311".
[[nodiscard]] std::string to_string(const Ipv4Endpoint& e);

}  // namespace axon::rdma
