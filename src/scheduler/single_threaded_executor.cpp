// SingleThreadedExecutor: every callback on the spinning thread.
#include <algorithm>
#include <limits>

#include "axon/executor.hpp"
#include "src/base/clock.hpp"
#include "src/scheduler/executor_core.hpp"
#include "src/scheduler/idler.hpp"
#include "src/scheduler/spin_clock.hpp"

namespace axon {
namespace {

/// Messages one spin_some() dispatches at most, so a publisher faster than
/// the callbacks cannot keep it from returning.
constexpr std::size_t kSpinSomeBudget = 4096;
/// Messages between deadline and stop checks while busy.
constexpr std::size_t kRoundBudget = 256;

void fire_deadline(detail::Entry& e, const DeadlineEvent& event) { e.sub->handle_deadline_missed(event); }
void fire_lost(detail::Entry& e, const LivelinessEvent& event) { e.sub->handle_publisher_lost(event); }

}  // namespace

SingleThreadedExecutor::SingleThreadedExecutor(ExecutorOptions options)
    : core_(std::make_unique<detail::ExecutorCore>(options.wait_strategy)) {}

SingleThreadedExecutor::~SingleThreadedExecutor() = default;

Result<void> SingleThreadedExecutor::add(std::shared_ptr<SubscriptionBase> subscription, SubscriptionOptions options) {
  return core_->add(std::move(subscription), options);
}

Result<void> SingleThreadedExecutor::remove(const std::shared_ptr<SubscriptionBase>& subscription) {
  return core_->remove(subscription);
}

Result<void> SingleThreadedExecutor::spin() { return run_until(std::numeric_limits<std::int64_t>::max()); }

Result<void> SingleThreadedExecutor::spin_for(std::chrono::nanoseconds duration) {
  return run_until(detail::deadline_after(duration));
}

Result<std::size_t> SingleThreadedExecutor::spin_some() {
  if (auto ok = core_->begin_spin(); !ok) {
    return ok.error();
  }
  const std::size_t count = core_->dispatch_ready(kSpinSomeBudget);
  const std::int64_t now = monotonic_now_ns();
  core_->check_deadlines(now, fire_deadline);
  core_->check_liveliness(now, false, fire_lost);
  core_->end_spin();
  return count;
}

void SingleThreadedExecutor::stop() noexcept { core_->stop(); }

Result<void> SingleThreadedExecutor::run_until(std::int64_t until_ns) {
  if (auto ok = core_->begin_spin(); !ok) {
    return ok.error();
  }
  detail::Idler idler(core_->strategy());
  detail::SpinClock clock(core_->strategy());
  bool woke = false;
  while (!core_->stopping()) {
    const std::size_t count = core_->dispatch_ready(kRoundBudget);
    if (count > 0 || woke) {
      clock.refresh();  // handlers ran or it slept: the last reading is stale
    }
    const std::int64_t now = clock.now();
    const std::int64_t next_deadline = core_->check_deadlines(now, fire_deadline);
    core_->check_liveliness(now, woke, fire_lost);
    woke = false;
    if (now >= until_ns) {
      break;
    }
    if (count > 0) {
      idler.reset();
      continue;
    }
    woke = idler.step(
        core_->words(), core_->poll_only(), now, std::min(until_ns, next_deadline),
        [this] { return core_->any_ready(); }, core_->wait_source());
  }
  core_->end_spin();
  return {};
}

}  // namespace axon
