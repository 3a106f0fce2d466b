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

#include "messages.hpp"
#include "pair_runner.hpp"
#include "serializer_cases.hpp"
#include "worker_support.hpp"

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

inline axon::NodeOptions serializer_node_options(const SerializerCase& c, bool publishes) {
  axon::NodeOptions options;
  options.domain_id = c.domain_id;
  const std::uint32_t bytes = publisher_chunk_bytes(c);
  // 16 chunks: the publisher keeps reusing its own (the transport's reuse
  // cache takes an eighth of a class).
  options.chunk_classes = publishes ? std::vector<axon::ChunkClassConfig>{{.payload_bytes = bytes, .count = 16}}
                                    : std::vector<axon::ChunkClassConfig>{{.payload_bytes = 256, .count = 16}};
  return options;
}

template <messages::Format F, messages::Kind K>
int serializer_publisher(const SerializerCase& c, PairControl& control, SharedArray<std::int64_t>& starts) {
  using Type = typename messages::MessageTraits<F, K>::Type;
  constexpr int kSide = 0;
  auto node = axon::Node::create("bench_pub", serializer_node_options(c, true));
  if (!node) {
    return fail_with(control, kSide, "Node::create", node);
  }
  auto pub = (*node)->template advertise<Type>(kSerializerTopic);
  if (!pub) {
    return fail_with(control, kSide, "advertise", pub);
  }
  if (!wait_until([&] { return (*pub)->subscriber_count() >= 1; })) {
    return fail(control, kSide, "no subscriber connected within 10 s");
  }
  messages::MessageWriter<F, K> writer;
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  for (std::uint64_t i = 0; i < total; ++i) {
    if (i == c.warmup) {
      report.measure_begin = CpuTimes::now();
    }
    // One message in flight. Acquire pairs with the subscriber's release
    // store of `ack`.
    while (control.ack.load(std::memory_order_acquire) < i) {
      cpu_relax();
    }
    // The writer stores the start into the shared slot just before it
    // calls publish(): see the file comment.
    auto status = writer.publish(**pub, i, starts[i]);
    if (!status) {
      return fail_with(control, kSide, "publish", status);
    }
    if (status->delivered != 1) {
      return fail(control, kSide, "the subscriber's queue was full with one message in flight");
    }
  }
  report.measure_end = CpuTimes::now();
  control.done.store(1, std::memory_order_release);  // pairs with the subscriber's acquire
  wait_for_finished(control);                        // our pool holds what the subscriber still reads
  return 0;
}

template <messages::Format F, messages::Kind K>
int serializer_subscriber(const SerializerCase& c, PairControl& control, SharedArray<std::int64_t>& latencies,
                          SharedArray<std::int64_t>& starts) {
  using Traits = messages::MessageTraits<F, K>;
  using Type = typename Traits::Type;
  constexpr int kSide = 1;
  auto node = axon::Node::create("bench_sub", serializer_node_options(c, false));
  if (!node) {
    return fail_with(control, kSide, "Node::create", node);
  }
  auto sub = (*node)->template subscribe<Type>(
      kSerializerTopic,
      {.depth = 4, .verification = c.verify ? axon::Verification::kCrossProcess : axon::Verification::kNever});
  if (!sub) {
    return fail_with(control, kSide, "subscribe", sub);
  }
  if (!wait_until([&] { return (*sub)->publisher_count() >= 1; })) {
    return fail(control, kSide, "no publisher connected within 10 s");
  }
  arrive_and_wait(control);
  SideReport& report = control.side[kSide];
  const std::uint64_t total = c.warmup + c.samples;
  std::uint64_t recorded = 0;
  std::uint32_t idle = 0;
  for (std::uint64_t expected = 0; expected < total;) {
    std::int64_t received_ns = 0;
    std::uint64_t index = 0;
    {
      auto sample = (*sub)->take();
      if (!sample) {
        if (sample.failed()) {
          return fail_with(control, kSide, "take", sample);
        }
        if ((++idle & 0xFFFF) == 0 && (*sub)->counters().rejected != 0) {
          return fail(control, kSide, "a message failed verification or decoding");
        }
        cpu_relax();
        continue;
      }
      // Holding the sample: take() verified it (FlatBuffers) or parsed it
      // (Protobuf); a raw struct is not read at all. By default the clock
      // stops here, before user code reads anything, as issue 4 measures it.
      std::uint64_t carried = 0;
      if (c.end_after_read) {
        carried = Traits::read_index(**sample);
        received_ns = now_ns();
      } else {
        received_ns = now_ns();
        carried = Traits::read_index(**sample);
      }
      index = (*sample).info().sequence - 1;  // the publisher's message i is its (i + 1)-th
      report.payload_bytes = (*sample).info().payload_bytes;
      if (carried != index) {
        return fail(control, kSide, "message " + std::to_string(index) + " carries index " + std::to_string(carried));
      }
    }  // the sample goes back here
    if (index != expected) {
      return fail(control, kSide,
                  "message " + std::to_string(index) + " arrived where " + std::to_string(expected) + " was expected");
    }
    if (index >= c.warmup) {
      if (recorded == 0) {
        report.measure_begin = CpuTimes::now();
      }
      latencies[index - c.warmup] = received_ns - starts[index];
      if ((++recorded & 255) == 0) {
        control.progress.store(recorded, std::memory_order_relaxed);  // display only
      }
    }
    ++expected;
    // Release pairs with the publisher's acquire: the chunk is free again.
    control.ack.store(expected, std::memory_order_release);
  }
  report.measure_end = CpuTimes::now();
  control.ack.store(kFinished, std::memory_order_release);  // pairs with wait_for_finished()
  return 0;
}

}  // namespace axon_bench::workers
