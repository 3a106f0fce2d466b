// Hands a segment's file descriptor to a peer process over a Unix domain
// socket (SCM_RIGHTS). Used at discovery, never on the data path. Nothing
// here blocks: a peer that is stopped or silent costs its own deadline, never
// another peer's time.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "axon/result.hpp"

namespace axon::shm {

/// A descriptor another participant deposited into our socket: its pool,
/// handed over before it may exit (see PeerPools::deposit_own_pool()).
struct Deposit {
  std::uint32_t participant = 0;  ///< Claimed owner; the receiver checks the pool says the same.
  std::uint32_t generation = 0;
  int fd = -1;  ///< Owned by the receiver.
};

/// Listening side. Thread safety: one thread calls serve(), poll_fds() and
/// next_deadline_ns(); allocation only in listen().
///
/// Accepted clients wait in a small table until their request has arrived
/// (answered at once) or their deadline passes (closed, counted): a client
/// that connects and sends nothing holds a table entry, never the thread.
class FdServer {
 public:
  static constexpr std::size_t kMaxPending = 16;
  static constexpr std::int64_t kClientDeadlineNs = 100'000'000;

  FdServer() = default;
  FdServer(FdServer&& other) noexcept;
  FdServer& operator=(FdServer&& other) noexcept;
  FdServer(const FdServer&) = delete;
  FdServer& operator=(const FdServer&) = delete;
  ~FdServer();

  /// Binds a socket at `path` (mode `mode`) that will hand out `shared_fd`.
  /// `group_gid` (or -1) is a group whose members may also ask.
  static Result<FdServer> listen(const std::string& path, mode_t mode, int shared_fd, gid_t group_gid);

  /// Accepts waiting clients, answers every complete request, appends every
  /// complete deposit to `deposits`, closes clients past their deadline.
  /// Never blocks.
  void serve(std::int64_t now_ns, std::vector<Deposit>& deposits) noexcept;

  /// Appends the descriptors to poll for readability: the listening socket
  /// (while the table has room) and every pending client.
  void poll_fds(std::vector<int>& fds) const;
  /// The earliest client deadline, or INT64_MAX.
  [[nodiscard]] std::int64_t next_deadline_ns() const noexcept;
  /// Clients closed because they sent nothing (complete) in time.
  [[nodiscard]] std::uint64_t timed_out_clients() const noexcept { return timed_out_; }

  /// Closes and unlinks the socket.
  void close() noexcept;

 private:
  struct Client {
    int fd = -1;
    std::int64_t deadline_ns = 0;
    std::uint32_t bytes = 0;  ///< Of `message` received so far.
    std::array<std::uint8_t, 16> message{};
    int passed_fd = -1;  ///< A deposit's descriptor, until the message is complete.
  };

  void accept_clients(std::int64_t now_ns) noexcept;
  /// False when the client is done (answered, deposited or broken).
  bool read_client(Client& client, std::vector<Deposit>& deposits) noexcept;
  void answer(int client) const noexcept;
  [[nodiscard]] bool allowed(int client) const noexcept;
  static void drop(Client& client) noexcept;

  std::string path_;
  int socket_fd_ = -1;
  int shared_fd_ = -1;
  gid_t group_gid_ = static_cast<gid_t>(-1);
  std::array<Client, kMaxPending> clients_{};
  std::uint64_t timed_out_ = 0;
};

/// Connects to the server at `path` and sends the request, without blocking.
/// Returns the socket to poll for the answer; the caller closes it.
/// kClosed when nobody listens there (the node is gone).
Result<int> start_fd_request(const std::string& path);

/// Reads the answer on a socket from start_fd_request() without blocking:
/// the received descriptor (owned by the caller), or -1 when nothing has
/// arrived yet. An error when the peer closed or answered nonsense.
Result<int> try_receive_fd(int socket_fd, const std::string& path);

/// Deposits `fd` (our pool, owned by participant `participant`/`generation`)
/// into the server at `path`, without blocking: the descriptor waits in the
/// socket's queue until the server reads it, and keeps the memfd alive
/// meanwhile even if this process exits.
Result<void> deposit_fd(const std::string& path, int fd, std::uint32_t participant, std::uint32_t generation);

}  // namespace axon::shm
