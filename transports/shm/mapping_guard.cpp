#include "transports/shm/mapping_guard.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <mutex>
#include <utility>

#include "src/base/errors.hpp"

namespace axon::shm {
namespace {

constexpr std::uintptr_t kFreeSlot = 0;
constexpr std::uintptr_t kClaimedSlot = 1;  ///< Being filled in by guard().

/// One guarded mapping. Every field is an atomic so that the handler, which
/// may run on any thread at any time, never races with (un)registration.
/// `base` publishes the others: written last with release, read first with
/// acquire by the handler.
struct Entry {
  std::atomic<std::uintptr_t> base{kFreeSlot};
  std::atomic<std::size_t> bytes{0};
  std::atomic<int> fd{-1};
  std::atomic<dev_t> dev{0};
  std::atomic<ino_t> ino{0};
  std::atomic<std::uint64_t> repairs{0};
};
static_assert(std::atomic<std::uintptr_t>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<dev_t>::is_always_lock_free && std::atomic<ino_t>::is_always_lock_free,
              "the SIGBUS handler may only use lock-free atomics");

std::array<Entry, GuardedMapping::kMaxGuardedMappings> g_table;
std::mutex g_install_mutex;  ///< Serializes installation and slot claims (never taken by the handler).
bool g_installed = false;    ///< Guarded by g_install_mutex.
/// The action before ours; written before our sigaction() call, which orders
/// it before any run of the handler.
struct sigaction g_previous {};

/// Grows the file of `entry` back to the mapping's size. False when the
/// descriptor no longer is the file we mapped or the memory is short (then
/// the fault is real and goes on to the previous handler).
bool regrow(const Entry& entry) noexcept {
  const int fd = entry.fd.load(std::memory_order_relaxed);  // published by the acquire of `base`
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_dev != entry.dev.load(std::memory_order_relaxed) ||
      st.st_ino != entry.ino.load(std::memory_order_relaxed)) {
    return false;
  }
  // fallocate (not ftruncate): also reserves the pages, so that a full tmpfs
  // fails here instead of faulting again forever.
  return ::fallocate(fd, 0, 0, static_cast<off_t>(entry.bytes.load(std::memory_order_relaxed))) == 0;
}

void chain(int signal, siginfo_t* info, void* context) noexcept {
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(signal, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(signal);
    return;
  }
  // The default action: restore it; a fault then happens again on return
  // and kills the process as it would have without us, a sent signal is
  // raised again (it stays blocked until the handler returns).
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  ::sigaction(signal, &fallback, nullptr);
  if (info->si_code <= 0) {
    ::raise(signal);
  }
}

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (info->si_code > 0) {  // raised by the kernel for an access, not sent
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (Entry& entry : g_table) {
      // Acquire pairs with the release store in guard(): the other fields are set.
      const std::uintptr_t base = entry.base.load(std::memory_order_acquire);
      // Unsigned: an address below base wraps around and fails the test.
      if (base <= kClaimedSlot || address - base >= entry.bytes.load(std::memory_order_relaxed)) {
        continue;
      }
      if (regrow(entry)) {
        entry.repairs.fetch_add(1, std::memory_order_relaxed);  // a count, read by repairs()
        errno = saved_errno;
        return;  // the access retries on the grown file
      }
      break;
    }
  }
  errno = saved_errno;
  chain(signal, info, context);
}

}  // namespace

Result<GuardedMapping> GuardedMapping::guard(const void* base, std::size_t bytes, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return system_error(errno, "fstat of a mapping to guard against truncation");
  }
  std::lock_guard<std::mutex> guard(g_install_mutex);
  if (!g_installed) {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGBUS, &action, &g_previous) != 0) {
      return system_error(errno, "sigaction(SIGBUS) for the registry's truncation guard");
    }
    g_installed = true;
  }
  for (std::uint32_t slot = 0; slot < kMaxGuardedMappings; ++slot) {
    Entry& entry = g_table[slot];
    std::uintptr_t expected = kFreeSlot;
    // Relaxed: claims are serialized by the mutex; the handler ignores a claimed slot.
    if (!entry.base.compare_exchange_strong(expected, kClaimedSlot, std::memory_order_relaxed)) {
      continue;
    }
    entry.bytes.store(bytes, std::memory_order_relaxed);  // published by the release below
    entry.fd.store(fd, std::memory_order_relaxed);
    entry.dev.store(st.st_dev, std::memory_order_relaxed);
    entry.ino.store(st.st_ino, std::memory_order_relaxed);
    entry.repairs.store(0, std::memory_order_relaxed);
    // Release pairs with the handler's acquire load.
    entry.base.store(reinterpret_cast<std::uintptr_t>(base), std::memory_order_release);
    return GuardedMapping(slot);
  }
  return Error(ErrorCode::kLimitReached,
               fmt::format("a process guards at most {} registry mappings (one per node); create fewer nodes",
                           kMaxGuardedMappings));
}

GuardedMapping::GuardedMapping(GuardedMapping&& other) noexcept
    : slot_(std::exchange(other.slot_, kMaxGuardedMappings)) {}

GuardedMapping& GuardedMapping::operator=(GuardedMapping&& other) noexcept {
  if (this != &other) {
    reset();
    slot_ = std::exchange(other.slot_, kMaxGuardedMappings);
  }
  return *this;
}

GuardedMapping::~GuardedMapping() { reset(); }

void GuardedMapping::reset() noexcept {
  if (slot_ < kMaxGuardedMappings) {
    // Release: a later claim of the slot comes after our use (the handler
    // skips a free slot; the mapping itself is unmapped only after this).
    g_table[slot_].base.store(kFreeSlot, std::memory_order_release);
    slot_ = kMaxGuardedMappings;
  }
}

std::uint64_t GuardedMapping::repairs() const noexcept {
  return slot_ < kMaxGuardedMappings ? g_table[slot_].repairs.load(std::memory_order_relaxed) : 0;  // a count
}

}  // namespace axon::shm
