#include "throughput/throughput.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline/baselines.hpp"
#include "harness/cli_options.hpp"
#include "harness/payload.hpp"
#include "harness/progress.hpp"
#include "harness/wait.hpp"
#include "results/table.hpp"
#include "throughput/throughput_cases.hpp"

namespace axon_bench {
namespace {

/// Room the publisher's pool may take per case: the queue depth shrinks for
/// large payloads so that depth x payload stays about this size.
constexpr std::uint64_t kPoolBudgetBytes = 256ULL << 20;

struct ThroughputOptions {
  std::vector<std::uint64_t> sizes = default_payload_sizes();
  std::vector<std::uint32_t> subscribers = {1, 4};
  double duration_s = 2;
  std::uint64_t warmup = 1000;
  std::uint32_t depth = 64;
  bool touch = false;
  std::string wait = "auto";
  std::uint32_t sleep_us = 100;
  std::vector<int> cpus;
};

std::uint32_t depth_for(const ThroughputOptions& options, std::uint64_t payload_bytes) {
  const std::uint64_t fits = kPoolBudgetBytes / payload_bytes;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(std::min<std::uint64_t>(fits, options.depth), 4, 256));
}

/// --cpus, or by default: each process its own CPU when there are enough,
/// else none pinned (the scheduler spreads them).
std::vector<int> cpus_for(const ThroughputOptions& options, std::uint32_t subscribers) {
  if (!options.cpus.empty()) {
    std::vector<int> cpus;
    for (std::uint32_t i = 0; i <= subscribers; ++i) {
      cpus.push_back(i == 0 ? options.cpus[0]
                            : options.cpus[1 + (i - 1) % std::max<std::size_t>(1, options.cpus.size() - 1)]);
    }
    return cpus;
  }
  if (static_cast<int>(subscribers) + 1 <= online_cpu_count()) {
    std::vector<int> cpus;
    for (std::uint32_t i = 0; i <= subscribers; ++i) {
      cpus.push_back(static_cast<int>(i));
    }
    return cpus;
  }
  return {};
}

/// --wait for a case with `subscribers`; auto: busy-poll when every process
/// has a CPU of its own, else yield.
BenchWait wait_for(const ThroughputOptions& options, std::uint32_t subscribers) {
  if (options.wait == "auto") {
    const bool fits = static_cast<int>(subscribers) + 1 <= online_cpu_count();
    return parse_wait(fits ? "busy-poll" : "yield", options.sleep_us);
  }
  return parse_wait(options.wait, options.sleep_us);
}

std::string received_text(const CaseResult& r) {
  std::string text;
  for (std::size_t i = 0; i < r.received_per_subscriber.size(); ++i) {
    text += i == 0 ? "" : "/";
    text += std::to_string(r.received_per_subscriber[i]);
  }
  return text;
}

std::string cpu_text(const CaseResult& r) {
  std::string text;
  for (std::size_t i = 0; i < r.cpu_percent_per_process.size(); ++i) {
    text += i == 0 ? "" : i == 1 ? " | " : "/";
    text += format("%.0f", r.cpu_percent_per_process[i]);
  }
  return text;
}

void print_throughput_table(std::FILE* out, const std::vector<CaseResult>& cases) {
  Table table({"payload", "subs", "wait", "msgs/s", "MB/s", "memcpy MB/s", "x memcpy", "sent", "received per sub",
               "lost", "cpu% pub | subs"});
  for (const auto& r : cases) {
    const double memcpy_mb = r.ratio_to_memcpy && *r.ratio_to_memcpy > 0 ? *r.mb_per_s / *r.ratio_to_memcpy : 0.0;
    table.add_row({format_bytes(r.payload_bytes), std::to_string(r.subscribers.value_or(0)), r.wait_strategy,
                   format("%.0f", r.msgs_per_s.value_or(0)), format("%.0f", r.mb_per_s.value_or(0)),
                   format("%.0f", memcpy_mb), r.ratio_to_memcpy ? format("%.3g", *r.ratio_to_memcpy) : "-",
                   std::to_string(r.messages), received_text(r), std::to_string(r.lost.value_or(0)), cpu_text(r)});
  }
  std::fprintf(out,
               "one publisher to N subscriber processes, lossless (kBlockPublisher); msgs/s = messages delivered to "
               "every subscriber per second; x memcpy = MB/s / memcpy MB/s of the same size in this run\n");
  table.print(out);
}

void run_throughput_command(const ThroughputOptions& options, Output& out) {
  for (const auto bytes : options.sizes) {
    require_payload_size(bytes, "--sizes");
  }
  for (const auto n : options.subscribers) {
    if (n == 0 || n > kMaxThroughputSubscribers) {
      throw std::invalid_argument("--subscribers: 1 to " + std::to_string(kMaxThroughputSubscribers) + " each");
    }
  }
  if (options.duration_s <= 0) {
    throw std::invalid_argument("--duration must be > 0");
  }
  const int memcpy_cpu = options.cpus.empty() ? (online_cpu_count() >= 2 ? 0 : -1) : options.cpus[0];
  std::fprintf(out.text, "memcpy bandwidth on CPU %d (the same-run baseline)\n", memcpy_cpu);
  const std::vector<CaseResult> copies = measure_memcpy(options.sizes, memcpy_cpu);
  print_memcpy_table(out.text, copies);
  std::fprintf(out.text, "\n");

  std::vector<CaseResult> results;
  std::size_t index = 0;
  for (const auto n : options.subscribers) {
    for (std::size_t k = 0; k < options.sizes.size(); ++k) {
      ThroughputCase c;
      c.payload_bytes = options.sizes[k];
      c.subscribers = n;
      c.duration_s = options.duration_s;
      c.warmup = options.warmup;
      c.depth = depth_for(options, c.payload_bytes);
      c.touch = options.touch;
      c.wait = wait_for(options, n);
      c.cpus = cpus_for(options, n);
      c.domain_id = domain_for_case(index++);
      CaseResult result = run_throughput_case(c);
      const double memcpy_mb = copies[k].mb_per_s.value_or(0);
      result.ratio_to_memcpy = memcpy_mb > 0 ? *result.mb_per_s / memcpy_mb : 0.0;
      if (!quiet()) {
        std::fprintf(stderr, "  %s x%u: %.0f msgs/s, %.0f MB/s (%.3gx memcpy), lost %llu\n",
                     format_bytes(c.payload_bytes).c_str(), n, *result.msgs_per_s, *result.mb_per_s,
                     *result.ratio_to_memcpy, static_cast<unsigned long long>(result.lost.value_or(0)));
      }
      if (c.cpus.empty()) {
        const std::string note = "throughput x" + std::to_string(n) + ": " + std::to_string(n + 1) + " processes on " +
                                 std::to_string(online_cpu_count()) + " CPUs: not pinned, subscribers wait with " +
                                 (c.wait.executor ? "an executor, " + c.wait.name() : c.wait.name());
        out.note_once(note);
      }
      results.push_back(result);
    }
  }
  print_throughput_table(out.text, results);
  out.record(copies, results);
  out.print_notes();
}

}  // namespace

Command add_throughput_command(CLI::App& app) {
  auto options = std::make_shared<ThroughputOptions>();
  CLI::App* cmd = add_measuring_command(app, "throughput");
  add_size_list_option(*cmd, "--sizes", options->sizes, kPayloadSizesHelp);
  cmd->add_option("--subscribers", options->subscribers,
                  "Subscriber process counts, comma-separated (each is a case), 1 to 32")
      ->delimiter(',')
      ->capture_default_str();
  add_checked_option(*cmd, "--duration", options->duration_s, "Seconds measured per case, after the warm-up",
                     CLI::PositiveNumber);
  cmd->add_option("--warmup", options->warmup, "Messages sent first in each case and not counted")
      ->capture_default_str();
  add_checked_option(*cmd, "--depth", options->depth,
                     "Queue depth of each subscriber (lowered for large payloads so the publisher's pool stays "
                     "within 256 MiB; at least 4)",
                     CLI::Range(1, 256));
  cmd->add_flag("--touch", options->touch,
                "Write every payload byte on send and read every byte on receipt (default: only a 16-byte index: "
                "zero copy)");
  add_checked_option(
      *cmd, "--wait", options->wait,
      "What an idle subscriber does. Polling take(): busy-poll, yield (sched_yield), sleep (--sleep-us); "
      "auto: busy-poll when every process has a CPU of its own, else yield. Or a SingleThreadedExecutor "
      "runs a callback per message with the library's wait strategy: busy-spin, spin-yield-sleep "
      "(the library's default budgets), blocking (futex)",
      CLI::IsMember({"auto", "busy-poll", "yield", "sleep", "busy-spin", "spin-yield-sleep", "blocking"}));
  cmd->add_option("--sleep-us", options->sleep_us, "Sleep of --wait sleep, in microseconds")->capture_default_str();
  cmd->add_option("--cpus", options->cpus,
                  "CPUs: the publisher's, then the subscribers' (used round-robin), e.g. 0,1,2 (default: one CPU "
                  "per process when there are enough, else none pinned; -1 = not pinned)")
      ->delimiter(',');
  cmd->description(
      "Throughput of one publisher process to N subscriber processes through shared memory, lossless "
      "(SubscriberQos::overflow = kBlockPublisher), per payload size and subscriber count, next to the memcpy "
      "bandwidth measured first in the same run.");
  return {cmd, [options](Output& out) { run_throughput_command(*options, out); }};
}

}  // namespace axon_bench
