// One thread sleeping on futex words (WakeWord, see src/futex.hpp) and a
// file descriptor at once, in one system call: io_uring with
// IORING_OP_FUTEX_WAITV and IORING_OP_POLL_ADD or IORING_OP_RECVMSG (Linux
// 6.7+). The building block of a transport's WaitSource
// (include/axon/transport.hpp): a UDP socket, an RDMA completion channel.
// Raw system calls: Debian 12's liburing (2.3) predates the futex operations.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "src/base/futex.hpp"

namespace axon::futex {

/// Per thread; not thread-safe. Does not allocate after create().
class WordsAndFdWait {
 public:
  /// Most receives one wait_and_receive() arms.
  static constexpr std::size_t kMaxReceives = 8;

  /// Whether this kernel's io_uring can wait on futex words (probed once per
  /// process; false where io_uring is disabled or the kernel is older than 6.7).
  [[nodiscard]] static bool supported() noexcept;
  /// A ring of its own. kSystem, saying why, where io_uring cannot do it.
  static Result<std::unique_ptr<WordsAndFdWait>> create();

  WordsAndFdWait(const WordsAndFdWait&) = delete;
  WordsAndFdWait& operator=(const WordsAndFdWait&) = delete;
  ~WordsAndFdWait();

  /// What ended a wait; more than one may be true. All false: a signal or
  /// an error of the ring (the caller looks again, as after any wake-up).
  struct Woken {
    bool word_moved = false;  ///< A word moved from its `seen` value (or had already).
    bool readable = false;    ///< `fd` is readable (wait_and_receive(): a receive completed).
    bool timed_out = false;
  };
  /// Sleeps until one of `words` moves away from `seen` (same index, as
  /// Waiter), `fd` becomes readable (< 0: none), or `timeout_ns` passes
  /// (< 0: none). At most kMaxWords words. The caller follows Waiter's
  /// protocol (waiters counted and readiness checked before it sleeps). The
  /// futex request left armed by the last call (it holds nothing) is reused
  /// when it still stands for the same wait, else cancelled first; the poll
  /// never outlives a call.
  Woken wait(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen, int fd,
             std::int64_t timeout_ns) noexcept;

  /// One receive that completed.
  struct Completion {
    std::size_t index = 0;  ///< Into wait_and_receive()'s `messages`.
    std::size_t size = 0;   ///< The message's real length (MSG_TRUNC): above its buffer's, it was cut.
  };
  /// What wait_and_receive() got, in the order the fd delivered it.
  struct Received {
    Woken woken;
    std::span<const Completion> completed;  ///< Valid until the next call.
    bool all_completed = false;             ///< Every receive armed got a message: more may wait.
  };
  /// As wait(), but instead of polling `fd` it arms one receive
  /// (IORING_OP_RECVMSG, MSG_TRUNC) per header of `messages` (1 ..
  /// kMaxReceives; the caller's, with its buffers) in the same sleep: the
  /// wake-up brings the data, no receive call follows. Receives still armed
  /// when the wait ends are cancelled (one that completed meanwhile is
  /// returned too), so the fd keeps what was not read.
  Received wait_and_receive(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen, int fd,
                            std::span<msghdr> messages, std::int64_t timeout_ns) noexcept;

 private:
  struct Ring;
  friend WordsAndFdWait* this_thread_words_and_fd_wait() noexcept;
  /// create() without Result: nullptr and `why` on failure.
  static std::unique_ptr<WordsAndFdWait> make(std::string& why);
  explicit WordsAndFdWait(std::unique_ptr<Ring> ring) noexcept;
  [[nodiscard]] bool same_futex_wait(std::span<WakeWord* const> words,
                                     std::span<const std::uint32_t> seen) const noexcept;
  void arm_futex_wait(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen) noexcept;
  void arm_poll(int fd) noexcept;
  void arm_receives(int fd, std::span<msghdr> messages) noexcept;
  void on_receive_completion(std::size_t index, int result) noexcept;
  /// Cancels the receives still armed on `fd` and reaps until none is.
  void cancel_receives(int fd) noexcept;
  /// The futex request for this wait: the armed one if it still stands, else a new one.
  void prepare_futex_wait(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen) noexcept;
  /// Cancels the request tagged `tag` and reaps until it completed.
  void cancel(std::uint64_t tag) noexcept;
  /// Submits what was armed, sleeps for one completion at most `timeout_ns`
  /// and reaps every completion there is.
  bool enter(std::int64_t timeout_ns) noexcept;

  std::unique_ptr<Ring> ring_;
  bool futex_armed_ = false;
  int polled_fd_ = -1;  ///< The fd of the POLL_ADD in flight, -1: none.
  Woken woken_;
  std::array<bool, kMaxReceives> receive_armed_{};
  std::size_t armed_receives_ = 0;
  int receive_fd_ = -1;                               ///< The fd of the receives armed last.
  std::array<Completion, kMaxReceives> completed_{};  ///< In completion order.
  std::size_t completed_count_ = 0;
};

/// This thread's WordsAndFdWait, made on first use; nullptr where io_uring
/// cannot wait on futex words (the caller waits on the words alone).
WordsAndFdWait* this_thread_words_and_fd_wait() noexcept;

}  // namespace axon::futex
