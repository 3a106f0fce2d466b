// The message of the perception → planning demo: the objects one lidar scan
// found, as a raw struct that axon sends without copying or serializing.
//
// The demo's brief is "a 2 KiB object list with 128 lidar targets", which
// leaves 16 bytes per target. Targets are therefore fixed-point, with the
// unit in each field's name: centimetres cover ±327 m of lidar range and
// decimetres cover boxes up to 25.5 m (a truck with its trailer).
//
// Both structs describe their fields (axon::RawFields, below), so that
// `axon topic echo perception/objects` prints them as JSON instead of hex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "axon/raw_fields.hpp"

namespace examples {

/// What a target is, as far as the tracker can tell.
enum class ObjectClass : std::uint8_t {
  kUnknown = 0,
  kCar,
  kTruck,
  kPedestrian,
  kCyclist,
};

/// One tracked object in the vehicle frame (x forward, y left, z up).
struct LidarTarget {
  std::int16_t x_cm;  ///< Box centre.
  std::int16_t y_cm;
  std::int16_t vx_cm_per_s;  ///< Velocity over ground.
  std::int16_t vy_cm_per_s;
  std::uint16_t track_id;  ///< Stable while the tracker follows the object.
  std::int8_t z_dm;        ///< Box centre above the ground plane.
  std::uint8_t length_dm;  ///< Box size.
  std::uint8_t width_dm;
  std::uint8_t height_dm;
  std::uint8_t confidence_pct;  ///< 0..100.
  ObjectClass object_class;
};

/// The objects of one lidar scan. No constructor and no default member
/// values: the publisher fills it in place in shared memory, so nothing is
/// written twice.
struct ObjectList {
  static constexpr std::size_t kMaxTargets = 128;
  static constexpr std::size_t kFrameIdBytes = 16;

  /// axon's type identity (include/axon/type_identity.hpp): a stable name,
  /// and a version to bump when a field changes meaning but not size.
  static constexpr std::string_view kAxonTypeName = "examples::ObjectList";
  static constexpr std::uint32_t kAxonTypeVersion = 1;

  std::uint64_t sequence;        ///< Scan counter of the perception process.
  std::int64_t scan_time_ns;     ///< CLOCK_MONOTONIC when the scan was taken.
  char frame_id[kFrameIdBytes];  ///< Coordinate frame, NUL-terminated ("lidar_top").
  std::uint32_t target_count;    ///< Valid entries of `targets`, 0..kMaxTargets.
  std::uint32_t reserved;        ///< Zero; keeps the layout explicit.
  LidarTarget targets[kMaxTargets];
};

// The layout is the wire format: any change here must bump kAxonTypeVersion
// (a size change is caught by axon's type hash anyway).
static_assert(std::is_trivially_copyable_v<LidarTarget> && std::is_trivially_copyable_v<ObjectList>);
static_assert(sizeof(LidarTarget) == 16 && alignof(LidarTarget) == 2);
static_assert(offsetof(ObjectList, targets) == 40);
static_assert(sizeof(ObjectList) == 40 + 128 * 16, "an ObjectList is 2 KiB of targets plus a 40-byte header");

}  // namespace examples

// The field descriptions tools print from: each field's name and member; axon
// derives offsets, kinds and counts, and checks them at compile time. Members
// left out (`reserved`) are not printed.
template <>
struct axon::RawFields<examples::LidarTarget> {
  using T = examples::LidarTarget;
  static constexpr auto kFields = std::tuple{
      axon::raw_field("x_cm", &T::x_cm),
      axon::raw_field("y_cm", &T::y_cm),
      axon::raw_field("vx_cm_per_s", &T::vx_cm_per_s),
      axon::raw_field("vy_cm_per_s", &T::vy_cm_per_s),
      axon::raw_field("track_id", &T::track_id),
      axon::raw_field("z_dm", &T::z_dm),
      axon::raw_field("length_dm", &T::length_dm),
      axon::raw_field("width_dm", &T::width_dm),
      axon::raw_field("height_dm", &T::height_dm),
      axon::raw_field("confidence_pct", &T::confidence_pct),
      axon::raw_field("object_class", &T::object_class),  // an enum: printed as its number
  };
};

template <>
struct axon::RawFields<examples::ObjectList> {
  using T = examples::ObjectList;
  static constexpr auto kFields = std::tuple{
      axon::raw_field("sequence", &T::sequence), axon::raw_field("scan_time_ns", &T::scan_time_ns),
      axon::raw_field("frame_id", &T::frame_id), axon::raw_field("target_count", &T::target_count),
      axon::raw_field("targets", &T::targets),
  };
};
