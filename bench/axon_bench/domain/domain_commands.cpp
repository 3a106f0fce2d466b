// `axon-bench idle` and `axon-bench discovery`: what a domain's size costs
// while nothing is published (CPU of every process), how long it takes to
// connect, and how long until the others let go of a process killed with
// SIGKILL. The processes are in domain_worker.cpp.
#include "domain/domain_commands.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "domain/domain_run.hpp"
#include "harness/cli_options.hpp"
#include "harness/process_group.hpp"
#include "results/table.hpp"
#include "stats/stats.hpp"

namespace axon_bench {
namespace {

constexpr std::int64_t kSettleNs = 1'000'000'000;  ///< Idle after connecting, before measuring.

struct DomainOptions {
  std::vector<std::uint32_t> nodes = {8, 32, 60};
  std::uint32_t processes = 20;
  std::vector<std::uint32_t> topics;  ///< Per case; empty: one per node.
  double seconds = 10;
  std::uint32_t liveness_ms = 50;
  int repeat = 1;
};

/// What the parent saw of one run.
struct DomainOutcome {
  std::vector<std::int64_t> connect_ns;  ///< Per process: start to all its endpoints connected.
  std::vector<std::int64_t> detect_ns;   ///< Per survivor linked to the victim: SIGKILL to let go.
  double proc_cpu_percent = 0;           ///< All processes, /proc utime + stime over the window.
  double rusage_cpu_percent = 0;         ///< All processes, their own getrusage over the window.
};

/// Runs one domain; `kill` chooses the discovery run (SIGKILL the last
/// process) over the idle one (measure `seconds`).
DomainOutcome run_domain(const DomainShape& shape, bool kill, double seconds) {
  DomainShared shared(shape);
  shared.control->start_ns.store(now_ns(), std::memory_order_relaxed);
  std::int64_t settle_until = 0;
  std::int64_t measure_until = 0;
  std::int64_t cpu_begin = 0;
  std::int64_t cpu_end = 0;
  std::int64_t window_begin = 0;
  std::int64_t window_end = 0;
  auto cpu_sum = [&] {
    std::int64_t sum = 0;
    for (std::uint32_t p = 0; p < shape.processes; ++p) {
      sum += std::max<std::int64_t>(0, proc_cpu_ns(shared.reports[p].pid));
    }
    return sum;
  };
  ProcessGroupJob job;
  job.label = std::string(kill ? "discovery " : "idle ") + shape.describe();
  job.workers = shape.processes;
  job.body = [&](std::size_t i) {
    return run_domain_worker(shape, shared, static_cast<std::uint32_t>(i), kill && i == victim_of(shape));
  };
  job.error_of = [&](std::size_t i) -> ErrorText& { return shared.reports[i].error; };
  job.name_of = [&](std::size_t i) { return "process " + std::to_string(i); };
  job.tick = [&] {
    DomainControl& control = *shared.control;
    const std::uint32_t phase = control.phase.load(std::memory_order_relaxed);
    const std::int64_t now = now_ns();
    // Acquire pairs with the processes' release increments.
    if (phase == kSettingUp && control.connected.load(std::memory_order_acquire) == shape.processes) {
      if (settle_until == 0) {
        settle_until = now + (kill ? kSettleNs / 2 : kSettleNs);
      } else if (now >= settle_until) {
        cpu_begin = cpu_sum();
        window_begin = now_ns();
        set_domain_phase(control, kMeasuring);
        measure_until = window_begin + static_cast<std::int64_t>(seconds * 1e9);
        if (kill) {
          control.kill_ns.store(now_ns(), std::memory_order_relaxed);
          ::kill(shared.reports[victim_of(shape)].pid, SIGKILL);
          set_domain_phase(control, kKilled);
        }
      }
    } else if (phase == kMeasuring && now >= measure_until) {
      cpu_end = cpu_sum();
      window_end = now_ns();
      set_domain_phase(control, kStopping);
    } else if (phase == kKilled && control.detected.load(std::memory_order_acquire) == shape.processes - 1) {
      set_domain_phase(control, kStopping);
    }
  };
  job.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000) + 300'000);
  if (const std::string error = run_process_group(job); !error.empty()) {
    remove_domain_files(shape.domain_id);
    throw std::runtime_error(job.label + ": " + error);
  }
  DomainOutcome out;
  const std::int64_t start = shared.control->start_ns.load(std::memory_order_relaxed);
  double rusage_percent = 0;
  for (std::uint32_t p = 0; p < shape.processes; ++p) {
    const DomainProcessReport& r = shared.reports[p];
    out.connect_ns.push_back(r.connected_ns - start);
    if (kill && p != victim_of(shape) && r.detected_ns != 0) {
      out.detect_ns.push_back(r.detected_ns - shared.control->kill_ns.load(std::memory_order_relaxed));
    }
    if (!kill) {
      rusage_percent += cpu_percent(r.idle_begin, r.idle_end);
    }
  }
  if (!kill && window_end > window_begin) {
    out.proc_cpu_percent =
        100.0 * static_cast<double>(cpu_end - cpu_begin) / static_cast<double>(window_end - window_begin);
    out.rusage_cpu_percent = rusage_percent;
  }
  return out;
}

CaseResult domain_case(const DomainShape& shape, const std::string& mode) {
  CaseResult r;
  r.benchmark = "domain";
  r.mode = mode;
  r.transport = "shm";
  r.serializer = "none";
  r.wait_strategy = "blocking";
  r.message = shape.describe();
  r.component = shape.describe();
  r.messages = shape.nodes;
  return r;
}

std::vector<DomainShape> shapes_of(const DomainOptions& options) {
  std::vector<DomainShape> shapes;
  for (std::size_t k = 0; k < options.nodes.size(); ++k) {
    DomainShape s;
    s.nodes = options.nodes[k];
    s.processes = std::min(options.processes, s.nodes);
    s.topics = options.topics.empty() ? s.nodes : options.topics[std::min(k, options.topics.size() - 1)];
    s.liveness_ms = options.liveness_ms;
    s.domain_id = domain_for_case(k);
    if (s.nodes == 0 || s.processes < 2) {
      throw std::invalid_argument("a domain benchmark needs at least 2 nodes in 2 processes");
    }
    shapes.push_back(s);
  }
  return shapes;
}

void run_idle(const DomainOptions& options, Output& out) {
  Table table({"domain", "connected in", "cpu % (/proc)", "cpu % (getrusage)", "per node %"});
  for (const DomainShape& shape : shapes_of(options)) {
    for (int rep = 0; rep < options.repeat; ++rep) {
      DomainOutcome o = run_domain(shape, false, options.seconds);
      const std::int64_t connected = *std::max_element(o.connect_ns.begin(), o.connect_ns.end());
      table.add_row({shape.describe(), format("%.2f s", static_cast<double>(connected) / 1e9),
                     format("%.2f", o.proc_cpu_percent), format("%.2f", o.rusage_cpu_percent),
                     format("%.3f", o.rusage_cpu_percent / shape.nodes)});
      CaseResult r = domain_case(shape, "idle");
      r.has_latency = false;
      r.cpu_percent = o.proc_cpu_percent;
      r.cpu_percent_receiver = o.rusage_cpu_percent;
      out.record(std::vector<CaseResult>{r});
    }
  }
  std::fprintf(out.text,
               "\nidle domain: every node's endpoints connected, nothing published; CPU (user + system) of all "
               "processes over %.0f s, 100 = one core (/proc: clock ticks, getrusage: microseconds)\n",
               options.seconds);
  table.print(out.text);
  out.note_once("idle: node i in process i % P, topic t published by node t % N and subscribed by node (t+1) % N");
}

void run_discovery(const DomainOptions& options, Output& out) {
  Table table({"domain", "connected p50", "connected max", "dead detected p50", "dead detected max", "survivors"});
  for (const DomainShape& shape : shapes_of(options)) {
    for (int rep = 0; rep < options.repeat; ++rep) {
      DomainOutcome o = run_domain(shape, true, 0);
      CaseResult connect = domain_case(shape, "discovery");
      connect.latency = summarize(o.connect_ns);
      CaseResult detect = domain_case(shape, "dead-node");
      detect.latency = summarize(o.detect_ns);
      table.add_row({shape.describe(), format("%.3f s", connect.latency.p50_ns / 1e9),
                     format("%.3f s", connect.latency.max_ns / 1e9), format("%.1f ms", detect.latency.p50_ns / 1e6),
                     format("%.1f ms", detect.latency.max_ns / 1e6), std::to_string(o.detect_ns.size())});
      out.record(std::vector<CaseResult>{connect, detect});
    }
  }
  std::fprintf(out.text,
               "\ndiscovery: from the fork of all processes to each process having all its endpoints connected; "
               "dead node: from SIGKILL of the last process to each survivor linked to it seeing its publishers "
               "and subscribers gone (polled every 0.5 ms)\n");
  table.print(out.text);
}

void add_shape_options(CLI::App& cmd, DomainOptions& options) {
  cmd.add_option("--nodes", options.nodes, "Nodes in the domain, one case each")->delimiter(',')->capture_default_str();
  cmd.add_option("--processes", options.processes, "Processes the nodes are spread over (at most one per node)")
      ->capture_default_str();
  cmd.add_option("--topics", options.topics,
                 "Topics per case (default: one per node); each has one publisher and one subscriber in another "
                 "process")
      ->delimiter(',');
  cmd.add_option("--liveness-ms", options.liveness_ms, "NodeOptions::liveness_period_ms")->capture_default_str();
  cmd.add_option("--repeat", options.repeat, "Runs of each case")->capture_default_str();
}

}  // namespace

Command add_idle_command(CLI::App& app) {
  auto options = std::make_shared<DomainOptions>();
  CLI::App* cmd = add_measuring_command(
      app, "idle",
      "CPU of a domain of idle nodes: N nodes in P processes, every endpoint connected, nothing published; "
      "the CPU time of all processes over the window, from /proc and from their own getrusage.");
  add_shape_options(*cmd, *options);
  cmd->add_option("--seconds", options->seconds, "Measured idle time")->capture_default_str();
  return {cmd, [options](Output& out) { run_idle(*options, out); }};
}

Command add_discovery_command(CLI::App& app) {
  auto options = std::make_shared<DomainOptions>();
  options->nodes = {60};
  CLI::App* cmd = add_measuring_command(
      app, "discovery",
      "Discovery and dead-node detection of a domain: N nodes in P processes and T topics; the time from start "
      "until every endpoint is connected, then the time from SIGKILL of one process until every survivor linked "
      "to it has let go of its endpoints.");
  add_shape_options(*cmd, *options);
  return {cmd, [options](Output& out) { run_discovery(*options, out); }};
}

std::string DomainShape::describe() const {
  return std::to_string(nodes) + " nodes / " + std::to_string(processes) + " processes / " + std::to_string(topics) +
         " topics";
}

}  // namespace axon_bench
