// Slices and bytes between real processes over shared memory: run-time
// sizes of several element types (0 elements and the largest chunk class
// too) read where the publisher wrote them, wrong element types refused in
// both directions, and bytes endpoints on untyped and typed topics. The
// other process is axon_slice_peer (tests/support/slice_peer.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/process_maps.hpp"
#include "tests/support/slice_patterns.hpp"
#include "tests/support/slice_receive.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::inside_mapping;
using test::join;
using test::SlicePoint;

/// Takes one message per entry of `sizes` (30 s at most) and checks each:
/// its sequence, its element count, every element's value, and that it was
/// read in `pool` (a mapping's name; "" not to check).
template <class T>
std::size_t receive_sizes(Subscriber<T>& sub, const std::vector<std::size_t>& sizes, const std::string& pool) {
  return test::receive_sizes(sub, sizes, 30s, [&](auto elements) {
    if (!elements.empty() && !pool.empty()) {
      EXPECT_TRUE(inside_mapping(elements.data(), pool)) << "read in the publisher's shared memory";
      EXPECT_TRUE(inside_mapping(&elements.back(), pool));
    }
  });
}

/// The peer's chunk classes with small_pool=1: the largest holds 64 KiB.
constexpr std::size_t kLargestClass = std::size_t{64} * 1024;

class SliceProcess : public ::testing::Test {
 protected:
  ChildProcess peer(const std::string& command, std::vector<std::string> args) {
    std::vector<std::string> argv{AXON_SLICE_PEER, command, "domain=" + std::to_string(domain), "topic=frames",
                                  "small_pool=1"};
    argv.insert(argv.end(), args.begin(), args.end());
    return ChildProcess::spawn(argv);
  }
  void TearDown() override {
    node.reset();
    EXPECT_TRUE(test::domain_files(domain).empty());
  }
  /// Subscribes to Slice<E>, has the peer publish `sizes`, checks them all.
  template <class E>
  void round_trip(const std::string& elem, const std::vector<std::size_t>& sizes) {
    auto sub = node->subscribe<Slice<E>>("frames", {.depth = 64, .overflow = Overflow::kBlockPublisher});
    ASSERT_TRUE(sub.ok()) << sub.error().message();
    EXPECT_EQ(sub->data_path(), DataPath::kZeroCopy);
    auto pub = peer("publish", {"elem=" + elem, "sizes=" + join(sizes)});
    EXPECT_EQ(receive_sizes(**sub, sizes, pool_of_peer()), sizes.size()) << pub.output();
    EXPECT_EQ(sub->counters().rejected, 0U);
    (*sub).reset();
    EXPECT_EQ(pub.wait(30s), 0) << pub.output();
  }
  [[nodiscard]] std::string pool_of_peer() const { return "axon_pool_d" + std::to_string(domain) + "_slice-peer"; }

  std::uint32_t domain = test::unique_domain();
  std::shared_ptr<Node> node = *Node::create("slice-test", NodeOptions{.domain_id = domain});
};

TEST_F(SliceProcess, BytesOfRunTimeSizesArriveIntactFromEmptyToTheLargestClass) {
  round_trip<std::uint8_t>("u8", {0, 1, 255, 256, 4097, 0, kLargestClass});
}

TEST_F(SliceProcess, FloatsOfRunTimeSizesArriveIntactFromEmptyToTheLargestClass) {
  round_trip<float>("f32", {0, 1, 1000, 64, kLargestClass / sizeof(float)});
}

TEST_F(SliceProcess, StructsOfRunTimeSizesArriveIntactFromEmptyToTheLargestClass) {
  static_assert(sizeof(SlicePoint) == 16);
  round_trip<SlicePoint>("point", {0, 3, 17, kLargestClass / sizeof(SlicePoint)});
}

TEST_F(SliceProcess, ASubscriberOfAnotherElementTypeIsRefusedAcrossProcessesNamingBothTypes) {
  auto pub = node->advertise<Slice<float>>("frames");
  ASSERT_TRUE(pub.ok());
  for (const std::string elem : {"f64", "u8", "point"}) {
    auto sut = peer("subscribe", {"elem=" + elem});
    const auto line = sut.wait_for_line("", 20s);
    ASSERT_TRUE(line.has_value()) << sut.output();
    std::printf("  %s\n", line->c_str());  // the message, for whoever reads the log
    EXPECT_EQ(line->rfind("REFUSED", 0), 0U) << *line;
    EXPECT_NE(line->find("axon::Slice<float>"), std::string::npos) << *line;
    EXPECT_NE(line->find("axon::Slice<"), line->rfind("axon::Slice<")) << "names both types: " << *line;
    EXPECT_EQ(sut.wait(20s), 0);
  }
  auto same = peer("subscribe", {"elem=f32"});
  EXPECT_TRUE(same.wait_for_line("SUBSCRIBED", 20s)) << same.output();
  EXPECT_EQ(same.wait(20s), 0);
}

TEST_F(SliceProcess, APublisherOfAnotherElementTypeIsRefusedAcrossProcessesNamingBothTypes) {
  auto sub = node->subscribe<Slice<double>>("frames");
  ASSERT_TRUE(sub.ok());
  auto sut = peer("publish", {"elem=f32", "sizes=4"});
  EXPECT_EQ(sut.wait(20s), 2) << sut.output();
  EXPECT_NE(sut.output().find("axon::Slice<double>"), std::string::npos) << sut.output();
  EXPECT_NE(sut.output().find("axon::Slice<float>"), std::string::npos) << sut.output();
  EXPECT_TRUE(sub->take().empty());
}

TEST_F(SliceProcess, BytesOfAnUntypedTopicMakeTheRoundTrip) {
  const std::vector<std::size_t> sizes{0, 5, 300, kLargestClass};
  auto sub = node->subscribe<Bytes>("frames", {.depth = 64, .overflow = Overflow::kBlockPublisher});
  ASSERT_TRUE(sub.ok()) << sub.error().message();
  auto pub = peer("bytes", {"sizes=" + join(sizes)});
  const std::size_t received = test::receive_bytes(**sub, sizes, 30s);
  EXPECT_EQ(received, sizes.size()) << pub.output();
  (*sub).reset();
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

TEST_F(SliceProcess, BytesThatCarryASliceReachItsTypedSubscriberInAnotherProcess) {
  const std::vector<std::size_t> floats{0, 1, 4000};
  auto sub = node->subscribe<Slice<float>>("frames", {.depth = 64, .overflow = Overflow::kBlockPublisher});
  ASSERT_TRUE(sub.ok());
  auto pub = peer("bytes", {"carries=f32", "sizes=0,4,16000"});
  EXPECT_EQ(receive_sizes(**sub, floats, pool_of_peer()), floats.size()) << pub.output();
  EXPECT_EQ(sub->counters().rejected, 0U);
  (*sub).reset();
  EXPECT_EQ(pub.wait(30s), 0) << pub.output();
}

}  // namespace
}  // namespace axon
