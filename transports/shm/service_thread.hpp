// The node's service thread: serves our pool's descriptor and takes
// deposits (FdServer), runs the fetches of peer pools, the liveness rounds,
// and hands transient-local history to idle publishers' joiners. No peer
// can stall it: every socket is non-blocking and the domain lock is only
// tried, never waited for. An idle node's thread sleeps: a peer's exit wakes
// it through that peer's pidfd (PeerWatch), and otherwise it runs a round
// only after activity (kActivityGapNs apart at most) and at the sweep, every
// kSweepPeriods liveness periods.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "transports/shm/domain.hpp"
#include "transports/shm/durable_publishers.hpp"
#include "transports/shm/endpoint_stats.hpp"
#include "transports/shm/fd_channel.hpp"
#include "transports/shm/own_pool.hpp"
#include "transports/shm/peer_pools.hpp"
#include "transports/shm/peer_watch.hpp"
#include "transports/shm/service_wake.hpp"

namespace axon::shm {

/// What the service thread works on; all outlive it.
struct ServiceParts {
  Domain& domain;
  OwnPool& own;
  FdServer& server;
  PeerPools& peers;
  DurablePublishers& durable;
  const ServiceWake& wake;
  EndpointStats& stats;  ///< Refreshed once a second while the node has endpoints.
};

/// Thread safety: constructed and destroyed by the node's owner thread.
class ServiceThread {
 public:
  /// Starts the thread.
  explicit ServiceThread(ServiceParts parts);
  /// Stops the thread (the eventfd wakes it) and joins it.
  ~ServiceThread();
  ServiceThread(const ServiceThread&) = delete;
  ServiceThread& operator=(const ServiceThread&) = delete;

  /// The sweep, in liveness periods (1 s at the default 50 ms): a round for
  /// what nothing woke the thread for (a peer that joined and connected to
  /// none of this node's endpoints, a subscriber of another process that
  /// left normally while our publisher was idle).
  static constexpr std::int64_t kSweepPeriods = 20;
  /// Activity (a fetch, a deposit, an endpoint of this node) brings the next
  /// round forward to at most this long after the last (or one liveness
  /// period, if shorter), so that a new peer is watched before it can die
  /// unnoticed, and a burst of activity costs at most one round per gap.
  static constexpr std::int64_t kActivityGapNs = 10'000'000;
  /// A round that found the domain lock busy is tried again this soon (or
  /// after one liveness period if that is shorter).
  static constexpr std::int64_t kBusyRetryNs = 5'000'000;

 private:
  void loop() noexcept;
  /// Polls the eventfd, the listening socket, clients that have not sent
  /// their request yet, our own requests and the peers' pidfds, until
  /// `wake_at_ns`. True when a descriptor other than a pidfd was ready.
  bool wait(std::int64_t wake_at_ns) noexcept;
  void serve_and_fetch() noexcept;

  ServiceParts parts_;
  PeerWatch watch_;  ///< This thread only.
  std::vector<int> fds_;
  std::vector<pollfd> polled_;
  std::vector<Deposit> received_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace axon::shm
