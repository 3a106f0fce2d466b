#include "transports/udp/receiver_lock.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace axon::udp {

std::optional<ReceiverLock> ReceiverLock::try_acquire(std::uint32_t domain_id, std::string_view host,
                                                      std::uint64_t topic_id) noexcept {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return std::nullopt;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // Abstract namespace: sun_path starts with NUL, the name follows.
  const auto name = fmt::format_to_n(address.sun_path + 1, sizeof(address.sun_path) - 2, "axon/{}/{}/udp-receiver/{:016x}",
                                     domain_id, host.substr(0, 32), topic_id);
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size);
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
