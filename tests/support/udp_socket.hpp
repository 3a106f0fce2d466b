// A plain UDP socket for tests: probe virtual hosts, and send hostile
// datagrams at a receiver. Not axon's transport; errors as values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "axon/result.hpp"

namespace axon::test {

class UdpSocket {
 public:
  /// A socket bound to `address`:`port` ("0.0.0.0", 0: any address, any port).
  static Result<UdpSocket> bind(const std::string& address = "0.0.0.0", std::uint16_t port = 0);
  UdpSocket(UdpSocket&& other) noexcept;
  UdpSocket& operator=(UdpSocket&& other) noexcept;
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  ~UdpSocket();

  /// Joins IPv4 multicast `group` on the interface that has `interface_address`.
  Result<void> join(const std::string& group, const std::string& interface_address);
  /// Sends one datagram to `address`:`port`.
  Result<void> send_to(const std::string& address, std::uint16_t port, std::span<const std::byte> bytes);
  /// One datagram into `buffer`; its size, or nullopt when none came within `timeout`.
  std::optional<std::size_t> receive(std::span<std::byte> buffer, std::chrono::milliseconds timeout);
  /// The bound port.
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

 private:
  UdpSocket() = default;
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

/// Ports of the UDP sockets of this network namespace bound to IPv4
/// `address` exactly (not the wildcard), from /proc/self/net/udp.
std::vector<std::uint16_t> udp_ports_bound_to(const std::string& address);
/// The same, of this process's sockets only (tests running at once in the
/// same namespace bind sockets of their own to the same address).
std::vector<std::uint16_t> own_udp_ports_bound_to(const std::string& address);

}  // namespace axon::test
