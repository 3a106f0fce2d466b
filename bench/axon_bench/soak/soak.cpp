#include "soak/soak.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cli_options.hpp"
#include "results/table.hpp"
#include "scenario/scenario_config.hpp"
#include "scenario/scenario_run.hpp"
#include "soak/duration_text.hpp"
#include "soak/soak_result.hpp"

#ifndef AXON_BENCH_URBAN_SCENARIO
#define AXON_BENCH_URBAN_SCENARIO "bench/scenarios/urban.yaml"
#endif

namespace axon_bench {
namespace {

/// How long each node may take to hand over its pool in a sample: a node
/// busy for longer is counted unreadable for that sample.
constexpr std::int64_t kPoolPatienceNs = 200'000'000;

struct SoakOptions {
  std::string scenario = AXON_BENCH_URBAN_SCENARIO;
  std::string duration = "5m";
  double interval_s = 1;
  std::string window;  ///< Empty: 10 min, or a fifth of a run shorter than 30 min.
  std::string warmup;  ///< Empty: a tenth of the run, at least 60 s, at most a quarter of the run.
  std::optional<std::uint32_t> domain;
  std::string json_path;
  std::string html_path;
};

double seconds_of(const std::string& text, const char* option) {
  const auto s = parse_duration_s(text);
  if (!s) {
    throw std::invalid_argument(std::string(option) + " '" + text +
                                "' is not a duration: give seconds, or a number with s, m or h (90, 5m, 2h)");
  }
  return *s;
}

/// The parent's side of the run: samples every `interval` from the measured
/// start to its end, while the components run.
class SoakWatch {
 public:
  SoakWatch(const ScenarioPlan& plan, double interval_s, SoakSeriesSet& set)
      : plan_(plan),
        interval_ns_(static_cast<std::int64_t>(interval_s * 1e9)),
        set_(set),
        sampler_(plan.domain_id, kPoolPatienceNs) {
    processes_.reserve(plan.scenario.components.size() + 1);
    processes_.push_back({"axon-bench", static_cast<int>(::getpid())});
    for (const auto& c : plan.scenario.components) {
      processes_.push_back({c.name, 0});
    }
  }

  ScenarioWatch watch() {
    return {.started = [this](std::size_t index, int pid) { processes_[index + 1].pid = pid; },
            .tick = [this](std::int64_t start_ns) { tick(start_ns); }};
  }
  [[nodiscard]] const std::vector<SoakProcess>& processes() const noexcept { return processes_; }
  [[nodiscard]] const SoakSampler& sampler() const noexcept { return sampler_; }

 private:
  void tick(std::int64_t start_ns) {
    if (start_ns == 0) {
      return;
    }
    const ScenarioTimes times = ScenarioTimes::from(plan_.scenario, start_ns);
    const std::int64_t now = now_ns();
    const std::int64_t due = times.window_begin_ns + next_ * interval_ns_;
    if (now < due || now >= times.window_end_ns) {
      return;
    }
    sampler_.sample(set_, static_cast<double>(now - times.window_begin_ns) / 1e9, processes_);
    // A sample that took longer than the interval skips the samples it overran rather than bunching them.
    next_ = std::max(next_ + 1, (now_ns() - times.window_begin_ns) / interval_ns_ + 1);
  }

  const ScenarioPlan& plan_;
  std::int64_t interval_ns_;
  std::int64_t next_ = 0;
  SoakSeriesSet& set_;
  SoakSampler sampler_;
  std::vector<SoakProcess> processes_;
};

SoakVerdict judge_windows(const std::vector<WindowPercentiles>& windows, const SoakResult& result) {
  std::vector<double> p99;
  std::vector<std::uint64_t> messages;
  for (const auto& w : windows) {
    p99.push_back(w.count > 0 ? w.p99_ns : std::nan(""));
    messages.push_back(w.count);
  }
  return judge_latency(p99, messages, result.window_s, result.bounds);
}

/// Each subscribed topic's percentiles per window (its subscribers together), and all topics'.
void collect_latency(const ScenarioPlan& plan, const ScenarioShared& shared, SoakResult& result) {
  const Scenario& s = plan.scenario;
  result.overall.topic = "all topics";
  for (std::size_t w = 0; w < plan.latency_windows; ++w) {
    std::vector<const WindowLatency*> all;
    for (std::size_t k = 0; k < plan.subscriptions.size(); ++k) {
      all.push_back(&shared.window_latencies[k * plan.latency_windows + w]);
    }
    result.overall.windows.push_back(window_percentiles(all));
  }
  for (std::size_t t = 0; t < s.topics.size(); ++t) {
    if (s.topics[t].subscribers.empty()) {
      continue;
    }
    SoakTopicLatency topic{s.topics[t].name, {}, {}};
    for (std::size_t w = 0; w < plan.latency_windows; ++w) {
      std::vector<const WindowLatency*> of_topic;
      for (std::size_t k = 0; k < plan.subscriptions.size(); ++k) {
        if (plan.subscriptions[k].topic == static_cast<int>(t)) {
          of_topic.push_back(&shared.window_latencies[k * plan.latency_windows + w]);
        }
      }
      topic.windows.push_back(window_percentiles(of_topic));
    }
    topic.verdict = judge_windows(topic.windows, result);
    result.topics.push_back(std::move(topic));
  }
  result.overall.verdict = judge_windows(result.overall.windows, result);
}

void print_result(std::FILE* out, const SoakResult& r) {
  Table table({"series", "verdict", "figures"});
  for (const SoakSeries& s : r.series->series()) {
    table.add_row({s.name(), verdict_word(s.verdict), s.verdict.figures});
  }
  for (const SoakTopicLatency* t : r.latencies()) {
    table.add_row({"latency " + t->topic, verdict_word(t->verdict), t->verdict.figures});
  }
  std::fprintf(out,
               "\nverdicts after the %.0f s warm-up (reference: the window %.0f-%.0f s; bounds in "
               "docs/reliability.md, \"Soak\")\n",
               r.bounds.warmup_s, r.bounds.warmup_s, r.bounds.warmup_s + r.bounds.reference_s);
  table.print(out);
  Table latency({"window", "messages", "p50", "p99", "p99.9", "max"});
  for (std::size_t w = 0; w < r.overall.windows.size(); ++w) {
    const WindowPercentiles& p = r.overall.windows[w];
    latency.add_row(
        {format("%.0f-%.0f s", static_cast<double>(w) * r.window_s, static_cast<double>(w + 1) * r.window_s),
         std::to_string(p.count), format_us(p.p50_ns), format_us(p.p99_ns), format_us(p.p999_ns), format_us(p.max_ns)});
  }
  std::fprintf(out, "\nlatency of all topics per window (microseconds; per topic in the JSON and HTML)\n");
  latency.print(out);
  for (const auto& [what, samples] : r.problems) {
    std::fprintf(out, "note: not read in %llu samples: %s\n", static_cast<unsigned long long>(samples), what.c_str());
  }
  const auto failed = r.failed();
  std::fprintf(out, "\nsoak: %s (%zu series, %zu topics, %zu samples of %zu processes)\n",
               failed.empty() ? "PASS" : "FAIL", r.series->series().size(), r.topics.size(), r.series->count(),
               r.processes.size());
}

void run_soak(const SoakOptions& options, Output& out) {
  const double duration_s = seconds_of(options.duration, "--duration");
  const double window_s =
      options.window.empty() ? (duration_s >= 1800 ? 600 : duration_s / 5) : seconds_of(options.window, "--window");
  const double warmup_s = options.warmup.empty() ? std::min(std::max(0.1 * duration_s, 60.0), duration_s / 4)
                                                 : seconds_of(options.warmup, "--warmup");
  if (warmup_s + 2 * window_s > duration_s + 1e-9) {
    throw std::invalid_argument(
        format("a %.0f s run cannot hold the %.0f s warm-up and two %.0f s windows after it: "
               "give a longer --duration, or a shorter --window or --warmup",
               duration_s, warmup_s, window_s));
  }
  Scenario scenario = load_scenario(options.scenario);
  scenario.duration_s = duration_s;
  const ScenarioPlan plan =
      plan_scenario(std::move(scenario), options.domain, static_cast<std::int64_t>(window_s * 1e9));
  const Scenario& s = plan.scenario;

  SoakResult result;
  result.run = out.log.run;
  result.scenario_file = s.file;
  result.scenario_name = s.name.empty() ? s.file : s.name;
  result.domain_id = plan.domain_id;
  result.duration_s = duration_s;
  result.interval_s = options.interval_s;
  result.window_s = window_s;
  result.bounds.warmup_s = warmup_s;
  result.bounds.reference_s = window_s;

  SoakSeriesSet set(static_cast<std::size_t>(std::ceil(duration_s / options.interval_s)) + 2);
  SoakWatch watch(plan, options.interval_s, set);
  ScenarioShared shared(plan);
  std::fprintf(out.text,
               "soak: scenario '%s' (%zu processes) in domain %u for %.0f s after its %.1f s start; a sample every %g "
               "s, latency windows of %.0f s, judged after a %.0f s warm-up\n",
               result.scenario_name.c_str(), s.components.size(), plan.domain_id, duration_s, s.warmup_s,
               options.interval_s, window_s, warmup_s);
  std::fflush(out.text);
  if (const std::string error = run_scenario_processes(plan, shared, watch.watch()); !error.empty()) {
    remove_domain_files(plan.domain_id);
    throw std::runtime_error("soak: scenario " + s.file + ": " + error);
  }

  result.processes = watch.processes();
  result.series = &set;
  result.problems = watch.sampler().problems();
  for (SoakSeries& series : set.series()) {
    series.verdict = judge_series(series.rule, set.times_s(), set.values_of(series), result.bounds);
  }
  collect_latency(plan, shared, result);
  print_result(out.text, result);
  if (!options.json_path.empty()) {
    if (const std::string error = write_text_file(options.json_path, soak_json(result)); !error.empty()) {
      throw std::runtime_error(error);
    }
  }
  if (!options.html_path.empty()) {
    if (const std::string error = write_text_file(options.html_path, soak_html(result)); !error.empty()) {
      throw std::runtime_error(error);
    }
  }
  std::fflush(out.text);  // the verdicts before the error line
  if (const auto failed = result.failed(); !failed.empty()) {
    std::string names;
    for (const auto& name : failed) {
      names += (names.empty() ? "" : ", ") + name;
    }
    throw std::runtime_error(format("soak FAILED: %zu checks: %s", failed.size(), names.c_str()));
  }
}

}  // namespace

Command add_soak_command(CLI::App& app) {
  auto options = std::make_shared<SoakOptions>();
  CLI::App* cmd = app.add_subcommand("soak");
  cmd->add_option("--scenario", options->scenario, "The scenario file (YAML)")
      ->check(CLI::ExistingFile)
      ->capture_default_str();
  cmd->add_option("--duration", options->duration, "How long to run: seconds, or with a unit: 90s, 5m, 2h")
      ->capture_default_str();
  add_checked_option(*cmd, "--interval", options->interval_s, "Seconds between samples", CLI::Range(0.1, 60.0));
  cmd->add_option("--window", options->window,
                  "Length of the latency windows, also the reference window after the warm-up (default: 10m, or a "
                  "fifth of a run shorter than 30 min)");
  cmd->add_option("--warmup", options->warmup,
                  "Time not judged at the start (default: a tenth of the run, at least 60 s, at most a quarter)");
  cmd->add_option("--domain", options->domain,
                  "The domain the components join (default: one of this run's own); give one no other process uses");
  cmd->add_option("--json", options->json_path, "Write every series, the latency per window and the verdicts to FILE")
      ->type_name("FILE");
  cmd->add_option("--html", options->html_path, "Write the report with a plot of each series to FILE")
      ->type_name("FILE.html");
  cmd->description(
      "Run a scenario for a long time and check that nothing grows: samples every process's memory (RSS), open "
      "file descriptors, mappings (and those of the shm directory) and threads, and the domain's free pool chunks per "
      "class "
      "and registry slots; keeps each topic's latency per window. PASS when, after the warm-up, memory has no "
      "slope beyond the bound, the counts do not settle above their level of the first window, free chunks come back "
      "to "
      "it and no topic's p99 drifts (docs/reliability.md, \"Soak\"). Exit status 1 on FAIL.");
  return {cmd, [options](Output& out) { run_soak(*options, out); }};
}

}  // namespace axon_bench
