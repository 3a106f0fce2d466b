#include "transports/shm/pool_fetcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>

#include "src/base/log.hpp"

namespace axon::shm {

PoolFetcher::~PoolFetcher() {
  for (Fetch& fetch : fetches_) {
    close_socket(fetch);
  }
}

void PoolFetcher::want(SlotRef owner, const std::string& socket_path, std::int64_t not_before_ns) {
  std::lock_guard<std::mutex> guard(inbox_mutex_);
  if (std::ranges::none_of(inbox_, [&](const Fetch& f) { return f.owner == owner; })) {
    inbox_.push_back(Fetch{.owner = owner, .path = socket_path, .next_try_ns = not_before_ns});
  }
}

bool PoolFetcher::run(std::int64_t now_ns, std::vector<Deposit>& received) {
  {
    std::lock_guard<std::mutex> guard(inbox_mutex_);
    for (Fetch& fetch : inbox_) {
      if (std::ranges::none_of(fetches_, [&](const Fetch& f) { return f.owner == fetch.owner; })) {
        fetch.next_try_ns = std::max(fetch.next_try_ns, now_ns);
        fetch.warn_at_ns = now_ns + kWarnAfterNs;
        fetches_.push_back(std::move(fetch));
      }
    }
    inbox_.clear();
  }
  bool ended = false;
  std::erase_if(fetches_, [&](Fetch& f) { return !step(f, now_ns, received, ended); });
  return ended;
}

bool PoolFetcher::step(Fetch& fetch, std::int64_t now_ns, std::vector<Deposit>& received, bool& ended) {
  if (fetch.fd < 0) {
    if (now_ns < fetch.next_try_ns) {
      return true;
    }
    auto fd = start_fd_request(fetch.path);
    if (!fd) {
      if (fd.error().code() == ErrorCode::kClosed) {
        // Nobody listens: the peer is gone (the liveness round removes it).
        logger().debug("pool of participant {}: {}; not asking again", fetch.owner.slot, fd.error().message());
        ended = true;
        return false;
      }
      failed(fetch, now_ns, std::string(fd.error().message()));  // EAGAIN: its backlog is full
      ended = true;
      return true;
    }
    fetch.fd = *fd;
  }
  auto answer = try_receive_fd(fetch.fd, fetch.path);
  if (answer && *answer >= 0) {
    close_socket(fetch);
    received.push_back(Deposit{.participant = fetch.owner.slot, .generation = fetch.owner.generation, .fd = *answer});
    ended = true;
    return false;
  }
  if (!answer) {
    close_socket(fetch);
    failed(fetch, now_ns, std::string(answer.error().message()));
    ended = true;
  } else if (!fetch.warned && now_ns >= fetch.warn_at_ns) {
    fetch.warned = true;
    logger().warn(
        "participant {} has not handed over its pool descriptor within {} ms: it may be stopped (SIGSTOP) or paused "
        "in a debugger; subscribers of this node receive nothing from its publishers until it answers (the request "
        "stays open)",
        fetch.owner.slot, kWarnAfterNs / 1'000'000);
  }
  return true;
}

void PoolFetcher::failed(Fetch& fetch, std::int64_t now_ns, const std::string& why) {
  fetch.next_try_ns = now_ns + std::min(kMaxBackoffNs, kMinBackoffNs << std::min(fetch.attempts, 5U));
  ++fetch.attempts;
  logger().debug("pool of participant {}: {}; asking again in {} ms", fetch.owner.slot, why,
                 (fetch.next_try_ns - now_ns) / 1'000'000);
}

void PoolFetcher::poll_fds(std::vector<int>& fds) const {
  for (const Fetch& fetch : fetches_) {
    if (fetch.fd >= 0) {
      fds.push_back(fetch.fd);
    }
  }
}

std::int64_t PoolFetcher::next_deadline_ns() const noexcept {
  std::int64_t next = INT64_MAX;
  for (const Fetch& fetch : fetches_) {
    if (fetch.fd < 0) {
      next = std::min(next, fetch.next_try_ns);
    } else if (!fetch.warned) {
      next = std::min(next, fetch.warn_at_ns);
    }
  }
  return next;
}

void PoolFetcher::close_socket(Fetch& fetch) noexcept {
  if (fetch.fd >= 0) {
    ::close(fetch.fd);
    fetch.fd = -1;
  }
}

}  // namespace axon::shm
