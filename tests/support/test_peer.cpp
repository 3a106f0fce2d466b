// axon_test_peer: the other process of multi-process tests.
//   axon_test_peer <command> key=value...
// Commands: publish, subscribe, hold, loan, spam, node, other-type.
// Prints "READY" once its endpoints exist, then command-specific lines.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/schema_messages.hpp"
#include "tests/support/test_messages.hpp"

namespace {

using axon::test::TestMessage;
using Clock = std::chrono::steady_clock;

struct Args {
  std::map<std::string, std::string> values;
  [[nodiscard]] std::string str(const std::string& key, const std::string& fallback = "") const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
  [[nodiscard]] std::uint64_t num(const std::string& key, std::uint64_t fallback = 0) const {
    auto it = values.find(key);
    return it == values.end() ? fallback : std::strtoull(it->second.c_str(), nullptr, 10);
  }
};

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

[[noreturn]] void fail(const std::string& what) {
  say("ERROR " + what);
  std::exit(2);
}

std::shared_ptr<axon::Node> make_node(const Args& args, const std::string& name) {
  axon::NodeOptions options;
  options.domain_id = static_cast<std::uint32_t>(args.num("domain"));
  auto node = axon::Node::create(name, options);
  if (!node) {
    fail(std::string(node.error().message()));
  }
  return *node;
}

[[noreturn]] void sleep_forever() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

template <class T>
void wait_for_subscribers(axon::Publisher<T>& pub, std::uint64_t count) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (pub.subscriber_count() < count) {
    if (Clock::now() > deadline) {
      fail("timed out waiting for subscribers");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

axon::Result<axon::PublishStatus> publish_one(axon::Publisher<TestMessage>& pub, std::uint32_t id, std::uint64_t seq) {
  for (;;) {
    auto loan = pub.loan();
    if (loan) {
      axon::test::fill(**loan, id, seq);
      return pub.publish(std::move(*loan));
    }
    if (loan.error().code() != axon::ErrorCode::kPoolExhausted) {
      return loan.error();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

int publish(const Args& args) {
  auto node = make_node(args, "peer-pub");
  auto pub = node->advertise<TestMessage>(args.str("topic"));
  if (!pub) {
    fail(std::string(pub.error().message()));
  }
  say("READY");
  wait_for_subscribers(**pub, args.num("wait_subs", 1));
  const auto id = static_cast<std::uint32_t>(args.num("id", 1));
  const std::uint64_t count = args.num("count", 1000);
  const std::uint64_t interval_us = args.num("interval_us", 0);
  std::uint64_t dropped = 0;
  for (std::uint64_t seq = 1; seq <= count; ++seq) {
    auto status = publish_one(**pub, id, seq);
    if (!status) {
      fail(std::string(status.error().message()));
    }
    dropped += status->dropped;
    if (interval_us != 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(interval_us));
    }
  }
  say("PUBLISHED " + std::to_string(count) + " dropped=" + std::to_string(dropped));
  // Stay a moment so subscribers can map our pool and drain their queues.
  std::this_thread::sleep_for(std::chrono::milliseconds(args.num("linger_ms", 500)));
  return 0;
}

int subscribe(const Args& args) {
  auto node = make_node(args, "peer-sub");
  axon::SubscriberQos qos;
  qos.depth = static_cast<std::uint32_t>(args.num("depth", 256));
  if (args.num("block", 0) != 0) {
    qos.overflow = axon::Overflow::kBlockPublisher;
    qos.block_timeout_ns = 10'000'000'000;
  }
  auto sub = node->subscribe<TestMessage>(args.str("topic"), qos);
  if (!sub) {
    fail(std::string(sub.error().message()));
  }
  say("READY");
  const std::uint64_t expect = args.num("expect", 1000);
  const bool lossless = args.num("lossless", 1) != 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(args.num("timeout_ms", 60000));
  std::map<std::uint32_t, std::uint64_t> last;
  std::uint64_t received = 0;
  std::uint64_t errors = 0;
  std::uint32_t idle = 0;
  while (received < expect && Clock::now() < deadline) {
    auto sample = sub->take();
    if (!sample) {
      if (sample.error().code() != axon::ErrorCode::kNoData) {
        fail(std::string(sample.error().message()));
      }
      // Two cores for many processes: spin briefly, then sleep.
      if (++idle > 64) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      continue;
    }
    idle = 0;
    const TestMessage& m = **sample;
    if (!axon::test::intact(m) || (*sample).info().sequence != m.sequence) {
      ++errors;
    }
    std::uint64_t& previous = last[m.publisher];
    if (lossless ? m.sequence != previous + 1 : m.sequence <= previous) {
      ++errors;
      say("ORDER publisher=" + std::to_string(m.publisher) + " got=" + std::to_string(m.sequence) +
          " after=" + std::to_string(previous));
    }
    previous = m.sequence;
    ++received;
  }
  say("RESULT received=" + std::to_string(received) + " publishers=" + std::to_string(last.size()) +
      " errors=" + std::to_string(errors));
  return received == expect && errors == 0 ? 0 : 1;
}

int hold(const Args& args) {
  auto node = make_node(args, "peer-hold");
  auto sub = node->subscribe<TestMessage>(args.str("topic"), {.depth = 64});
  if (!sub) {
    fail(std::string(sub.error().message()));
  }
  say("READY");
  const std::uint64_t count = args.num("count", 10);
  std::vector<axon::Sample<TestMessage>> held;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (held.size() < count && Clock::now() < deadline) {
    auto sample = sub->take();
    if (sample) {
      held.push_back(std::move(*sample));
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  say("HOLDING " + std::to_string(held.size()));
  sleep_forever();
}

int loan(const Args& args) {
  auto node = make_node(args, "peer-loan");
  auto pub = node->advertise<TestMessage>(args.str("topic"));
  if (!pub) {
    fail(std::string(pub.error().message()));
  }
  say("READY");
  wait_for_subscribers(**pub, args.num("wait_subs", 1));
  const auto id = static_cast<std::uint32_t>(args.num("id", 1));
  const std::uint64_t count = args.num("publish", 0);
  for (std::uint64_t seq = 1; seq <= count; ++seq) {
    if (!publish_one(**pub, id, seq)) {
      fail("publish failed");
    }
  }
  auto kept = (*pub)->loan();
  if (!kept) {
    fail(std::string(kept.error().message()));
  }
  say("LOANED");
  sleep_forever();
}

int spam(const Args& args) {
  auto node = make_node(args, "peer-spam");
  auto pub = node->advertise<TestMessage>(args.str("topic"));
  if (!pub) {
    fail(std::string(pub.error().message()));
  }
  say("READY");
  wait_for_subscribers(**pub, args.num("wait_subs", 1));
  const auto id = static_cast<std::uint32_t>(args.num("id", 1));
  for (std::uint64_t seq = 1;; ++seq) {
    if (!publish_one(**pub, id, seq)) {
      fail("publish failed");
    }
    if (seq == 100) {
      say("PUBLISHING");
    }
  }
}

int node_only(const Args& args) {
  auto node = make_node(args, "peer-node");
  say("READY");
  sleep_forever();
}

int other_type(const Args& args) {
  auto node = make_node(args, "peer-other");
  auto sub = node->subscribe<axon::test::OtherMessage>(args.str("topic"));
  if (sub) {
    say("ACCEPTED");
    return 1;
  }
  say("REFUSED " + std::string(sub.error().message()));
  return 0;
}

/// FlatBuffers ObjectLists built in shared memory.
int fb_publish(const Args& args) {
  auto node = make_node(args, "peer-fb");
  auto pub = node->advertise<axon::test::fb::ObjectList>(args.str("topic"));
  if (!pub) {
    fail(std::string(pub.error().message()));
  }
  say("READY");
  wait_for_subscribers(**pub, args.num("wait_subs", 1));
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
  auto node = make_node(args, "peer-pb");
  auto pub = node->advertise<axon::test::pb::ObjectList>(args.str("topic"));
  if (!pub) {
    fail(std::string(pub.error().message()));
  }
  say("READY");
  wait_for_subscribers(**pub, args.num("wait_subs", 1));
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

/// Bytes that are not a valid message of the topic's type, then one valid
/// message, so the subscriber can show it survived the garbage.
template <class T>
int garbage(const Args& args) {
  auto node = make_node(args, "peer-garbage");
  auto pub = node->advertise<T>(args.str("topic"));
  if (!pub) {
    fail(std::string(pub.error().message()));
  }
  say("READY");
  wait_for_subscribers(**pub, 1);
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

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <publish|subscribe|hold|loan|spam|node|other-type> key=value...\n", argv[0]);
    return 2;
  }
  Args args;
  for (int i = 2; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    if (eq != std::string::npos) {
      args.values[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  const std::string command = argv[1];
  if (command == "publish")
    return publish(args);
  if (command == "subscribe")
    return subscribe(args);
  if (command == "hold")
    return hold(args);
  if (command == "loan")
    return loan(args);
  if (command == "spam")
    return spam(args);
  if (command == "node")
    return node_only(args);
  if (command == "other-type")
    return other_type(args);
  if (command == "fb-publish")
    return fb_publish(args);
  if (command == "pb-publish")
    return pb_publish(args);
  if (command == "fb-garbage")
    return garbage<axon::test::fb::ObjectList>(args);
  if (command == "pb-garbage")
    return garbage<axon::test::pb::ObjectList>(args);
  std::fprintf(stderr, "unknown command %s\n", command.c_str());
  return 2;
}
