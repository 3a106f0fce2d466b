// The two workers of a serializer latency case. Internal to
// serializer_cases.cpp.
//
// The publisher writes the time just before publish() into `starts[index]`,
// a shared mapping outside axon, and then publishes message `index`; the
// subscriber takes the time as soon as take() hands it the sample, finds
// the index in SampleInfo::sequence and subtracts (then checks the index
// in the message itself, outside the measured time). The
// write happens before publish() (a release in axon's ring) and the read
// after take() (the matching acquire), so the subscriber always sees it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/endpoint_calls.hpp"
#include "harness/pair_worker.hpp"
#include "harness/worker_setup.hpp"
#include "latency/messages.hpp"
#include "latency/serializer_cases.hpp"

namespace axon_bench::workers {

inline constexpr std::string_view kSerializerTopic = "axon_bench/serializer";

/// The publisher's one chunk class. FlatBuffers needs 1.5x the message:
/// FlatBufferBuilder grows its reservation by half of what it has (after the
/// 1 MiB point vector, the 24-byte header asks for 1.5 MiB), and axon's chunk
/// allocator can only satisfy that inside the loaned chunk.
inline std::uint32_t publisher_chunk_bytes(const SerializerCase& c) {
  std::size_t bytes = messages::max_bytes(c.kind);
  if (c.format == messages::Format::kFlatBuffers) {
    bytes = bytes * 3 / 2 + 4096;
  }
  return static_cast<std::uint32_t>((bytes + 63) / 64 * 64);
}

/// The worker named `node` of a serializer case: the publisher's pool is
/// 16 chunks of publisher_chunk_bytes() (it keeps reusing its own: the
/// transport's reuse cache takes an eighth of a class); the subscriber
/// verifies FlatBuffers unless --verification never.
inline WorkerSpec serializer_worker(const SerializerCase& c, std::string node, bool publishes) {
  return {.node = std::move(node),
          .options = node_in_domain(
              c.domain_id,
              publishes ? std::vector<axon::ChunkClassConfig>{{.payload_bytes = publisher_chunk_bytes(c), .count = 16}}
                        : std::vector<axon::ChunkClassConfig>{}),
          .publishes = publishes ? kSerializerTopic : "",
          .subscribes = publishes ? "" : kSerializerTopic,
          .qos = axon::SubscriberQos{.depth = 4,
                                     .verification =
                                         c.verify ? axon::Verification::kCrossProcess : axon::Verification::kNever},
          .subscribers = 1};
}

template <messages::Format F, messages::Kind K>
int serializer_publisher(const SerializerCase& c, PairControl& control, SharedArray<std::int64_t>& starts) {
  using Type = typename messages::MessageTraits<F, K>::Type;
  constexpr int kSide = 0;
  auto ends = set_up_worker<Type>(serializer_worker(c, "bench_pub", true));
  if (!ends) {
    return fail(control, kSide, ends.error().message());
  }
  messages::MessageWriter<F, K> writer;
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    wait_for_ack(control, i);  // one message in flight
    // The writer stores the start into the shared slot just before it
    // calls publish(): see the file comment.
    auto status = writer.publish(*ends->pub, i, starts[i]);
    if (!status) {
      return fail_with(control, kSide, "publish", status);
    }
    if (status->delivered != 1) {
      return fail(control, kSide, "the subscriber's queue was full with one message in flight");
    }
  }
  report.measure_end = CpuTimes::now();
  finish_sending(control);
  return 0;
}

template <messages::Format F, messages::Kind K>
int serializer_subscriber(const SerializerCase& c, PairControl& control, SharedArray<std::int64_t>& latencies,
                          SharedArray<std::int64_t>& starts) {
  using Traits = messages::MessageTraits<F, K>;
  using Type = typename Traits::Type;
  constexpr int kSide = 1;
  auto ends = set_up_worker<Type>(serializer_worker(c, "bench_sub", false));
  if (!ends) {
    return fail(control, kSide, ends.error().message());
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  LatencyRecorder recorder(latencies, control, report, c.warmup);
  std::uint32_t idle = 0;
  for (std::uint64_t expected = 0; expected < total;) {
    std::int64_t received_ns = 0;
    std::uint64_t index = 0;
    std::uint64_t carried = 0;
    auto took = try_take(*ends->sub, [&](const axon::Sample<Type>& sample) {
      // Holding the sample: take() verified it (FlatBuffers) or parsed it
      // (Protobuf); a raw struct is not read at all. By default the clock
      // stops here, before user code reads anything, as issue 4 measures it.
      if (c.end_after_read) {
        carried = Traits::read_index(*sample);
        received_ns = now_ns();
      } else {
        received_ns = now_ns();
        carried = Traits::read_index(*sample);
      }
      index = sample.info().sequence - 1;  // the publisher's message i is its (i + 1)-th
      report.payload_bytes = sample.info().payload_bytes;
    });  // the sample went back
    if (!took) {
      return fail_with(control, kSide, "take", took);
    }
    if (*took == Took::kNothing) {
      if ((++idle & 0xFFFF) == 0 && ends->sub->counters().rejected != 0) {
        return fail(control, kSide, "a message failed verification or decoding");
      }
      cpu_relax();
      continue;
    }
    if (carried != index) {
      return fail(control, kSide, "message " + std::to_string(index) + " carries index " + std::to_string(carried));
    }
    if (index != expected) {
      return fail(control, kSide,
                  "message " + std::to_string(index) + " arrived where " + std::to_string(expected) + " was expected");
    }
    recorder.record(index, received_ns - starts[index]);
    ++expected;
    ack(control, expected);  // the chunk is free again
  }
  report.measure_end = CpuTimes::now();
  signal_finished(control);
  return 0;
}

}  // namespace axon_bench::workers
