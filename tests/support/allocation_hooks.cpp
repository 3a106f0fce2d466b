// See allocation_hooks.hpp.
#include "tests/support/allocation_hooks.hpp"

#include <execinfo.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>
#include <string_view>

namespace axon::test::allocations {
namespace {

// Relaxed throughout: the flags are set before the measured work starts and
// the count is read after the measuring thread synchronized with the others
// (see stop()).
std::atomic<bool> g_counting{false};
std::atomic<bool> g_all_threads{false};
std::atomic<std::uint64_t> g_allocations{0};
thread_local bool t_counted_thread = false;
// AXON_TEST_ALLOCATION_BACKTRACE=1: each counted allocation prints its call
// stack to stderr (addresses; `addr2line -f -C -e EXE` names them), to find
// what allocated when a test fails. backtrace_symbols_fd() does not allocate;
// the guard keeps an allocation inside backtrace() from recursing.
std::atomic<bool> g_print_backtraces{false};  // relaxed: set before counting starts
thread_local bool t_in_backtrace = false;

void print_backtrace() noexcept {
  if (t_in_backtrace) {
    return;
  }
  t_in_backtrace = true;
  std::array<void*, 24> frames{};
  const int depth = ::backtrace(frames.data(), static_cast<int>(frames.size()));
  constexpr std::string_view kHeader = "-- counted allocation:\n";
  (void)!::write(STDERR_FILENO, kHeader.data(), kHeader.size());
  ::backtrace_symbols_fd(frames.data(), depth, STDERR_FILENO);
  t_in_backtrace = false;
}

}  // namespace

void count() noexcept {
  if (g_counting.load(std::memory_order_relaxed) &&
      (t_counted_thread || g_all_threads.load(std::memory_order_relaxed))) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (g_print_backtraces.load(std::memory_order_relaxed)) {
      print_backtrace();
    }
  }
}

void start(Scope scope) noexcept {
  const char* trace = std::getenv("AXON_TEST_ALLOCATION_BACKTRACE");
  const bool print = trace != nullptr && trace[0] == '1';
  g_print_backtraces.store(print, std::memory_order_relaxed);
  if (print) {
    void* frame = nullptr;
    (void)::backtrace(&frame, 1);  // loads the unwinder now, not inside a counted allocation
  }
  g_allocations.store(0, std::memory_order_relaxed);
  t_counted_thread = true;
  g_all_threads.store(scope == Scope::kAllThreads, std::memory_order_relaxed);
  g_counting.store(true, std::memory_order_relaxed);
}

std::uint64_t stop() noexcept {
  g_counting.store(false, std::memory_order_relaxed);
  g_all_threads.store(false, std::memory_order_relaxed);
  t_counted_thread = false;
  return g_allocations.load(std::memory_order_relaxed);
}

}  // namespace axon::test::allocations

using axon::test::allocations::count;

void* operator new(std::size_t size) {
  count();
  if (void* p = std::malloc(size == 0 ? 1 : size)) {
    return p;
  }
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  count();
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return operator new(size, std::nothrow); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// glibc's own entry points, so plain malloc() calls (C code, fmt, spdlog) count too.
// NOLINTBEGIN(bugprone-reserved-identifier,readability-identifier-naming)
extern "C" void* __libc_malloc(std::size_t size);
extern "C" void* __libc_calloc(std::size_t n, std::size_t size);
extern "C" void* __libc_realloc(void* p, std::size_t size);
// NOLINTEND(bugprone-reserved-identifier,readability-identifier-naming)
extern "C" void* malloc(std::size_t size) {
  count();
  return __libc_malloc(size);
}
extern "C" void* calloc(std::size_t n, std::size_t size) {
  count();
  return __libc_calloc(n, size);
}
extern "C" void* realloc(void* p, std::size_t size) {
  count();
  return __libc_realloc(p, size);
}
#endif
