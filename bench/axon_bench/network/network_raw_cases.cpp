// The raw UDP baseline of `axon-bench network`: ping-pong and a windowed
// stream between two sockets on the two ends of the veth pair.
#include <atomic>
#include <cerrno>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/pair_runner.hpp"
#include "harness/system.hpp"
#include "network/network_cases.hpp"
#include "network/network_stream.hpp"
#include "network/raw_udp_endpoint.hpp"
#include "results/table.hpp"

namespace axon_bench {
namespace {

constexpr int kReceiveTimeoutMs = 2000;
constexpr std::uint64_t kHello = ~std::uint64_t{0};

/// Worker `side` on its host with an open endpoint towards the other host.
std::string open_on_host(const NetworkCase& c, int side, RawUdpEndpoint& endpoint) {
  if (auto entered = c.hosts->enter(static_cast<std::size_t>(side)); !entered) {
    return "entering host " + std::to_string(side) + ": " + std::string(entered.error().message());
  }
  endpoint.poll_before_blocking(c.receive_poll_ns);
  return endpoint.open(c.hosts->host(side).address, c.hosts->host(1 - side).address, c.port, c.socket_buffer_bytes,
                       kReceiveTimeoutMs);
}

/// After the start barrier: one small exchange, so that neighbour discovery
/// (ARP) is done before the first measured message.
bool greet(RawUdpEndpoint& endpoint, int side) {
  if (side == 1) {
    return endpoint.receive_ack() == kHello && endpoint.send_ack(kHello);
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (endpoint.send_ack(kHello) && endpoint.receive_ack() == kHello) {
      return true;
    }
  }
  return false;
}

std::string receive_error(RawReceive r, std::uint64_t sequence) {
  switch (r) {
    case RawReceive::kTimeout:
      return "message " + std::to_string(sequence) + " incomplete after " + std::to_string(kReceiveTimeoutMs) +
             " ms (a datagram was lost: raise --socket-buffer?)";
    case RawReceive::kWrongDatagram: return "message " + std::to_string(sequence) + ": a datagram out of order";
    default: return "recvmmsg failed";
  }
}

}  // namespace

CaseResult measure_raw_udp_pingpong(const NetworkCase& c) {
  SharedArray<std::int64_t> round_trips(c.samples);
  Shared<PairControl> control;
  const std::uint64_t total = c.warmup + c.samples;
  PairJob job{.label = "raw udp " + format_bytes(c.payload_bytes) + " pingpong",
              .cpus = c.cpus,
              .progress_total = c.samples,
              .timeout = std::chrono::seconds(120)};
  for (int side = 0; side < 2; ++side) {
    job.worker[side] = [&c, &round_trips, side, total](PairControl& pc) -> int {
      RawUdpEndpoint endpoint;
      if (const std::string error = open_on_host(c, side, endpoint); !error.empty()) {
        return fail(pc, side, error);
      }
      std::vector<std::byte> message(c.payload_bytes, std::byte{0x5A});
      arrive_and_wait(pc);
      if (!greet(endpoint, side)) {
        return fail(pc, side, "no answer to the first datagram");
      }
      for (std::uint64_t i = 0; i < total; ++i) {
        if (i == c.warmup) {
          pc.side[side].measure_begin = CpuTimes::now();
        }
        const std::int64_t start = now_ns();
        if (side == 0 && !endpoint.send(i + 1, message.data(), message.size())) {
          return fail(pc, side, "sendmmsg failed: " + error_text(errno));
        }
        if (const RawReceive r = endpoint.receive(i + 1, message.data(), message.size()); r != RawReceive::kComplete) {
          return fail(pc, side, receive_error(r, i + 1));
        }
        if (side == 1 && !endpoint.send(i + 1, message.data(), message.size())) {
          return fail(pc, side, "sendmmsg failed: " + error_text(errno));
        }
        if (side == 0 && i >= c.warmup) {
          round_trips[i - c.warmup] = now_ns() - start;
          pc.progress.store(i - c.warmup, std::memory_order_relaxed);  // display only
        }
      }
      pc.side[side].measure_end = CpuTimes::now();
      return 0;
    };
  }
  run_pair_checked(job, *control, std::nullopt);
  CaseResult result = pingpong_result(c, {round_trips.data(), round_trips.size()}, *control);
  result.transport = "raw-udp";
  result.serializer = "none";
  result.wait_strategy = c.receive_poll_ns > 0 ? "poll-then-blocking-syscall" : "blocking-syscall";
  return result;
}

CaseResult measure_raw_udp_throughput(const NetworkCase& c) {
  Shared<PairControl> control;
  Shared<StreamTally> tally;
  PairJob job{.label = "raw udp " + format_bytes(c.payload_bytes) + " throughput",
              .cpus = c.cpus,
              .timeout = std::chrono::seconds(120)};
  job.worker[0] = [&](PairControl& pc) -> int {
    RawUdpEndpoint endpoint;
    if (const std::string error = open_on_host(c, 0, endpoint); !error.empty()) {
      return fail(pc, 0, error);
    }
    std::vector<std::byte> message(c.payload_bytes, std::byte{0x5A});
    arrive_and_wait(pc);
    if (!greet(endpoint, 0)) {
      return fail(pc, 0, "no answer to the first datagram");
    }
    pc.side[0].measure_begin = CpuTimes::now();
    std::uint64_t acknowledged = 0;
    // Acquire pairs with the receiver's release store of `done`.
    for (std::uint64_t sequence = 1; pc.done.load(std::memory_order_acquire) == 0; ++sequence) {
      while (sequence > acknowledged + c.window && pc.done.load(std::memory_order_acquire) == 0) {
        // A lost message is never acknowledged: after one receive timeout
        // the window moves on without it (the receiver counts it lost).
        const std::uint64_t newest = endpoint.receive_ack();
        acknowledged = newest != 0 ? std::max(acknowledged, newest) : sequence - 1;
      }
      if (!endpoint.send(sequence, message.data(), message.size())) {
        // The receiver counted enough, set `done` and closed its socket: the
        // kernel reports the port unreachable to this connected socket.
        if (errno == ECONNREFUSED && pc.done.load(std::memory_order_acquire) != 0) {
          break;
        }
        return fail(pc, 0, "sendmmsg failed: " + error_text(errno));
      }
    }
    pc.side[0].measure_end = CpuTimes::now();
    return 0;
  };
  job.worker[1] = [&](PairControl& pc) -> int {
    RawUdpEndpoint endpoint;
    if (const std::string error = open_on_host(c, 1, endpoint); !error.empty()) {
      return fail(pc, 1, error);
    }
    std::vector<std::byte> message(c.payload_bytes);
    arrive_and_wait(pc);
    if (!greet(endpoint, 1)) {
      return fail(pc, 1, "no first datagram");
    }
    StreamCounter counter(c, *tally, pc);
    for (std::uint64_t sequence = 1; !counter.finished(); ++sequence) {
      const RawReceive r = endpoint.receive(sequence, message.data(), message.size());
      if (r == RawReceive::kError) {
        return fail(pc, 1, "recvmmsg failed");
      }
      if (r == RawReceive::kComplete) {
        counter.delivered();
        endpoint.send_ack(sequence);
      } else {
        // Lost or out of order: skip to the next message's first fragment.
        counter.lost();
        if (const std::uint64_t next = endpoint.resynchronize(message.data(), message.size()); next != 0) {
          sequence = next - 1;
        }
      }
    }
    return 0;
  };
  run_pair_checked(job, *control, std::nullopt);
  CaseResult result = stream_result(c, *tally, *control);
  result.transport = "raw-udp";
  result.serializer = "none";
  result.wait_strategy = "blocking-syscall";
  return result;
}

}  // namespace axon_bench
