#include "transports/udp/udp_socket.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "src/base/log.hpp"
#include "transports/udp/cipher_arena.hpp"
#include "transports/udp/envelope.hpp"
#include "transports/udp/outgoing_batch.hpp"

namespace axon::udp {
namespace {

std::string errno_text(int error) { return std::strerror(error); }  // NOLINT(concurrency-mt-unsafe): start-up only

Result<void> set_buffer(int fd, int option, int force_option, std::uint32_t bytes, const char* what) {
  if (bytes == 0) {
    return {};
  }
  const int value = static_cast<int>(bytes);
  // The FORCE variants (CAP_NET_ADMIN) go past net.core.[rw]mem_max; the
  // plain ones are capped there silently, so check what we got.
  if (setsockopt(fd, SOL_SOCKET, force_option, &value, sizeof(value)) != 0 &&
      setsockopt(fd, SOL_SOCKET, option, &value, sizeof(value)) != 0) {
    return Error(ErrorCode::kSystem,
                 fmt::format("udp: setting the {} buffer to {} B failed: {}", what, bytes, errno_text(errno)));
  }
  int got = 0;
  socklen_t length = sizeof(got);
  if (getsockopt(fd, SOL_SOCKET, option, &got, &length) == 0 && static_cast<std::uint32_t>(got) / 2 < bytes) {
    // The kernel reports twice the usable size.
    logger().warn(
        "udp: the {} buffer is {} B instead of {} B; raise net.core.{}_max (sysctl) or run with "
        "CAP_NET_ADMIN, or messages may be dropped under load",
        what, got / 2, bytes, option == SO_RCVBUF ? "rmem" : "wmem");
  }
  return {};
}

}  // namespace

sockaddr_in Endpoint::to_sockaddr() const noexcept {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(ipv4);
  return address;
}

Endpoint Endpoint::from_sockaddr(const sockaddr_in& address) noexcept {
  return Endpoint{.ipv4 = ntohl(address.sin_addr.s_addr), .port = ntohs(address.sin_port)};
}

std::string Endpoint::to_string() const {
  return fmt::format("{}.{}.{}.{}:{}", ipv4 >> 24U, (ipv4 >> 16U) & 0xFFU, (ipv4 >> 8U) & 0xFFU, ipv4 & 0xFFU, port);
}

Result<std::uint32_t> parse_ipv4(const std::string& text) {
  in_addr address{};
  if (inet_pton(AF_INET, text.c_str(), &address) == 1) {
    return ntohl(address.s_addr);
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("udp: '{}' is an IPv6 address; the UDP transport of this build speaks IPv4 only, give "
                             "the host an IPv4 address",
                             text));
  }
  return Error(ErrorCode::kInvalidArgument, fmt::format("udp: '{}' is not a numeric IPv4 address", text));
}

std::size_t UdpSocket::receive_buffer_bytes() const noexcept {
  int got = 0;
  socklen_t length = sizeof(got);
  if (getsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &got, &length) != 0 || got <= 0) {
    return 0;
  }
  return static_cast<std::size_t>(got) / 2;  // the kernel reports twice the usable size
}

Result<UdpSocket> UdpSocket::open(const SocketOptions& options) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return Error(ErrorCode::kSystem, fmt::format("udp: socket() failed: {}", errno_text(errno)));
  }
  UdpSocket socket(fd);
  const int on = 1;
  if (options.reuse_address && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("udp: SO_REUSEADDR failed: {}", errno_text(errno)));
  }
  if (auto ok = set_buffer(fd, SO_SNDBUF, SO_SNDBUFFORCE, options.send_buffer_bytes, "send"); !ok) {
    return ok.error();
  }
  if (auto ok = set_buffer(fd, SO_RCVBUF, SO_RCVBUFFORCE, options.receive_buffer_bytes, "receive"); !ok) {
    return ok.error();
  }
  const sockaddr_in address = options.bind.to_sockaddr();
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    return Error(error == EADDRINUSE ? ErrorCode::kLimitReached : ErrorCode::kSystem,
                 fmt::format("udp: cannot bind {}: {}{}", options.bind.to_string(), errno_text(error),
                             error == EADDRNOTAVAIL ? " (no interface of this machine has that address: check the "
                                                      "host's address in the deployment config)"
                                                    : ""));
  }
  sockaddr_in bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("udp: getsockname failed: {}", errno_text(errno)));
  }
  socket.local_ = Endpoint::from_sockaddr(bound);
  // The kernel has UDP_SEGMENT (Linux 4.18+) when it knows the option; whether
  // the route's device can segment shows at the first segmented send.
  int segment_bytes = 0;
  socklen_t option_length = sizeof(segment_bytes);
  socket.segmentation_.store(
      options.segmentation && getsockopt(fd, SOL_UDP, UDP_SEGMENT, &segment_bytes, &option_length) == 0,
      std::memory_order_relaxed);
  return socket;
}

UdpSocket::UdpSocket(UdpSocket&& other) noexcept
    : fd_(other.fd_),
      local_(other.local_),
      sealer_(std::move(other.sealer_)),
      segmentation_(other.segmentation_.load(std::memory_order_relaxed)),
      segmented_messages_(other.segmented_messages_.load(std::memory_order_relaxed)) {
  other.fd_ = -1;
}

UdpSocket& UdpSocket::operator=(UdpSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = other.fd_;
    local_ = other.local_;
    sealer_ = std::move(other.sealer_);
    segmentation_.store(other.segmentation_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    segmented_messages_.store(other.segmented_messages_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    other.fd_ = -1;
  }
  return *this;
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Result<void> UdpSocket::join_multicast(std::uint32_t group, std::uint32_t interface_ipv4) {
  ip_mreqn request{};
  request.imr_multiaddr.s_addr = htonl(group);
  request.imr_address.s_addr = htonl(interface_ipv4);
  if (setsockopt(fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &request, sizeof(request)) != 0) {
    return Error(ErrorCode::kSystem,
                 fmt::format("udp: joining multicast group {} on {} failed: {}", Endpoint{group, 0}.to_string(),
                             Endpoint{interface_ipv4, 0}.to_string(), errno_text(errno)));
  }
  return {};
}

Result<void> UdpSocket::send_multicast_through(std::uint32_t interface_ipv4) {
  in_addr interface {};
  interface.s_addr = htonl(interface_ipv4);
  const unsigned char loop = 1;
  const unsigned char ttl = 1;  // vehicle networks: one link; routers do not forward discovery
  if (setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_IF, &interface, sizeof(interface)) != 0 ||
      setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)) != 0 ||
      setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl)) != 0) {
    return Error(ErrorCode::kSystem, fmt::format("udp: multicast options failed: {}", errno_text(errno)));
  }
  return {};
}

std::size_t UdpSocket::send_batch(std::span<const OutgoingDatagram> datagrams) noexcept {
  OutgoingBatch batch;
  // Encrypting: the ciphertext goes to this thread's arena, never over the
  // datagrams' own bytes (a payload lies in a chunk local subscribers read).
  const std::span<std::byte> arena =
      sealer_ != nullptr && sealer_->encrypts() ? thread_cipher_arena() : std::span<std::byte>{};
  std::size_t sent = 0;
  std::size_t next = 0;
  bool plain_once = false;  // resend a refused segmented message one datagram per message
  while (next < datagrams.size()) {
    const bool segment = segments() && !plain_once;
    plain_once = false;
    if (batch.build(datagrams.subspan(next), segment, sealer_.get(), arena) == 0) {
      ++next;  // encrypting without room for it (no arena: its allocation failed): not sent
      continue;
    }
    const int n = ::sendmmsg(fd_, batch.messages(), batch.message_count(), 0);
    if (n > 0) {
      const std::size_t carried = batch.datagrams_in_first(static_cast<std::size_t>(n));
      sent += carried;
      next += carried;
      if (carried > static_cast<std::size_t>(n)) {
        std::uint64_t segmented = 0;
        for (int i = 0; i < n; ++i) {
          segmented += batch.segmented(static_cast<std::size_t>(i)) ? 1 : 0;
        }
        segmented_messages_.fetch_add(segmented, std::memory_order_relaxed);
      }
      continue;
    }
    const int error = errno;
    if (n < 0 && (error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS)) {
      // The send buffer is full: wait until the kernel drained some of it.
      pollfd waiting{.fd = fd_, .events = POLLOUT, .revents = 0};
      ::poll(&waiting, 1, 10);
      continue;
    }
    if (n < 0 && error == EINTR) {
      continue;
    }
    if (batch.segmented(0)) {
      // Refused as a whole: try its datagrams one by one (nothing of it left).
      give_up_segmentation(error);
      plain_once = true;
      continue;
    }
    ++next;  // the first datagram is refused (e.g. ECONNREFUSED, EMSGSIZE): skip it
  }
  return sent;
}

bool UdpSocket::give_up_segmentation(int error) noexcept {
  // EIO: the device cannot checksum what it would segment; EINVAL: the route's
  // MTU is below a segment, or the kernel limits segments more than we do.
  if (error != EIO && error != EINVAL && error != EOPNOTSUPP && error != ENOPROTOOPT) {
    return false;
  }
  if (segmentation_.exchange(false, std::memory_order_relaxed)) {
    logger().info("udp: the kernel refused a segmented send ({}); sending one datagram per message from now on",
                  errno_text(error));
  }
  return true;
}

bool UdpSocket::send(std::span<const std::byte> bytes, Endpoint to) noexcept {
  const OutgoingDatagram one{.header = bytes, .payload = {}, .to = to};
  return send_batch(std::span(&one, 1)) == 1;
}

std::size_t UdpSocket::receive_batch(std::span<IncomingDatagram> datagrams) noexcept {
  // Left uninitialized as in send_batch(): the kernel fills the addresses.
  std::array<mmsghdr, kMaxBatch> messages;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<iovec, kMaxBatch * IncomingDatagram::kMaxPieces>
      vectors;                                   // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::array<sockaddr_in, kMaxBatch> addresses;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  const std::size_t count = std::min(datagrams.size(), kMaxBatch);
  for (std::size_t i = 0; i < count; ++i) {
    iovec* const first = &vectors[i * IncomingDatagram::kMaxPieces];
    std::size_t used = 0;
    for (const std::span<std::byte> piece : datagrams[i].pieces) {
      if (!piece.empty()) {
        first[used++] = iovec{piece.data(), piece.size()};
      }
    }
    messages[i] = mmsghdr{};
    messages[i].msg_hdr.msg_name = &addresses[i];
    messages[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    messages[i].msg_hdr.msg_iov = first;
    messages[i].msg_hdr.msg_iovlen = used;
  }
  int n = 0;
  do {
    n = ::recvmmsg(fd_, messages.data(), static_cast<unsigned>(count), MSG_DONTWAIT | MSG_TRUNC, nullptr);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    return 0;
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    // With MSG_TRUNC msg_len is the datagram's real length, even when longer
    // than its pieces: the caller then refuses it.
    datagrams[i].size = messages[i].msg_len;
    datagrams[i].from = Endpoint::from_sockaddr(addresses[i]);
  }
  return static_cast<std::size_t>(n);
}

bool UdpSocket::has_pending() const noexcept {
  // FIONREAD on a UDP socket: the length of the first queued datagram, 0
  // when none is (axon's datagrams are never empty).
  int bytes = 0;
  return ::ioctl(fd_, FIONREAD, &bytes) == 0 && bytes > 0;
}

}  // namespace axon::udp
