// From a scenario and its faults to a plan (where each subscription records,
// its deadline), and from what the fault-free baseline and the run with
// faults reported to the checks, the timelines and the per-topic results.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "chaos/chaos_checks.hpp"
#include "chaos/chaos_run.hpp"
#include "chaos/chaos_runner.hpp"
#include "results/result_log.hpp"

namespace axon_bench {

/// A subscription's deadline: this many of its topic's periods, at least kMinDeadlineNs.
inline constexpr std::int64_t kDeadlinePeriods = 5;
inline constexpr std::int64_t kMinDeadlineNs = 500'000'000;
/// After a fault ends, its topics count as touched this much longer (restarts rejoin, queues drain).
inline constexpr double kRecoverySeconds = 1.0;

ChaosPlan make_chaos_plan(Scenario scenario, std::vector<Fault> faults, std::uint32_t domain_id);

/// Spans (seconds from the window's start, recovery included) when faults touch subscription `sub`: a kill or
/// stop of its publisher or of its own component, a burst of a topic its publisher publishes or its component
/// takes, every host fault (cpu_hog, memory_pressure, shm_full), and a network fault on the path between its
/// publisher's host and its own, or between its publisher and a reader of another topic it publishes.
std::vector<std::pair<double, double>> touching_spans(const ChaosPlan& plan, const ChaosSubscription& sub,
                                                      const std::vector<FaultEvent>& events);

/// One run as the analysis reads it.
struct RunView {
  const ChaosPlan& plan;
  const ChaosShared& shared;
  const ChaosRunResult& result;
};

/// The checks of the run with faults against its baseline, and its timelines. `latency_slack_ns`: see
/// check_latency().
ChaosLog analyse_chaos(const RunView& baseline, const RunView& chaos, double latency_slack_ns);

/// Per subscription: delivered, lost and latency percentiles, as `scenario` reports them; `tag` marks the run
/// ("fault-free", "faults") in the component's name.
std::vector<CaseResult> chaos_case_results(const RunView& run, const std::string& tag);

}  // namespace axon_bench
