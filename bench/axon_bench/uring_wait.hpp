// One thread waiting on a socket and a futex word in a single system call:
// io_uring with IORING_OP_POLL_ADD on the socket and IORING_OP_FUTEX_WAITV on
// the word (Linux 6.7+). What a subscriber thread that also reads the UDP
// socket itself would wait with; `axon-bench baseline --only udp-uring`
// measures its cost against a plain blocking recv (docs/performance.md,
// "Across hosts"). Raw system calls: Debian 12's liburing (2.3) predates the
// futex operations.
#pragma once

#include <cstdint>
#include <string>

namespace axon_bench {

class UringWait {
 public:
  UringWait() = default;
  UringWait(const UringWait&) = delete;
  UringWait& operator=(const UringWait&) = delete;
  ~UringWait();

  /// Sets up a small ring; "" or why io_uring cannot be used here.
  std::string open();
  /// Until `fd` is readable. Meanwhile a FUTEX_WAITV on `word` (while it
  /// holds `expected`) stays armed, across calls, as it would for a waiter
  /// that watches both; nobody wakes it here. False on an error (errno set).
  bool wait_readable(int fd, const std::uint32_t* word, std::uint32_t expected) noexcept;

 private:
  struct Rings;
  std::string probe_futex_waits();
  bool submit_and_wait(unsigned submitted) noexcept;

  int ring_fd_ = -1;
  Rings* rings_ = nullptr;
  bool futex_armed_ = false;
  bool poll_armed_ = false;
  bool readable_ = false;
};

}  // namespace axon_bench
