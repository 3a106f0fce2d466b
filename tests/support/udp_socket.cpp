#include "tests/support/udp_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include "tests/support/common/error_text.hpp"

namespace axon::test {
namespace {

Error system_error(const std::string& what) { return {ErrorCode::kSystem, what + ": " + error_text(errno)}; }

bool to_address(const std::string& text, std::uint16_t port, sockaddr_in& out) {
  out = {};
  out.sin_family = AF_INET;
  out.sin_port = htons(port);
  return ::inet_pton(AF_INET, text.c_str(), &out.sin_addr) == 1;
}

}  // namespace

Result<UdpSocket> UdpSocket::bind(const std::string& address, std::uint16_t port) {
  sockaddr_in local{};
  if (!to_address(address, port, local)) {
    return Error(ErrorCode::kInvalidArgument, "not an IPv4 address: " + address);
  }
  UdpSocket s;
  s.fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s.fd_ < 0) {
    return system_error("socket(AF_INET, SOCK_DGRAM)");
  }
  const int on = 1;
  ::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));  // several listeners of one multicast port
  socklen_t length = sizeof(local);
  if (::bind(s.fd_, reinterpret_cast<const sockaddr*>(&local), sizeof(local)) != 0 ||
      ::getsockname(s.fd_, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    return system_error("bind " + address + ":" + std::to_string(port));
  }
  s.port_ = ntohs(local.sin_port);
  return s;
}

UdpSocket::UdpSocket(UdpSocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(std::exchange(other.port_, 0)) {}

UdpSocket& UdpSocket::operator=(UdpSocket&& other) noexcept {
  std::swap(fd_, other.fd_);
  std::swap(port_, other.port_);
  return *this;
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Result<void> UdpSocket::join(const std::string& group, const std::string& interface_address) {
  ip_mreq request{};
  if (::inet_pton(AF_INET, group.c_str(), &request.imr_multiaddr) != 1 ||
      ::inet_pton(AF_INET, interface_address.c_str(), &request.imr_interface) != 1) {
    return Error(ErrorCode::kInvalidArgument, "not IPv4 addresses: " + group + ", " + interface_address);
  }
  if (::setsockopt(fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &request, sizeof(request)) != 0) {
    return system_error("IP_ADD_MEMBERSHIP " + group);
  }
  return {};
}

Result<void> UdpSocket::send_to(const std::string& address, std::uint16_t port, std::span<const std::byte> bytes) {
  sockaddr_in to{};
  if (!to_address(address, port, to)) {
    return Error(ErrorCode::kInvalidArgument, "not an IPv4 address: " + address);
  }
  const ssize_t sent = ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
  if (sent != static_cast<ssize_t>(bytes.size())) {
    return system_error("sendto " + address + ":" + std::to_string(port));
  }
  return {};
}

std::optional<std::size_t> UdpSocket::receive(std::span<std::byte> buffer, std::chrono::milliseconds timeout) {
  pollfd pfd{.fd = fd_, .events = POLLIN, .revents = 0};
  if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) {
    return std::nullopt;
  }
  const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT);
  if (n < 0) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(n);
}

namespace {

/// Ports bound to `address` exactly; `only_inodes` (when given): sockets of those inodes only.
std::vector<std::uint16_t> ports_bound_to(const std::string& address, const std::set<unsigned long>* only_inodes) {
  std::vector<std::uint16_t> ports;
  in_addr wanted{};
  if (::inet_pton(AF_INET, address.c_str(), &wanted) != 1) {
    return ports;
  }
  // Lines: "sl local_address rem_address st tx_queue:rx_queue tr:when retrnsmt uid timeout inode ...",
  // addresses as hex "0100000A:1CE8" with the IPv4 address in the kernel's (network, read as host) order.
  std::ifstream table("/proc/self/net/udp");
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    unsigned ip = 0;
    unsigned port = 0;
    unsigned long inode = 0;
    if (std::sscanf(line.c_str(), " %*u: %8X:%4X %*s %*s %*s %*s %*s %*s %*s %lu", &ip, &port, &inode) == 3 &&
        ip == wanted.s_addr && (only_inodes == nullptr || only_inodes->contains(inode))) {
      ports.push_back(static_cast<std::uint16_t>(port));
    }
  }
  return ports;
}

}  // namespace

std::vector<std::uint16_t> udp_ports_bound_to(const std::string& address) { return ports_bound_to(address, nullptr); }

std::vector<std::uint16_t> own_udp_ports_bound_to(const std::string& address) {
  std::set<unsigned long> inodes;  // of this process's sockets: /proc/self/fd/N -> "socket:[inode]"
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    unsigned long inode = 0;
    if (!error && std::sscanf(target.c_str(), "socket:[%lu]", &inode) == 1) {
      inodes.insert(inode);
    }
  }
  return ports_bound_to(address, &inodes);
}

}  // namespace axon::test
