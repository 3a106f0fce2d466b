// The messages axon_topic_publisher sends and the `axon topic` tests check: a Protobuf and a FlatBuffers
// Heartbeat, a raw struct and a raw struct described with axon::RawFields, each with fields of known values (the
// sequence moves; the rest stays).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <tuple>

#include "axon/raw_fields.hpp"
#include "heartbeat.pb.h"
#include "heartbeat_axon.h"

namespace axon::test::topics {

inline constexpr std::string_view kProtobufTopic = "watch/heartbeat_pb";
inline constexpr std::string_view kFlatBuffersTopic = "watch/heartbeat_fb";
inline constexpr std::string_view kRawTopic = "watch/pose_raw";
inline constexpr std::string_view kDescribedTopic = "watch/odometry_raw";

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

enum class DriveMode : std::uint8_t { kManual = 0, kAuto = 2 };

struct Vec3 {
  float x;
  float y;
  float z;
};

/// A raw struct with a field description (below): every kind the description has, a nested struct, arrays of
/// scalars and of structs, a string, an enum, and members it leaves out.
struct Odometry {
  static constexpr std::string_view kAxonTypeName = "axon.test.Odometry";
  std::uint64_t sequence;
  std::int64_t stamp_ns;
  Vec3 position;
  Vec3 velocities[2];
  char frame_id[12];
  std::int16_t wheel_ticks[4];
  DriveMode mode;
  bool moving;
  std::uint8_t reserved[2];  ///< Not described: not printed.
  double battery_v;
};
static_assert(sizeof(Odometry) == 88);

inline Odometry odometry_for(std::uint64_t sequence) {
  Odometry odometry{.sequence = sequence,
                    .stamp_ns = stamp_for(sequence),
                    .position = {.x = 1.5F, .y = -2.25F, .z = 0.1F},
                    .velocities = {{.x = 0.5F, .y = 0, .z = 0}, {.x = 0, .y = -1, .z = 4}},
                    .frame_id = {},
                    .wheel_ticks = {-3, 0, 7, 32000},
                    .mode = DriveMode::kAuto,
                    .moving = true,
                    .reserved = {0xAB, 0xCD},
                    .battery_v = 24.75};
  std::memcpy(odometry.frame_id, "base_link", 9);
  return odometry;
}

}  // namespace axon::test::topics

template <>
struct axon::RawFields<axon::test::topics::Vec3> {
  using Vec3 = axon::test::topics::Vec3;
  static constexpr auto kFields =
      std::tuple{axon::raw_field("x", &Vec3::x), axon::raw_field("y", &Vec3::y), axon::raw_field("z", &Vec3::z)};
};

template <>
struct axon::RawFields<axon::test::topics::Odometry> {
  using Odometry = axon::test::topics::Odometry;
  static constexpr auto kFields = std::tuple{
      axon::raw_field("sequence", &Odometry::sequence),  axon::raw_field("stamp_ns", &Odometry::stamp_ns),
      axon::raw_field("position", &Odometry::position),  axon::raw_field("velocities", &Odometry::velocities),
      axon::raw_field("frame_id", &Odometry::frame_id),  axon::raw_field("wheel_ticks", &Odometry::wheel_ticks),
      axon::raw_field("mode", &Odometry::mode),          axon::raw_field("moving", &Odometry::moving),
      axon::raw_field("battery_v", &Odometry::battery_v)};
};

namespace axon::test::topics {

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
