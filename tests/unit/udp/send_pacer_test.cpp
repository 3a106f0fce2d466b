// The pace of a RELIABLE writer whose receiver loses datagrams.
#include "transports/udp/send_pacer.hpp"

#include <gtest/gtest.h>

namespace axon::udp {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::size_t kMiB = 1U << 20U;

/// Sends 1 MiB every `gap_ms` from `from_ms` to `to_ms`.
void send_steadily(SendPacer& sut, std::int64_t from_ms, std::int64_t to_ms, std::int64_t gap_ms) {
  for (std::int64_t t = from_ms; t < to_ms; t += gap_ms) {
    sut.sent(t * kMs, kMiB);
  }
}

TEST(SendPacer, WithoutLossNothingWaits) {
  SendPacer sut;
  send_steadily(sut, 1, 500, 1);

  EXPECT_EQ(sut.delay_ns(500 * kMs), 0);
  EXPECT_EQ(sut.bytes_per_second(), SendPacer::kUnlimited);
}

TEST(SendPacer, ALossCutsTheRateBelowWhatWasSent) {
  SendPacer sut;
  send_steadily(sut, 1, 500, 1);  // about 1 GiB/s
  const std::int64_t now = 500 * kMs;

  sut.on_loss(now, 10, 20);
  sut.sent(now, kMiB);

  EXPECT_GT(sut.bytes_per_second(), 0.5e9);
  EXPECT_LT(sut.bytes_per_second(), 1.0e9);
  EXPECT_GT(sut.delay_ns(now), 0);  // 1 MiB at under 1 GB/s takes over 1 ms
}

TEST(SendPacer, LossesOfMessagesSentBeforeTheCutCountOnce) {
  SendPacer sut;
  send_steadily(sut, 1, 500, 1);
  sut.on_loss(500 * kMs, 10, 20);
  const double after_first = sut.bytes_per_second();

  sut.on_loss(600 * kMs, 15, 30);  // sent before the cut: the same overrun

  EXPECT_EQ(sut.bytes_per_second(), after_first);
}

TEST(SendPacer, ANewOverrunCutsAgainAfterTheInterval) {
  SendPacer sut;
  send_steadily(sut, 1, 500, 1);
  sut.on_loss(500 * kMs, 10, 20);
  const double after_first = sut.bytes_per_second();

  sut.on_loss(510 * kMs, 25, 30);  // too soon
  EXPECT_EQ(sut.bytes_per_second(), after_first);
  sut.on_loss(500 * kMs + SendPacer::kDecreaseIntervalNs, 25, 30);

  EXPECT_LT(sut.bytes_per_second(), after_first);
}

TEST(SendPacer, TheRateGrowsBackWithoutLossButNotBeyondWhatIsSent) {
  SendPacer sut;
  send_steadily(sut, 1, 500, 1);
  sut.on_loss(500 * kMs, 10, 20);
  const double cut = sut.bytes_per_second();

  send_steadily(sut, 500, 600, 2);  // the writer keeps close to the limit
  (void)sut.delay_ns(600 * kMs);
  const double grown = sut.bytes_per_second();
  EXPECT_GT(grown, cut);

  send_steadily(sut, 600, 3000, 100);  // a slow writer: about 10 MB/s
  (void)sut.delay_ns(3000 * kMs);
  EXPECT_EQ(sut.bytes_per_second(), grown);  // a limit it does not reach does not grow
}

TEST(SendPacer, AReceiverAWholeHistoryBehindHalvesTheRateAtOnce) {
  SendPacer sut;
  send_steadily(sut, 1, 500, 1);
  sut.on_loss(500 * kMs, 10, 20);
  const double cut = sut.bytes_per_second();

  sut.on_history_overrun(501 * kMs);  // within the decrease interval: cuts anyway

  EXPECT_DOUBLE_EQ(sut.bytes_per_second(), cut / 2);
}

TEST(SendPacer, TheRateNeverFallsBelowTheFloor) {
  SendPacer sut;
  sut.sent(1 * kMs, 1000);
  for (std::uint64_t i = 0; i < 20; ++i) {
    sut.on_loss(static_cast<std::int64_t>(i + 1) * SendPacer::kDecreaseIntervalNs, 100 + i * 10, 105 + i * 10);
  }

  EXPECT_GE(sut.bytes_per_second(), SendPacer::kMinBytesPerSecond);
}

}  // namespace
}  // namespace axon::udp
