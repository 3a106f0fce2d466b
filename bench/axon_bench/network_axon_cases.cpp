// axon's side of `axon-bench network`: the same exchanges as the raw UDP
// baseline, through Node/Publisher/Subscriber with a deployment config that
// puts the two nodes on the two hosts (so the UDP transport carries them).
// Receivers wait in a WaitSet: blocking (futex) by default, like the
// baseline's blocking recv; --axon-wait picks another strategy.
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "executor_wait.hpp"
#include "network_cases.hpp"
#include "network_stream.hpp"
#include "pair_runner.hpp"
#include "payload.hpp"
#include "table.hpp"
#include <axon/axon.hpp>

namespace axon_bench {
namespace {

constexpr auto kMessageTimeout = std::chrono::seconds(2);
constexpr auto kConnectTimeout = std::chrono::seconds(20);
constexpr auto kProbePeriod = std::chrono::milliseconds(100);
constexpr std::uint64_t kProbe = ~std::uint64_t{0};  ///< Index of pings sent until the pong side answers.

using Clock = std::chrono::steady_clock;

template <class R>
int fail_with(PairControl& control, int side, const std::string& what, const R& result) {
  return fail(control, side, what + ": " + std::string(result.error().message()));
}

/// The node of worker `side` (bench_ping on host 0, bench_pong on host 1).
axon::Result<std::shared_ptr<axon::Node>> node_on_host(const NetworkCase& c, int side) {
  if (auto entered = c.hosts->enter(static_cast<std::size_t>(side)); !entered) {
    return entered.error();
  }
  axon::NodeOptions options;
  options.config_path = c.config_path;
  return axon::Node::create(side == 0 ? "bench_ping" : "bench_pong", options);
}

/// Loans a chunk, yielding while the pool is exhausted (two cores: a spin
/// would starve the transport's threads that give chunks back).
template <class T>
axon::LoanResult<axon::Loan<T>> loan_yielding(axon::Publisher<T>& pub, const PairControl& control) {
  auto loan = pub.loan();
  while (loan.exhausted() && control.done.load() == 0) {
    std::this_thread::yield();
    loan = pub.loan();
  }
  return loan;
}

template <class T>
axon::PublishResult publish_stamp(axon::Publisher<T>& pub, const PairControl& control, Stamp stamp) {
  auto loan = loan_yielding(pub, control);
  if (loan.exhausted()) {
    return axon::kPoolExhausted;
  }
  if (!loan) {
    return loan.error();
  }
  write_stamp((*loan)->data, stamp);
  return pub.publish(std::move(*loan));
}

/// The next message of `sub`, sleeping in `waits` up to `timeout`; kTimeout
/// when none came.
template <class T>
axon::TakeResult<axon::Sample<T>> take_waiting(axon::Subscriber<T>& sub, axon::WaitSet& waits,
                                               std::chrono::nanoseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    auto sample = sub.take();
    if (!sample.empty()) {
      return sample;
    }
    const auto left = deadline - Clock::now();
    if (left <= std::chrono::nanoseconds(0)) {
      return axon::Error(axon::ErrorCode::kTimeout, "no message in time");
    }
    if (auto waited = waits.wait(left); !waited) {
      return waited.error();
    }
  }
}

template <class T>
int ping_worker(const NetworkCase& c, PairControl& pc, SharedArray<std::int64_t>& round_trips) {
  constexpr int kSide = 0;
  auto node = node_on_host(c, kSide);
  if (!node) {
    return fail_with(pc, kSide, "ping node", node);
  }
  auto pub = (*node)->advertise<T>("axon_bench/net_ping");
  auto sub = (*node)->subscribe<T>("axon_bench/net_pong");
  if (!pub || !sub) {
    return fail(pc, kSide, "advertise/subscribe failed");
  }
  axon::WaitSet waits(c.wait);
  (void)waits.attach(*sub);
  arrive_and_wait(pc);
  // Until discovery connected both ways, pings go nowhere: probe until one comes back.
  for (const auto until = Clock::now() + kConnectTimeout;;) {
    if (Clock::now() > until) {
      return fail(pc, kSide, "no pong within 20 s: did the two hosts discover each other?");
    }
    (void)publish_stamp(**pub, pc, Stamp{.index = kProbe, .time_ns = 0});
    if (auto pong = take_waiting(**sub, waits, kProbePeriod); pong) {
      break;
    }
  }
  const std::uint64_t total = c.warmup + c.samples;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      pc.side[kSide].measure_begin = CpuTimes::now();
    }
    const std::int64_t start = now_ns();
    if (auto status = publish_stamp(**pub, pc, Stamp{.index = i, .time_ns = start}); !status) {
      return fail_with(pc, kSide, "publish ping", status);
    }
    for (;;) {  // late answers to probes are skipped
      auto pong = take_waiting(**sub, waits, kMessageTimeout);
      if (!pong) {
        return fail_with(pc, kSide, "pong " + std::to_string(i), pong);
      }
      if (read_stamp(pong->data).index == i) {
        break;
      }
    }
    if (i >= c.warmup) {
      round_trips[i - c.warmup] = now_ns() - start;
      pc.progress.store(i - c.warmup, std::memory_order_relaxed);  // display only
    }
  }
  pc.side[kSide].measure_end = CpuTimes::now();
  return 0;
}

template <class T>
int pong_worker(const NetworkCase& c, PairControl& pc) {
  constexpr int kSide = 1;
  auto node = node_on_host(c, kSide);
  if (!node) {
    return fail_with(pc, kSide, "pong node", node);
  }
  auto sub = (*node)->subscribe<T>("axon_bench/net_ping");
  auto pub = (*node)->advertise<T>("axon_bench/net_pong");
  if (!pub || !sub) {
    return fail(pc, kSide, "advertise/subscribe failed");
  }
  axon::WaitSet waits(c.wait);
  (void)waits.attach(*sub);
  arrive_and_wait(pc);
  const std::uint64_t total = c.warmup + c.samples;
  for (bool measuring = false;;) {
    auto ping = take_waiting(**sub, waits, measuring ? kMessageTimeout : kConnectTimeout + kMessageTimeout);
    if (!ping) {
      return fail_with(pc, kSide, "ping", ping);
    }
    const Stamp stamp = read_stamp(ping->data);
    if (stamp.index == c.warmup) {
      pc.side[kSide].measure_begin = CpuTimes::now();
    }
    measuring = measuring || stamp.index != kProbe;
    if (auto status = publish_stamp(**pub, pc, stamp); !status) {
      return fail_with(pc, kSide, "publish pong", status);
    }
    if (stamp.index + 1 == total) {
      break;
    }
  }
  pc.side[kSide].measure_end = CpuTimes::now();
  // Stay until the last pong is surely out (the ping side exits on it).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return 0;
}

template <class T>
int stream_publisher(const NetworkCase& c, PairControl& pc) {
  constexpr int kSide = 0;
  auto node = node_on_host(c, kSide);
  if (!node) {
    return fail_with(pc, kSide, "publisher node", node);
  }
  auto pub = (*node)->advertise<T>("axon_bench/net_stream");
  if (!pub) {
    return fail_with(pc, kSide, "advertise", pub);
  }
  arrive_and_wait(pc);
  pc.side[kSide].measure_begin = CpuTimes::now();
  // Acquire pairs with the receiver's release store of `done`.
  for (std::uint64_t i = 0; pc.done.load(std::memory_order_acquire) == 0; ++i) {
    auto status = publish_stamp(**pub, pc, Stamp{.index = i, .time_ns = 0});
    if (status.failed()) {
      return fail_with(pc, kSide, "publish", status);
    }
  }
  pc.side[kSide].measure_end = CpuTimes::now();
  return 0;
}

template <class T>
int stream_subscriber(const NetworkCase& c, PairControl& pc, StreamTally& tally) {
  constexpr int kSide = 1;
  auto node = node_on_host(c, kSide);
  if (!node) {
    return fail_with(pc, kSide, "subscriber node", node);
  }
  auto sub = (*node)->subscribe<T>("axon_bench/net_stream");
  if (!sub) {
    return fail_with(pc, kSide, "subscribe", sub);
  }
  axon::WaitSet waits(c.wait);
  (void)waits.attach(*sub);
  arrive_and_wait(pc);
  StreamCounter counter(c, tally, pc);
  std::uint64_t next = 0;
  for (bool first = true; !counter.finished(); first = false) {
    auto sample = take_waiting(**sub, waits, first ? kConnectTimeout : kMessageTimeout);
    if (!sample) {
      return fail_with(pc, kSide, "take", sample);
    }
    const std::uint64_t index = read_stamp(sample->data).index;
    for (; !first && next < index; ++next) {
      counter.lost();
    }
    next = index + 1;
    counter.delivered();
  }
  return 0;
}

template <class Ping, class Pong>
void run_workers(PairJob& job, PairControl& control, Ping ping, Pong pong) {
  job.worker[0] = std::move(ping);
  job.worker[1] = std::move(pong);
  if (const std::string error = run_pair(job, control); !error.empty()) {
    throw std::runtime_error(job.label + ": " + error);
  }
}

}  // namespace

CaseResult measure_axon_udp_pingpong(const NetworkCase& c) {
  if (!is_supported_payload(c.payload_bytes)) {
    throw std::invalid_argument(std::to_string(c.payload_bytes) + " B: use a power of two from 16 B to 16 MiB");
  }
  SharedArray<std::int64_t> round_trips(c.samples);
  Shared<PairControl> control;
  PairJob job;
  job.label = "axon udp " + format_bytes(c.payload_bytes) + " pingpong";
  job.cpus = c.cpus;
  job.progress_total = c.samples;
  job.timeout = std::chrono::seconds(180);
  with_payload_type(c.payload_bytes, [&]<class T>() {
    run_workers(
        job, *control, [&](PairControl& pc) { return ping_worker<T>(c, pc, round_trips); },
        [&](PairControl& pc) { return pong_worker<T>(c, pc); });
  });
  CaseResult result = pingpong_result(c, {round_trips.data(), round_trips.size()}, *control);
  result.transport = "udp";
  result.wait_strategy = executor_wait_name(c.wait);
  return result;
}

CaseResult measure_axon_udp_throughput(const NetworkCase& c) {
  if (!is_supported_payload(c.payload_bytes)) {
    throw std::invalid_argument(std::to_string(c.payload_bytes) + " B: use a power of two from 16 B to 16 MiB");
  }
  Shared<PairControl> control;
  Shared<StreamTally> tally;
  PairJob job;
  job.label = "axon udp " + format_bytes(c.payload_bytes) + " throughput";
  job.cpus = c.cpus;
  job.timeout = std::chrono::seconds(180);
  with_payload_type(c.payload_bytes, [&]<class T>() {
    run_workers(
        job, *control, [&](PairControl& pc) { return stream_publisher<T>(c, pc); },
        [&](PairControl& pc) { return stream_subscriber<T>(c, pc, *tally); });
  });
  CaseResult result = stream_result(c, *tally, *control);
  result.transport = "udp";
  result.wait_strategy = executor_wait_name(c.wait);
  return result;
}

}  // namespace axon_bench
