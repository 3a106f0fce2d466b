#include "transports/shm/fd_channel.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "src/errors.hpp"

namespace axon::shm {
namespace {

constexpr std::uint64_t kRequestMagic = 0x5145'5246'4e4f'5841ULL;  // "AXONFREQ"
constexpr std::uint64_t kReplyMagic = 0x5053'5246'4e4f'5841ULL;    // "AXONFRSP"

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

}  // namespace

FdServer::FdServer(FdServer&& other) noexcept
    : path_(std::move(other.path_)),
      socket_fd_(std::exchange(other.socket_fd_, -1)),
      shared_fd_(other.shared_fd_),
      group_gid_(other.group_gid_) {}

FdServer& FdServer::operator=(FdServer&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    socket_fd_ = std::exchange(other.socket_fd_, -1);
    shared_fd_ = other.shared_fd_;
    group_gid_ = other.group_gid_;
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

void FdServer::serve_pending() noexcept {
  for (;;) {
    const int client = ::accept4(socket_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      return;  // EAGAIN: nothing waiting; other errors: the peer retries
    }
    answer(client);
    ::close(client);
  }
}

void FdServer::answer(int client) const noexcept {
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (::getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    return;
  }
  // Only the same user, root, or the configured group get the pool: the
  // descriptor gives write access to every chunk.
  const bool allowed =
      peer.uid == ::geteuid() || peer.uid == 0 || (group_gid_ != static_cast<gid_t>(-1) && peer.gid == group_gid_);
  if (!allowed) {
    return;
  }
  // The client writes its request before we are woken; a short wait covers a
  // slow client without letting it stall this thread for long.
  timeval tv{.tv_sec = 0, .tv_usec = 200'000};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::fcntl(client, F_SETFL, 0);
  std::uint64_t request = 0;
  if (::recv(client, &request, sizeof(request), MSG_WAITALL) != sizeof(request) || request != kRequestMagic) {
    return;
  }
  std::uint64_t reply = kReplyMagic;
  iovec iov{.iov_base = &reply, .iov_len = sizeof(reply)};
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
  std::memcpy(CMSG_DATA(cmsg), &shared_fd_, sizeof(int));
  ::sendmsg(client, &msg, MSG_NOSIGNAL);
}

void FdServer::close() noexcept {
  if (socket_fd_ >= 0) {
    ::close(socket_fd_);
    socket_fd_ = -1;
    ::unlink(path_.c_str());
  }
}

Result<int> request_fd(const std::string& path, int timeout_ms) {
  auto addr = socket_address(path);
  if (!addr) {
    return addr.error();
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return system_error(errno, "socket(AF_UNIX)");
  }
  timeval tv{.tv_sec = timeout_ms / 1000, .tv_usec = static_cast<suseconds_t>(timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  auto fail = [&](int err, std::string_view what) -> Result<int> {
    ::close(fd);
    return system_error(err, fmt::format("{} {} (is the peer alive?)", what, path));
  };
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(sockaddr_un)) != 0) {
    return fail(errno, "connect to");
  }
  const std::uint64_t request = kRequestMagic;
  if (::send(fd, &request, sizeof(request), MSG_NOSIGNAL) != sizeof(request)) {
    return fail(errno, "send request to");
  }
  std::uint64_t reply = 0;
  iovec iov{.iov_base = &reply, .iov_len = sizeof(reply)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  if (n != sizeof(reply) || reply != kReplyMagic) {
    return fail(n < 0 ? errno : EPROTO, "receive segment from");
  }
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  if (cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS || cmsg->cmsg_len != CMSG_LEN(sizeof(int))) {
    return fail(EPROTO, "receive descriptor from");
  }
  int received = -1;
  std::memcpy(&received, CMSG_DATA(cmsg), sizeof(int));
  ::close(fd);
  return received;
}

}  // namespace axon::shm
