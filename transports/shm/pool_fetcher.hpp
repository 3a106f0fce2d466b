// Fetches peers' pool descriptors without blocking anyone: a request is a
// non-blocking connect and send, and its answer is polled by the node's
// service thread together with everything else it serves. A stopped peer
// (SIGSTOP, a debugger) costs one open socket here and is named in a warning;
// a peer that closes or refuses a request is asked again with backoff.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "transports/shm/fd_channel.hpp"
#include "transports/shm/registry.hpp"

namespace axon::shm {

/// Thread safety: want() from any thread (it takes a process-local mutex and
/// makes no system call; the caller wakes the service thread). Everything
/// else from the service thread only, which may allocate.
class PoolFetcher {
 public:
  /// A request stays open until the peer answers or closes it: a peer that
  /// is only slow (a loaded machine) is never timed out and asked again.
  /// After this long without an answer the peer is named in a warning.
  static constexpr std::int64_t kWarnAfterNs = 1'500'000'000;
  /// A request the peer closed or refused is sent again after 100 ms,
  /// doubling up to this.
  static constexpr std::int64_t kMinBackoffNs = 100'000'000;
  static constexpr std::int64_t kMaxBackoffNs = 2'000'000'000;

  PoolFetcher() = default;
  PoolFetcher(const PoolFetcher&) = delete;
  PoolFetcher& operator=(const PoolFetcher&) = delete;
  ~PoolFetcher();

  /// Asks for `owner`'s pool at `socket_path` unless already asked, from
  /// `not_before_ns` on (0: now).
  void want(SlotRef owner, const std::string& socket_path, std::int64_t not_before_ns = 0);

  /// Starts due requests, reads answers, times out silent peers. Appends
  /// each received descriptor to `received`; returns true when any request
  /// ended (answered or failed), so that waiters may look again.
  bool run(std::int64_t now_ns, std::vector<Deposit>& received);

  /// Sockets to poll for an answer.
  void poll_fds(std::vector<int>& fds) const;
  /// When run() has something to do next (a deadline or a retry), or INT64_MAX.
  [[nodiscard]] std::int64_t next_deadline_ns() const noexcept;

  /// Drops requests for which `gone(owner)` is true (the peer left).
  template <class Gone>
  void forget_if(Gone gone) {
    std::erase_if(fetches_, [&](Fetch& f) {
      if (!gone(f.owner)) {
        return false;
      }
      close_socket(f);
      return true;
    });
  }

 private:
  struct Fetch {
    SlotRef owner;
    std::string path;
    int fd = -1;                   ///< A request in flight.
    std::int64_t next_try_ns = 0;  ///< When to send the next one.
    std::int64_t warn_at_ns = 0;   ///< When to name a silent peer (once).
    std::uint32_t attempts = 0;    ///< Failed so far.
    bool warned = false;
  };

  /// Returns false when the fetch is over (answered, or the peer is gone).
  bool step(Fetch& fetch, std::int64_t now_ns, std::vector<Deposit>& received, bool& ended);
  static void failed(Fetch& fetch, std::int64_t now_ns, const std::string& why);
  static void close_socket(Fetch& fetch) noexcept;

  std::mutex inbox_mutex_;  ///< Guards inbox_.
  std::vector<Fetch> inbox_;
  std::vector<Fetch> fetches_;  ///< Service thread only.
};

}  // namespace axon::shm
