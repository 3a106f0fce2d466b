// The pool `axon play` publishes from, sized from the files it replays. One replaying process stands for every
// recorded publisher, so a default pool (four 4 MiB chunks) would make six camera topics wait for each other's
// chunks while the subscribers hold them, and the replay would fall seconds behind its clock. Each channel gets
// chunks of its largest payload instead (docs/design/replay.md, "The pool"):
//   chunks = max(kMinReplayChunks, messages of kReplayHoldWindowMs at the channel's recorded rate + 2),
// channels of one size share a class (counts added), the default classes stay for payloads of unknown size,
// and beyond 16 classes the smaller class whose merge costs least memory joins the next larger one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "axon/options.hpp"

namespace axon::tools {

/// Fewest chunks a replayed channel gets.
inline constexpr std::uint64_t kMinReplayChunks = 8;
/// How long subscribers are assumed to hold what they took (a recorder holds a chunk's worth of messages).
inline constexpr double kReplayHoldWindowMs = 200;
/// Classes of one pool (the shared-memory pool's bound).
inline constexpr std::size_t kMaxReplayClasses = 16;

/// What one replayed channel needs: its largest payload (0: unknown) and its recorded rate.
struct ReplayDemand {
  std::uint64_t payload_bytes = 0;
  double rate_hz = 0;
};

/// The chunk classes for `demands` (sizes growing strictly, at most kMaxReplayClasses). Allocates.
[[nodiscard]] std::vector<ChunkClassConfig> replay_pool_classes(std::span<const ReplayDemand> demands);

/// "256 B x 1080, 2 MiB x 60, ...; 163.2 MiB in all", for the replay's report.
[[nodiscard]] std::string describe_pool(std::span<const ChunkClassConfig> classes);

}  // namespace axon::tools
