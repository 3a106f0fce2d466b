#include "chaos/chaos_checks.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace axon_bench {

StreamVerdict judge_stream(const StreamRecord& stream, const PublisherIncarnation& publisher,
                           std::int64_t subscriber_connected_ns, bool subscriber_killed,
                           std::size_t expected_subscribers) {
  StreamVerdict v;
  v.lost = stream.lost;
  v.duplicates = stream.duplicates;
  v.out_of_order = stream.out_of_order;
  // It had every subscriber, this one among them, before its first message: the stream starts at 0.
  const bool there_from_first = publisher.subscribers_at_start >= expected_subscribers &&
                                subscriber_connected_ns != 0 && subscriber_connected_ns <= publisher.first_publish_ns;
  if (there_from_first) {
    v.missing_head = stream.first_seq;
  }
  if (stream.last_seq >= publisher.attempted) {
    v.beyond = stream.last_seq + 1 - publisher.attempted;
  }
  // Everything publish() returned from reached a subscriber that stayed, whether the publisher was killed
  // later or not; a kill inside publish() may or may not have sent its message (attempted = completed + 1).
  if (!subscriber_killed && stream.last_seq + 1 < publisher.completed) {
    v.missing_tail = publisher.completed - stream.last_seq - 1;
  }
  return v;
}

CheckResult check_reliable(const std::vector<ReliableInput>& inputs) {
  CheckResult r{.name = "reliable topics: none lost, duplicated or out of order",
                .pass = true,
                .figure = "",
                .bound = "0 lost, 0 duplicated, 0 out of order in every stream (per publisher incarnation)"};
  std::uint64_t received = 0;
  std::uint64_t streams = 0;
  StreamVerdict sum;
  std::string worst;
  for (const ReliableInput& in : inputs) {
    if (in.overflowed > 0) {
      r.pass = false;
      worst += fmt::format("{}: {} messages of untracked streams; ", in.label, in.overflowed);
    }
    for (const StreamRecord& s : in.streams) {
      ++streams;
      received += s.received;
      if (s.publisher_incarnation >= in.publishers.size() || s.subscriber_incarnation >= in.subscribers.size()) {
        r.pass = false;
        worst += fmt::format("{}: a stream of unknown incarnations {}/{}; ", in.label, s.publisher_incarnation,
                             s.subscriber_incarnation);
        continue;
      }
      const StreamVerdict v =
          judge_stream(s, in.publishers[s.publisher_incarnation], in.subscribers[s.subscriber_incarnation].connected_ns,
                       in.subscriber_killed[s.subscriber_incarnation], in.expected_subscribers);
      sum.lost += v.lost + v.missing_head + v.missing_tail;
      sum.duplicates += v.duplicates;
      sum.out_of_order += v.out_of_order + v.beyond;
      if (!v.ok()) {
        r.pass = false;
        worst += fmt::format(
            "{} (publisher #{}, subscriber #{}): seq {}..{}, {} received, {} lost inside, {} missing at the start, "
            "{} at the end, {} duplicated, {} out of order, {} never sent; ",
            in.label, s.publisher_incarnation, s.subscriber_incarnation, s.first_seq, s.last_seq, s.received, v.lost,
            v.missing_head, v.missing_tail, v.duplicates, v.out_of_order, v.beyond);
      }
    }
    // A publisher incarnation that began with this subscriber incarnation connected, which stayed, and sent
    // something: its stream must exist.
    for (std::size_t p = 0; p < in.publishers.size(); ++p) {
      const PublisherIncarnation& pub = in.publishers[p];
      for (std::size_t k = 0; k < in.subscribers.size(); ++k) {
        const bool should =
            pub.completed > 0 && !in.subscriber_killed[k] && pub.subscribers_at_start >= in.expected_subscribers &&
            in.subscribers[k].connected_ns != 0 && in.subscribers[k].connected_ns <= pub.first_publish_ns;
        const bool has = std::any_of(in.streams.begin(), in.streams.end(), [&](const StreamRecord& s) {
          return s.publisher_incarnation == p && s.subscriber_incarnation == k;
        });
        if (should && !has) {
          r.pass = false;
          sum.lost += pub.completed;
          worst += fmt::format("{}: nothing of publisher #{} ({} published) reached subscriber #{}; ", in.label, p,
                               pub.completed, k);
        }
      }
    }
  }
  if (inputs.empty()) {
    r.pass = false;
    worst = "no reliable topic in the scenario (mark one `reliable: true`)";
  } else if (received == 0) {
    r.pass = false;
    worst += "no message received; ";
  }
  r.figure = fmt::format("{} subscriptions, {} streams, {} received: {} lost, {} duplicated, {} out of order",
                         inputs.size(), streams, received, sum.lost, sum.duplicates, sum.out_of_order);
  if (!worst.empty()) {
    r.figure += " (" + worst.substr(0, worst.size() - 2) + ")";
  }
  return r;
}

CheckResult check_intact(std::uint64_t received, std::uint64_t corrupt) {
  return {.name = "payloads intact (checksum of every byte)",
          .pass = corrupt == 0 && received > 0,
          .figure = fmt::format("{} received, {} with a wrong checksum", received, corrupt),
          .bound = "0 wrong, at least one received"};
}

CheckResult check_handlers(const std::string& kind, const std::vector<HandlerInput>& inputs) {
  CheckResult r{.name = kind + " handlers fired for exactly the faulted components",
                .pass = true,
                .figure = "",
                .bound = "fired on every subscription a fault should make fire, on no other"};
  std::size_t expected = 0;
  std::size_t fired_expected = 0;
  std::size_t unexplained = 0;
  std::string detail;
  for (const HandlerInput& in : inputs) {
    if (in.expected) {
      ++expected;
      if (in.events > 0) {
        ++fired_expected;
      } else {
        r.pass = false;
        detail += fmt::format("{}: did not fire; ", in.label);
      }
    } else if (!in.explained && in.events > 0) {
      ++unexplained;
      r.pass = false;
      detail += fmt::format("{}: fired {} times, no fault explains it; ", in.label, in.events);
    }
  }
  r.figure = fmt::format("fired on {} of {} expected, on {} unexpected", fired_expected, expected, unexplained);
  if (!detail.empty()) {
    r.figure += " (" + detail.substr(0, detail.size() - 2) + ")";
  }
  return r;
}

std::vector<CheckResult> check_latency(const std::vector<LatencyInput>& inputs, double slack_ns) {
  std::vector<CheckResult> out;
  for (const LatencyInput& in : inputs) {
    const double ratio = in.baseline_p99_ns > 0 ? in.chaos_p99_ns / in.baseline_p99_ns : 0;
    const std::string slack = slack_ns > 0 ? fmt::format(" + {:.0f} ms", slack_ns / 1e6) : "";
    out.push_back({.name = "latency p99 untouched: " + in.label,
                   .pass = in.chaos_samples > 0 && in.baseline_p99_ns > 0 &&
                           in.chaos_p99_ns <= kLatencyBound * in.baseline_p99_ns + slack_ns,
                   .figure = fmt::format("{:.1f} us with faults ({} samples), {:.1f} us without: x{:.2f}",
                                         in.chaos_p99_ns / 1e3, in.chaos_samples, in.baseline_p99_ns / 1e3, ratio),
                   .bound = fmt::format("<= x{:.1f} the fault-free p99{}", kLatencyBound, slack)});
  }
  return out;
}

CheckResult check_pools(bool all_free, double seconds_to_free, std::size_t pools_read, std::size_t chunks,
                        const std::string& held, double bound_s) {
  std::string figure = all_free ? fmt::format("{} pools, {} chunks: all free {:.2f} s after the components drained",
                                              pools_read, chunks, seconds_to_free)
                                : fmt::format("{} pools, {} chunks, not all free after {:.2f} s: {}", pools_read,
                                              chunks, seconds_to_free, held);
  return {.name = "pools: every chunk back to free",
          .pass = all_free,
          .figure = std::move(figure),
          .bound = fmt::format("within {:.0f} s after the publishers stopped and the subscribers drained", bound_s)};
}

CheckResult check_delivered(const std::vector<DeliveryInput>& inputs) {
  CheckResult r{.name = "every subscription receives",
                .pass = !inputs.empty(),
                .figure = "",
                .bound = "messages taken on every subscription, in the fault-free run and with faults"};
  std::size_t empty = 0;
  std::string detail;
  for (const DeliveryInput& in : inputs) {
    if (in.baseline_received == 0 || in.chaos_received == 0) {
      ++empty;
      r.pass = false;
      detail += fmt::format("{}: {} fault-free, {} with faults; ", in.label, in.baseline_received, in.chaos_received);
    }
  }
  r.figure = fmt::format("{} of {} subscriptions took messages in both runs", inputs.size() - empty, inputs.size());
  if (!detail.empty()) {
    r.figure += " (" + detail.substr(0, detail.size() - 2) + ")";
  }
  return r;
}

CheckResult check_resumed(const std::vector<ResumeInput>& inputs) {
  CheckResult r{.name = "traffic resumes after partitions heal",
                .pass = !inputs.empty(),
                .figure = "",
                .bound = "every subscription across a partition takes messages published after it healed"};
  std::size_t resumed = 0;
  std::string detail;
  for (const ResumeInput& in : inputs) {
    if (in.after > 0) {
      ++resumed;
      detail +=
          fmt::format("{}: {} from {:.2f} s (healed {:.2f} s); ", in.label, in.after, in.first_after_s, in.healed_s);
    } else {
      r.pass = false;
      detail += fmt::format("{}: nothing after {:.2f} s; ", in.label, in.healed_s);
    }
  }
  r.figure = fmt::format("{} of {} subscriptions resumed", resumed, inputs.size());
  if (!detail.empty()) {
    r.figure += " (" + detail.substr(0, detail.size() - 2) + ")";
  }
  return r;
}

CheckResult check_leftovers(const std::vector<std::string>& shm_left, const std::vector<int>& stray,
                            const std::vector<std::string>& net_left, bool virtual_hosts) {
  std::string figure =
      fmt::format("{} files of the run's domain in the shm directory, {} processes", shm_left.size(), stray.size());
  if (virtual_hosts) {
    figure += fmt::format(", {} namespaces, mounts, rules or delayer processes of the virtual hosts", net_left.size());
  }
  if (!shm_left.empty()) {
    figure += ": " + fmt::format("{}", fmt::join(shm_left, ", "));
  }
  if (!stray.empty()) {
    figure += "; pids " + fmt::format("{}", fmt::join(stray, ", "));
  }
  if (!net_left.empty()) {
    figure += "; " + fmt::format("{}", fmt::join(net_left, ", "));
  }
  return {
      .name = "nothing left behind",
      .pass = shm_left.empty() && stray.empty() && net_left.empty(),
      .figure = std::move(figure),
      .bound = virtual_hosts ? "0 files, 0 processes, 0 namespaces, mounts, rules, delayers" : "0 files, 0 processes"};
}

}  // namespace axon_bench
