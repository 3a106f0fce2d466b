#include "scenario/scenario.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cli_options.hpp"
#include "harness/process_group.hpp"
#include "harness/progress.hpp"
#include "results/table.hpp"
#include "scenario/scenario_config.hpp"
#include "scenario/scenario_run.hpp"

namespace axon_bench {
namespace {

/// The parent starts the components this long after the last one is ready,
/// so all of them are asleep waiting for the same instant.
constexpr std::int64_t kStartDelayNs = 200'000'000;

struct ScenarioOptions {
  std::string file;
  double duration_s = 0;  ///< 0: the file's duration_s (default 60).
  double warmup_s = -1;   ///< <0: the file's warmup_s (default 1).
  std::string wait;       ///< Empty: the file's wait (default blocking).
  std::uint32_t sleep_us = 0;
  /// The domain the components join; std::nullopt: one of this run's own (domain_for_case), which no other
  /// process knows. Given, tools can watch or record the run (`axon record`, `axon monitor`).
  std::optional<std::uint32_t> domain;
  bool check = false;
};

/// Messages of topic `t` due inside the measured window.
std::uint64_t expected_in_window(const ScenarioTopic& t, const ScenarioTimes& times) {
  const std::int64_t first = due_ns(t, times.start_ns, 0);
  const std::int64_t period = period_ns_of(t);
  auto count_before = [&](std::int64_t when) -> std::int64_t {  // messages due before `when`
    return when <= first ? 0 : (when - first + period - 1) / period;
  };
  return static_cast<std::uint64_t>(count_before(times.window_end_ns) - count_before(times.window_begin_ns));
}

std::string names_of(const Scenario& s, const std::vector<int>& topics) {
  std::string text;
  for (const int t : topics) {
    text += text.empty() ? "" : ", ";
    text += s.topics[static_cast<std::size_t>(t)].name;
  }
  return text.empty() ? "-" : text;
}

void print_plan(std::FILE* out, const ScenarioPlan& plan) {
  const Scenario& s = plan.scenario;
  std::fprintf(out, "scenario '%s' (%s): %zu topics, %zu components (one process each)\n",
               s.name.empty() ? "unnamed" : s.name.c_str(), s.file.c_str(), s.topics.size(), s.components.size());
  if (!s.description.empty()) {
    std::fprintf(out, "  %s\n", s.description.c_str());
  }
  Table topics({"topic", "payload", "as", "rate Hz", "MB/s", "depth", "overflow", "publisher", "subscribers"});
  double total_mb = 0;
  for (const auto& t : s.topics) {
    std::string subs;
    for (const int c : t.subscribers) {
      subs += subs.empty() ? "" : ", ";
      subs += s.components[static_cast<std::size_t>(c)].name;
    }
    const double mb = t.rate_hz * static_cast<double>(t.payload_bytes) / 1e6;
    total_mb += mb;
    topics.add_row({t.name, std::to_string(t.configured_bytes) + " B", format_bytes(t.payload_bytes),
                    format("%g", t.rate_hz), format("%.1f", mb), std::to_string(t.depth),
                    t.reliable          ? "reliable"
                    : t.block_publisher ? "block_publisher"
                                        : "reject_newest",
                    s.components[static_cast<std::size_t>(t.publisher)].name, subs.empty() ? "-" : subs});
  }
  topics.print(out);
  std::fprintf(out, "payloads are raw structs of a power-of-two size (column 'as'); %.1f MB/s published in all\n\n",
               total_mb);
  std::fprintf(out, "components:\n");
  for (const auto& c : s.components) {
    std::fprintf(out, "  %s%s\n    publishes:  %s\n    subscribes: %s\n", c.name.c_str(),
                 c.cpu < 0 ? "" : format(" (CPU %d)", c.cpu).c_str(), names_of(s, c.publishes).c_str(),
                 names_of(s, c.subscribes).c_str());
  }
  std::fprintf(out, "\nduration %.1f s after a %.1f s warm-up; idle subscribers: %s\n", s.duration_s, s.warmup_s,
               s.wait_name().c_str());
}

void print_results(std::FILE* out, const std::vector<CaseResult>& topics, const std::vector<CaseResult>& cpus) {
  Table table({"topic -> subscriber", "payload", "rate", "delivered/expected", "lost", "missed", "mean", "p50", "p99",
               "p99.9", "max", "jitter"});
  for (const auto& r : topics) {
    const auto& l = r.latency;
    const std::uint64_t missed = r.expected.value_or(0) - std::min(r.expected.value_or(0), r.published.value_or(0));
    table.add_row({r.label(), format_bytes(r.payload_bytes), format("%g", r.rate_hz),
                   std::to_string(r.delivered.value_or(0)) + "/" + std::to_string(r.expected.value_or(0)),
                   std::to_string(r.lost.value_or(0)), std::to_string(missed),
                   l.samples > 0 ? format_us(l.mean_ns) : "-", l.samples > 0 ? format_us(l.p50_ns) : "-",
                   l.samples > 0 ? format_us(l.p99_ns) : "-", l.samples > 0 ? format_us(l.p999_ns) : "-",
                   l.samples > 0 ? format_us(l.max_ns) : "-", l.samples > 0 ? format_us(l.stddev_ns) : "-"});
  }
  std::fprintf(out,
               "\nper topic and subscriber; latency in microseconds from publish() to the subscriber holding the "
               "sample; jitter = standard deviation; lost = published but not delivered; missed = due but not "
               "published (the publisher was a whole period late)\n");
  table.print(out);
  Table cpu_table({"process", "cpu %"});
  double total = 0;
  for (const auto& r : cpus) {
    cpu_table.add_row({r.component.value_or("?"), format("%.1f", r.cpu_percent.value_or(0))});
    total += r.cpu_percent.value_or(0);
  }
  cpu_table.add_row({"all", format("%.1f", total)});
  std::fprintf(out, "\nCPU (user + system) of each process over the measured window, 100 = one core\n");
  cpu_table.print(out);
}

void run_scenario_command(const ScenarioOptions& options, Output& out) {
  Scenario scenario = load_scenario(options.file);
  if (options.duration_s > 0) {
    scenario.duration_s = options.duration_s;
  }
  if (options.warmup_s >= 0) {
    scenario.warmup_s = options.warmup_s;
  }
  if (!options.wait.empty()) {
    scenario.wait = parse_scenario_wait(options.wait, scenario.wait.sleep_us);
  }
  if (options.sleep_us > 0) {
    scenario.wait.sleep_us = options.sleep_us;
  }
  const ScenarioPlan plan = plan_scenario(std::move(scenario), options.domain);
  const Scenario& s = plan.scenario;
  print_plan(out.text, plan);
  if (options.check) {
    std::fprintf(out.text, "\n%s: valid\n", s.file.c_str());
    return;
  }
  out.log.run.notes.push_back("scenario '" + s.name + "' from " + s.file + ": " + std::to_string(s.components.size()) +
                              " processes on " + std::to_string(online_cpu_count()) +
                              " CPUs; idle subscribers wait with " + s.wait_name() +
                              (s.wait.executor ? " (an axon::SingleThreadedExecutor with WaitStrategy::blocking() per "
                                                 "process, asleep until a message or its next publication)"
                                               : " (polling)") +
                              "; latency from publish()");
  for (const auto& t : s.topics) {
    if (t.subscribers.empty()) {
      std::fprintf(out.text, "note: topic '%s' has no subscriber: it is published but not measured\n", t.name.c_str());
    }
  }

  ScenarioShared shared(plan);
  const double run_s = s.warmup_s + s.duration_s + static_cast<double>(kScenarioGraceNs) / 1e9;
  std::fprintf(out.text, "\nrunning %zu processes for %.1f s ...\n", s.components.size(), run_s);
  std::fflush(out.text);
  if (const std::string error = run_scenario_processes(plan, shared, {}); !error.empty()) {
    remove_domain_files(plan.domain_id);
    throw std::runtime_error("scenario " + s.file + ": " + error);
  }

  const ScenarioTimes times = ScenarioTimes::from(s, shared.control->start_ns.load(std::memory_order_acquire));
  std::vector<CaseResult> topic_results;
  for (std::size_t k = 0; k < plan.subscriptions.size(); ++k) {
    const ScenarioSubscription& sub = plan.subscriptions[k];
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(sub.topic)];
    const SubscriptionReport& sr = shared.subscriptions[k];
    const PublicationReport& pr = shared.publications[static_cast<std::size_t>(sub.topic)];
    CaseResult r;
    r.benchmark = "scenario";
    r.mode = "periodic";
    r.transport = "shm";
    r.wait_strategy = s.wait_name();
    r.payload_bytes = t.payload_bytes;
    r.touch = t.touch;
    r.rate_hz = t.rate_hz;
    r.topic = t.name;
    r.component = s.components[static_cast<std::size_t>(sub.component)].name;
    r.latency = summarize({shared.latencies.data() + sub.latency_offset, static_cast<std::size_t>(sr.recorded)});
    r.expected = expected_in_window(t, times);
    r.published = pr.published;
    r.delivered = sr.delivered;
    r.lost = pr.published - std::min(pr.published, sr.delivered);
    r.dropped = *r.lost;
    r.msgs_per_s = static_cast<double>(sr.delivered) / s.duration_s;
    r.mb_per_s = *r.msgs_per_s * static_cast<double>(t.payload_bytes) / 1e6;
    topic_results.push_back(std::move(r));
  }
  std::vector<CaseResult> cpu_results;
  for (std::size_t c = 0; c < s.components.size(); ++c) {
    const ComponentReport& cr = shared.components[c];
    CaseResult r;
    r.benchmark = "scenario";
    r.mode = "cpu";
    r.transport = "shm";
    r.serializer = "none";
    r.wait_strategy = s.wait_name();
    r.has_latency = false;
    r.component = s.components[c].name;
    r.cpu_percent = cpu_percent(cr.measure_begin, cr.measure_end);
    cpu_results.push_back(std::move(r));
  }
  print_results(out.text, topic_results, cpu_results);
  for (std::size_t i = 0; i < s.topics.size(); ++i) {
    const PublicationReport& pr = shared.publications[i];
    if (pr.loan_failures != 0 || pr.queue_full != 0) {
      std::fprintf(out.text, "note: '%s': %llu sends found no free chunk, %llu deliveries found a full queue\n",
                   s.topics[i].name.c_str(), static_cast<unsigned long long>(pr.loan_failures),
                   static_cast<unsigned long long>(pr.queue_full));
    }
  }
  Table late({"topic", "published", "late mean", "late max"});
  for (std::size_t i = 0; i < s.topics.size(); ++i) {
    const PublicationReport& pr = shared.publications[i];
    late.add_row(
        {s.topics[i].name, std::to_string(pr.published),
         pr.published > 0 ? format_us(static_cast<double>(pr.late_sum_ns) / static_cast<double>(pr.published)) : "-",
         format_us(static_cast<double>(pr.late_max_ns))});
  }
  std::fprintf(out.text, "\npublishers: how late publish() returned after the scheduled time (microseconds)\n");
  late.print(out.text);
  out.print_notes();
  out.record(topic_results, cpu_results);
}

}  // namespace

ScenarioPlan plan_scenario(Scenario scenario, std::optional<std::uint32_t> domain, std::int64_t latency_window_ns) {
  ScenarioPlan plan;
  plan.domain_id = domain.value_or(domain_for_case(0));
  if (latency_window_ns > 0) {
    plan.latency_window_ns = latency_window_ns;
    plan.latency_windows = std::max<std::size_t>(
        1, static_cast<std::size_t>(scenario.duration_s * 1e9 / static_cast<double>(latency_window_ns)));
  }
  for (std::size_t c = 0; c < scenario.components.size(); ++c) {
    for (const int topic : scenario.components[c].subscribes) {
      const ScenarioTopic& t = scenario.topics[static_cast<std::size_t>(topic)];
      ScenarioSubscription sub;
      sub.component = static_cast<int>(c);
      sub.topic = topic;
      sub.latency_offset = plan.latency_slots;
      sub.capacity =
          latency_window_ns > 0 ? 0 : static_cast<std::size_t>(std::ceil(t.rate_hz * scenario.duration_s)) + 16;
      plan.latency_slots += sub.capacity;
      plan.subscriptions.push_back(sub);
    }
  }
  plan.scenario = std::move(scenario);
  return plan;
}

std::string run_scenario_processes(const ScenarioPlan& plan, ScenarioShared& shared, const ScenarioWatch& watch) {
  const Scenario& s = plan.scenario;
  const double run_s = s.warmup_s + s.duration_s + static_cast<double>(kScenarioGraceNs) / 1e9;
  ProcessGroupJob job;
  job.label = "scenario " + (s.name.empty() ? s.file : s.name);
  job.workers = s.components.size();
  job.body = [&](std::size_t index) { return run_scenario_component(plan, shared, index); };
  job.error_of = [&](std::size_t index) -> ErrorText& { return shared.components[index].error; };
  job.name_of = [&](std::size_t index) { return "component '" + s.components[index].name + "'"; };
  job.started = watch.started;
  job.tick = [&] {
    ScenarioControl& control = *shared.control;
    if (control.start_ns.load(std::memory_order_relaxed) == 0 &&
        control.ready.load(std::memory_order_acquire) == s.components.size()) {
      // Release pairs with the components' acquire load.
      control.start_ns.store(now_ns() + kStartDelayNs, std::memory_order_release);
    }
    if (watch.tick) {
      watch.tick(control.start_ns.load(std::memory_order_relaxed));  // relaxed: this thread's own store
    }
  };
  job.progress = [&]() -> std::uint64_t {
    const std::int64_t start = shared.control->start_ns.load(std::memory_order_relaxed);
    const std::int64_t now = now_ns();
    return start == 0 || now < start ? 0 : static_cast<std::uint64_t>((now - start) / 1'000'000'000);
  };
  job.progress_total = static_cast<std::uint64_t>(std::ceil(run_s));
  job.progress_unit = "s";
  job.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(run_s * 1000) + 60'000);
  return run_process_group(job);
}

Command add_scenario_command(CLI::App& app) {
  auto options = std::make_shared<ScenarioOptions>();
  CLI::App* cmd = add_measuring_command(app, "scenario");
  cmd->add_option("file", options->file, "The scenario file (YAML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--duration", options->duration_s, "Seconds measured (default: the file's duration_s, else 60)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", options->warmup_s,
                  "Seconds run first and not counted (default: the file's warmup_s, else 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--wait", options->wait,
                  "What idle processes do between messages (default: the file's wait, else blocking): blocking "
                  "(an axon executor sleeping until a message or the next publication), or polling: busy-poll "
                  "(one core each), yield, sleep (--sleep-us)")
      ->check(CLI::IsMember({"blocking", "busy-poll", "yield", "sleep"}));
  cmd->add_option("--sleep-us", options->sleep_us,
                  "Poll period of --wait sleep (default: the file's sleep_us, else 100)");
  cmd->add_option("--domain", options->domain,
                  "The domain the components join (default: one of this run's own), so that tools can watch or "
                  "record it: axon --domain N record --all ...");
  cmd->add_flag("--check", options->check, "Only read and check the file and print the plan; run nothing");
  cmd->description(
      "Run a scenario file: one process per component, each publishing its topics on their schedules and "
      "taking what it subscribes; reports per topic and subscriber delivered/expected, lost, latency "
      "percentiles and jitter, and the CPU of every process. The file format is in docs/performance.md; "
      "bench/scenarios/urban.yaml is the reference scenario.");
  return {cmd, [options](Output& out) { run_scenario_command(*options, out); }};
}

}  // namespace axon_bench
