#include "transports/shm/fd_channel.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "src/base/errors.hpp"
#include "src/base/log.hpp"

namespace axon::shm {
namespace {

constexpr std::uint64_t kRequestMagic = 0x5145'5246'4e4f'5841ULL;  // "AXONFREQ"
constexpr std::uint64_t kReplyMagic = 0x5053'5246'4e4f'5841ULL;    // "AXONFRSP"
constexpr std::uint64_t kDepositMagic = 0x4f50'4544'4e4f'5841ULL;  // "AXONDEPO"

Result<sockaddr_un> socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("socket path {} is longer than {} bytes; use a shorter AXON_SHM_DIR", path,
                             sizeof(addr.sun_path) - 1));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

/// A message of `bytes` bytes with `fd` attached (SCM_RIGHTS), sent without blocking.
bool send_with_fd(int socket_fd, const void* data, std::size_t bytes, int fd) noexcept {
  iovec iov{.iov_base = const_cast<void*>(data), .iov_len = bytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  return ::sendmsg(socket_fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(bytes);
}

/// Reads up to `bytes` into `data` without blocking; a descriptor that came
/// along is stored in `*fd` (closing one we already had: one per message).
/// Returns what recvmsg() returned.
ssize_t receive_with_fd(int socket_fd, void* data, std::size_t bytes, int* fd) noexcept {
  iovec iov{.iov_base = data, .iov_len = bytes};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = ::recvmsg(socket_fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  if (n <= 0) {
    return n;
  }
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS && cmsg->cmsg_len == CMSG_LEN(sizeof(int))) {
      int received = -1;
      std::memcpy(&received, CMSG_DATA(cmsg), sizeof(int));
      if (*fd >= 0) {
        ::close(*fd);
      }
      *fd = received;
    }
  }
  return n;
}

Result<int> connect_nonblocking(const std::string& path) {
  auto addr = socket_address(path);
  if (!addr) {
    return addr.error();
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return system_error(errno, "socket(AF_UNIX)");
  }
  // A Unix stream connect completes at once or fails (EAGAIN: the peer's
  // backlog is full, it is not accepting); it never waits for the peer.
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(sockaddr_un)) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == ENOENT || err == ECONNREFUSED) {
      return Error(ErrorCode::kClosed, fmt::format("nobody listens at {}: its node is gone", path));
    }
    return system_error(err, fmt::format("connect to {} (is the peer alive?)", path));
  }
  return fd;
}

}  // namespace

FdServer::FdServer(FdServer&& other) noexcept
    : path_(std::move(other.path_)),
      socket_fd_(std::exchange(other.socket_fd_, -1)),
      shared_fd_(other.shared_fd_),
      group_gid_(other.group_gid_),
      clients_(std::exchange(other.clients_, {})),
      timed_out_(other.timed_out_) {}

FdServer& FdServer::operator=(FdServer&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    socket_fd_ = std::exchange(other.socket_fd_, -1);
    shared_fd_ = other.shared_fd_;
    group_gid_ = other.group_gid_;
    clients_ = std::exchange(other.clients_, {});
    timed_out_ = other.timed_out_;
  }
  return *this;
}

FdServer::~FdServer() { close(); }

Result<FdServer> FdServer::listen(const std::string& path, mode_t mode, int shared_fd, gid_t group_gid) {
  auto addr = socket_address(path);
  if (!addr) {
    return addr.error();
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return system_error(errno, "socket(AF_UNIX)");
  }
  ::unlink(path.c_str());  // a dead owner's leftover of the same name
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(sockaddr_un)) != 0) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("bind {}", path));
  }
  if (::chmod(path.c_str(), mode) != 0 || ::listen(fd, 64) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(path.c_str());
    return system_error(err, fmt::format("listen on {}", path));
  }
  FdServer server;
  server.path_ = path;
  server.socket_fd_ = fd;
  server.shared_fd_ = shared_fd;
  server.group_gid_ = group_gid;
  return server;
}

void FdServer::serve(std::int64_t now_ns, std::vector<Deposit>& deposits) noexcept {
  if (socket_fd_ < 0) {
    return;
  }
  accept_clients(now_ns);
  for (Client& client : clients_) {
    if (client.fd < 0) {
      continue;
    }
    if (!read_client(client, deposits)) {
      drop(client);
    } else if (now_ns >= client.deadline_ns) {
      ++timed_out_;
      logger().debug("closed a client of {} that sent no complete request within {} ms ({} so far)", path_,
                     kClientDeadlineNs / 1'000'000, timed_out_);
      drop(client);
    }
  }
}

void FdServer::accept_clients(std::int64_t now_ns) noexcept {
  for (Client& client : clients_) {
    if (client.fd >= 0) {
      continue;
    }
    const int fd = ::accept4(socket_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      return;  // EAGAIN: nothing waiting; other errors: the peer retries
    }
    if (!allowed(fd)) {
      ::close(fd);
      continue;
    }
    client = Client{.fd = fd, .deadline_ns = now_ns + kClientDeadlineNs};
  }
  // A full table leaves further clients in the backlog until one is done.
}

bool FdServer::read_client(Client& client, std::vector<Deposit>& deposits) noexcept {
  const ssize_t n = receive_with_fd(client.fd, client.message.data() + client.bytes,
                                    client.message.size() - client.bytes, &client.passed_fd);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    return false;  // closed or broken before its message was complete
  }
  if (n > 0) {
    client.bytes += static_cast<std::uint32_t>(n);
  }
  if (client.bytes < sizeof(std::uint64_t)) {
    return true;
  }
  std::uint64_t magic = 0;
  std::memcpy(&magic, client.message.data(), sizeof(magic));
  if (magic == kRequestMagic) {
    answer(client.fd);
    return false;
  }
  if (magic != kDepositMagic) {
    return false;  // not ours
  }
  if (client.bytes < client.message.size()) {
    return true;
  }
  if (client.passed_fd >= 0) {
    Deposit deposit{.fd = std::exchange(client.passed_fd, -1)};
    std::memcpy(&deposit.participant, client.message.data() + 8, sizeof(std::uint32_t));
    std::memcpy(&deposit.generation, client.message.data() + 12, sizeof(std::uint32_t));
    deposits.push_back(deposit);  // the service thread may allocate
  }
  return false;
}

bool FdServer::allowed(int client) const noexcept {
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (::getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    return false;
  }
  // Only the same user, root, or the configured group get the pool (the
  // descriptor gives write access to every chunk) or may hand us one.
  return peer.uid == ::geteuid() || peer.uid == 0 || (group_gid_ != static_cast<gid_t>(-1) && peer.gid == group_gid_);
}

void FdServer::answer(int client) const noexcept {
  // Eight bytes and a descriptor fit any socket buffer: this never waits.
  const std::uint64_t reply = kReplyMagic;
  send_with_fd(client, &reply, sizeof(reply), shared_fd_);
}

void FdServer::drop(Client& client) noexcept {
  ::close(client.fd);
  if (client.passed_fd >= 0) {
    ::close(client.passed_fd);
  }
  client = Client{};
}

void FdServer::poll_fds(std::vector<int>& fds) const {
  bool room = false;
  for (const Client& client : clients_) {
    if (client.fd >= 0) {
      fds.push_back(client.fd);
    } else {
      room = true;
    }
  }
  if (room && socket_fd_ >= 0) {
    fds.push_back(socket_fd_);
  }
}

std::int64_t FdServer::next_deadline_ns() const noexcept {
  std::int64_t next = INT64_MAX;
  for (const Client& client : clients_) {
    if (client.fd >= 0) {
      next = std::min(next, client.deadline_ns);
    }
  }
  return next;
}

void FdServer::close() noexcept {
  for (Client& client : clients_) {
    if (client.fd >= 0) {
      drop(client);
    }
  }
  if (socket_fd_ >= 0) {
    ::close(socket_fd_);
    socket_fd_ = -1;
    ::unlink(path_.c_str());
  }
}

Result<int> start_fd_request(const std::string& path) {
  auto fd = connect_nonblocking(path);
  if (!fd) {
    return fd.error();
  }
  const std::uint64_t request = kRequestMagic;
  if (::send(*fd, &request, sizeof(request), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(request)) {
    const int err = errno;
    ::close(*fd);
    return system_error(err, fmt::format("send request to {}", path));
  }
  return *fd;
}

Result<int> try_receive_fd(int socket_fd, const std::string& path) {
  std::uint64_t reply = 0;
  int received = -1;
  // The reply is 8 bytes sent in one call, so it arrives whole.
  const ssize_t n = receive_with_fd(socket_fd, &reply, sizeof(reply), &received);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    return -1;
  }
  if (n != sizeof(reply) || reply != kReplyMagic || received < 0) {
    const int err = n < 0 ? errno : EPROTO;
    if (received >= 0) {
      ::close(received);
    }
    return system_error(err, fmt::format("receive a pool descriptor from {} (is the peer alive?)", path));
  }
  return received;
}

Result<void> deposit_fd(const std::string& path, int fd, std::uint32_t participant, std::uint32_t generation) {
  auto socket_fd = connect_nonblocking(path);
  if (!socket_fd) {
    return socket_fd.error();
  }
  std::array<std::uint8_t, 16> message{};
  std::memcpy(message.data(), &kDepositMagic, sizeof(kDepositMagic));
  std::memcpy(message.data() + 8, &participant, sizeof(participant));
  std::memcpy(message.data() + 12, &generation, sizeof(generation));
  const bool sent = send_with_fd(*socket_fd, message.data(), message.size(), fd);
  const int err = errno;
  // Closing our end leaves the message (and the descriptor) queued for the server.
  ::close(*socket_fd);
  if (!sent) {
    return system_error(err, fmt::format("deposit our pool's descriptor at {}", path));
  }
  return {};
}

}  // namespace axon::shm
