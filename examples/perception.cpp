// axon-example-perception: publishes the objects of a (simulated) lidar scan
// on "perception/objects" at 100 Hz, written in place in shared memory.
//
//   AXON_DOMAIN=7 axon-example-planning &
//   AXON_DOMAIN=7 axon-example-perception --duration 5
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "axon/axon.hpp"
#include "example_support.hpp"
#include "object_list.hpp"

namespace {

using examples::LidarTarget;
using examples::ObjectClass;
using examples::ObjectList;

constexpr const char* kTopic = "perception/objects";
constexpr std::int64_t kRateHz = 100;
constexpr std::int64_t kPeriodNs = examples::kNsPerSecond / kRateHz;
constexpr char kFrameId[ObjectList::kFrameIdBytes] = "lidar_top";

std::int16_t to_cm(double metres) {
  return static_cast<std::int16_t>(std::clamp(std::lround(metres * 100.0), -32767L, 32767L));
}

/// Writes a made-up but plausible scan into `scan`: eight lanes of traffic
/// moving past the vehicle. `scan` is the loaned shared memory itself, so
/// this is the only time these bytes are written.
void fill_scan(ObjectList& scan, std::uint64_t sequence, std::int64_t scan_time_ns, std::int64_t start_ns) {
  scan.sequence = sequence;
  scan.scan_time_ns = scan_time_ns;
  std::memcpy(scan.frame_id, kFrameId, sizeof(kFrameId));
  scan.target_count = ObjectList::kMaxTargets;
  scan.reserved = 0;

  constexpr int kLanes = 8;
  constexpr double kLaneWidthM = 3.5;
  constexpr double kRangeM = 100.0;  // targets wrap around within ±kRangeM
  const double t = static_cast<double>(scan_time_ns - start_ns) / 1e9;
  for (std::uint32_t i = 0; i < ObjectList::kMaxTargets; ++i) {
    const int lane = static_cast<int>(i % kLanes);
    const int slot = static_cast<int>(i / kLanes);
    const double speed = (lane < kLanes / 2 ? -1.0 : 1.0) * (4.0 + 2.0 * lane);  // m/s, oncoming on the left
    const double x = std::fmod(slot * 12.5 + speed * t + 3 * kRangeM, 2 * kRangeM) - kRangeM;
    const auto object_class = static_cast<ObjectClass>(1 + i % 4);
    struct Box {
      std::uint8_t length_dm, width_dm, height_dm;
    };
    const Box box = object_class == ObjectClass::kCar          ? Box{45, 18, 15}
                    : object_class == ObjectClass::kTruck      ? Box{165, 25, 38}
                    : object_class == ObjectClass::kPedestrian ? Box{6, 6, 17}
                                                               : Box{18, 6, 17};
    LidarTarget& target = scan.targets[i];
    target.x_cm = to_cm(x);
    target.y_cm = to_cm((lane - (kLanes - 1) / 2.0) * kLaneWidthM);
    target.vx_cm_per_s = to_cm(speed);
    target.vy_cm_per_s = 0;
    target.track_id = static_cast<std::uint16_t>(i + 1);
    target.z_dm = static_cast<std::int8_t>(box.height_dm / 2);
    target.length_dm = box.length_dm;
    target.width_dm = box.width_dm;
    target.height_dm = box.height_dm;
    target.confidence_pct = static_cast<std::uint8_t>(60 + (std::uint64_t{i} * 7 + sequence) % 40);
    target.object_class = object_class;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one line at a time, also into a pipe
  const examples::CommandLine cmd = examples::parse_command_line(
      argc, argv, "Publishes a 2 KiB lidar object list (128 targets) on perception/objects at 100 Hz.");
  examples::install_stop_handlers();

  auto node = axon::Node::create("perception");
  if (!node) {
    examples::report_error("perception: cannot join the axon domain", node.error());
    return 1;
  }
  auto publisher = node->advertise<ObjectList>(kTopic);
  if (!publisher) {
    examples::report_error("perception: cannot advertise perception/objects", publisher.error());
    return 1;
  }
  std::printf("perception: publishing %s (%zu B, %zu targets) at %lld Hz on domain %u\n", kTopic, sizeof(ObjectList),
              ObjectList::kMaxTargets, static_cast<long long>(kRateHz), node->domain_id());

  const std::int64_t start_ns = examples::monotonic_now_ns();
  const std::int64_t deadline_ns = examples::deadline_ns(cmd, start_ns);
  std::uint64_t published = 0;
  std::uint64_t deliveries = 0;      // summed over subscribers
  std::uint64_t dropped = 0;         // a subscriber's queue was full
  std::uint64_t pool_exhausted = 0;  // no chunk to write into: the scan is skipped
  std::uint64_t missed_ticks = 0;    // we were late by more than a period
  std::int64_t tick_ns = start_ns;
  while (!examples::stop_requested() && tick_ns < deadline_ns) {
    if (!examples::sleep_until_ns(tick_ns)) {
      continue;  // a signal woke us: look at the stop flag, then sleep on
    }
    auto loan = publisher->loan();
    if (loan.exhausted()) {
      ++pool_exhausted;  // back-pressure, an outcome, not a failure: this scan is lost
    } else if (loan.failed()) {
      examples::report_error("perception: loan failed", loan.error());
      return 1;
    } else {
      fill_scan(**loan, published + 1, tick_ns, start_ns);  // in place: zero copy
      auto status = publisher->publish(std::move(*loan));
      if (!status) {
        examples::report_error("perception: publish failed", status.error());
        return 1;
      }
      ++published;
      deliveries += status->delivered;
      dropped += status->dropped;
    }
    // Next tick on the absolute grid, so the rate does not drift; after a
    // stall, skip the ticks already past instead of bursting to catch up.
    tick_ns += kPeriodNs;
    if (const std::int64_t now = examples::monotonic_now_ns(); now - tick_ns >= kPeriodNs) {
      const std::int64_t behind = (now - tick_ns) / kPeriodNs;
      missed_ticks += static_cast<std::uint64_t>(behind);
      tick_ns += behind * kPeriodNs;
    }
  }

  const double elapsed_s = static_cast<double>(examples::monotonic_now_ns() - start_ns) / 1e9;
  std::printf(
      "perception: published %llu scans in %.2f s (%llu deliveries, %llu dropped at full queues, "
      "%llu skipped for an exhausted pool, %llu ticks missed)\n",
      static_cast<unsigned long long>(published), elapsed_s, static_cast<unsigned long long>(deliveries),
      static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(pool_exhausted),
      static_cast<unsigned long long>(missed_ticks));
  return 0;
}
