// What the benchmark messages hold, in each format: the ObjectList's 128
// lidar targets (target i at x = i) and the 1 MiB point cloud's 65,536
// points. The same content for axon-bench's per-serializer latency cases
// (messages.hpp) and the serializer micro benchmark (bench/micro), so that
// their figures describe the same bytes.
#pragma once

#include <cstdint>

#include "object_list.hpp"
#include "object_list.pb.h"
#include "object_list_axon.h"
#include "point_cloud.pb.h"
#include "point_cloud_axon.h"
#include <axon/serializers/flatbuffers.hpp>

namespace axon_bench::content {

/// Points of the 1 MiB point cloud (16 B each).
inline constexpr std::uint32_t kCloudPoints = 65'536;
/// Targets of the ObjectList (the schemas' maximum).
inline constexpr std::uint32_t kTargets = axon::schemas::raw::ObjectList::kMaxTargets;

/// One point of the cloud as a raw struct (there is no raw schema of it).
struct RawPoint {
  float x, y, z, intensity;
};

inline RawPoint point_at(std::uint32_t i) noexcept {
  return {static_cast<float>(i & 1023) * 0.1F, static_cast<float>(i >> 10) * 0.1F, 0.5F, 0.8F};
}

inline void fill_target(axon::schemas::raw::LidarTarget& t, std::uint32_t i) noexcept {
  t = {.x = static_cast<float>(i),
       .y = 1.5F,
       .z = 0.2F,
       .track_id = static_cast<std::uint16_t>(i),
       .object_class = 1,
       .confidence_pct = 90};
}

/// The kTargets targets as a FlatBuffers vector, filled in place in `fbb`.
inline flatbuffers::Offset<flatbuffers::Vector<const axon::schemas::fb::LidarTarget*>> fb_targets(
    flatbuffers::FlatBufferBuilder& fbb) {
  namespace fb = axon::schemas::fb;
  fb::LidarTarget* targets = nullptr;
  const auto vector = axon::create_uninitialized_struct_vector(fbb, kTargets, &targets);
  for (std::uint32_t i = 0; i < kTargets; ++i) {
    targets[i] = fb::LidarTarget(static_cast<float>(i), 1.5F, 0.2F, static_cast<std::uint16_t>(i), 1, 90);
  }
  return vector;
}

/// The kCloudPoints points as a FlatBuffers vector, filled in place in `fbb`.
inline flatbuffers::Offset<flatbuffers::Vector<const axon::schemas::fb::Point*>> fb_points(
    flatbuffers::FlatBufferBuilder& fbb) {
  namespace fb = axon::schemas::fb;
  fb::Point* points = nullptr;
  const auto vector = axon::create_uninitialized_struct_vector(fbb, kCloudPoints, &points);
  for (std::uint32_t i = 0; i < kCloudPoints; ++i) {
    const RawPoint p = point_at(i);
    points[i] = fb::Point(p.x, p.y, p.z, p.intensity);
  }
  return vector;
}

/// Appends the kTargets targets to `list`.
inline void add_targets(axon::schemas::pb::ObjectList& list) {
  for (std::uint32_t i = 0; i < kTargets; ++i) {
    auto* t = list.add_targets();
    t->set_x(static_cast<float>(i));
    t->set_y(1.5F);
    t->set_z(0.2F);
    t->set_track_id(i);
    t->set_object_class(1);
    t->set_confidence_pct(90);
  }
}

/// Appends the kCloudPoints points to `cloud` (x, y, z, intensity each).
inline void add_points(axon::schemas::pb::PointCloud& cloud) {
  auto* xyzi = cloud.mutable_xyzi();
  xyzi->Reserve(static_cast<int>(kCloudPoints * 4));
  for (std::uint32_t i = 0; i < kCloudPoints; ++i) {
    const RawPoint p = point_at(i);
    xyzi->Add(p.x);
    xyzi->Add(p.y);
    xyzi->Add(p.z);
    xyzi->Add(p.intensity);
  }
}

}  // namespace axon_bench::content
