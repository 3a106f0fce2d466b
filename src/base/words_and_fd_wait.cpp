#include "src/base/words_and_fd_wait.hpp"

#include <linux/io_uring.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include "src/base/clock.hpp"
#include "src/base/errors.hpp"

namespace axon::futex {
namespace {

/// Linux 6.7's opcode (include/uapi/linux/io_uring.h); Debian 12's headers stop at 48.
constexpr std::uint8_t kOpFutexWaitv = 53;
/// FUTEX2_SIZE_U32 (include/uapi/linux/futex.h, 6.7): a 32-bit, process-shared word.
constexpr std::uint32_t kFutex2SizeU32 = 0x02;
constexpr std::uint64_t kFutexTag = 1;
constexpr std::uint64_t kPollTag = 2;
constexpr std::uint64_t kCancelTag = 3;
constexpr std::uint64_t kReceiveTag = 16;  ///< + the slot's index.
/// At most a futex wait, kMaxReceives receives and a cancellation go in per call.
constexpr unsigned kEntries = 16;

/// struct futex_waitv of Linux 5.16+.
struct FutexWaitv {
  std::uint64_t val;
  std::uint64_t uaddr;
  std::uint32_t flags;
  std::uint32_t reserved;
};

std::uint32_t* raw(std::atomic<std::uint32_t>& word) noexcept { return reinterpret_cast<std::uint32_t*>(&word); }

}  // namespace

/// The mapped submission and completion rings (io_uring_setup(2)).
struct WordsAndFdWait::Ring {
  int fd = -1;
  void* sq = MAP_FAILED;
  std::size_t sq_bytes = 0;
  void* cq = MAP_FAILED;  ///< == sq with IORING_FEAT_SINGLE_MMAP
  std::size_t cq_bytes = 0;
  void* sqes = MAP_FAILED;
  std::size_t sqe_bytes = 0;
  unsigned* sq_tail = nullptr;
  unsigned* sq_mask = nullptr;
  unsigned* sq_array = nullptr;
  unsigned* cq_head = nullptr;
  unsigned* cq_tail = nullptr;
  unsigned* cq_mask = nullptr;
  io_uring_cqe* cqes = nullptr;
  unsigned pending = 0;  ///< Requests written since the last io_uring_enter().
  FutexWaitv waitv[kMaxWords] = {};
  WakeWord* armed_words[kMaxWords] = {};  ///< What the futex request in flight watches ...
  std::size_t armed_count = 0;            ///< ... (how many) ...

  ~Ring() {
    if (sqes != MAP_FAILED) {
      ::munmap(sqes, sqe_bytes);
    }
    if (cq != MAP_FAILED && cq != sq) {
      ::munmap(cq, cq_bytes);
    }
    if (sq != MAP_FAILED) {
      ::munmap(sq, sq_bytes);
    }
    if (fd >= 0) {
      ::close(fd);  // cancels what is still in flight
    }
  }

  /// The next submission entry, zeroed; the tail moves in enter().
  io_uring_sqe& next() noexcept {
    const unsigned tail = *sq_tail + pending;
    const unsigned index = tail & *sq_mask;
    sq_array[index] = index;
    io_uring_sqe& sqe = static_cast<io_uring_sqe*>(sqes)[index];
    std::memset(&sqe, 0, sizeof(sqe));
    ++pending;
    return sqe;
  }
};

bool WordsAndFdWait::supported() noexcept {
  static const bool kSupported = [] {
    auto probe = create();
    return probe.ok();
  }();
  return kSupported;
}

std::unique_ptr<WordsAndFdWait> WordsAndFdWait::make(std::string& why) {
  auto ring = std::make_unique<Ring>();
  io_uring_params params{};
  // One thread submits and reaps (the ring is per thread): completions then
  // run as deferred work when that thread waits, not by interrupting it
  // (Linux 6.1+; the probe below needs 6.7 anyway, so no fallback).
  params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  ring->fd = static_cast<int>(::syscall(__NR_io_uring_setup, kEntries, &params));
  if (ring->fd < 0) {
    why = "io_uring_setup: " + errno_text(errno) +
          " (io_uring disabled by kernel.io_uring_disabled, or a kernel before 5.1)";
    return nullptr;
  }
  ring->sq_bytes = params.sq_off.array + params.sq_entries * sizeof(unsigned);
  ring->cq_bytes = params.cq_off.cqes + params.cq_entries * sizeof(io_uring_cqe);
  const bool single = (params.features & IORING_FEAT_SINGLE_MMAP) != 0;
  if (single) {
    ring->sq_bytes = ring->cq_bytes = std::max(ring->sq_bytes, ring->cq_bytes);
  }
  constexpr int kProt = PROT_READ | PROT_WRITE;
  constexpr int kFlags = MAP_SHARED | MAP_POPULATE;
  ring->sq = ::mmap(nullptr, ring->sq_bytes, kProt, kFlags, ring->fd, IORING_OFF_SQ_RING);
  ring->cq = single ? ring->sq : ::mmap(nullptr, ring->cq_bytes, kProt, kFlags, ring->fd, IORING_OFF_CQ_RING);
  ring->sqe_bytes = params.sq_entries * sizeof(io_uring_sqe);
  ring->sqes = ::mmap(nullptr, ring->sqe_bytes, kProt, kFlags, ring->fd, IORING_OFF_SQES);
  if (ring->sq == MAP_FAILED || ring->cq == MAP_FAILED || ring->sqes == MAP_FAILED) {
    why = "mmap of an io_uring ring: " + errno_text(errno);
    return nullptr;
  }
  auto* sq = static_cast<char*>(ring->sq);
  auto* cq = static_cast<char*>(ring->cq);
  ring->sq_tail = reinterpret_cast<unsigned*>(sq + params.sq_off.tail);
  ring->sq_mask = reinterpret_cast<unsigned*>(sq + params.sq_off.ring_mask);
  ring->sq_array = reinterpret_cast<unsigned*>(sq + params.sq_off.array);
  ring->cq_head = reinterpret_cast<unsigned*>(cq + params.cq_off.head);
  ring->cq_tail = reinterpret_cast<unsigned*>(cq + params.cq_off.tail);
  ring->cq_mask = reinterpret_cast<unsigned*>(cq + params.cq_off.ring_mask);
  ring->cqes = reinterpret_cast<io_uring_cqe*>(cq + params.cq_off.cqes);

  // Probe: a futex wait whose value does not match completes at once, with
  // -EAGAIN where the kernel knows the opcode and -EINVAL where it does not.
  std::unique_ptr<WordsAndFdWait> wait(new WordsAndFdWait(std::move(ring)));
  WakeWord probe_word;
  probe_word.sequence.store(1, std::memory_order_relaxed);
  WakeWord* const probe_words[] = {&probe_word};
  const std::uint32_t stale[] = {0};
  wait->arm_futex_wait(probe_words, stale);
  if (!wait->enter(-1) || wait->futex_armed_ || !wait->woken_.word_moved) {
    why = "io_uring cannot wait on futex words here (IORING_OP_FUTEX_WAITV needs Linux 6.7 or later)";
    return nullptr;
  }
  return wait;
}

Result<std::unique_ptr<WordsAndFdWait>> WordsAndFdWait::create() {
  std::string why;
  auto wait = make(why);
  if (!wait) {
    return Error(ErrorCode::kSystem, why);
  }
  return wait;
}

WordsAndFdWait::WordsAndFdWait(std::unique_ptr<Ring> ring) noexcept : ring_(std::move(ring)) {}

WordsAndFdWait::~WordsAndFdWait() {
  ring_.reset();  // closed: what is in flight is cancelled
}

WordsAndFdWait::Woken WordsAndFdWait::wait(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen,
                                           int fd, std::int64_t timeout_ns) noexcept {
  woken_ = {};
  if (words.size() > kMaxWords || words.size() != seen.size()) {
    return woken_;
  }
  if (armed_receives_ > 0) {
    cancel_receives(receive_fd_);  // a wait_and_receive() that gave up its cancellation
  }
  if (polled_fd_ >= 0 && polled_fd_ != fd) {
    cancel(kPollTag);
  }
  prepare_futex_wait(words, seen);
  if (polled_fd_ < 0 && fd >= 0) {
    arm_poll(fd);
  }
  const std::int64_t start = timeout_ns >= 0 ? monotonic_now_ns() : 0;
  (void)enter(timeout_ns);
  if (polled_fd_ >= 0) {
    // Not left armed: a poll request holds the fd open (a socket's port
    // bound) after its owner closed it. The futex request may stay: it holds nothing.
    const Woken before = woken_;
    cancel(kPollTag);
    woken_.readable = woken_.readable || before.readable;
    woken_.word_moved = woken_.word_moved || before.word_moved;
  }
  // io_uring_enter() reports a timeout (-ETIME) only when it submitted
  // nothing, so the clock tells.
  woken_.timed_out =
      !woken_.word_moved && !woken_.readable && timeout_ns >= 0 && monotonic_now_ns() - start >= timeout_ns;
  return woken_;
}

WordsAndFdWait::Received WordsAndFdWait::wait_and_receive(std::span<WakeWord* const> words,
                                                          std::span<const std::uint32_t> seen, int fd,
                                                          std::span<msghdr> messages,
                                                          std::int64_t timeout_ns) noexcept {
  woken_ = {};
  completed_count_ = 0;
  if (words.size() > kMaxWords || words.size() != seen.size() || fd < 0 || messages.empty() ||
      messages.size() > kMaxReceives) {
    return {};
  }
  if (polled_fd_ >= 0) {
    cancel(kPollTag);  // a wait() of the same thread that gave up its cancellation
  }
  if (armed_receives_ > 0) {
    cancel_receives(receive_fd_);  // likewise
    completed_count_ = 0;
    if (armed_receives_ > 0) {
      return {};  // the kernel still owns the buffers
    }
  }
  prepare_futex_wait(words, seen);
  arm_receives(fd, messages);
  const std::int64_t start = timeout_ns >= 0 ? monotonic_now_ns() : 0;
  (void)enter(timeout_ns);
  if (armed_receives_ > 0) {
    // Not left armed: a receive would take a message after this wait, and
    // hold the fd open (as a poll would).
    const Woken before = woken_;
    cancel_receives(fd);
    woken_.word_moved = woken_.word_moved || before.word_moved;
  }
  woken_.readable = completed_count_ > 0;
  woken_.timed_out =
      !woken_.word_moved && !woken_.readable && timeout_ns >= 0 && monotonic_now_ns() - start >= timeout_ns;
  return {.woken = woken_,
          .completed = std::span<const Completion>(completed_.data(), completed_count_),
          .all_completed = completed_count_ == messages.size()};
}

void WordsAndFdWait::prepare_futex_wait(std::span<WakeWord* const> words,
                                        std::span<const std::uint32_t> seen) noexcept {
  if (futex_armed_ && !same_futex_wait(words, seen)) {
    cancel(kFutexTag);
  }
  woken_ = {};  // what a cancellation reaped is not this wait's news
  if (!futex_armed_ && !words.empty()) {
    arm_futex_wait(words, seen);
  }
}

bool WordsAndFdWait::same_futex_wait(std::span<WakeWord* const> words,
                                     std::span<const std::uint32_t> seen) const noexcept {
  // A request in flight that did not complete has seen no wake of its words
  // (every sequence bump comes with FUTEX_WAKE, src/futex.cpp), so it still
  // stands for the same words with the same values.
  if (words.size() != ring_->armed_count) {
    return false;
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] != ring_->armed_words[i] || seen[i] != ring_->waitv[i].val) {
      return false;
    }
  }
  return true;
}

void WordsAndFdWait::arm_futex_wait(std::span<WakeWord* const> words, std::span<const std::uint32_t> seen) noexcept {
  Ring& r = *ring_;
  for (std::size_t i = 0; i < words.size(); ++i) {
    r.waitv[i] = FutexWaitv{.val = seen[i],
                            .uaddr = reinterpret_cast<std::uintptr_t>(raw(words[i]->sequence)),
                            .flags = kFutex2SizeU32,  // shared: no FUTEX2_PRIVATE
                            .reserved = 0};
    r.armed_words[i] = words[i];
  }
  r.armed_count = words.size();
  io_uring_sqe& sqe = r.next();
  sqe.opcode = kOpFutexWaitv;
  sqe.addr = reinterpret_cast<std::uintptr_t>(r.waitv);
  sqe.len = static_cast<std::uint32_t>(words.size());
  sqe.user_data = kFutexTag;
  futex_armed_ = true;
}

void WordsAndFdWait::arm_poll(int fd) noexcept {
  io_uring_sqe& sqe = ring_->next();
  sqe.opcode = IORING_OP_POLL_ADD;
  sqe.fd = fd;
  sqe.poll32_events = POLLIN;
  sqe.user_data = kPollTag;
  polled_fd_ = fd;
}

void WordsAndFdWait::arm_receives(int fd, std::span<msghdr> messages) noexcept {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    io_uring_sqe& sqe = ring_->next();
    sqe.opcode = IORING_OP_RECVMSG;
    sqe.fd = fd;
    sqe.addr = reinterpret_cast<std::uintptr_t>(&messages[i]);
    sqe.len = 1;
    sqe.msg_flags = MSG_TRUNC;  // the result is the message's real length, even when cut
    sqe.user_data = kReceiveTag + i;
    receive_armed_[i] = true;
  }
  armed_receives_ = messages.size();
  receive_fd_ = fd;
}

void WordsAndFdWait::cancel_receives(int fd) noexcept {
  io_uring_sqe& sqe = ring_->next();
  sqe.opcode = IORING_OP_ASYNC_CANCEL;
  sqe.fd = fd;
  sqe.cancel_flags = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ALL;  // every request on fd: the receives
  sqe.user_data = kCancelTag;
  for (int round = 0; round < 16 && armed_receives_ > 0; ++round) {
    if (!enter(-1)) {
      break;
    }
  }
}

void WordsAndFdWait::cancel(std::uint64_t tag) noexcept {
  io_uring_sqe& sqe = ring_->next();
  sqe.opcode = IORING_OP_ASYNC_CANCEL;
  sqe.addr = tag;
  sqe.user_data = kCancelTag;
  // Until the request is gone (completed, or cancelled: -ECANCELED).
  for (int round = 0; round < 16 && (tag == kFutexTag ? futex_armed_ : polled_fd_ >= 0); ++round) {
    if (!enter(-1)) {
      break;
    }
  }
}

bool WordsAndFdWait::enter(std::int64_t timeout_ns) noexcept {
  Ring& r = *ring_;
  // Release: the kernel reads the entries written before the tail moved.
  std::atomic_ref<unsigned>(*r.sq_tail).store(*r.sq_tail + r.pending, std::memory_order_release);
  const unsigned submit = r.pending;
  r.pending = 0;
  __kernel_timespec relative{.tv_sec = timeout_ns / 1'000'000'000, .tv_nsec = timeout_ns % 1'000'000'000};
  io_uring_getevents_arg arg{
      .sigmask = 0, .sigmask_sz = _NSIG / 8, .pad = 0, .ts = reinterpret_cast<std::uintptr_t>(&relative)};
  const unsigned flags = IORING_ENTER_GETEVENTS | (timeout_ns >= 0 ? IORING_ENTER_EXT_ARG : 0U);
  const long rc = timeout_ns >= 0 ? ::syscall(__NR_io_uring_enter, r.fd, submit, 1, flags, &arg, sizeof(arg))
                                  : ::syscall(__NR_io_uring_enter, r.fd, submit, 1, flags, nullptr, 0);
  // Acquire: the completions the kernel wrote before it moved the tail.
  const unsigned tail = std::atomic_ref<unsigned>(*r.cq_tail).load(std::memory_order_acquire);
  unsigned head = *r.cq_head;
  for (; head != tail; ++head) {
    const io_uring_cqe& cqe = r.cqes[head & *r.cq_mask];
    switch (cqe.user_data) {
      case kFutexTag:
        futex_armed_ = false;
        // >= 0: woken; -EAGAIN: a word had moved before it slept.
        woken_.word_moved = woken_.word_moved || cqe.res >= 0 || cqe.res == -EAGAIN;
        break;
      case kPollTag:
        polled_fd_ = -1;
        woken_.readable = woken_.readable || (cqe.res > 0 && (cqe.res & (POLLIN | POLLERR | POLLHUP)) != 0);
        break;
      default:
        if (cqe.user_data >= kReceiveTag && cqe.user_data < kReceiveTag + kMaxReceives) {
          on_receive_completion(static_cast<std::size_t>(cqe.user_data - kReceiveTag), cqe.res);
        }
        break;  // else a cancellation's own completion
    }
  }
  // Release: the kernel may reuse the slots read above.
  std::atomic_ref<unsigned>(*r.cq_head).store(head, std::memory_order_release);
  return rc >= 0 || errno == ETIME || errno == EINTR;
}

void WordsAndFdWait::on_receive_completion(std::size_t index, int result) noexcept {
  if (!receive_armed_[index]) {
    return;
  }
  receive_armed_[index] = false;
  --armed_receives_;
  if (result < 0) {
    return;  // -ECANCELED, or an error the fd reports again to its next reader
  }
  completed_[completed_count_++] = Completion{.index = index, .size = static_cast<std::size_t>(result)};
}

WordsAndFdWait* this_thread_words_and_fd_wait() noexcept {
  if (!WordsAndFdWait::supported()) {
    return nullptr;
  }
  thread_local std::unique_ptr<WordsAndFdWait> wait;  // closed with the thread
  if (!wait) {
    std::string why;
    wait.reset(WordsAndFdWait::make(why).release());
  }
  // The analyzer loses track of the thread_local across the reset() above
  // and reports a use after free that cannot happen.
  return wait.get();  // NOLINT(clang-analyzer-cplusplus.NewDelete)
}

}  // namespace axon::futex
