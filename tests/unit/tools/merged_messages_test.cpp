// MergedMessages: several files' messages as one stream in log-time order, files in the order given among equal
// times, each message's bytes intact.
#include "src/tools/axon/play/merged_messages.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "src/tools/mcap/writer.hpp"

namespace axon::tools {
namespace {

/// A file of one channel whose messages carry their own log time (one byte: its value) at `times`.
std::string write_file(const std::string& tag, const std::vector<std::uint8_t>& times) {
  const std::string path = ::testing::TempDir() + "merged_" + tag + "_" + std::to_string(::getpid()) + ".mcap";
  auto writer = mcap::Writer::create(path, mcap::WriterOptions{.chunk_messages = 2});
  EXPECT_TRUE(writer.ok());
  auto channel = (*writer)->add_channel(0, "t", "axon.raw");
  for (const std::uint8_t t : times) {
    EXPECT_TRUE((*writer)->add_message(mcap::MessageHeader{.channel_id = *channel, .log_time = t}, {&t, 1}).ok());
  }
  EXPECT_TRUE((*writer)->close().ok());
  return path;
}

class MergedMessagesReadAhead : public ::testing::TestWithParam<std::size_t> {};

TEST_P(MergedMessagesReadAhead, GivesTheFilesMessagesInLogTimeOrder) {
  std::vector<std::unique_ptr<mcap::Reader>> readers;
  for (const auto& [tag, times] : std::vector<std::pair<std::string, std::vector<std::uint8_t>>>{
           {"a", {1, 4, 4, 9}}, {"b", {2, 3, 4, 10, 11}}, {"c", {}}}) {
    const std::string path = write_file(tag, times);
    auto reader = mcap::Reader::open(path);
    (void)std::remove(path.c_str());  // the reader keeps it open
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    readers.push_back(std::move(*reader));
  }
  MergedMessages sut(readers, GetParam());

  std::vector<std::pair<std::uint64_t, std::size_t>> got;
  FileMessage message;
  for (;;) {
    auto more = sut.next(message);
    ASSERT_TRUE(more.ok()) << more.error().message();
    if (!*more) {
      break;
    }
    ASSERT_EQ(message.message.data.size(), 1U);
    EXPECT_EQ(message.message.data[0], message.message.header.log_time);  // the bytes are the message's own
    got.emplace_back(message.message.header.log_time, message.file);
  }

  const std::vector<std::pair<std::uint64_t, std::size_t>> expected = {{1, 0}, {2, 1}, {3, 1},  {4, 0}, {4, 0},
                                                                       {4, 1}, {9, 0}, {10, 1}, {11, 1}};
  EXPECT_EQ(got, expected);
}

INSTANTIATE_TEST_SUITE_P(ChunksReadAhead, MergedMessagesReadAhead, ::testing::Values(0, 2),
                         [](const auto& info) { return "read_ahead_" + std::to_string(info.param); });

}  // namespace
}  // namespace axon::tools
