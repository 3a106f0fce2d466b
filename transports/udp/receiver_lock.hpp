// "Who receives topic T for this host": the participant that holds an
// abstract Unix socket name. The kernel frees the name when its process dies,
// even by SIGKILL, so another participant can take over; names are per
// network namespace, like the host they stand for.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace axon::udp {

class ReceiverLock {
 public:
  /// The lock of (domain, topic), or nullopt when another process holds it.
  /// `host` is part of the name, so participants standing for different
  /// hosts in one network namespace (tests on loopback) do not collide.
  static std::optional<ReceiverLock> try_acquire(std::uint32_t domain_id, std::string_view host,
                                                 std::uint64_t topic_id) noexcept;
  ReceiverLock(ReceiverLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ReceiverLock& operator=(ReceiverLock&& other) noexcept;
  ReceiverLock(const ReceiverLock&) = delete;
  ReceiverLock& operator=(const ReceiverLock&) = delete;
  ~ReceiverLock();

 private:
  explicit ReceiverLock(int fd) noexcept : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace axon::udp
