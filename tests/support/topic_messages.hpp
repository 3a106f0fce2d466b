// The messages axon_topic_publisher sends and the `axon topic` tests check: a Protobuf and a FlatBuffers
// Heartbeat and a raw struct, each with fields of known values (the sequence moves; the rest stays).
#pragma once

#include <cstdint>
#include <string_view>

#include "heartbeat.pb.h"
#include "heartbeat_axon.h"

namespace axon::test::topics {

inline constexpr std::string_view kProtobufTopic = "watch/heartbeat_pb";
inline constexpr std::string_view kFlatBuffersTopic = "watch/heartbeat_fb";
inline constexpr std::string_view kRawTopic = "watch/pose_raw";

inline constexpr std::string_view kComponent = "lidar-front";
inline constexpr std::uint32_t kFrameId = 7;
inline constexpr float kCpuPercent = 12.5F;
/// Sequence numbers start here, so that every Protobuf message has the same size (two-byte varints up to
/// 16383, three-byte stamps up to 2^21).
inline constexpr std::uint64_t kFirstSequence = 1000;
inline std::int64_t stamp_for(std::uint64_t sequence) { return static_cast<std::int64_t>(sequence) + 1'000'000; }

/// A raw struct with a version, printed as hex.
struct Pose {
  static constexpr std::string_view kAxonTypeName = "axon.test.Pose";
  static constexpr std::uint32_t kAxonTypeVersion = 3;
  double x;
  double y;
  double z;
  std::uint32_t sequence;
  std::uint32_t reserved;
};
static_assert(sizeof(Pose) == 32);

inline Pose pose_for(std::uint64_t sequence) {
  return Pose{.x = 1.5, .y = -2.25, .z = 0.0, .sequence = static_cast<std::uint32_t>(sequence), .reserved = 0};
}

inline void fill_heartbeat(schemas::pb::Heartbeat& message, std::uint64_t sequence) {
  message.mutable_header()->set_sequence(sequence);
  message.mutable_header()->set_stamp_ns(stamp_for(sequence));
  message.mutable_header()->set_frame_id(kFrameId);
  message.set_component(std::string(kComponent));
  message.set_health(schemas::pb::HEALTH_DEGRADED);
  message.set_cpu_percent(kCpuPercent);
}

inline flatbuffers::Offset<schemas::fb::Heartbeat> build_heartbeat(flatbuffers::FlatBufferBuilder& fbb,
                                                                   std::uint64_t sequence) {
  const schemas::fb::Header header(sequence, stamp_for(sequence), kFrameId);
  const auto component = fbb.CreateString(kComponent.data(), kComponent.size());
  return schemas::fb::CreateHeartbeat(fbb, &header, component, schemas::fb::Health::Degraded, kCpuPercent);
}

}  // namespace axon::test::topics
