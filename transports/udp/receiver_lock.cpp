#include "transports/udp/receiver_lock.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>

namespace axon::udp {

std::optional<ReceiverLock> ReceiverLock::try_acquire(std::uint32_t domain_id, std::string_view host,
                                                      std::uint64_t topic_id) noexcept {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return std::nullopt;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // Abstract namespace: sun_path starts with NUL, the name follows (snprintf:
  // nothing here may throw).
  const int written = std::snprintf(
      address.sun_path + 1, sizeof(address.sun_path) - 1, "axon/%u/%.*s/udp-receiver/%016llx", domain_id,
      static_cast<int>(std::min<std::size_t>(host.size(), 32)), host.data(), static_cast<unsigned long long>(topic_id));
  if (written <= 0) {
    ::close(fd);
    return std::nullopt;
  }
  const auto length =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 +
                             std::min<std::size_t>(static_cast<std::size_t>(written), sizeof(address.sun_path) - 2));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  return ReceiverLock(fd);
}

ReceiverLock& ReceiverLock::operator=(ReceiverLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

ReceiverLock::~ReceiverLock() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

}  // namespace axon::udp
