// The ObjectList of schemas/flatbuffers/object_list.fbs as a raw struct: the
// same 128 targets, fixed size, for comparing serializers on equal data.
#pragma once

#include <cstdint>
#include <string_view>

namespace axon::schemas::raw {

struct Header {
  std::uint64_t sequence;
  std::int64_t stamp_ns;
  std::uint32_t frame_id;
  std::uint32_t reserved;
};

struct LidarTarget {
  float x;
  float y;
  float z;
  std::uint16_t track_id;
  std::uint8_t object_class;
  std::uint8_t confidence_pct;
};

struct ObjectList {
  static constexpr std::string_view kAxonTypeName = "axon.schemas.raw.ObjectList";
  static constexpr std::uint32_t kAxonTypeVersion = 1;
  static constexpr std::uint32_t kMaxTargets = 128;

  Header header;
  std::uint32_t target_count;
  std::uint32_t reserved;
  LidarTarget targets[kMaxTargets];
};

static_assert(sizeof(LidarTarget) == 16);
static_assert(sizeof(ObjectList) == 24 + 8 + 128 * 16, "about 2 KiB, like the FlatBuffers ObjectList");

}  // namespace axon::schemas::raw
