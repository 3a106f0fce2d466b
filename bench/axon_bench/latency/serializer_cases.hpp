// One-way latency of the serializer messages (issue 4) between two
// processes: the 2 KiB ObjectList and the 1 MiB PointCloud as raw structs,
// FlatBuffers and Protobuf, and the 64 B raw struct they are compared with.
// Latency runs from just before publish() to the subscriber holding the
// sample (FlatBuffers: verified, as for any cross-process message; Protobuf:
// parsed), one message in flight.
#pragma once

#include <cstdint>
#include <vector>

#include "latency/messages.hpp"
#include "results/result_log.hpp"

namespace axon_bench {

struct SerializerCase {
  messages::Format format = messages::Format::kRaw;
  messages::Kind kind = messages::Kind::kSmall;
  std::uint64_t samples = 0;      ///< Messages recorded ...
  std::uint64_t warmup = 0;       ///< ... after this many unrecorded ones.
  std::vector<int> cpus{-1, -1};  ///< Publisher, subscriber.
  std::uint32_t domain_id = 0;    ///< A domain no one else uses.
  /// false: the clock stops when take() returns the sample (issue 4's end
  /// point); true: after the subscriber read the index in the message's
  /// header, as user code's first access would.
  bool end_after_read = false;
  /// false: SubscriberQos::verification = kNever (FlatBuffers unverified),
  /// to see what verification costs.
  bool verify = true;
};

/// Runs `c` as two forked processes. Throws std::runtime_error when it fails.
CaseResult run_serializer_case(const SerializerCase& c);

}  // namespace axon_bench
