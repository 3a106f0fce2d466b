// A topic's message rate and bandwidth from two reads of its publishers' own counters (each node's live
// statistics segment, read_live_stats()): what `axon monitor` and `axon topic list` both show as RATE. Every
// publisher on this host counts what it published whether or not a subscriber queued it, so a topic without a
// subscriber here has a rate too (unlike its queues, queue_rates.hpp).
//
// Thread safety: none needed (values and functions of their arguments). Allocates.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "axon/domain_view.hpp"

namespace axon::tools {

/// What one publisher had published when it was read.
struct PublishedCount {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

/// Every publisher's counts at one moment, by publisher id.
struct PublishSample {
  std::int64_t at_ns = 0;  ///< CLOCK_MONOTONIC of the read; 0: no read yet.
  std::map<std::uint64_t, PublishedCount> publishers;
};

/// The counts of `publishers`, read at `at_ns`.
[[nodiscard]] PublishSample sample_published(const std::vector<PublisherTrafficView>& publishers, std::int64_t at_ns);

/// A topic's publishers' rates per second between two reads; -1 where not measured.
struct PublishRates {
  double rate_hz = -1;      ///< Messages published.
  double bytes_per_s = -1;  ///< Their payload bytes.
};

/// The rates of `topic`'s publishers from `before` to `now`, summed over the publishers both reads saw. Not
/// measured: no earlier read, or no publisher of the topic in both reads. A publisher whose count went down (a
/// torn read) is left out of this pair of reads.
[[nodiscard]] PublishRates publish_rates(const std::string& topic, const PublishSample& before,
                                         const std::vector<PublisherTrafficView>& now, std::int64_t now_ns);

}  // namespace axon::tools
