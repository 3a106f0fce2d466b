// Issue 13 across real processes: vectors of structs of every size 1..32 and
// alignment 1..16, published in this process and verified by a subscriber in
// another. Built with axon::create_uninitialized_struct_vector() every message
// arrives and verifies; built with upstream's CreateUninitializedVectorOfStructs
// a bad buffer is an error from publish(), never a silent delivered = 1; and
// what a subscriber rejects is counted where the publisher reads it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "axon/serializers/flatbuffers.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/struct_size_messages.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::VectorCall;

constexpr std::size_t kCounts[] = {0, 1, 2, 3, 5, 8, 13, 33};
constexpr std::uint16_t kTags[] = {0, 5};
/// Index part of the end marker's stamp: the last message of every topic.
constexpr std::uint64_t kEndIndex = 0xFFFF'FFFF;
using Wide = test::StructCombo<test::sizes::V16A8, test::sizes::S16A8, 16, 8>;

/// A message's stamp says how many elements it has (high half) and which
/// message of its topic it is (low half), so the subscriber can check it.
std::uint64_t stamp_of(std::size_t count, std::uint64_t index) { return (std::uint64_t{count} << 32) | index; }

std::string topic_of(const std::string& combo) { return "sizes/" + combo; }

NodeOptions options_for(std::uint32_t domain) {
  NodeOptions options;
  options.domain_id = domain;
  options.chunk_classes = {{.payload_bytes = 4096, .count = 512}};
  return options;
}

/// The other process: subscribes to every combination's topic and to
/// "rejects", takes until each topic's end marker, prints one line per topic
/// ("TOPIC <combo> taken=N bad=N rejected=N first_problem") and "DONE".
int subscriber_process(std::uint32_t domain) {
  auto node = Node::create("sizes-subscriber", options_for(domain));
  if (!node) {
    std::printf("ERROR %s\n", std::string(node.error().message()).c_str());
    return 1;
  }
  struct Topic {
    std::string combo;
    std::function<bool()> take_one;  // false when nothing was queued
    std::uint64_t taken = 0;
    std::uint64_t bad = 0;
    std::string problem;
    bool ended = false;
    std::function<std::uint64_t()> rejected;
  };
  std::vector<std::unique_ptr<Topic>> topics;
  auto add = [&](auto combo, const std::string& name) {
    using Combo = decltype(combo);
    auto sub = (*node)->template subscribe<typename Combo::Table>(topic_of(name), {.depth = 256});
    if (!sub) {
      std::printf("ERROR %s\n", std::string(sub.error().message()).c_str());
      return;
    }
    auto topic = std::make_unique<Topic>();
    Topic* t = topic.get();
    t->combo = name;
    std::shared_ptr<Subscriber<typename Combo::Table>> s = *sub;
    t->rejected = [s] { return s->counters().rejected; };
    t->take_one = [s, t] {
      auto sample = s->take();
      if (!sample) {
        return false;
      }
      const std::uint64_t stamp = (*sample)->stamp();
      if ((stamp & 0xFFFF'FFFF) == kEndIndex) {
        t->ended = true;
        return true;
      }
      ++t->taken;
      // Offsets count from the message's first byte (the chunk's payload).
      const std::string problem = test::struct_message_problem<Combo>(
          **sample, static_cast<const std::uint8_t*>((*sample).data()), stamp >> 32, stamp);
      if (!problem.empty()) {
        ++t->bad;
        if (t->problem.empty()) {
          t->problem = problem;
        }
      }
      return true;
    };
    topics.push_back(std::move(topic));
  };
  test::for_each_struct_combo([&](auto combo) { add(combo, decltype(combo)::name()); });
  add(Wide{}, "rejects");  // the publisher sends one corrupt message here
  std::printf("READY\n");
  std::fflush(stdout);
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  for (bool all_ended = false; !all_ended && std::chrono::steady_clock::now() < deadline;) {
    all_ended = true;
    bool any = false;
    for (auto& t : topics) {
      while (t->take_one()) {
        any = true;
      }
      all_ended = all_ended && t->ended;
    }
    if (!any) {
      std::this_thread::sleep_for(200us);
    }
  }
  for (auto& t : topics) {
    std::printf("TOPIC %s taken=%llu bad=%llu rejected=%llu ended=%d %s\n", t->combo.c_str(),
                static_cast<unsigned long long>(t->taken), static_cast<unsigned long long>(t->bad),
                static_cast<unsigned long long>(t->rejected()), t->ended ? 1 : 0, t->problem.c_str());
  }
  std::printf("DONE\n");
  std::fflush(stdout);
  return 0;
}

/// What the subscriber process printed for one topic.
struct Seen {
  std::uint64_t taken = 0;
  std::uint64_t bad = 0;
  std::uint64_t rejected = 0;
  int ended = 0;
  std::string problem;
};

std::map<std::string, Seen> parse_topics(const std::string& output) {
  std::map<std::string, Seen> seen;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    char combo[32] = {};
    unsigned long long taken = 0;
    unsigned long long bad = 0;
    unsigned long long rejected = 0;
    int ended = 0;
    int consumed = 0;
    if (std::sscanf(line.c_str(), "TOPIC %31s taken=%llu bad=%llu rejected=%llu ended=%d %n", combo, &taken, &bad,
                    &rejected, &ended, &consumed) == 5) {
      seen[combo] = Seen{.taken = taken,
                         .bad = bad,
                         .rejected = rejected,
                         .ended = ended,
                         .problem = line.substr(static_cast<std::size_t>(consumed))};
    }
  }
  return seen;
}

/// What this process sent on one topic.
struct Sent {
  std::uint64_t delivered = 0;
  std::uint64_t refused = 0;
  std::string first_error;
};

/// Publishes every count and tag with `call` on `pub`, verifying every message.
template <class Combo>
void publish_all(Publisher<typename Combo::Table>& pub, VectorCall call, std::uint64_t& index, Sent& sent) {
  for (std::size_t count : kCounts) {
    for (std::uint16_t tag : kTags) {
      auto loan = pub.loan_builder();
      ASSERT_TRUE(loan.ok()) << loan.error().message();
      const std::uint64_t stamp = stamp_of(count, ++index);
      auto root = test::build_struct_message<Combo>(loan->builder(), call, count, stamp, tag);
      auto status = pub.publish(std::move(*loan), root);
      if (status.ok()) {
        EXPECT_EQ(status->delivered, 1U) << Combo::name() << " count " << count << " tag " << tag;
        sent.delivered += status->delivered;
        continue;
      }
      EXPECT_EQ(status.error().code(), ErrorCode::kMalformed) << status.error().message();
      EXPECT_EQ(call, VectorCall::kUpstreamUninitialized)
          << Combo::name() << " count " << count << " tag " << tag << ": " << status.error().message();
      ++sent.refused;
      if (sent.first_error.empty()) {
        sent.first_error = std::string(status.error().message());
      }
    }
  }
}

template <class Combo>
void publish_end(Publisher<typename Combo::Table>& pub) {
  auto loan = pub.loan_builder();
  ASSERT_TRUE(loan.ok());
  auto root = test::build_struct_message<Combo>(loan->builder(), VectorCall::kAxonHelper, 0, kEndIndex, 0);
  ASSERT_TRUE(pub.publish(std::move(*loan), root).ok());
}

bool is_power_of_two(std::size_t n) { return (n & (n - 1)) == 0; }

TEST(FlatBuffersStructVectorProcess, EveryStructSizeAndAlignmentArrivesOrIsRefusedAtPublish) {
  const std::uint32_t domain = test::unique_domain();
  // Fork before this process has threads (no node yet).
  auto child = ChildProcess::fork_and_run([domain] { return subscriber_process(domain); });
  ASSERT_TRUE(child.wait_for_line("READY", 60s)) << child.output();
  {
    // A node has room for 32 publishers: a new one every 30 topics.
    std::vector<std::shared_ptr<Node>> nodes;
    std::size_t publishers = 0;
    auto next_node = [&]() -> Node& {
      if (publishers++ % 30 == 0) {
        auto node = Node::create("sizes-publisher-" + std::to_string(nodes.size()), options_for(domain));
        EXPECT_TRUE(node.ok()) << node.error().message();
        nodes.push_back(*node);
      }
      return *nodes.back();
    };
    std::map<std::string, Sent> sent_with_helper;
    std::map<std::string, Sent> sent_raw;
    test::for_each_struct_combo([&](auto combo) {
      using Combo = decltype(combo);
      auto pub = next_node().template advertise<typename Combo::Table>(topic_of(Combo::name()),
                                                                       {.verify_every_message = true});
      ASSERT_TRUE(pub.ok()) << pub.error().message();
      ASSERT_TRUE(test::eventually([&] { return (*pub)->subscriber_count() == 1; }, 30s)) << Combo::name();
      std::uint64_t index = 0;
      publish_all<Combo>(**pub, VectorCall::kAxonHelper, index, sent_with_helper[Combo::name()]);
      publish_all<Combo>(**pub, VectorCall::kUpstreamUninitialized, index, sent_raw[Combo::name()]);
      publish_end<Combo>(**pub);
      // Let the other process catch up before the next topic, so the pool
      // never runs dry while it lags (2 shared cores).
      EXPECT_TRUE(test::eventually(
          [&] {
            SubscriberFill fill;
            return (*pub)->subscriber_fill(std::span<SubscriberFill>(&fill, 1)) == 1 && fill.queued == 0;
          },
          30s))
          << Combo::name() << ": the subscriber process took nothing for 30 s";
    });

    // A message that only a subscriber's Verifier sees is bad: the default
    // publisher checks its first message only.
    auto rejects = next_node().advertise<Wide::Table>(topic_of("rejects"));
    ASSERT_TRUE(rejects.ok());
    ASSERT_TRUE(test::eventually([&] { return (*rejects)->subscriber_count() == 1; }, 30s));
    for (std::uint64_t index = 1; index <= 2; ++index) {
      auto loan = (*rejects)->loan_builder();
      ASSERT_TRUE(loan.ok());
      auto& fbb = loan->builder();
      Wide::Struct* out = nullptr;
      auto items = create_uninitialized_struct_vector(fbb, 1, &out);
      *out = Wide::Struct();
      if (index == 2) {  // claims more elements than the buffer holds
        flatbuffers::WriteScalar(reinterpret_cast<std::uint8_t*>(out) - sizeof(flatbuffers::uoffset_t),
                                 flatbuffers::uoffset_t{0x10000000});
      }
      Wide::Table::Builder builder(fbb);
      builder.add_stamp(stamp_of(index == 2 ? 0x10000000 : 1, index));
      builder.add_items(items);
      auto status = (*rejects)->publish(std::move(*loan), builder.Finish());
      ASSERT_TRUE(status.ok()) << status.error().message();
      EXPECT_EQ(status->delivered, 1U);
    }
    publish_end<Wide>(**rejects);

    ASSERT_TRUE(child.wait_for_line("DONE", 120s)) << child.output();
    EXPECT_TRUE(test::eventually([&] { return (*rejects)->counters().rejected_by_subscribers == 1; }, 30s))
        << "the subscriber in the other process dropped message 2; its publisher counts "
        << (*rejects)->counters().rejected_by_subscribers;

    const std::map<std::string, Seen> seen = parse_topics(child.output());
    int combos = 0;
    test::for_each_struct_combo([&](auto combo) {
      using Combo = decltype(combo);
      ++combos;
      const std::string name = Combo::name();
      ASSERT_TRUE(seen.contains(name)) << child.output();
      const Seen& s = seen.at(name);
      const Sent& helper = sent_with_helper[name];
      const Sent& raw = sent_raw[name];
      EXPECT_EQ(helper.refused, 0U) << name << ": " << helper.first_error;
      EXPECT_EQ(helper.delivered, std::size(kCounts) * std::size(kTags)) << name;
      EXPECT_EQ(s.ended, 1) << name;
      EXPECT_EQ(s.taken, helper.delivered + raw.delivered) << name << ": every message publish() delivered arrives";
      EXPECT_EQ(s.bad, 0U) << name << ": " << s.problem;
      EXPECT_EQ(s.rejected, 0U) << name << ": no message the subscriber drops";
      if (is_power_of_two(Combo::kSize)) {
        EXPECT_EQ(raw.refused, 0U) << name << ": upstream's call is right for power-of-two sizes: " << raw.first_error;
      }
    });
    EXPECT_EQ(combos, test::kStructCombosRun);
    std::string refused;
    for (const auto& [name, sent] : sent_raw) {
      if (sent.refused > 0) {
        refused += " " + name + ":" + std::to_string(sent.refused);
      }
    }
    std::printf("upstream's call refused at publish (struct: messages of %zu):%s\n",
                std::size(kCounts) * std::size(kTags), refused.c_str());
    EXPECT_GT(sent_raw["S12A4"].refused, 0U) << "three floats: upstream's call built bad buffers that were refused";
    EXPECT_NE(sent_raw["S12A4"].first_error.find("axon::create_uninitialized_struct_vector"), std::string::npos)
        << sent_raw["S12A4"].first_error;
    EXPECT_EQ(seen.at("rejects").rejected, 1U);
    EXPECT_EQ(seen.at("rejects").taken, 1U);
  }
  EXPECT_EQ(child.wait(30s), 0) << child.output();
  EXPECT_TRUE(test::domain_files(domain).empty());
}

}  // namespace
}  // namespace axon
