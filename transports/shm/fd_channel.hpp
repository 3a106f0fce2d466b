// Hands a segment's file descriptor to a peer process over a Unix domain
// socket (SCM_RIGHTS). Used at discovery, never on the data path.
#pragma once

#include <cstdint>
#include <string>

#include "axon/result.hpp"

namespace axon::shm {

/// Listening side. Thread safety: one thread calls serve_pending().
class FdServer {
 public:
  FdServer() = default;
  FdServer(FdServer&& other) noexcept;
  FdServer& operator=(FdServer&& other) noexcept;
  FdServer(const FdServer&) = delete;
  FdServer& operator=(const FdServer&) = delete;
  ~FdServer();

  /// Binds a socket at `path` (mode `mode`) that will hand out `shared_fd`.
  /// `group_gid` (or -1) is a group whose members may also ask.
  static Result<FdServer> listen(const std::string& path, mode_t mode, int shared_fd, gid_t group_gid);

  /// Answers every waiting request without blocking.
  void serve_pending() noexcept;

  /// The socket to poll for readability.
  [[nodiscard]] int socket_fd() const noexcept { return socket_fd_; }
  /// Closes and unlinks the socket.
  void close() noexcept;

 private:
  void answer(int client) const noexcept;

  std::string path_;
  int socket_fd_ = -1;
  int shared_fd_ = -1;
  gid_t group_gid_ = static_cast<gid_t>(-1);
};

/// Asks the server at `path` for its descriptor; waits at most `timeout_ms`.
/// The caller owns the returned descriptor.
Result<int> request_fd(const std::string& path, int timeout_ms);

}  // namespace axon::shm
