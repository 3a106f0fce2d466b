// Running a scenario: the parent plans the run (which subscription records
// where, each component's pool), forks one process per component, starts
// them together and collects what they measured. Shared between the parent
// (scenario.cpp) and the component processes (scenario_component.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/pair_runner.hpp"
#include "harness/system.hpp"
#include "scenario/scenario_config.hpp"
#include "scenario/window_latency.hpp"

namespace axon_bench {

/// Messages a subscriber may still receive after the measured window ends
/// before it counts the rest as lost.
inline constexpr std::int64_t kScenarioGraceNs = 500'000'000;

/// One (component, topic) subscription and where it records latencies.
struct ScenarioSubscription {
  int component = 0;
  int topic = 0;
  std::size_t latency_offset = 0;  ///< First slot in the shared latency array.
  std::size_t capacity = 0;        ///< Slots it may fill.
};

/// What the parent decided before forking.
struct ScenarioPlan {
  Scenario scenario;
  std::uint32_t domain_id = 0;
  std::vector<ScenarioSubscription> subscriptions;
  std::size_t latency_slots = 0;
  /// 0: every latency is kept (ScenarioShared::latencies). Else latencies are
  /// counted per window of this length from the measured window's start, in
  /// `latency_windows` histograms per subscription (the soak; the last
  /// window also takes what comes after it).
  std::int64_t latency_window_ns = 0;
  std::size_t latency_windows = 0;
};

/// What subscription records where. `domain`: std::nullopt gives one of the
/// run's own (domain_for_case). `latency_window_ns` > 0: latencies per window
/// (ScenarioPlan::latency_window_ns) instead of one slot per message.
ScenarioPlan plan_scenario(Scenario scenario, std::optional<std::uint32_t> domain, std::int64_t latency_window_ns = 0);

/// Start and progress. Thread safety / memory ordering: `ready` is
/// incremented by every component; `start_ns` written once by the parent
/// (release) once all are ready, read by the components (acquire).
struct ScenarioControl {
  alignas(kCacheLine) std::atomic<std::uint32_t> ready{0};
  alignas(kCacheLine) std::atomic<std::int64_t> start_ns{0};
  /// Incremented by every component after its last take; none leaves (and
  /// takes its publishers away) before all are through.
  alignas(kCacheLine) std::atomic<std::uint32_t> finished{0};
};

/// Written by one component only; read by the parent after waitpid().
struct ComponentReport {
  CpuTimes measure_begin;
  CpuTimes measure_end;
  ErrorText error;
};

/// Written by the publishing component only.
struct PublicationReport {
  std::uint64_t published;      ///< Sent, scheduled inside the window.
  std::uint64_t missed;         ///< Due inside the window but skipped: the publisher was a whole period late.
  std::uint64_t loan_failures;  ///< No free chunk (subscribers held them all): not sent.
  std::uint64_t queue_full;     ///< Subscriber queues that were full at publish (reject_newest drops).
  std::int64_t late_max_ns;     ///< Latest publish() after its scheduled time.
  std::int64_t late_sum_ns;     ///< Sum of the lateness of the published ones (for the mean).
};

/// Written by the subscribing component only.
struct SubscriptionReport {
  std::uint64_t delivered;  ///< Received, scheduled inside the window.
  std::uint64_t recorded;   ///< Latencies written (delivered, unless the slots ran out).
};

/// Timeline of a run, from the start the parent chose.
struct ScenarioTimes {
  std::int64_t start_ns = 0;         ///< Publishing starts.
  std::int64_t window_begin_ns = 0;  ///< After the warm-up: counted from here ...
  std::int64_t window_end_ns = 0;    ///< ... to here; publishing stops.
  std::int64_t stop_ns = 0;          ///< Subscribers stop after the grace period.

  static ScenarioTimes from(const Scenario& s, std::int64_t start_ns) noexcept {
    ScenarioTimes t;
    t.start_ns = start_ns;
    t.window_begin_ns = start_ns + static_cast<std::int64_t>(s.warmup_s * 1e9);
    t.window_end_ns = t.window_begin_ns + static_cast<std::int64_t>(s.duration_s * 1e9);
    t.stop_ns = t.window_end_ns + kScenarioGraceNs;
    return t;
  }
};

/// Period of a topic in nanoseconds.
inline std::int64_t period_ns_of(const ScenarioTopic& t) noexcept {
  return static_cast<std::int64_t>(1e9 / t.rate_hz + 0.5);
}

/// Time message `n` of topic `t` is due.
inline std::int64_t due_ns(const ScenarioTopic& t, std::int64_t start_ns, std::uint64_t n) noexcept {
  return start_ns + static_cast<std::int64_t>(t.phase_ms * 1e6) + static_cast<std::int64_t>(n) * period_ns_of(t);
}

/// The shared memory of a run, created by the parent before fork().
struct ScenarioShared {
  explicit ScenarioShared(const ScenarioPlan& plan)
      : components(plan.scenario.components.size()),
        publications(plan.scenario.topics.size()),
        subscriptions(plan.subscriptions.size()),
        latencies(plan.latency_slots),
        window_latencies(plan.subscriptions.size() * plan.latency_windows) {}
  Shared<ScenarioControl> control;
  SharedArray<ComponentReport> components;
  SharedArray<PublicationReport> publications;  ///< Per topic.
  SharedArray<SubscriptionReport> subscriptions;
  SharedArray<std::int64_t> latencies;
  /// Subscription k's window w at [k * latency_windows + w].
  SharedArray<WindowLatency> window_latencies;
};

/// What a caller of run_scenario_processes() sees of the run (both may be empty).
struct ScenarioWatch {
  /// Parent side, once per component after fork(): its index and pid.
  std::function<void(std::size_t index, int pid)> started;
  /// Parent side, every poll period while the components run, with the start
  /// the parent chose (0 until every component is ready).
  std::function<void(std::int64_t start_ns)> tick;
};

/// Forks the components of `plan`, starts them together once all are ready
/// and waits for all of them. Returns "" or what failed (the others are then
/// killed); the caller removes the domain's files after a failure.
std::string run_scenario_processes(const ScenarioPlan& plan, ScenarioShared& shared, const ScenarioWatch& watch);

/// Body of component process `index`; returns its exit status.
int run_scenario_component(const ScenarioPlan& plan, ScenarioShared& shared, std::size_t index);

}  // namespace axon_bench
