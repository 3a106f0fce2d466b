#include "network/raw_udp_endpoint.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "harness/system.hpp"

namespace axon_bench {
namespace {

bool to_address(const std::string& text, std::uint16_t port, sockaddr_in& out) {
  out = {};
  out.sin_family = AF_INET;
  out.sin_port = htons(port);
  return ::inet_pton(AF_INET, text.c_str(), &out.sin_addr) == 1;
}

std::size_t fragment_bytes(std::size_t message_bytes, std::uint32_t index) noexcept {
  const std::size_t offset = std::size_t{index} * kRawFragmentBytes;
  return std::min(kRawFragmentBytes, message_bytes - std::min(message_bytes, offset));
}

}  // namespace

std::string RawUdpEndpoint::open(const std::string& local_address, const std::string& peer_address, std::uint16_t port,
                                 std::uint32_t buffer_bytes, int receive_timeout_ms) {
  sockaddr_in local{};
  sockaddr_in peer{};
  if (!to_address(local_address, port, local) || !to_address(peer_address, port, peer)) {
    return "not IPv4 addresses: " + local_address + ", " + peer_address;
  }
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    return "socket: " + error_text(errno);
  }
  const int size = static_cast<int>(buffer_bytes);
  // FORCE variants first: root may exceed net.core.[rw]mem_max (as axon may).
  if (::setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) != 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  }
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  }
  timeval timeout{.tv_sec = receive_timeout_ms / 1000,
                  .tv_usec = static_cast<suseconds_t>(receive_timeout_ms % 1000) * 1000};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof(local)) != 0) {
    return "bind " + local_address + ":" + std::to_string(port) + ": " + error_text(errno);
  }
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&peer), sizeof(peer)) != 0) {
    return "connect " + peer_address + ":" + std::to_string(port) + ": " + error_text(errno);
  }
  return {};
}

RawUdpEndpoint::~RawUdpEndpoint() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

bool RawUdpEndpoint::send(std::uint64_t sequence, const std::byte* data, std::size_t bytes) noexcept {
  const std::uint32_t count = fragment_count(bytes);
  RawFragmentHeader headers[kBatch];
  iovec iov[kBatch][2];
  mmsghdr messages[kBatch] = {};
  for (std::uint32_t first = 0; first < count; first += kBatch) {
    const auto batch = static_cast<unsigned>(std::min<std::size_t>(kBatch, count - first));
    for (unsigned j = 0; j < batch; ++j) {
      const std::uint32_t index = first + j;
      headers[j] = RawFragmentHeader{
          .sequence = sequence, .index = index, .count = count, .total_bytes = static_cast<std::uint32_t>(bytes)};
      iov[j][0] = {.iov_base = &headers[j], .iov_len = sizeof(RawFragmentHeader)};
      // Gathered from the message where it lies, like axon's sendmmsg path.
      iov[j][1] = {.iov_base = const_cast<std::byte*>(data) + std::size_t{index} * kRawFragmentBytes,
                   .iov_len = fragment_bytes(bytes, index)};
      messages[j].msg_hdr = msghdr{};
      messages[j].msg_hdr.msg_iov = iov[j];
      messages[j].msg_hdr.msg_iovlen = 2;
    }
    for (unsigned sent = 0; sent < batch;) {
      const int n = ::sendmmsg(fd_, messages + sent, batch - sent, 0);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
        // A full queue (ENOBUFS from the veth): wait for room, as axon's sender does.
        pollfd waiting{.fd = fd_, .events = POLLOUT, .revents = 0};
        ::poll(&waiting, 1, 10);
        continue;
      }
      if (n < 0 && errno != EINTR) {
        return false;
      }
      sent += n > 0 ? static_cast<unsigned>(n) : 0;
    }
  }
  return true;
}

int RawUdpEndpoint::receive_datagrams(mmsghdr* messages, unsigned count) noexcept {
  if (poll_ns_ > 0) {
    const std::int64_t until = now_ns() + poll_ns_;
    do {
      const int n = ::recvmmsg(fd_, messages, count, MSG_DONTWAIT, nullptr);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        return n;
      }
      ::sched_yield();
    } while (now_ns() < until);
  }
  return ::recvmmsg(fd_, messages, count, MSG_WAITFORONE, nullptr);
}

RawReceive RawUdpEndpoint::receive(std::uint64_t sequence, std::byte* data, std::size_t bytes) noexcept {
  const std::uint32_t count = fragment_count(bytes);
  iovec iov[kBatch];
  mmsghdr messages[kBatch] = {};
  for (std::uint32_t received = 0; received < count;) {
    const auto batch = static_cast<unsigned>(std::min<std::size_t>(kBatch, count - received));
    for (unsigned j = 0; j < batch; ++j) {
      iov[j] = {.iov_base = staging_.data() + std::size_t{j} * kDatagramBytes, .iov_len = kDatagramBytes};
      messages[j].msg_hdr = msghdr{};
      messages[j].msg_hdr.msg_iov = &iov[j];
      messages[j].msg_hdr.msg_iovlen = 1;
    }
    const int n = receive_datagrams(messages, batch);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno == EAGAIN || errno == EWOULDBLOCK ? RawReceive::kTimeout : RawReceive::kError;
    }
    for (int j = 0; j < n; ++j) {
      const std::uint32_t index = received + static_cast<std::uint32_t>(j);
      const std::byte* datagram = staging_.data() + static_cast<std::size_t>(j) * kDatagramBytes;
      RawFragmentHeader header;
      std::memcpy(&header, datagram, sizeof(header));
      const std::size_t payload = fragment_bytes(bytes, index);
      if (header.sequence != sequence || header.index != index || messages[j].msg_len != sizeof(header) + payload) {
        return RawReceive::kWrongDatagram;
      }
      // One copy per fragment, from the datagram to its place: what axon's
      // reassembly does too.
      std::memcpy(data + std::size_t{index} * kRawFragmentBytes, datagram + sizeof(header), payload);
    }
    received += static_cast<std::uint32_t>(n);
  }
  return RawReceive::kComplete;
}

std::uint64_t RawUdpEndpoint::resynchronize(std::byte* scratch, std::size_t bytes) noexcept {
  RawFragmentHeader header;
  iovec iov[2] = {{.iov_base = &header, .iov_len = sizeof(header)},
                  {.iov_base = scratch, .iov_len = std::min(bytes, kRawFragmentBytes)}};
  msghdr message{};
  message.msg_iov = iov;
  message.msg_iovlen = 2;
  for (;;) {
    const ssize_t n = ::recvmsg(fd_, &message, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < static_cast<ssize_t>(sizeof(header))) {
      return 0;
    }
    if (header.index + 1 == header.count) {
      return header.sequence + 1;
    }
  }
}

bool RawUdpEndpoint::send_ack(std::uint64_t sequence) noexcept {
  return ::send(fd_, &sequence, sizeof(sequence), 0) == static_cast<ssize_t>(sizeof(sequence));
}

std::uint64_t RawUdpEndpoint::receive_ack() noexcept {
  std::uint64_t newest = 0;
  std::uint64_t sequence = 0;
  // Blocks for the first (up to the receive timeout), then takes what is queued.
  for (int flags = 0; ::recv(fd_, &sequence, sizeof(sequence), flags) == static_cast<ssize_t>(sizeof(sequence));
       flags = MSG_DONTWAIT) {
    newest = std::max(newest, sequence);
  }
  return newest;
}

}  // namespace axon_bench
