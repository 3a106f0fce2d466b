// axon's side of `axon-bench network`: the same exchanges as the raw UDP
// baseline, through Node/Publisher/Subscriber with a deployment config that
// puts the two nodes on the two hosts (so the UDP transport carries them).
// Receivers wait in a WaitSet: blocking (futex) by default, like the
// baseline's blocking recv; --axon-wait picks another strategy.
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "harness/endpoint_calls.hpp"
#include "harness/pair_runner.hpp"
#include "harness/payload.hpp"
#include "harness/wait.hpp"
#include "harness/worker_setup.hpp"
#include "network/network_cases.hpp"
#include "network/network_stream.hpp"
#include "results/table.hpp"
#include <axon/axon.hpp>

namespace axon_bench {
namespace {

constexpr auto kMessageTimeout = std::chrono::seconds(2);
constexpr auto kConnectTimeout = std::chrono::seconds(20);
constexpr auto kProbePeriod = std::chrono::milliseconds(100);
constexpr std::uint64_t kProbe = ~std::uint64_t{0};  ///< Index of pings sent until the pong side answers.

using Clock = std::chrono::steady_clock;

/// The node of worker `side` (bench_ping on host 0, bench_pong on host 1)
/// with the topics it publishes and subscribes, their QoS from the
/// deployment config. No waiting for the peers: the worker probes until
/// discovery across the hosts has connected them.
template <class T>
axon::Result<workers::Endpoints<T>> endpoints_on_host(const NetworkCase& c, int side, std::string_view publishes,
                                                      std::string_view subscribes) {
  if (c.hosts != nullptr) {
    if (auto entered = c.hosts->enter(static_cast<std::size_t>(side)); !entered) {
      return entered.error();
    }
  }
  axon::NodeOptions options;
  options.config_path = c.config_path;
  options.shm_dir = c.shm_dirs[static_cast<std::size_t>(side)];
  return workers::set_up_worker<T>({.node = side == 0 ? "bench_ping" : "bench_pong",
                                    .options = options,
                                    .publishes = publishes,
                                    .subscribes = subscribes,
                                    .qos = std::nullopt,
                                    .subscribers = 1,
                                    .await_peers = false});
}

/// Loans a chunk, yielding while the pool is exhausted (two cores: a spin
/// would starve the transport's threads that give chunks back), stamps and
/// publishes it.
template <class T>
axon::PublishResult publish_stamp(axon::Publisher<T>& pub, const PairControl& control, Stamp stamp) {
  return workers::publish_stamped(pub, stamp, false, [&] {
    std::this_thread::yield();
    return control.done.load() == 0;
  });
}

/// The next message of `sub`, waiting in `waits` up to `timeout`; kTimeout
/// when none came. Reads no clock of its own: in the Soft-RoCE guest a clock
/// read is an emulated HPET access, and the shared-memory ping-pong this one
/// is compared with (take_spinning()) makes none per take either. (A wait
/// that saw a message take() then did not find would start the timeout again.)
template <class T>
axon::TakeResult<axon::Sample<T>> take_waiting(axon::Subscriber<T>& sub, axon::WaitSet& waits,
                                               std::chrono::nanoseconds timeout) {
  std::optional<axon::Error> failed;
  auto sample = workers::take_waiting(sub, [&] {
    if (auto waited = waits.wait(timeout); !waited) {
      failed = waited.error();
    } else if (waited->timed_out()) {
      failed = axon::Error(axon::ErrorCode::kTimeout, "no message in time");
    }
    return !failed;
  });
  if (failed) {
    return *failed;
  }
  return sample;
}

template <class T>
int ping_worker(const NetworkCase& c, PairControl& pc, SharedArray<std::int64_t>& round_trips) {
  constexpr int kSide = 0;
  auto ends = endpoints_on_host<T>(c, kSide, "axon_bench/net_ping", "axon_bench/net_pong");
  if (!ends) {
    return fail_with(pc, kSide, "ping side", ends);
  }
  auto& pub = ends->pub;
  auto& sub = ends->sub;
  axon::WaitSet waits(c.wait);
  (void)waits.attach(sub);
  arrive_and_wait(pc);
  // Until discovery connected both ways, pings go nowhere: probe until one comes back.
  for (const auto until = Clock::now() + kConnectTimeout;;) {
    if (Clock::now() > until) {
      return fail(pc, kSide, "no pong within 20 s: did the two hosts discover each other?");
    }
    (void)publish_stamp(*pub, pc, Stamp{.index = kProbe, .time_ns = 0});
    if (auto pong = take_waiting(*sub, waits, kProbePeriod); pong) {
      break;
    }
  }
  const std::uint64_t total = c.warmup + c.samples;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      pc.side[kSide].measure_begin = CpuTimes::now();
    }
    const std::int64_t start = now_ns();
    if (auto status = publish_stamp(*pub, pc, Stamp{.index = i, .time_ns = start}); !status) {
      return fail_with(pc, kSide, "publish ping", status);
    }
    for (;;) {  // late answers to probes are skipped
      auto pong = take_waiting(*sub, waits, kMessageTimeout);
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
  auto ends = endpoints_on_host<T>(c, kSide, "axon_bench/net_pong", "axon_bench/net_ping");
  if (!ends) {
    return fail_with(pc, kSide, "pong side", ends);
  }
  auto& pub = ends->pub;
  auto& sub = ends->sub;
  axon::WaitSet waits(c.wait);
  (void)waits.attach(sub);
  arrive_and_wait(pc);
  const std::uint64_t total = c.warmup + c.samples;
  for (bool measuring = false;;) {
    auto ping = take_waiting(*sub, waits, measuring ? kMessageTimeout : kConnectTimeout + kMessageTimeout);
    if (!ping) {
      return fail_with(pc, kSide, "ping", ping);
    }
    const Stamp stamp = read_stamp(ping->data);
    if (stamp.index == c.warmup) {
      pc.side[kSide].measure_begin = CpuTimes::now();
    }
    measuring = measuring || stamp.index != kProbe;
    if (auto status = publish_stamp(*pub, pc, stamp); !status) {
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
  auto ends = endpoints_on_host<T>(c, kSide, "axon_bench/net_stream", "");
  if (!ends) {
    return fail_with(pc, kSide, "publisher", ends);
  }
  auto& pub = ends->pub;
  arrive_and_wait(pc);
  pc.side[kSide].measure_begin = CpuTimes::now();
  // Acquire pairs with the receiver's release store of `done`.
  for (std::uint64_t i = 0; pc.done.load(std::memory_order_acquire) == 0; ++i) {
    auto status = publish_stamp(*pub, pc, Stamp{.index = i, .time_ns = 0});
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
  auto ends = endpoints_on_host<T>(c, kSide, "", "axon_bench/net_stream");
  if (!ends) {
    return fail_with(pc, kSide, "subscriber", ends);
  }
  auto& sub = ends->sub;
  axon::WaitSet waits(c.wait);
  (void)waits.attach(sub);
  arrive_and_wait(pc);
  StreamCounter counter(c, tally, pc);
  std::uint64_t next = 0;
  for (bool first = true; !counter.finished(); first = false) {
    auto sample = take_waiting(*sub, waits, first ? kConnectTimeout : kMessageTimeout);
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
  run_pair_checked(job, control, std::nullopt);
}

}  // namespace

CaseResult measure_axon_pingpong(const NetworkCase& c) {
  require_payload_size(c.payload_bytes, "payload size");
  SharedArray<std::int64_t> round_trips(c.samples);
  Shared<PairControl> control;
  PairJob job{.label = "axon " + c.transport + " " + format_bytes(c.payload_bytes) + " pingpong",
              .cpus = c.cpus,
              .progress_total = c.samples,
              .timeout = std::chrono::seconds(180)};
  with_payload_type(c.payload_bytes, [&]<class T>() {
    run_workers(
        job, *control, [&](PairControl& pc) { return ping_worker<T>(c, pc, round_trips); },
        [&](PairControl& pc) { return pong_worker<T>(c, pc); });
  });
  CaseResult result = pingpong_result(c, {round_trips.data(), round_trips.size()}, *control);
  result.transport = c.transport;
  result.wait_strategy = executor_wait_name(c.wait);
  return result;
}

CaseResult measure_axon_throughput(const NetworkCase& c) {
  require_payload_size(c.payload_bytes, "payload size");
  Shared<PairControl> control;
  Shared<StreamTally> tally;
  PairJob job{.label = "axon " + c.transport + " " + format_bytes(c.payload_bytes) + " throughput",
              .cpus = c.cpus,
              .timeout = std::chrono::seconds(180)};
  with_payload_type(c.payload_bytes, [&]<class T>() {
    run_workers(
        job, *control, [&](PairControl& pc) { return stream_publisher<T>(c, pc); },
        [&](PairControl& pc) { return stream_subscriber<T>(c, pc, *tally); });
  });
  CaseResult result = stream_result(c, *tally, *control);
  result.transport = c.transport;
  result.wait_strategy = executor_wait_name(c.wait);
  return result;
}

}  // namespace axon_bench
