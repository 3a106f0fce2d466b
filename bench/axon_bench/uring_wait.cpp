#include "uring_wait.hpp"

#include <linux/io_uring.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "system.hpp"

namespace axon_bench {
namespace {

/// Linux 6.7's opcode (include/uapi/linux/io_uring.h); Debian 12's headers stop at 48.
constexpr std::uint8_t kOpFutexWaitv = 53;
/// FUTEX2_SIZE_U32 (include/uapi/linux/futex.h, 6.7): a 32-bit, process-shared word.
constexpr std::uint32_t kFutex2SizeU32 = 0x02;
constexpr std::uint64_t kFutexTag = 1;
constexpr std::uint64_t kPollTag = 2;
constexpr unsigned kEntries = 4;

/// struct futex_waitv of Linux 5.16+.
struct FutexWaitv {
  std::uint64_t val;
  std::uint64_t uaddr;
  std::uint32_t flags;
  std::uint32_t reserved;
};

}  // namespace

struct UringWait::Rings {
  void* sq = nullptr;
  std::size_t sq_bytes = 0;
  void* cq = nullptr;  ///< == sq with IORING_FEAT_SINGLE_MMAP
  std::size_t cq_bytes = 0;
  io_uring_sqe* sqes = nullptr;
  std::size_t sqe_bytes = 0;
  unsigned* sq_tail = nullptr;
  unsigned* sq_mask = nullptr;
  unsigned* sq_array = nullptr;
  unsigned* cq_head = nullptr;
  unsigned* cq_tail = nullptr;
  unsigned* cq_mask = nullptr;
  io_uring_cqe* cqes = nullptr;
  FutexWaitv waitv{};  ///< Read by the kernel when the FUTEX_WAITV is submitted.
};

std::string UringWait::open() {
  io_uring_params params{};
  ring_fd_ = static_cast<int>(::syscall(__NR_io_uring_setup, kEntries, &params));
  if (ring_fd_ < 0) {
    return "io_uring_setup: " + error_text(errno) + " (io_uring disabled, or a kernel before 5.1)";
  }
  rings_ = new Rings;
  Rings& r = *rings_;
  r.sq_bytes = params.sq_off.array + params.sq_entries * sizeof(unsigned);
  r.cq_bytes = params.cq_off.cqes + params.cq_entries * sizeof(io_uring_cqe);
  const bool single = (params.features & IORING_FEAT_SINGLE_MMAP) != 0;
  if (single) {
    r.sq_bytes = r.cq_bytes = std::max(r.sq_bytes, r.cq_bytes);
  }
  r.sq = ::mmap(nullptr, r.sq_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd_, IORING_OFF_SQ_RING);
  r.cq = single ? r.sq
                : ::mmap(nullptr, r.cq_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd_,
                         IORING_OFF_CQ_RING);
  r.sqe_bytes = params.sq_entries * sizeof(io_uring_sqe);
  void* sqes =
      ::mmap(nullptr, r.sqe_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd_, IORING_OFF_SQES);
  if (r.sq == MAP_FAILED || r.cq == MAP_FAILED || sqes == MAP_FAILED) {
    return "mmap of the io_uring rings: " + error_text(errno);
  }
  auto* sq = static_cast<char*>(r.sq);
  auto* cq = static_cast<char*>(r.cq);
  r.sqes = static_cast<io_uring_sqe*>(sqes);
  r.sq_tail = reinterpret_cast<unsigned*>(sq + params.sq_off.tail);
  r.sq_mask = reinterpret_cast<unsigned*>(sq + params.sq_off.ring_mask);
  r.sq_array = reinterpret_cast<unsigned*>(sq + params.sq_off.array);
  r.cq_head = reinterpret_cast<unsigned*>(cq + params.cq_off.head);
  r.cq_tail = reinterpret_cast<unsigned*>(cq + params.cq_off.tail);
  r.cq_mask = reinterpret_cast<unsigned*>(cq + params.cq_off.ring_mask);
  r.cqes = reinterpret_cast<io_uring_cqe*>(cq + params.cq_off.cqes);
  return probe_futex_waits();
}

std::string UringWait::probe_futex_waits() {
  // A FUTEX_WAITV whose value does not match completes at once: -EAGAIN
  // where the kernel knows the opcode, -EINVAL where it does not.
  const std::uint32_t word = 1;
  Rings& r = *rings_;
  r.waitv =
      FutexWaitv{.val = 0, .uaddr = reinterpret_cast<std::uint64_t>(&word), .flags = kFutex2SizeU32, .reserved = 0};
  const unsigned tail = *r.sq_tail;
  const unsigned index = tail & *r.sq_mask;
  r.sq_array[index] = index;
  io_uring_sqe& sqe = r.sqes[index];
  std::memset(&sqe, 0, sizeof(sqe));
  sqe.opcode = kOpFutexWaitv;
  sqe.addr = reinterpret_cast<std::uint64_t>(&r.waitv);
  sqe.len = 1;
  sqe.user_data = kFutexTag;
  std::atomic_ref<unsigned>(*r.sq_tail).store(tail + 1, std::memory_order_release);
  if (::syscall(__NR_io_uring_enter, ring_fd_, 1, 1, IORING_ENTER_GETEVENTS, nullptr, 0) < 0) {
    return "io_uring_enter: " + error_text(errno);
  }
  const unsigned head = *r.cq_head;
  const int result = r.cqes[head & *r.cq_mask].res;
  std::atomic_ref<unsigned>(*r.cq_head).store(head + 1, std::memory_order_release);
  if (result != -EAGAIN) {
    return "io_uring cannot wait on futex words here (IORING_OP_FUTEX_WAITV needs Linux 6.7 or later; got " +
           error_text(-result) + ")";
  }
  return {};
}

UringWait::~UringWait() {
  if (rings_ != nullptr) {
    if (rings_->sqes != nullptr) {
      ::munmap(rings_->sqes, rings_->sqe_bytes);
    }
    if (rings_->cq != nullptr && rings_->cq != MAP_FAILED && rings_->cq != rings_->sq) {
      ::munmap(rings_->cq, rings_->cq_bytes);
    }
    if (rings_->sq != nullptr && rings_->sq != MAP_FAILED) {
      ::munmap(rings_->sq, rings_->sq_bytes);
    }
    delete rings_;
  }
  if (ring_fd_ >= 0) {
    ::close(ring_fd_);  // cancels what is still armed
  }
}

bool UringWait::wait_readable(int fd, const std::uint32_t* word, std::uint32_t expected) noexcept {
  Rings& r = *rings_;
  readable_ = false;
  while (!readable_) {
    // The kernel reads the submission ring after io_uring_enter(); the tail
    // store is release so the entries written before it are seen.
    unsigned tail = *r.sq_tail;
    unsigned submitted = 0;
    auto next_entry = [&]() -> io_uring_sqe& {
      const unsigned index = tail & *r.sq_mask;
      r.sq_array[index] = index;
      io_uring_sqe& sqe = r.sqes[index];
      std::memset(&sqe, 0, sizeof(sqe));
      ++tail;
      ++submitted;
      return sqe;
    };
    if (!futex_armed_) {
      r.waitv = FutexWaitv{
          .val = expected, .uaddr = reinterpret_cast<std::uint64_t>(word), .flags = kFutex2SizeU32, .reserved = 0};
      io_uring_sqe& sqe = next_entry();
      sqe.opcode = kOpFutexWaitv;
      sqe.addr = reinterpret_cast<std::uint64_t>(&r.waitv);
      sqe.len = 1;
      sqe.user_data = kFutexTag;
      futex_armed_ = true;
    }
    if (!poll_armed_) {
      io_uring_sqe& sqe = next_entry();
      sqe.opcode = IORING_OP_POLL_ADD;
      sqe.fd = fd;
      sqe.poll32_events = POLLIN;
      sqe.user_data = kPollTag;
      poll_armed_ = true;
    }
    std::atomic_ref<unsigned>(*r.sq_tail).store(tail, std::memory_order_release);
    if (!submit_and_wait(submitted)) {
      return false;
    }
  }
  return true;
}

bool UringWait::submit_and_wait(unsigned submitted) noexcept {
  Rings& r = *rings_;
  if (::syscall(__NR_io_uring_enter, ring_fd_, submitted, 1, IORING_ENTER_GETEVENTS, nullptr, 0) < 0 &&
      errno != EINTR) {
    return false;
  }
  // Acquire: the completions the kernel wrote before it moved the tail.
  const unsigned tail = std::atomic_ref<unsigned>(*r.cq_tail).load(std::memory_order_acquire);
  unsigned head = *r.cq_head;
  for (; head != tail; ++head) {
    const io_uring_cqe& cqe = r.cqes[head & *r.cq_mask];
    if (cqe.user_data == kFutexTag) {
      futex_armed_ = false;
      if (cqe.res < 0 && cqe.res != -EAGAIN) {  // EAGAIN: the word had moved on; -EINVAL: no futex ops here
        errno = -cqe.res;
        std::atomic_ref<unsigned>(*r.cq_head).store(head + 1, std::memory_order_release);
        return false;
      }
    } else {
      poll_armed_ = false;
      readable_ = readable_ || cqe.res > 0;
    }
  }
  // Release: the kernel may reuse the slots we read.
  std::atomic_ref<unsigned>(*r.cq_head).store(head, std::memory_order_release);
  return true;
}

}  // namespace axon_bench
