#include "transports/shm/shared_checks.hpp"

#include <array>
#include <atomic>

#include "src/base/log.hpp"

namespace axon::shm {
namespace {

std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(Corruption::kCount)>& reports() noexcept {
  static std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(Corruption::kCount)> counts{};
  return counts;
}

}  // namespace

void report_corruption(Corruption kind, const std::string& what) noexcept {
  // Relaxed: a count; the first reporter (previous value 0) logs.
  if (reports()[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed) != 0) {
    return;
  }
  try {
    logger().error(
        "{}; the entry is skipped. Another process wrote garbage into axon's shared memory: restart "
        "the processes of this domain (later reports of this kind are not logged)",
        what);
  } catch (...) {  // NOLINT(bugprone-empty-catch): logging must not take the caller down
  }
}

std::uint64_t corruption_reports(Corruption kind) noexcept {
  return reports()[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);  // a statistic
}

}  // namespace axon::shm
