#include "harness/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace axon_bench {
namespace {

std::atomic<bool> g_progress_wanted{true};

constexpr auto kRedrawPeriod = std::chrono::milliseconds(100);

}  // namespace

void set_progress_wanted(bool wanted) noexcept { g_progress_wanted.store(wanted, std::memory_order_relaxed); }

bool quiet() noexcept { return !g_progress_wanted.load(std::memory_order_relaxed); }

bool progress_enabled() noexcept {
  return g_progress_wanted.load(std::memory_order_relaxed) && ::isatty(STDERR_FILENO) != 0;
}

ProgressLine::ProgressLine(std::string label, std::uint64_t total, std::string unit)
    : label_(std::move(label)), total_(total), unit_(std::move(unit)), enabled_(progress_enabled()) {}

ProgressLine::~ProgressLine() {
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

void ProgressLine::update(std::uint64_t done) {
  if (!enabled_) {
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < kRedrawPeriod) {
    return;
  }
  last_ = now;
  shown_ = true;
  const double elapsed_s = std::chrono::duration<double>(now - start_).count();
  if (total_ == 0) {
    std::fprintf(stderr, "\r\033[K  %s: %.1f s", label_.c_str(), elapsed_s);
  } else {
    const std::uint64_t shown = std::min(done, total_);
    std::fprintf(stderr, "\r\033[K  %s: %llu/%llu %s (%.0f%%), %.1f s", label_.c_str(),
                 static_cast<unsigned long long>(shown), static_cast<unsigned long long>(total_), unit_.c_str(),
                 100.0 * static_cast<double>(shown) / static_cast<double>(total_), elapsed_s);
  }
  std::fflush(stderr);
}

}  // namespace axon_bench
