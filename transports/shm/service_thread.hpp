// The node's service thread: serves our pool's descriptor and takes
// deposits (FdServer), runs the fetches of peer pools, the liveness rounds,
// and hands transient-local history to idle publishers' joiners. No peer
// can stall it: every socket is non-blocking and the domain lock is only
// tried, never waited for.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "transports/shm/domain.hpp"
#include "transports/shm/durable_publishers.hpp"
#include "transports/shm/fd_channel.hpp"
#include "transports/shm/own_pool.hpp"
#include "transports/shm/peer_pools.hpp"
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

 private:
  void loop() noexcept;
  /// Polls the eventfd, the listening socket, clients that have not sent
  /// their request yet and our own requests, until `wake_at_ns`.
  void wait(std::int64_t wake_at_ns) noexcept;
  void serve_and_fetch() noexcept;

  ServiceParts parts_;
  std::vector<int> fds_;
  std::vector<pollfd> polled_;
  std::vector<Deposit> received_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace axon::shm
