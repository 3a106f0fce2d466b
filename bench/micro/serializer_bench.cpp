// Micro benchmarks of the three serializers on the messages of issue 4: the
// 2 KiB ObjectList (a header and 128 lidar targets) and a 1 MiB PointCloud
// (65,536 points), one thread, warm caches, into and out of a reused buffer
// (as in a loaned chunk). Per serializer and message:
//   Encode  raw: memcpy of the struct (what publish(const T&) does; a loan
//           writes in place and costs nothing); FlatBuffers: build the message
//           and Finish(); Protobuf: ByteSizeLong() + SerializeWithCachedSizesToArray()
//           (what axon's Serializer does), from a filled message object.
//   Decode  what a subscriber does before user code holds the message: raw:
//           the size check of Serializer<T>::view(); FlatBuffers: Verifier +
//           GetRoot (Verification::kCrossProcess, the default); Protobuf:
//           ParseFromArray into a reused object.
//   ReadAll Decode, then read every target / point (sum of x): the access cost.
// bytes_per_second is the message size over the time.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "bench/axon_bench/latency/message_content.hpp"
#include "object_list.hpp"
#include "object_list.pb.h"
#include "object_list_axon.h"
#include "point_cloud.pb.h"
#include "point_cloud_axon.h"
#include <axon/axon.hpp>
#include <axon/serializers/flatbuffers.hpp>
#include <axon/serializers/protobuf.hpp>

namespace {

namespace fb = axon::schemas::fb;
namespace pb = axon::schemas::pb;
namespace raw = axon::schemas::raw;

using axon_bench::content::kTargets;
using axon_bench::content::point_at;
using axon_bench::content::RawPoint;
constexpr std::uint32_t kPoints = axon_bench::content::kCloudPoints;

struct RawPointCloud {
  raw::Header header;
  std::uint32_t point_count;
  std::uint32_t reserved;
  RawPoint points[kPoints];
};

/// A reused, cache-line aligned buffer standing in for a loaned chunk.
struct Buffer {
  explicit Buffer(std::size_t bytes) : storage(bytes + 64) {
    auto address = reinterpret_cast<std::uintptr_t>(storage.data());
    data = storage.data() + ((64 - address % 64) % 64);
    size = bytes;
  }
  std::vector<std::byte> storage;
  std::byte* data = nullptr;
  std::size_t size = 0;
};

// ---- codecs: encode into the buffer, decode from it, read everything --------

struct RawObjectList {
  static constexpr std::size_t kBytes = sizeof(raw::ObjectList);
  std::unique_ptr<raw::ObjectList> value = std::make_unique<raw::ObjectList>();
  RawObjectList() {
    value->header = {.sequence = 1, .stamp_ns = 2, .frame_id = 3, .reserved = 0};
    value->target_count = kTargets;
    for (std::uint32_t i = 0; i < kTargets; ++i) {
      axon_bench::content::fill_target(value->targets[i], i);
    }
  }
  std::size_t encode(Buffer& out) { return axon::Serializer<raw::ObjectList>::encode(*value, {out.data, out.size}); }
  const raw::ObjectList* decode(const Buffer& in, std::size_t bytes) {
    return axon::Serializer<raw::ObjectList>::view({in.data, bytes}, true);
  }
  static float read_all(const raw::ObjectList& m) {
    float sum = 0;
    for (std::uint32_t i = 0; i < m.target_count; ++i) {
      sum += m.targets[i].x;
    }
    return sum;
  }
};

struct RawCloud {
  static constexpr std::size_t kBytes = sizeof(RawPointCloud);
  std::unique_ptr<RawPointCloud> value = std::make_unique<RawPointCloud>();
  RawCloud() {
    value->header = {.sequence = 1, .stamp_ns = 2, .frame_id = 3, .reserved = 0};
    value->point_count = kPoints;
    for (std::uint32_t i = 0; i < kPoints; ++i) {
      value->points[i] = point_at(i);
    }
  }
  std::size_t encode(Buffer& out) { return axon::Serializer<RawPointCloud>::encode(*value, {out.data, out.size}); }
  const RawPointCloud* decode(const Buffer& in, std::size_t bytes) {
    return axon::Serializer<RawPointCloud>::view({in.data, bytes}, true);
  }
  static float read_all(const RawPointCloud& m) {
    float sum = 0;
    for (std::uint32_t i = 0; i < m.point_count; ++i) {
      sum += m.points[i].x;
    }
    return sum;
  }
};

/// FlatBuffers builds into the buffer through an allocator that hands out
/// the buffer's end, like axon's chunk allocator (no heap, no copy).
class BufferAllocator final : public flatbuffers::Allocator {
 public:
  explicit BufferAllocator(Buffer& buffer) : buffer_(buffer) {}
  std::uint8_t* allocate(std::size_t size) override {
    if (size > buffer_.size) {
      std::abort();  // sized for the message below
    }
    return reinterpret_cast<std::uint8_t*>(buffer_.data) + buffer_.size - size;
  }
  void deallocate(std::uint8_t* /*p*/, std::size_t /*size*/) override {}
  std::uint8_t* reallocate_downward(std::uint8_t* old_p, std::size_t /*old_size*/, std::size_t new_size,
                                    std::size_t /*in_use_back*/, std::size_t in_use_front) override {
    std::uint8_t* p = allocate(new_size);
    std::memmove(p, old_p, in_use_front);  // the built part already sits at the end
    return p;
  }

 private:
  Buffer& buffer_;
};

template <class Table>
struct FlatBuffersCodec {
  const Table* decode(const Buffer& /*in*/, std::size_t bytes) {
    return axon::Serializer<Table>::view({reinterpret_cast<const std::byte*>(encoded), bytes}, true);
  }
  const std::uint8_t* encoded = nullptr;  ///< Start of the last finished message.
};

struct FlatBuffersObjectList : FlatBuffersCodec<fb::ObjectList> {
  static constexpr std::size_t kBytes = 4096;  // the builder's reservation, not the message
  std::size_t encode(Buffer& out) {
    BufferAllocator allocator(out);
    flatbuffers::FlatBufferBuilder fbb(kBytes, &allocator, false, 64);
    const auto vector = axon_bench::content::fb_targets(fbb);
    const fb::Header header(1, 2, 3);
    fbb.Finish(fb::CreateObjectList(fbb, &header, vector));
    encoded = fbb.GetBufferPointer();
    return fbb.GetSize();  // the bytes stay in `out`: the allocator's deallocate() frees nothing
  }
  static float read_all(const fb::ObjectList& m) {
    float sum = 0;
    for (const auto* t : *m.targets()) {
      sum += t->x();
    }
    return sum;
  }
};

struct FlatBuffersCloud : FlatBuffersCodec<fb::PointCloud> {
  static constexpr std::size_t kBytes = 2 * sizeof(RawPointCloud);  // builder growth, see docs/performance.md
  std::size_t encode(Buffer& out) {
    BufferAllocator allocator(out);
    flatbuffers::FlatBufferBuilder fbb(kBytes, &allocator, false, 64);
    const auto vector = axon_bench::content::fb_points(fbb);
    const fb::Header header(1, 2, 3);
    fbb.Finish(fb::CreatePointCloud(fbb, &header, vector));
    encoded = fbb.GetBufferPointer();
    return fbb.GetSize();
  }
  static float read_all(const fb::PointCloud& m) {
    float sum = 0;
    for (const auto* p : *m.points()) {
      sum += p->x();
    }
    return sum;
  }
};

template <class Message>
struct ProtobufCodec {
  std::size_t encode(Buffer& out) {
    const std::size_t bytes = axon::Serializer<Message>::encoded_size(value);
    return axon::Serializer<Message>::encode(value, {out.data, bytes});
  }
  const Message* decode(const Buffer& in, std::size_t bytes) {
    return axon::Serializer<Message>::decode({in.data, bytes}, decoded) ? &decoded : nullptr;
  }
  Message value;
  Message decoded;
};

struct ProtobufObjectList : ProtobufCodec<pb::ObjectList> {
  static constexpr std::size_t kBytes = 4096;
  ProtobufObjectList() {
    axon_bench::content::add_targets(value);
    value.mutable_header()->set_sequence(1);
  }
  static float read_all(const pb::ObjectList& m) {
    float sum = 0;
    for (const auto& t : m.targets()) {
      sum += t.x();
    }
    return sum;
  }
};

struct ProtobufCloud : ProtobufCodec<pb::PointCloud> {
  static constexpr std::size_t kBytes = sizeof(RawPointCloud) + 64;
  ProtobufCloud() {
    axon_bench::content::add_points(value);
    value.mutable_header()->set_sequence(1);
  }
  static float read_all(const pb::PointCloud& m) {
    float sum = 0;
    for (int i = 0; i < m.xyzi_size(); i += 4) {
      sum += m.xyzi(i);
    }
    return sum;
  }
};

// ---- the benchmarks ---------------------------------------------------------

template <class Codec>
void BM_Encode(benchmark::State& state) {
  Codec codec;
  Buffer buffer(Codec::kBytes);
  std::size_t bytes = 0;
  for (auto _ : state) {
    bytes = codec.encode(buffer);
    benchmark::DoNotOptimize(buffer.data);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["msg_bytes"] = static_cast<double>(bytes);
}

/// kReadAll = false: Decode; true: ReadAll (decode, then read every element).
template <class Codec, bool kReadAll>
void BM_Decode(benchmark::State& state) {
  Codec codec;
  Buffer buffer(Codec::kBytes);
  const std::size_t bytes = codec.encode(buffer);
  for (auto _ : state) {
    const auto* message = codec.decode(buffer, bytes);
    if (message == nullptr) {
      state.SkipWithError("the message did not decode");
      break;
    }
    if constexpr (kReadAll) {
      benchmark::DoNotOptimize(Codec::read_all(*message));
    } else {
      benchmark::DoNotOptimize(message);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
  state.counters["msg_bytes"] = static_cast<double>(bytes);
}

#define AXON_SERIALIZER_BENCHMARKS(Codec)      \
  BENCHMARK_TEMPLATE(BM_Encode, Codec);        \
  BENCHMARK_TEMPLATE(BM_Decode, Codec, false); \
  BENCHMARK_TEMPLATE(BM_Decode, Codec, true)

AXON_SERIALIZER_BENCHMARKS(RawObjectList);
AXON_SERIALIZER_BENCHMARKS(FlatBuffersObjectList);
AXON_SERIALIZER_BENCHMARKS(ProtobufObjectList);
AXON_SERIALIZER_BENCHMARKS(RawCloud);
AXON_SERIALIZER_BENCHMARKS(FlatBuffersCloud);
AXON_SERIALIZER_BENCHMARKS(ProtobufCloud);

}  // namespace
