#include "transports/shm/service_wake.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "src/base/errors.hpp"

namespace axon::shm {

ServiceWake::~ServiceWake() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Result<void> ServiceWake::open() {
  fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd_ < 0) {
    return system_error(errno, "eventfd");
  }
  return {};
}

void ServiceWake::wake() const noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(fd_, &one, sizeof(one));
}

void ServiceWake::drain() const noexcept {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto n = ::read(fd_, &count, sizeof(count));
}

}  // namespace axon::shm
