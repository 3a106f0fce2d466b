// The verdicts of a chaos run, each PASS or FAIL with the figures it rests
// on: reliable streams (nothing lost, duplicated or out of order per
// publisher incarnation), payloads intact, pools back to free, latency of
// the topics no fault touched, liveliness and deadline handlers fired for
// exactly the faulted components, nothing left behind. Pure functions of
// what the run reported, so that tests can feed them made-up runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chaos/chaos_payload.hpp"
#include "chaos/chaos_run.hpp"

namespace axon_bench {

struct CheckResult {
  std::string name;
  bool pass = false;
  std::string figure;  ///< What was measured.
  std::string bound;   ///< What PASS requires.
};

/// One subscription of a reliable topic, with what its publishers and its
/// own component's incarnations did.
struct ReliableInput {
  std::string label;  ///< "topic -> component".
  std::vector<StreamRecord> streams;
  std::uint64_t overflowed = 0;                  ///< Messages of streams the tracker had no room for.
  std::vector<PublisherIncarnation> publishers;  ///< By incarnation, as many as ran.
  std::vector<IncarnationReport> subscribers;    ///< The subscribing component's incarnations.
  std::vector<bool> subscriber_killed;
  std::size_t expected_subscribers = 0;  ///< The topic's subscriber count.
};

/// What one stream lacks or has too much of.
struct StreamVerdict {
  std::uint64_t lost = 0;  ///< Skipped inside the stream.
  std::uint64_t duplicates = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t missing_head = 0;  ///< Published before its first message although the subscriber was there.
  std::uint64_t missing_tail = 0;  ///< Published after its last message although the subscriber stayed.
  std::uint64_t beyond = 0;        ///< Sequence numbers its publisher never sent.
  [[nodiscard]] bool ok() const noexcept {
    return lost + duplicates + out_of_order + missing_head + missing_tail + beyond == 0;
  }
};

/// `stream`, of a publisher incarnation that ran as `publisher` (killed or
/// not), received by a subscriber incarnation that connected at
/// `subscriber_connected_ns` and ran to the end unless `subscriber_killed`.
StreamVerdict judge_stream(const StreamRecord& stream, const PublisherIncarnation& publisher,
                           std::int64_t subscriber_connected_ns, bool subscriber_killed,
                           std::size_t expected_subscribers);

/// Every stream of every reliable subscription, and the streams that should
/// exist and do not (a publisher incarnation a surviving subscriber never heard).
CheckResult check_reliable(const std::vector<ReliableInput>& inputs);

/// Every message taken had its checksum right.
CheckResult check_intact(std::uint64_t received, std::uint64_t corrupt);

/// One subscription's handler calls and what the faults make of it.
struct HandlerInput {
  std::string label;
  std::uint64_t events = 0;
  bool expected = false;   ///< The faults must make it fire.
  bool explained = false;  ///< It may fire (expected, or its own component was faulted).
};

/// `kind` ("publisher-lost", "deadline"): fired wherever expected, nowhere unexplained.
CheckResult check_handlers(const std::string& kind, const std::vector<HandlerInput>& inputs);

/// One topic and subscriber's p99 with faults (over messages no fault touched) and without.
struct LatencyInput {
  std::string label;
  double baseline_p99_ns = 0;
  double chaos_p99_ns = 0;
  std::size_t chaos_samples = 0;
};

/// The bound on the p99 of untouched topics: this many times the baseline's.
inline constexpr double kLatencyBound = 2.0;

/// One result per input: chaos p99 <= kLatencyBound x baseline p99 + `slack_ns` (and samples to judge).
/// `slack_ns` is 0 unless asked for (--latency-slack-ms): on a machine other work loads, the tails of two
/// runs differ by more than 2x without any fault (docs/reliability.md).
std::vector<CheckResult> check_latency(const std::vector<LatencyInput>& inputs, double slack_ns = 0);

/// Every pool's chunks free within the bound (PoolOutcome from the runner).
CheckResult check_pools(bool all_free, double seconds_to_free, std::size_t pools_read, std::size_t chunks,
                        const std::string& held, double bound_s);

/// One subscription's messages taken in the fault-free run and in the run with faults.
struct DeliveryInput {
  std::string label;
  std::uint64_t baseline_received = 0;
  std::uint64_t chaos_received = 0;
};

/// Every subscription took messages in both runs: a topic that never reaches a subscriber (across hosts, say) is a
/// FAIL here even where no other check judges it (best-effort, no latency samples).
CheckResult check_delivered(const std::vector<DeliveryInput>& inputs);

/// One subscription across a partition: what it took that was published after the partition healed.
struct ResumeInput {
  std::string label;
  double healed_s = 0;        ///< The last partition on its path ended (seconds into the window).
  std::uint64_t after = 0;    ///< Messages published from then on that it took.
  double first_after_s = -1;  ///< When the first of them was published.
  bool reliable = false;
};

/// Traffic resumes after a partition heals: every subscription across one took messages published afterwards.
CheckResult check_resumed(const std::vector<ResumeInput>& inputs);

/// Nothing of the run's domain in the shm directories, no process of the run still there, and (`virtual_hosts`)
/// no namespace, mount, iptables rule or process (a delayer) in the run's virtual hosts (`net_left` lists them).
CheckResult check_leftovers(const std::vector<std::string>& shm_left, const std::vector<int>& stray,
                            const std::vector<std::string>& net_left = {}, bool virtual_hosts = false);

}  // namespace axon_bench
