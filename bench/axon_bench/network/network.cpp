#include "network/network.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cli_options.hpp"
#include "harness/payload.hpp"
#include "harness/progress.hpp"
#include "harness/wait.hpp"
#include "network/network_cases.hpp"
#include "network/network_config.hpp"
#include "results/table.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon_bench {
namespace {

/// Round trips per size when --samples is not given: fewer from 1 MiB up,
/// where each takes milliseconds.
constexpr std::uint64_t kSmallSamples = 10'000;
constexpr std::uint64_t kLargeSamples = 1'000;
constexpr std::uint64_t kLargeBytes = 1 << 20;

struct NetworkOptions {
  std::vector<std::uint64_t> sizes = {64, 2048, 65536, 1048576};
  std::vector<std::uint64_t> throughput_sizes = {1048576};
  std::uint64_t samples = 0;
  double duration_s = 3;
  std::uint32_t window = 0;  ///< 0: what the receive buffer holds without loss.
  std::uint64_t socket_buffer_bytes = 8U << 20U;
  std::vector<int> cpus;
  std::string only = "both";
  std::string reliability = "best-effort";
  std::string discovery = "multicast";
  std::string axon_wait = "blocking";
  std::uint32_t receive_poll_us = 0;
  bool auth = false;      ///< axon's datagrams authenticated (udp.security.key_file).
  bool encrypt = false;   ///< ... and encrypted (udp.security.encrypt); implies auth.
  std::string link_rate;  ///< tc rate of both hosts' links ("1gbit"); empty: unlimited (memory's speed).
  std::int64_t axon_spin_us = axon::WaitStrategy::spin_yield_sleep().spin_ns() / 1000;
  std::int64_t axon_yield_us = axon::WaitStrategy::spin_yield_sleep().yield_ns() / 1000;
};

std::string ratio_text(const std::optional<double>& ratio) { return ratio ? format("%.2fx", *ratio) : "-"; }

void print_pingpong_table(std::FILE* out, const std::vector<CaseResult>& cases) {
  Table table({"payload", "path", "round trips", "p50 us", "p99 us", "p99.9 us", "max us", "x raw p50", "cpu% a | b"});
  for (const auto& r : cases) {
    // Stored one-way (like every pingpong); shown as the round trips measured.
    const LatencySummary rt = r.latency.scaled(2.0);
    table.add_row({format_bytes(r.payload_bytes), r.transport == "udp" ? "axon udp" : "raw udp",
                   std::to_string(rt.samples), format_us(rt.p50_ns), format_us(rt.p99_ns), format_us(rt.p999_ns),
                   format_us(rt.max_ns), r.transport == "udp" ? ratio_text(r.ratio_to_raw_udp) : "1",
                   format("%.0f | %.0f", r.cpu_percent_sender.value_or(0), r.cpu_percent_receiver.value_or(0))});
  }
  std::fprintf(out, "round-trip latency over the veth pair (one message in flight)\n");
  table.print(out);
}

void print_throughput_table(std::FILE* out, const std::vector<CaseResult>& cases) {
  Table table({"payload", "path", "messages", "msgs/s", "MB/s", "lost", "x raw", "cpu% snd | rcv"});
  for (const auto& r : cases) {
    table.add_row({format_bytes(r.payload_bytes), r.transport == "udp" ? "axon udp (reliable)" : "raw udp (windowed)",
                   std::to_string(r.messages), format("%.0f", r.msgs_per_s.value_or(0)),
                   format("%.0f", r.mb_per_s.value_or(0)), std::to_string(r.lost.value_or(0)),
                   r.transport == "udp" ? ratio_text(r.ratio_to_raw_udp) : "1",
                   format("%.0f | %.0f", r.cpu_percent_sender.value_or(0), r.cpu_percent_receiver.value_or(0))});
  }
  std::fprintf(out, "\nthroughput host 0 -> host 1, messages complete at the receiver\n");
  table.print(out);
}

/// Prints how the targets came out (2 KiB median within 1.3x of raw,
/// 1 MiB throughput at least 80 % of raw).
void print_targets(std::FILE* out, const std::vector<CaseResult>& pingpongs, const std::vector<CaseResult>& streams) {
  for (const auto& r : pingpongs) {
    if (r.transport == "udp" && r.payload_bytes == 2048 && r.ratio_to_raw_udp) {
      std::fprintf(out, "target 2 KiB median <= 1.3x raw: %.2fx (%s)\n", *r.ratio_to_raw_udp,
                   *r.ratio_to_raw_udp <= 1.3 ? "met" : "NOT met");
    }
  }
  for (const auto& r : streams) {
    if (r.transport == "udp" && r.payload_bytes == kLargeBytes && r.ratio_to_raw_udp) {
      std::fprintf(out, "target 1 MiB throughput >= 80%% of raw: %.0f%% (%s)\n", *r.ratio_to_raw_udp * 100,
                   *r.ratio_to_raw_udp >= 0.8 ? "met" : "NOT met");
    }
  }
}

/// One case of this command (attempt_case(), harness/command.hpp).
template <class Measure>
auto attempt(Output& out, const std::string& what, Measure measure) {
  return attempt_case(out, "network", what, measure);
}

void run_network_command(const NetworkOptions& o, Output& out) {
  for (const auto& [option, sizes] :
       {std::pair{"--sizes", &o.sizes}, std::pair{"--throughput-sizes", &o.throughput_sizes}}) {
    for (const auto bytes : *sizes) {
      require_payload_size(bytes, option);
    }
  }
  if (const std::string why = axon::test::VirtualHosts::unavailable_reason(); !why.empty()) {
    throw std::runtime_error("network: cannot create the two virtual hosts: " + why);
  }
  auto hosts = axon::test::VirtualHosts::create({.hosts = 2, .topology = axon::test::Topology::kVethPair});
  if (!hosts) {
    throw std::runtime_error(std::string(hosts.error().message()));
  }
  for (std::size_t k = 0; k < hosts->size() && !o.link_rate.empty(); ++k) {
    if (auto limited = hosts->limit_rate(k, o.link_rate); !limited) {
      throw std::runtime_error("network: --link-rate " + o.link_rate + ": " + std::string(limited.error().message()));
    }
  }
  const axon::test::TempDir dir("axon-bench-network");
  const std::vector<std::string> addresses{hosts->host(0).address, hosts->host(1).address};
  const bool raw = o.only != "axon";
  const bool axon = o.only != "raw";
  NetworkCase base;
  base.hosts = &*hosts;
  base.cpus = choose_cpu_pair(o.cpus);
  base.socket_buffer_bytes = static_cast<std::uint32_t>(o.socket_buffer_bytes);
  base.duration_s = o.duration_s;
  base.wait = parse_wait(o.axon_wait, 0, o.axon_spin_us * 1000, o.axon_yield_us * 1000).strategy;
  base.receive_poll_ns = std::int64_t{o.receive_poll_us} * 1000;
  out.log.run.cpus = base.cpus;
  out.log.run.notes.push_back("network: two network namespaces joined by one veth pair (MTU 1500" +
                              (o.link_rate.empty() ? std::string() : ", each end sending at most " + o.link_rate) +
                              "), " + hosts->host(0).address + " <-> " + hosts->host(1).address +
                              "; raw udp = sockets with 64 B header + 1408 B fragments, sendmmsg/recvmmsg; axon " +
                              o.discovery + " discovery, ping/pong topics " + o.reliability +
                              ", stream topic reliable, axon receivers wait " + executor_wait_name(base.wait) +
                              (o.receive_poll_us == 0 ? std::string("; receive threads block")
                                                      : "; receive threads poll " + std::to_string(o.receive_poll_us) +
                                                            " us after data (raw: before each blocking recvmmsg)") +
                              (o.encrypt ? "; axon datagrams encrypted (udp.security.encrypt, AES-256-GCM envelope)"
                               : o.auth  ? "; axon datagrams authenticated (udp.security, AES-256-GCM envelope)"
                                         : ""));
  std::fprintf(out.text, "%s\n\n", out.log.run.notes.back().c_str());

  NetworkConfig config{.pingpong_reliability = o.reliability == "reliable" ? "reliable" : "best_effort",
                       .static_peers = o.discovery == "static",
                       .socket_buffer_bytes = base.socket_buffer_bytes,
                       .receive_poll_us = o.receive_poll_us,
                       .key_file = o.auth || o.encrypt ? write_network_key(dir.path()) : std::string(),
                       .encrypt = o.encrypt};
  std::vector<CaseResult> pingpongs;
  std::size_t index = 0;
  for (const auto bytes : o.sizes) {
    NetworkCase c = base;
    c.payload_bytes = bytes;
    c.samples = o.samples != 0 ? o.samples : bytes >= kLargeBytes ? kLargeSamples : kSmallSamples;
    c.warmup = std::max<std::uint64_t>(c.samples / 10, 10);
    std::optional<CaseResult> baseline;
    if (raw) {
      baseline =
          attempt(out, "raw udp " + format_bytes(bytes) + " pingpong", [&] { return measure_raw_udp_pingpong(c); });
    }
    if (baseline) {
      pingpongs.push_back(*baseline);
    }
    if (axon) {
      config.domain = domain_for_case(index++);
      config.payload_bytes = bytes;
      c.config_path = write_network_config(addresses, config, dir.path());
      if (auto r =
              attempt(out, "axon udp " + format_bytes(bytes) + " pingpong", [&] { return measure_axon_pingpong(c); })) {
        if (baseline && baseline->latency.p50_ns > 0) {
          r->ratio_to_raw_udp = r->latency.p50_ns / baseline->latency.p50_ns;
        }
        pingpongs.push_back(*r);
      }
    }
  }
  std::vector<CaseResult> streams;
  for (const auto bytes : o.throughput_sizes) {
    NetworkCase c = base;
    c.payload_bytes = bytes;
    c.warmup = 20;
    // A datagram takes about twice its size of receive buffer (sk_buff overhead).
    c.window = o.window != 0
                   ? o.window
                   : static_cast<std::uint32_t>(std::max<std::uint64_t>(1, o.socket_buffer_bytes / (2 * bytes)));
    std::optional<CaseResult> baseline;
    if (raw) {
      baseline =
          attempt(out, "raw udp " + format_bytes(bytes) + " throughput", [&] { return measure_raw_udp_throughput(c); });
    }
    if (baseline) {
      streams.push_back(*baseline);
    }
    if (axon) {
      config.domain = domain_for_case(index++);
      config.payload_bytes = bytes;
      c.config_path = write_network_config(addresses, config, dir.path());
      if (auto r = attempt(out, "axon udp " + format_bytes(bytes) + " throughput",
                           [&] { return measure_axon_throughput(c); })) {
        if (baseline && baseline->msgs_per_s.value_or(0) > 0) {
          r->ratio_to_raw_udp = r->msgs_per_s.value_or(0) / *baseline->msgs_per_s;
        }
        streams.push_back(*r);
      }
    }
  }
  std::fprintf(out.text, "\n");
  print_pingpong_table(out.text, pingpongs);
  print_throughput_table(out.text, streams);
  print_targets(out.text, pingpongs, streams);
  out.record(pingpongs);
  out.record(streams);
  if (std::string left = hosts->destroy(); !left.empty()) {
    std::fprintf(stderr, "axon-bench network: %s\n", left.c_str());
  }
}

}  // namespace

Command add_network_command(CLI::App& app) {
  auto options = std::make_shared<NetworkOptions>();
  CLI::App* cmd = add_measuring_command(
      app, "network",
      "axon's UDP transport between two virtual hosts (network namespaces joined by a veth pair; needs root), next "
      "to raw UDP sockets measured in the same run over the same pair: round-trip latency per size, and "
      "throughput.");
  add_size_list_option(*cmd, "--sizes", options->sizes, "Ping-pong payload sizes, powers of two (64,2KiB,64KiB,1MiB)");
  add_size_list_option(*cmd, "--throughput-sizes", options->throughput_sizes, "Throughput payload sizes (empty: none)");
  cmd->add_option("--samples", options->samples, "Round trips per size. 0: 10000 below 1 MiB, 1000 from 1 MiB")
      ->capture_default_str();
  cmd->add_option("--duration", options->duration_s, "Seconds measured per throughput case")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--window", options->window,
                  "Raw throughput: messages in flight before an acknowledgement (0: as many as half the socket "
                  "buffer holds, at least 1, so the baseline loses nothing)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--socket-buffer", options->socket_buffer_bytes,
                  "SO_SNDBUF/SO_RCVBUF of the raw sockets and the config's send/receive_buffer_bytes")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  add_cpu_pair_option(*cmd, options->cpus, "The CPUs of host 0's and host 1's process (default 0,1)");
  cmd->add_option("--only", options->only, "raw, axon or both")
      ->check(CLI::IsMember({"raw", "axon", "both"}))
      ->capture_default_str();
  cmd->add_option("--reliability", options->reliability, "QoS of the ping and pong topics")
      ->check(CLI::IsMember({"best-effort", "reliable"}))
      ->capture_default_str();
  cmd->add_option("--axon-wait", options->axon_wait,
                  "How axon's receivers wait in their WaitSet: blocking (futex, like the baseline's blocking "
                  "recvmmsg), spin-yield-sleep or busy-spin (the latter two share each CPU with the node's UDP "
                  "thread)")
      ->check(CLI::IsMember({"blocking", "spin-yield-sleep", "busy-spin"}))
      ->capture_default_str();
  cmd->add_option("--axon-spin-us", options->axon_spin_us, "spin-yield-sleep: microseconds spinning")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--axon-yield-us", options->axon_yield_us, "spin-yield-sleep: microseconds yielding after that")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--receive-poll-us", options->receive_poll_us,
                  "Microseconds receive threads poll before they block: axon's udp.receive_poll_us (its UDP "
                  "thread, after data) and the raw baseline's receiver (before each blocking recvmmsg), so the "
                  "two stay comparable; 0: both block at once")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_flag("--auth", options->auth,
                "Authenticate axon's datagrams: a random key in the config's udp.security.key_file (docs/security.md)");
  cmd->add_flag("--encrypt", options->encrypt,
                "Encrypt axon's datagrams (and authenticate them): udp.security.encrypt with a random key "
                "(docs/security.md)");
  cmd->add_option("--link-rate", options->link_rate,
                  "Both hosts send at most this rate (tc's syntax: 1gbit, 2500mbit; a token bucket on each end of "
                  "the veth pair): a link of a real speed instead of memory's");
  cmd->add_option("--discovery", options->discovery, "How the two hosts find each other")
      ->check(CLI::IsMember({"multicast", "static"}))
      ->capture_default_str();
  return {cmd, [options](Output& out) { run_network_command(*options, out); }};
}

}  // namespace axon_bench
