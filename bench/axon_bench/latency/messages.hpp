// The messages of the per-serializer latency cases (issue 4): the 2 KiB
// ObjectList (a header and 128 lidar targets) and a 1 MiB PointCloud (65,536
// points of 16 B), each as a raw struct, a FlatBuffers table and a Protobuf
// message, plus the 64 B raw struct every figure is compared with.
//
// MessageWriter<S, M> builds message number `index` (not timed) and then
// publishes it, reporting the time just before publish() was called: the
// start of the latency. For FlatBuffers publish() includes Finish(); for
// Protobuf it includes ByteSizeLong() and the encoding into the chunk.
// read_index() is the index a received message carries; the subscriber
// checks it after the clock stopped (holding the sample is the end point:
// FlatBuffers verified by take(), Protobuf parsed, a raw struct untouched).
#pragma once

#include <cstdint>
#include <string_view>

#include "harness/endpoint_calls.hpp"
#include "harness/payload.hpp"
#include "harness/system.hpp"
#include "latency/message_content.hpp"
#include "object_list.hpp"
#include "object_list.pb.h"
#include "object_list_axon.h"
#include "point_cloud.pb.h"
#include "point_cloud_axon.h"
#include <axon/axon.hpp>
#include <axon/serializers/flatbuffers.hpp>
#include <axon/serializers/protobuf.hpp>

namespace axon_bench::messages {

using content::fill_target;
using content::kCloudPoints;
using content::kTargets;
using content::point_at;
using content::RawPoint;

/// The point cloud as a raw struct: the same header and points as the
/// FlatBuffers PointCloud, fixed size (there is no raw schema of it).
struct RawPointCloud {
  static constexpr std::string_view kAxonTypeName = "axon_bench.raw.PointCloud";
  static constexpr std::uint32_t kAxonTypeVersion = 1;
  axon::schemas::raw::Header header;
  std::uint32_t point_count;
  std::uint32_t reserved;
  RawPoint points[kCloudPoints];
};
static_assert(sizeof(RawPointCloud) == 32 + (1U << 20));

enum class Kind { kSmall, kObjectList, kPointCloud };
enum class Format { kRaw, kFlatBuffers, kProtobuf };

[[nodiscard]] constexpr std::string_view name_of(Kind kind) noexcept {
  switch (kind) {
    case Kind::kSmall: return "Payload";
    case Kind::kObjectList: return "ObjectList";
    case Kind::kPointCloud: return "PointCloud";
  }
  return "?";
}

[[nodiscard]] constexpr std::string_view name_of(Format format) noexcept {
  switch (format) {
    case Format::kRaw: return "raw";
    case Format::kFlatBuffers: return "flatbuffers";
    case Format::kProtobuf: return "protobuf";
  }
  return "?";
}

/// Largest encoded size of a message, for the publisher's chunk class (the
/// FlatBuffers builder also needs a little room for its vtable and padding).
[[nodiscard]] constexpr std::size_t max_bytes(Kind kind) noexcept {
  switch (kind) {
    case Kind::kSmall: return 64;
    case Kind::kObjectList: return sizeof(axon::schemas::raw::ObjectList) + 1024;
    case Kind::kPointCloud: return sizeof(RawPointCloud) + 4096;
  }
  return 0;
}

/// Writes and publishes messages of one (format, kind). `publish(pub, i,
/// start_ns)` builds message i, sets start_ns just before publish() and
/// returns publish()'s result.
template <Format F, Kind K>
struct MessageWriter;

template <Format F, Kind K>
struct MessageTraits;

// ---- raw -------------------------------------------------------------------

template <>
struct MessageTraits<Format::kRaw, Kind::kSmall> {
  using Type = Payload<64>;
  static std::uint64_t read_index(const Type& m) noexcept { return read_stamp(m.data).index; }
};
template <>
struct MessageTraits<Format::kRaw, Kind::kObjectList> {
  using Type = axon::schemas::raw::ObjectList;
  static std::uint64_t read_index(const Type& m) noexcept { return m.header.sequence; }
};
template <>
struct MessageTraits<Format::kRaw, Kind::kPointCloud> {
  using Type = RawPointCloud;
  static std::uint64_t read_index(const Type& m) noexcept { return m.header.sequence; }
};

template <Kind K>
struct MessageWriter<Format::kRaw, K> {
  using Type = typename MessageTraits<Format::kRaw, K>::Type;

  axon::PublishResult publish(axon::Publisher<Type>& pub, std::uint64_t index, std::int64_t& start_ns) {
    auto loan = workers::loan_waiting(pub, workers::spin_once);
    if (!loan) {
      return loan.error();
    }
    Type& m = **loan;
    if constexpr (K == Kind::kSmall) {
      write_stamp(m.data, Stamp{.index = index, .time_ns = 0});
    } else if constexpr (K == Kind::kObjectList) {
      m.header = {.sequence = index, .stamp_ns = 0, .frame_id = 1, .reserved = 0};
      m.target_count = kTargets;
      for (std::uint32_t i = 0; i < kTargets; ++i) {
        fill_target(m.targets[i], i);
      }
    } else {
      m.header = {.sequence = index, .stamp_ns = 0, .frame_id = 2, .reserved = 0};
      m.point_count = kCloudPoints;
      for (std::uint32_t i = 0; i < kCloudPoints; ++i) {
        m.points[i] = point_at(i);
      }
    }
    start_ns = now_ns();
    return pub.publish(std::move(*loan));
  }
};

// ---- FlatBuffers -----------------------------------------------------------

template <>
struct MessageTraits<Format::kFlatBuffers, Kind::kObjectList> {
  using Type = axon::schemas::fb::ObjectList;
  static std::uint64_t read_index(const Type& m) noexcept { return m.header()->sequence(); }
};
template <>
struct MessageTraits<Format::kFlatBuffers, Kind::kPointCloud> {
  using Type = axon::schemas::fb::PointCloud;
  static std::uint64_t read_index(const Type& m) noexcept { return m.header()->sequence(); }
};

template <>
struct MessageWriter<Format::kFlatBuffers, Kind::kObjectList> {
  using Type = axon::schemas::fb::ObjectList;

  axon::PublishResult publish(axon::Publisher<Type>& pub, std::uint64_t index, std::int64_t& start_ns) {
    namespace fb = axon::schemas::fb;
    auto loan = pub.loan_builder(max_bytes(Kind::kObjectList));
    if (!loan) {
      return loan.error();
    }
    auto& fbb = loan->builder();
    const auto vector = content::fb_targets(fbb);
    const fb::Header header(index, 0, 1);
    const auto root = fb::CreateObjectList(fbb, &header, vector);
    start_ns = now_ns();
    return pub.publish(std::move(*loan), root);
  }
};

template <>
struct MessageWriter<Format::kFlatBuffers, Kind::kPointCloud> {
  using Type = axon::schemas::fb::PointCloud;

  axon::PublishResult publish(axon::Publisher<Type>& pub, std::uint64_t index, std::int64_t& start_ns) {
    namespace fb = axon::schemas::fb;
    auto loan = pub.loan_builder(max_bytes(Kind::kPointCloud));
    if (!loan) {
      return loan.error();
    }
    auto& fbb = loan->builder();
    const auto vector = content::fb_points(fbb);
    const fb::Header header(index, 0, 2);
    const auto root = fb::CreatePointCloud(fbb, &header, vector);
    start_ns = now_ns();
    return pub.publish(std::move(*loan), root);
  }
};

// ---- Protobuf --------------------------------------------------------------

template <>
struct MessageTraits<Format::kProtobuf, Kind::kObjectList> {
  using Type = axon::schemas::pb::ObjectList;
  static std::uint64_t read_index(const Type& m) noexcept { return m.header().sequence(); }
};
template <>
struct MessageTraits<Format::kProtobuf, Kind::kPointCloud> {
  using Type = axon::schemas::pb::PointCloud;
  static std::uint64_t read_index(const Type& m) noexcept { return m.header().sequence(); }
};

/// Protobuf messages are built once and only their header changes: the
/// publisher's own cost of filling a message object is not axon's.
template <>
struct MessageWriter<Format::kProtobuf, Kind::kObjectList> {
  using Type = axon::schemas::pb::ObjectList;

  MessageWriter() {
    content::add_targets(message);
    message.mutable_header()->set_frame_id(1);
  }
  axon::PublishResult publish(axon::Publisher<Type>& pub, std::uint64_t index, std::int64_t& start_ns) {
    message.mutable_header()->set_sequence(index);
    start_ns = now_ns();
    return pub.publish(message);
  }
  Type message;
};

template <>
struct MessageWriter<Format::kProtobuf, Kind::kPointCloud> {
  using Type = axon::schemas::pb::PointCloud;

  MessageWriter() {
    content::add_points(message);
    message.mutable_header()->set_frame_id(2);
  }
  axon::PublishResult publish(axon::Publisher<Type>& pub, std::uint64_t index, std::int64_t& start_ns) {
    message.mutable_header()->set_sequence(index);
    start_ns = now_ns();
    return pub.publish(message);
  }
  Type message;
};

}  // namespace axon_bench::messages
