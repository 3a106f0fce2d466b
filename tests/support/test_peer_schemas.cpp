// axon_test_peer: fb-publish, pb-publish, fb-garbage and pb-garbage, the
// commands that publish FlatBuffers and Protobuf messages (and bytes that are not).
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/schema_messages.hpp"
#include "tests/support/test_peer.hpp"

namespace axon::test::peer {

/// FlatBuffers ObjectLists built in shared memory.
int fb_publish(const Args& args) {
  const auto [node, pub] = ready_publisher<axon::test::fb::ObjectList>(args, "peer-fb");
  const auto targets = static_cast<std::uint32_t>(args.num("targets", 128));
  for (std::uint64_t seq = 1; seq <= args.num("count", 100); ++seq) {
    auto loan = pub->loan_builder(targets * 16 + 128);
    if (!loan) {
      fail(std::string(loan.error().message()));
    }
    auto root = axon::test::build_object_list(loan->builder(), seq, targets);
    if (auto status = pub->publish(std::move(*loan), root); !status) {
      fail(std::string(status.error().message()));
    }
  }
  say("PUBLISHED");
  std::this_thread::sleep_for(std::chrono::milliseconds(args.num("linger_ms", 2000)));
  return 0;
}

/// Protobuf ObjectLists serialized into shared memory.
int pb_publish(const Args& args) {
  const auto [node, pub] = ready_publisher<axon::test::pb::ObjectList>(args, "peer-pb");
  axon::test::pb::ObjectList list;
  for (std::uint64_t seq = 1; seq <= args.num("count", 100); ++seq) {
    axon::test::fill_object_list(list, seq, static_cast<std::uint32_t>(args.num("targets", 128)));
    if (auto status = pub->publish(list); !status) {
      fail(std::string(status.error().message()));
    }
  }
  say("PUBLISHED");
  std::this_thread::sleep_for(std::chrono::milliseconds(args.num("linger_ms", 2000)));
  return 0;
}

namespace {

/// Bytes that are not a valid message of the topic's type, then one valid
/// message, so the subscriber can show it survived the garbage.
template <class T>
int garbage(const Args& args) {
  auto node = make_node(args, "peer-garbage");
  auto pub = value_or_fail(node->advertise<T>(args.str("topic")));
  say("READY");
  wait_for_subscribers(*pub, 1);
  // 1. Random-looking bytes. 2. A valid message cut short. 3. A valid message
  // whose root offset points far outside the buffer.
  std::vector<std::byte> noise(512, std::byte{0xFF});  // an offset and a varint that never end
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(axon::test::build_object_list(fbb, 1, 128));
  std::vector<std::byte> valid(reinterpret_cast<const std::byte*>(fbb.GetBufferPointer()),
                               reinterpret_cast<const std::byte*>(fbb.GetBufferPointer()) + fbb.GetSize());
  axon::test::pb::ObjectList list;
  axon::test::fill_object_list(list, 1, 128);
  if constexpr (std::is_same_v<T, axon::test::pb::ObjectList>) {
    valid.resize(list.ByteSizeLong());
    list.SerializeToArray(valid.data(), static_cast<int>(valid.size()));
  }
  std::vector<std::byte> truncated(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(valid.size() / 2));
  std::vector<std::byte> bad_offset = valid;
  const std::uint32_t far = 0x7FFFFFF0U;
  std::memcpy(bad_offset.data(), &far, sizeof(far));
  for (const auto* bytes : {&noise, &truncated, &bad_offset}) {
    if (!pub->publish_serialized(*bytes)) {
      fail("publish_serialized failed");
    }
  }
  if (!pub->publish_serialized(valid)) {
    fail("publish_serialized failed");
  }
  say("PUBLISHED");
  std::this_thread::sleep_for(std::chrono::milliseconds(args.num("linger_ms", 2000)));
  return 0;
}

}  // namespace

int fb_garbage(const Args& args) { return garbage<axon::test::fb::ObjectList>(args); }
int pb_garbage(const Args& args) { return garbage<axon::test::pb::ObjectList>(args); }

}  // namespace axon::test::peer
