// Builders and checkers for the schema messages the serializer tests send.
#pragma once

#include <cstdint>

#include "object_list.pb.h"
#include "object_list_axon.h"
#include "point_cloud_axon.h"

namespace axon::test {

namespace fb = ::axon::schemas::fb;
namespace pb = ::axon::schemas::pb;

inline fb::LidarTarget target_for(std::uint64_t sequence, std::uint32_t i) {
  return {static_cast<float>(i),         static_cast<float>(sequence),     0.5F,
          static_cast<std::uint16_t>(i), static_cast<std::uint8_t>(i % 7), static_cast<std::uint8_t>(i % 100)};
}

/// Builds an ObjectList of `targets` targets for `sequence` in `fbb`.
inline flatbuffers::Offset<fb::ObjectList> build_object_list(flatbuffers::FlatBufferBuilder& fbb,
                                                             std::uint64_t sequence, std::uint32_t targets) {
  fb::LidarTarget* out = nullptr;
  auto vector = axon::create_uninitialized_struct_vector(fbb, targets, &out);
  for (std::uint32_t i = 0; i < targets; ++i) {
    out[i] = target_for(sequence, i);
  }
  const fb::Header header(sequence, static_cast<std::int64_t>(sequence * 10), 3);
  return fb::CreateObjectList(fbb, &header, vector);
}

inline bool object_list_ok(const fb::ObjectList& list, std::uint64_t sequence, std::uint32_t targets) {
  if (list.header() == nullptr || list.header()->sequence() != sequence || list.targets() == nullptr ||
      list.targets()->size() != targets) {
    return false;
  }
  for (std::uint32_t i = 0; i < targets; ++i) {
    const fb::LidarTarget* t = list.targets()->Get(i);
    if (t->x() != static_cast<float>(i) || t->y() != static_cast<float>(sequence) || t->track_id() != i) {
      return false;
    }
  }
  return true;
}

inline void fill_object_list(pb::ObjectList& list, std::uint64_t sequence, std::uint32_t targets) {
  list.Clear();
  list.mutable_header()->set_sequence(sequence);
  list.mutable_header()->set_stamp_ns(static_cast<std::int64_t>(sequence * 10));
  for (std::uint32_t i = 0; i < targets; ++i) {
    auto* t = list.add_targets();
    t->set_x(static_cast<float>(i));
    t->set_y(static_cast<float>(sequence));
    t->set_track_id(i);
  }
}

inline bool object_list_ok(const pb::ObjectList& list, std::uint64_t sequence, std::uint32_t targets) {
  if (list.header().sequence() != sequence || static_cast<std::uint32_t>(list.targets_size()) != targets) {
    return false;
  }
  for (std::uint32_t i = 0; i < targets; ++i) {
    const auto& t = list.targets(static_cast<int>(i));
    if (t.x() != static_cast<float>(i) || t.y() != static_cast<float>(sequence) || t.track_id() != i) {
      return false;
    }
  }
  return true;
}

}  // namespace axon::test
