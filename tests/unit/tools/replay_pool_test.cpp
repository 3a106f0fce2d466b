// The pool `axon play` publishes from: chunks per replayed channel of its largest payload, so that topics replayed
// from one process do not wait for each other's few large chunks (the urban replay fell seconds behind on a
// default pool: six camera topics, four 4 MiB chunks).
#include "src/tools/axon/play/replay_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace axon::tools {
namespace {

std::uint32_t chunks_of(const std::vector<ChunkClassConfig>& classes, std::uint32_t payload_bytes) {
  const auto found = std::find_if(classes.begin(), classes.end(),
                                  [&](const ChunkClassConfig& c) { return c.payload_bytes == payload_bytes; });
  return found == classes.end() ? 0 : found->count;
}

TEST(ReplayPool, SixCameraChannelsGetChunksOfTheirOwnEachForWhatSubscribersHoldAtTheirRate) {
  const std::vector<ReplayDemand> cameras(6, ReplayDemand{.payload_bytes = 2U << 20U, .rate_hz = 30});
  const auto sut = replay_pool_classes(cameras);

  // 30 Hz over 200 ms is 6 messages, + 2: 8 per camera.
  EXPECT_EQ(chunks_of(sut, 2U << 20U), 6U * 8U);
  // The default classes stay, for channels whose size the file does not say.
  EXPECT_EQ(chunks_of(sut, 4U << 20U), 4U);
  EXPECT_EQ(chunks_of(sut, 256), 1024U);
}

TEST(ReplayPool, AFastChannelGetsTheMessagesOfTheHoldWindowAndAChannelOfADefaultSizeAddsToItsClass) {
  const std::vector<ReplayDemand> demands{{.payload_bytes = 64, .rate_hz = 1000},
                                          {.payload_bytes = 4096, .rate_hz = 1}};
  const auto sut = replay_pool_classes(demands);

  EXPECT_EQ(chunks_of(sut, 64), 202U);         // 1000 Hz x 200 ms + 2
  EXPECT_EQ(chunks_of(sut, 4096), 256U + 8U);  // the default 256, + the fewest a channel gets
}

TEST(ReplayPool, SizesAreRoundedToCacheLinesAndAChannelOfUnknownSizeAddsNothing) {
  const std::vector<ReplayDemand> demands{{.payload_bytes = 1000, .rate_hz = 10}, {.payload_bytes = 0, .rate_hz = 500}};
  const auto sut = replay_pool_classes(demands);

  EXPECT_EQ(chunks_of(sut, 1024), 8U);
  EXPECT_EQ(sut.size(), 7U);  // the six defaults and 1024 B
}

TEST(ReplayPool, MoreThanSixteenSizesAreMergedIntoLargerClassesKeepingEveryChunk) {
  std::vector<ReplayDemand> demands;
  for (std::uint64_t i = 1; i <= 20; ++i) {
    demands.push_back(ReplayDemand{.payload_bytes = 100'000 * i, .rate_hz = 1});
  }
  const auto sut = replay_pool_classes(demands);

  ASSERT_EQ(sut.size(), kMaxReplayClasses);
  std::uint64_t chunks = 0;
  for (std::size_t i = 0; i < sut.size(); ++i) {
    chunks += sut[i].count;
    if (i > 0) {
      EXPECT_GT(sut[i].payload_bytes, sut[i - 1].payload_bytes);
    }
  }
  std::uint64_t wanted = 20 * kMinReplayChunks;
  for (const ChunkClassConfig& c : default_chunk_classes()) {
    wanted += c.count;
  }
  EXPECT_EQ(chunks, wanted);
  EXPECT_GE(sut.back().payload_bytes, 16U << 20U);  // the largest class still holds the largest payload
}

TEST(ReplayPool, TheDescriptionNamesEachClassAndTheTotal) {
  const std::vector<ChunkClassConfig> classes{{.payload_bytes = 256, .count = 4},
                                              {.payload_bytes = 2U << 20U, .count = 2}};
  EXPECT_EQ(describe_pool(classes), "256 B x 4, 2 MiB x 2; 4.0 MiB in all");
}

}  // namespace
}  // namespace axon::tools
