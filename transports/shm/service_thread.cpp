#include "transports/shm/service_thread.hpp"

#include <algorithm>
#include <climits>
#include <span>

#include "src/base/clock.hpp"
#include "src/base/thread_name.hpp"
#include "transports/shm/liveness.hpp"

namespace axon::shm {

namespace {

/// The most descriptors one wait() polls: our eventfd, the listening socket,
/// every pending client, and per peer participant a fetch and a pidfd.
std::size_t most_polled_fds(const Domain& domain) {
  return 2 + FdServer::kMaxPending + (2 * std::size_t{domain.limits().participants});
}

}  // namespace

ServiceThread::ServiceThread(ServiceParts parts) : parts_(parts), watch_(self_identity()) {
  // Reserved before the thread starts, so that its loop does not allocate
  // when the set of descriptors grows: a thread the scheduler starts late
  // would otherwise make its first allocations in the middle of the node's
  // steady state.
  const std::size_t most = most_polled_fds(parts_.domain);
  fds_.reserve(most);
  polled_.reserve(most);
  received_.reserve(FdServer::kMaxPending);
  thread_ = std::thread([this] {
    axon::detail::name_this_thread("axon-service");
    loop();
  });
}

ServiceThread::~ServiceThread() {
  stopping_.store(true, std::memory_order_relaxed);  // the eventfd write wakes the thread
  parts_.wake.wake();
  thread_.join();
}

void ServiceThread::loop() noexcept {
  const std::int64_t period_ns = std::int64_t{parts_.domain.config().liveness_period_ms} * 1'000'000;
  const std::int64_t sweep_ns = period_ns * kSweepPeriods;
  std::int64_t next_round = 0;  // the first round watches the participants there are
  std::int64_t last_round = 0;
  std::int64_t next_refresh = 0;
  while (!stopping_.load(std::memory_order_relaxed)) {
    // The statistics wake an idle node once a second only while it has endpoints.
    const std::int64_t refresh_at = parts_.stats.has_sources() ? next_refresh : INT64_MAX;
    const bool activity =
        wait(std::min({next_round, refresh_at, parts_.server.next_deadline_ns(), parts_.peers.next_deadline_ns()}));
    serve_and_fetch();
    const std::int64_t now = monotonic_now_ns();
    if (now >= next_refresh) {
      parts_.stats.refresh();
      next_refresh = now + EndpointStats::kRefreshPeriodNs;
    }
    if (watch_.exit_pending()) {
      next_round = now;  // a watched peer exited: reclaim it now
    } else if (activity) {
      // Something happened (a fetch, a deposit, an endpoint of this node):
      // a new participant may be there to watch, now rather than a whole
      // period later. Rounds stay kActivityGapNs apart while it goes on.
      next_round = std::min(next_round, last_round + std::min(period_ns, kActivityGapNs));
    }
    if (now >= next_round) {
      // Never block here: a peer may hold the lock (see check_liveness_now()).
      const bool ran = parts_.domain.lock().with_lock_if_free([&](const DomainLockGuard& held) {
        liveness_round(held, parts_.domain, parts_.own, &watch_);
        parts_.peers.prune(held, now);
      });
      if (ran) {
        last_round = now;
        // Participants without a pidfd, and reclaims left over, need the
        // round every period; else only the sweep, for peers that joined
        // without anything waking this thread.
        next_round = now + (watch_.polls_proc() || reclaims_pending(parts_.own) ? period_ns : sweep_ns);
      } else {
        next_round = now + std::min(period_ns, kBusyRetryNs);
      }
    }
    parts_.durable.adopt_joiners();
  }
}

bool ServiceThread::wait(std::int64_t wake_at_ns) noexcept {
  const std::int64_t now = monotonic_now_ns();
  int timeout_ms = wake_at_ns > now ? static_cast<int>((wake_at_ns - now) / 1'000'000) + 1 : 0;
  // Transient-local publishers: late joiners get the history within a few
  // milliseconds even when the publisher is idle.
  if (parts_.durable.any()) {
    timeout_ms = std::min(timeout_ms, DurablePublishers::kAdoptPeriodMs);
  }
  // Our eventfd, the listening socket, clients that have not sent their
  // request yet, our own requests waiting for an answer, and the pidfds of
  // the peer processes: one silent peer never keeps this thread from the
  // others.
  fds_.assign(1, parts_.wake.fd());
  parts_.server.poll_fds(fds_);
  parts_.peers.poll_fds(fds_);
  const std::size_t first_pidfd = fds_.size();
  watch_.poll_fds(fds_);
  polled_.clear();
  for (const int fd : fds_) {
    polled_.push_back({.fd = fd, .events = POLLIN, .revents = 0});
  }
  if (::poll(polled_.data(), polled_.size(), timeout_ms) <= 0) {
    return false;
  }
  if ((polled_[0].revents & POLLIN) != 0) {
    parts_.wake.drain();
  }
  watch_.note_polled(polled_, first_pidfd);
  return std::any_of(polled_.begin(), polled_.begin() + static_cast<std::ptrdiff_t>(first_pidfd),
                     [](const pollfd& p) { return p.revents != 0; });
}

void ServiceThread::serve_and_fetch() noexcept {
  const std::int64_t served_at = monotonic_now_ns();
  received_.clear();
  parts_.server.serve(served_at, received_);
  for (const Deposit& deposit : received_) {
    parts_.peers.adopt(deposit, served_at, "deposited");
  }
  parts_.peers.run_fetches(served_at);
}

}  // namespace axon::shm
