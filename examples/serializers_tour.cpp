// One process, three message formats through the same Publisher/Subscriber
// API, plus a type with a serializer of its own (the customization point),
// and services (request/response) in FlatBuffers and Protobuf.
//   axon-example-serializers
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "control_command.pb.h"
#include "control_command_axon.h"
#include "object_list_axon.h"

// A type that is neither a raw struct, nor FlatBuffers, nor Protobuf.
namespace diagnostics {
struct LogLine {
  std::string component;
  std::string text;
};
}  // namespace diagnostics

// Its serializer: a length-prefixed encoding. Decoding serializers such as
// this one (and Protobuf) decode into an object the subscriber reuses.
template <>
struct axon::Serializer<diagnostics::LogLine> {
  static constexpr std::string_view kName = "log-line";
  static constexpr DataPath kDataPath = DataPath::kSerializedInSharedMemory;
  static constexpr bool kReadsInPlace = false;

  static TypeIdentity identity() {
    TypeIdentity id;
    id.name = "diagnostics::LogLine";
    id.version = 1;
    id.hash = detail::fnv1a("diagnostics::LogLine/1");
    id.serializer = std::string(kName);
    return id;
  }
  static std::size_t encoded_size(const diagnostics::LogLine& line) {
    return 2 * sizeof(std::uint32_t) + line.component.size() + line.text.size();
  }
  static std::size_t encode(const diagnostics::LogLine& line, std::span<std::byte> out) noexcept {
    std::byte* p = out.data();
    for (const std::string* s : {&line.component, &line.text}) {
      const auto n = static_cast<std::uint32_t>(s->size());
      std::memcpy(p, &n, sizeof(n));
      std::memcpy(p + sizeof(n), s->data(), n);
      p += sizeof(n) + n;
    }
    return static_cast<std::size_t>(p - out.data());
  }
  static bool decode(std::span<const std::byte> in, diagnostics::LogLine& line) noexcept {
    std::size_t at = 0;
    for (std::string* s : {&line.component, &line.text}) {
      std::uint32_t n = 0;
      if (in.size() - at < sizeof(n)) {
        return false;
      }
      std::memcpy(&n, in.data() + at, sizeof(n));
      at += sizeof(n);
      if (in.size() - at < n) {
        return false;
      }
      s->assign(reinterpret_cast<const char*>(in.data() + at), n);
      at += n;
    }
    return at == in.size();
  }
};

namespace {

using namespace std::chrono_literals;

struct Heartbeat {  // raw: trivially copyable, the bytes are the message
  std::uint64_t sequence;
  std::int64_t stamp_ns;
};

template <class Handle>
int check(const Handle& handle, const char* what) {
  if (!handle) {
    std::fprintf(stderr, "%s: %.*s\n", what, static_cast<int>(handle.error().message().size()),
                 handle.error().message().data());
    return 1;
  }
  return 0;
}

namespace fb = axon::schemas::fb;

// An object list of `count` targets built in `fbb`, a loaned chunk's builder.
flatbuffers::Offset<fb::ObjectList> build_object_list(flatbuffers::FlatBufferBuilder& fbb, std::uint16_t count,
                                                      std::uint64_t sequence) {
  fb::LidarTarget* targets = nullptr;
  // Filled in place. Not fbb.CreateUninitializedVectorOfStructs: FlatBuffers
  // 2.0.8 misaligns that for struct sizes that are not a power of two (a
  // 12-byte point), and every subscriber drops the message.
  auto vector = axon::create_uninitialized_struct_vector(fbb, count, &targets);
  for (std::uint16_t i = 0; i < count; ++i) {
    targets[i] = fb::LidarTarget(static_cast<float>(i), 0, 0, i, 1, 90);
  }
  const fb::Header header(sequence, 0, 0);
  return fb::CreateObjectList(fbb, &header, vector);
}

}  // namespace

int main() {
  auto node = axon::Node::create("serializers-tour");
  if (check(node, "node"))
    return 1;

  // Raw struct: loaned, written in place, read in place.
  auto raw_pub = node->advertise<Heartbeat>("tour/heartbeat");
  auto raw_sub = node->subscribe<Heartbeat>("tour/heartbeat");
  if (check(raw_pub, "raw") || check(raw_sub, "raw"))
    return 1;
  auto beat = raw_pub->loan();
  if (check(beat, "loan"))
    return 1;
  beat->sequence = 1;
  beat->stamp_ns = 42;
  (void)raw_pub->publish(std::move(*beat));
  if (auto s = raw_sub->take())
    std::printf("raw         %-28s sequence %lu\n", "zero-copy", s->sequence);

  // FlatBuffers: built in a shared-memory chunk, verified and read in place.
  auto fb_pub = node->advertise<fb::ObjectList>("tour/objects");
  auto fb_sub = node->subscribe<fb::ObjectList>("tour/objects", {.require_zero_copy = true});
  if (check(fb_pub, "flatbuffers") || check(fb_sub, "flatbuffers"))
    return 1;
  auto builder = fb_pub->loan_builder(2200);
  if (check(builder, "loan_builder"))
    return 1;
  auto objects = build_object_list(builder->builder(), 128, 1);
  (void)fb_pub->publish(std::move(*builder), objects);
  if (auto s = fb_sub->take()) {
    std::printf("flatbuffers %-28s %u targets in %u bytes\n", std::string(to_string(fb_sub->data_path())).c_str(),
                s->targets()->size(), (*s).info().payload_bytes);
  }

  // Protobuf: serialized straight into a chunk, parsed into a reused object.
  namespace pb = axon::schemas::pb;
  auto pb_pub = node->advertise<pb::ControlCommand>("tour/control");
  auto pb_sub = node->subscribe<pb::ControlCommand>("tour/control");
  if (check(pb_pub, "protobuf") || check(pb_sub, "protobuf"))
    return 1;
  pb::ControlCommand command;
  command.set_steering_rad(0.05F);
  command.set_gear(pb::GEAR_DRIVE);
  (void)pb_pub->publish(command);
  if (auto s = pb_sub->take()) {
    std::printf("protobuf    %-28s steering %.2f rad\n", std::string(to_string(pb_sub->data_path())).c_str(),
                static_cast<double>(s->steering_rad()));
  }
  // Protobuf can never be zero copy, and axon says so instead of falling back.
  auto refused = node->subscribe<pb::ControlCommand>("tour/control", {.require_zero_copy = true});
  std::printf("require_zero_copy on protobuf: %s\n", refused ? "accepted?!" : "refused, as it should be");

  // A FlatBuffers service: the client builds its request in a loaned chunk,
  // the server reads it there and builds its reply in a chunk of its own,
  // which the client reads in place (zero copy both ways).
  auto planner = node->serve<fb::ObjectList, fb::ControlCommand>(
      "tour/plan", [](const fb::ObjectList& objects, flatbuffers::FlatBufferBuilder& reply) {
        return fb::CreateControlCommand(reply, nullptr, 0.01F * static_cast<float>(objects.targets()->size()));
      });
  auto plan = node->client<fb::ObjectList, fb::ControlCommand>("tour/plan");
  if (check(planner, "serve flatbuffers") || check(plan, "client flatbuffers"))
    return 1;
  std::thread planning([&] { (void)(*planner)->handle_one(2s); });
  auto request = (*plan)->loan_builder();
  if (check(request, "loan_builder (service)"))
    return 1;
  auto seen = build_object_list(request->builder(), 3, 2);
  auto planned = (*plan)->call(std::move(*request), seen, 2s);
  planning.join();
  if (check(planned, "call flatbuffers"))
    return 1;
  std::printf("service fb  %-28s steering %.2f rad\n", "zero-copy both ways",
              static_cast<double>((*planned)->steering_rad()));

  // A Protobuf service: request and reply serialized straight into chunks.
  auto gearbox = node->serve<pb::ControlCommand, pb::ControlCommand>(
      "tour/gear", [](const pb::ControlCommand& asked, pb::ControlCommand& reply) { reply.set_gear(asked.gear()); });
  auto shift = node->client<pb::ControlCommand, pb::ControlCommand>("tour/gear");
  if (check(gearbox, "serve protobuf") || check(shift, "client protobuf"))
    return 1;
  std::thread shifting([&] { (void)(*gearbox)->handle_one(2s); });
  auto shifted = (*shift)->call(command, 2s);
  shifting.join();
  if (check(shifted, "call protobuf"))
    return 1;
  std::printf("service pb  %-28s gear %d\n", "serialized in shared memory", static_cast<int>((*shifted)->gear()));

  // A user type with its own serializer.
  auto log_pub = node->advertise<diagnostics::LogLine>("tour/log");
  auto log_sub = node->subscribe<diagnostics::LogLine>("tour/log");
  if (check(log_pub, "log") || check(log_sub, "log"))
    return 1;
  (void)log_pub->publish(diagnostics::LogLine{.component = "planner", .text = "replanning at intersection"});
  if (auto s = log_sub->take())
    std::printf("log-line    %-28s %s: %s\n", "serialized in shared memory", s->component.c_str(), s->text.c_str());
  return refused ? 1 : 0;
}
