#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "baseline/baselines.hpp"
#include "harness/cli_options.hpp"
#include "harness/payload.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

struct BaselineOptions {
  std::vector<int> cpus;
  std::uint64_t samples = 100'000;
  std::uint64_t warmup = 10'000;
  std::uint64_t message_bytes = 64;
  std::vector<std::uint64_t> sizes = default_payload_sizes();
  std::vector<std::string> only = {"cacheline", "futex", "uds", "udp", "memcpy"};
};

void run_baseline_command(const BaselineOptions& options, Output& out) {
  const bool any_ping_pong =
      std::any_of(options.only.begin(), options.only.end(), [](const std::string& name) { return name != "memcpy"; });
  PingPongSetup setup{.cpus = choose_cpu_pair(options.cpus), .samples = options.samples, .warmup = options.warmup};
  out.log.run.cpus = setup.cpus;
  auto wanted = [&](const char* name) {
    return std::find(options.only.begin(), options.only.end(), name) != options.only.end();
  };
  std::vector<CaseResult> ping_pongs;
  if (any_ping_pong) {
    std::fprintf(out.text, "ping-pong baselines between two processes on CPUs %d and %d, %llu round trips each\n",
                 setup.cpus[0], setup.cpus[1], static_cast<unsigned long long>(setup.samples));
  }
  if (wanted("cacheline")) {
    ping_pongs.push_back(measure_cacheline_pingpong(setup));
  }
  if (wanted("futex")) {
    ping_pongs.push_back(measure_futex_pingpong(setup));
  }
  if (wanted("uds")) {
    ping_pongs.push_back(measure_uds_pingpong(setup, options.message_bytes));
  }
  if (wanted("udp")) {
    ping_pongs.push_back(measure_udp_pingpong(setup, options.message_bytes));
  }
  if (wanted("udp-uring")) {
    ping_pongs.push_back(measure_udp_uring_pingpong(setup, options.message_bytes, UringWait::kPoll));
  }
  if (wanted("udp-uring-recv")) {
    ping_pongs.push_back(measure_udp_uring_pingpong(setup, options.message_bytes, UringWait::kReceive));
  }
  if (wanted("udp-handoff")) {
    ping_pongs.push_back(measure_udp_handoff_pingpong(setup, options.message_bytes));
  }
  if (!ping_pongs.empty() && ping_pongs.front().transport == "cacheline") {
    const double raw = ping_pongs.front().latency.p50_ns;
    for (auto& c : ping_pongs) {
      c.ratio_to_raw_p50 = raw > 0 ? c.latency.p50_ns / raw : 0.0;
    }
  }
  if (!ping_pongs.empty()) {
    print_latency_table(out.text, ping_pongs);
    out.record(ping_pongs);
  }
  if (wanted("memcpy")) {
    std::fprintf(out.text, "\nmemcpy on CPU %d (warm caches, the same two buffers each time)\n", setup.cpus[0]);
    const auto copies = measure_memcpy(options.sizes, setup.cpus[0]);
    print_memcpy_table(out.text, copies);
    out.record(copies);
  }
}

}  // namespace

Command add_baseline_command(CLI::App& app) {
  auto options = std::make_shared<BaselineOptions>();
  CLI::App* cmd = add_measuring_command(app, "baseline");
  add_checked_option(
      *cmd, "--only", options->only,
      "Baselines to run, comma-separated: cacheline,futex,uds,udp,memcpy (the default), and "
      "udp-uring, udp-uring-recv, udp-handoff (receive designs: docs/performance.md, \"Across hosts\")",
      CLI::IsMember({"cacheline", "futex", "uds", "udp", "udp-uring", "udp-uring-recv", "udp-handoff", "memcpy"}))
      ->delimiter(',');
  add_cpu_pair_option(*cmd, options->cpus, cpu_pair_help("ping"));
  add_checked_option(*cmd, "--samples", options->samples, "Round trips recorded per ping-pong", CLI::PositiveNumber);
  cmd->add_option("--warmup", options->warmup, "Round trips run first and not recorded")->capture_default_str();
  add_checked_option(*cmd, "--message-bytes", options->message_bytes,
                     "Message size of the socket ping-pongs (uds, udp)",
                     CLI::Range(std::uint64_t{1}, std::uint64_t{65'507}));
  add_size_list_option(*cmd, "--sizes", options->sizes,
                       "Copy sizes of the memcpy baseline, comma-separated, with optional unit (64,2KiB,1MiB)");
  cmd->description(
      "Measure this machine's floors: cache-line, futex, Unix-socket and UDP ping-pong between two processes "
      "(one-way = round trip / 2) and memcpy time per payload size.");
  return {cmd, [options](Output& out) { run_baseline_command(*options, out); }};
}

}  // namespace axon_bench
