// Node::create with `chunk_classes: auto`: the node's pool has the classes
// derived from the topics it publishes, says so in the log naming them, and
// a topic bigger than that pool is refused at advertise() as with listed
// classes.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "axon/axon.hpp"
#include "src/base/log.hpp"
#include "tests/support/child_process.hpp"

namespace axon {
namespace {

struct Frame {
  std::array<std::uint8_t, 8192> bytes{};
};
struct Status {
  std::uint32_t code = 0;
};

constexpr const char* kPerception =
    "nodes:\n"
    "  - name: perception\n"
    "    publishes: [camera, status]\n"
    "    pool: {chunk_classes: auto}\n"
    "topics:\n"
    "  - {name: camera, max_payload_bytes: 1 MiB, rate_hz: 20, depth: 2}\n"
    "  - {name: status, max_payload_bytes: 64, depth: 4, reserved_chunks: 3}\n";

class NodePoolFromTopics : public ::testing::Test {
 protected:
  void TearDown() override {
    std::filesystem::remove_all(dir);
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }
  NodeOptions options_with(const std::string& text) {
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/deployment.yaml";
    std::ofstream(path) << text;
    NodeOptions options;
    options.domain_id = domain;
    options.config_path = path;
    return options;
  }
  std::uint32_t domain = test::unique_domain();
  std::string dir = ::testing::TempDir() + "axon_poolsize_" + std::to_string(::getpid()) + "_" + std::to_string(domain);
};

/// What axon logs at info level and above while it lives.
class InfoCapture {
 public:
  InfoCapture() : level_(logger().level()) {
    logger().sinks().push_back(sink_);
    logger().set_level(spdlog::level::info);
  }
  ~InfoCapture() {
    logger().set_level(level_);
    auto& sinks = logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  InfoCapture(const InfoCapture&) = delete;
  InfoCapture& operator=(const InfoCapture&) = delete;
  [[nodiscard]] std::string text() const { return text_.str(); }

 private:
  spdlog::level::level_enum level_;
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
};

TEST_F(NodePoolFromTopics, ANodeGetsTheClassesOfTheTopicsItPublishesAndLogsThem) {
  InfoCapture log;

  auto sut = Node::create("perception", options_with(kPerception));

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  const auto stats = (*sut)->pool_stats();
  ASSERT_EQ(stats.size(), 2U);
  EXPECT_EQ(stats[0].payload_bytes, 64U);
  EXPECT_EQ(stats[0].total_chunks, 5U) << "status: 4 (depth) + 1 (loan)";
  EXPECT_EQ(stats[1].payload_bytes, 1U << 20U);
  EXPECT_EQ(stats[1].total_chunks, 5U) << "camera: 2 (depth) + 1 (loan) + 2 (20 Hz x 100 ms)";
  const std::string text = log.text();
  EXPECT_NE(text.find("node 'perception' pool (chunk_classes: auto, from the topics it publishes): 64 B x 5 "
                      "(status), 1 MiB x 5 (camera)"),
            std::string::npos)
      << text;
}

TEST_F(NodePoolFromTopics, TheTopicsUseTheirDerivedClassesAndTheirReservations) {
  auto node = Node::create("perception", options_with(kPerception));
  ASSERT_TRUE(node.ok()) << node.error().message();

  auto camera = (*node)->advertise<Frame>("camera");
  auto status = (*node)->advertise<Status>("status");

  ASSERT_TRUE(camera.ok()) << camera.error().message();
  ASSERT_TRUE(status.ok()) << status.error().message();
  auto frame = (*camera)->loan();
  ASSERT_TRUE(frame.ok());
  const auto stats = (*node)->pool_stats();
  EXPECT_EQ(stats[0].reserved_chunks, 3U) << "the file's reserved_chunks for status, in its class";
  EXPECT_EQ(stats[1].free_chunks, 4U) << "the frame took a chunk of camera's class";
}

TEST_F(NodePoolFromTopics, ATopicBiggerThanTheDerivedPoolIsRefusedAtAdvertise) {
  auto node = Node::create("perception", options_with(kPerception));
  ASSERT_TRUE(node.ok()) << node.error().message();

  auto sut = (*node)->advertise<Frame>("map", {.max_payload_bytes = 4U << 20U});

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kPayloadTooLarge);
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("topic 'map' needs 4194304 B chunks, the largest chunk class of node 'perception' holds "
                         "1048576 B"),
            std::string::npos)
      << message;
}

TEST_F(NodePoolFromTopics, ClassesGivenInCodeWinOverAuto) {
  NodeOptions options = options_with(kPerception);
  options.chunk_classes = {{.payload_bytes = 256, .count = 2}};

  auto sut = Node::create("perception", options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_EQ((*sut)->pool_stats().size(), 1U);
  EXPECT_EQ((*sut)->pool_stats()[0].payload_bytes, 256U);
}

}  // namespace
}  // namespace axon
