#include "transports/shm/service_thread.hpp"

#include <algorithm>

#include "src/base/clock.hpp"
#include "transports/shm/liveness.hpp"

namespace axon::shm {

ServiceThread::ServiceThread(ServiceParts parts) : parts_(parts), thread_([this] { loop(); }) {}

ServiceThread::~ServiceThread() {
  stopping_.store(true, std::memory_order_relaxed);  // the eventfd write wakes the thread
  parts_.wake.wake();
  thread_.join();
}

void ServiceThread::loop() noexcept {
  std::int64_t next_check = 0;
  const std::int64_t period_ns = std::int64_t{parts_.domain.config().liveness_period_ms} * 1'000'000;
  while (!stopping_.load(std::memory_order_relaxed)) {
    wait(std::min({next_check, parts_.server.next_deadline_ns(), parts_.peers.next_deadline_ns()}));
    serve_and_fetch();
    if (monotonic_now_ns() >= next_check) {
      // Never block here: a peer may hold the lock (see check_liveness_now()).
      parts_.domain.lock().with_lock_if_free([&](const DomainLockGuard& held) {
        liveness_round(held, parts_.domain, parts_.own);
        parts_.peers.prune(held, monotonic_now_ns());
      });
      next_check = monotonic_now_ns() + period_ns;
    }
    parts_.durable.adopt_joiners();
  }
}

void ServiceThread::wait(std::int64_t wake_at_ns) noexcept {
  const std::int64_t now = monotonic_now_ns();
  int timeout_ms = wake_at_ns > now ? static_cast<int>((wake_at_ns - now) / 1'000'000) + 1 : 0;
  // Transient-local publishers: late joiners get the history within a few
  // milliseconds even when the publisher is idle.
  if (parts_.durable.any()) {
    timeout_ms = std::min(timeout_ms, DurablePublishers::kAdoptPeriodMs);
  }
  // Our eventfd, the listening socket, clients that have not sent their
  // request yet, and our own requests waiting for an answer: one silent
  // peer never keeps this thread from the others.
  fds_.assign(1, parts_.wake.fd());
  parts_.server.poll_fds(fds_);
  parts_.peers.poll_fds(fds_);
  polled_.clear();
  for (const int fd : fds_) {
    polled_.push_back({.fd = fd, .events = POLLIN, .revents = 0});
  }
  if (::poll(polled_.data(), polled_.size(), timeout_ms) > 0 && (polled_[0].revents & POLLIN) != 0) {
    parts_.wake.drain();
  }
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
