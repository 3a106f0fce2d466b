#include "chaos/chaos_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "chaos/chaos_deployment.hpp"
#include "stats/stats.hpp"

namespace axon_bench {
namespace {

bool is_component_fault(const Fault& f) { return f.kind == FaultKind::kKill || f.kind == FaultKind::kStop; }
bool is_host_fault(const Fault& f) {
  return f.kind == FaultKind::kCpuHog || f.kind == FaultKind::kMemoryPressure || f.kind == FaultKind::kShmFull;
}

int host_of(const Scenario& s, int component) { return s.components[static_cast<std::size_t>(component)].host; }

/// Whether network fault `f` lies on the path from component `from` to component `to`: they run on different hosts
/// and `f` acts on one of them (a partition: cuts one of them off, or cuts the two apart).
bool on_path(const Scenario& s, const Fault& f, int from, int to) {
  const int a = host_of(s, from);
  const int b = host_of(s, to);
  if (!is_network_fault(f.kind) || a < 0 || b < 0 || a == b) {
    return false;
  }
  if (f.kind == FaultKind::kPartition && f.peer >= 0) {
    return (f.host == a && f.peer == b) || (f.host == b && f.peer == a);
  }
  return f.host == a || f.host == b;
}

/// Whether network fault `f` is on the path of subscription `sub`, or of another topic its publisher publishes
/// (a reliable publish to a reader across it may wait, and with it the publisher's other topics).
bool network_touches(const ChaosPlan& plan, const Fault& f, const ChaosSubscription& sub) {
  const Scenario& s = plan.scenario;
  const int publisher = s.topics[static_cast<std::size_t>(sub.topic)].publisher;
  if (on_path(s, f, publisher, sub.component)) {
    return true;
  }
  for (const int topic : s.components[static_cast<std::size_t>(publisher)].publishes) {
    for (const int reader : s.topics[static_cast<std::size_t>(topic)].subscribers) {
      if (on_path(s, f, publisher, reader)) {
        return true;
      }
    }
  }
  return false;
}

/// The partitions (begun) on the path of subscription `sub`.
std::vector<const FaultEvent*> partitions_on(const RunView& run, const ChaosSubscription& sub) {
  const Scenario& s = run.plan.scenario;
  const int publisher = s.topics[static_cast<std::size_t>(sub.topic)].publisher;
  std::vector<const FaultEvent*> out;
  for (const FaultEvent& e : run.result.events) {
    const Fault& f = run.plan.faults[e.fault];
    if (f.kind == FaultKind::kPartition && e.begun_s >= 0 && on_path(s, f, publisher, sub.component)) {
      out.push_back(&e);
    }
  }
  return out;
}

std::string label_of(const Scenario& s, const ChaosSubscription& sub) {
  return s.topics[static_cast<std::size_t>(sub.topic)].name + " -> " +
         s.components[static_cast<std::size_t>(sub.component)].name;
}

/// Incarnations component `c` ran: one, plus one per restart that happened.
std::size_t incarnations_of(const ChaosPlan& plan, const std::vector<FaultEvent>& events, int c) {
  std::size_t n = 1;
  for (const FaultEvent& e : events) {
    const Fault& f = plan.faults[e.fault];
    n += f.kind == FaultKind::kKill && f.component == c && e.ended_s >= 0 ? 1 : 0;
  }
  return std::min(n, kMaxIncarnations);
}

std::span<const LatencySample> samples_of(const RunView& run, std::size_t k) {
  const ChaosSubscription& sub = run.plan.subscriptions[k];
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(run.shared.subscriptions[k].recorded, sub.capacity));
  return {run.shared.latencies.data() + sub.latency_offset, n};
}

/// The latencies of `samples` published outside `spans` (seconds from `window_begin_ns`).
std::vector<std::int64_t> untouched(std::span<const LatencySample> samples, std::int64_t window_begin_ns,
                                    const std::vector<std::pair<double, double>>& spans) {
  std::vector<std::int64_t> out;
  for (const LatencySample& s : samples) {
    const double t = static_cast<double>(s.publish_ns - window_begin_ns) / 1e9;
    if (std::none_of(spans.begin(), spans.end(),
                     [t](const auto& span) { return t >= span.first && t < span.second; })) {
      out.push_back(s.latency_ns);
    }
  }
  return out;
}

ChaosSeriesEntry series_of(const RunView& run, std::size_t k, double bucket_s, bool touched) {
  const Scenario& s = run.plan.scenario;
  const auto buckets = static_cast<std::size_t>(std::ceil(s.duration_s / bucket_s));
  ChaosSeriesEntry e{.label = label_of(s, run.plan.subscriptions[k]),
                     .touched = touched,
                     .rate_hz = std::vector<double>(buckets, 0),
                     .max_us = std::vector<double>(buckets, 0)};
  for (const LatencySample& sample : samples_of(run, k)) {
    const double t = static_cast<double>(sample.publish_ns - run.result.times.window_begin_ns) / 1e9;
    if (t < 0) {
      continue;
    }
    const auto b = static_cast<std::size_t>(t / bucket_s);
    if (b < buckets) {
      e.rate_hz[b] += 1 / bucket_s;
      e.max_us[b] = std::max(e.max_us[b], static_cast<double>(sample.latency_ns) / 1e3);
    }
  }
  return e;
}

/// Whether a fault of the subscription's own component overlaps [from_s, to_s]: its handlers could not run then
/// (stopped) or its counts began again (killed; `kills_only`).
bool own_fault_overlaps(const RunView& run, int component, double from_s, double to_s, bool kills_only) {
  return std::any_of(run.result.events.begin(), run.result.events.end(), [&](const FaultEvent& e) {
    const Fault& f = run.plan.faults[e.fault];
    return f.component == component && is_component_fault(f) && (!kills_only || f.kind == FaultKind::kKill) &&
           e.begun_s >= 0 && e.begun_s <= to_s && (e.ended_s < 0 || e.ended_s >= from_s);
  });
}

/// What the faults make of subscription `k`'s handlers. Liveliness: expected when its publisher was killed while
/// its own component was not being killed (within 1 s of it); deadline: expected when its publisher was killed or
/// stopped for two deadlines or more while its own component was not faulted. Either may fire wherever its
/// publisher or its own component was faulted.
HandlerInput handler_input(const RunView& run, std::size_t k, bool liveliness) {
  const ChaosPlan& plan = run.plan;
  const ChaosSubscription& sub = plan.subscriptions[k];
  const int publisher = plan.scenario.topics[static_cast<std::size_t>(sub.topic)].publisher;
  HandlerInput in{.label = label_of(plan.scenario, sub)};
  for (const FaultEvent& e : run.result.events) {
    const Fault& f = plan.faults[e.fault];
    if (is_network_fault(f.kind) && e.begun_s >= 0) {
      // A partition longer than the lease (plus a heartbeat period of margin) must report the publisher lost
      // across it, and one longer than two deadlines must miss them; any fault on the path may do either.
      const double length_s = (e.ended_s >= 0 ? e.ended_s : plan.scenario.duration_s) - e.begun_s;
      const bool partition = f.kind == FaultKind::kPartition && on_path(plan.scenario, f, publisher, sub.component);
      const bool own_quiet = !own_fault_overlaps(run, sub.component, e.begun_s, e.begun_s + length_s, false) &&
                             !own_fault_overlaps(run, publisher, e.begun_s, e.begun_s + length_s, false);
      if (liveliness) {
        in.explained = in.explained || partition;
        in.expected = in.expected ||
                      (partition && own_quiet && length_s * 1e3 >= kChaosLivelinessTimeoutMs + 2 * kChaosHeartbeatMs);
      } else {
        in.explained = in.explained || network_touches(plan, f, sub);
        in.expected =
            in.expected || (partition && own_quiet && length_s * 1e9 >= 2.0 * static_cast<double>(sub.deadline_ns));
      }
      continue;
    }
    if (!is_component_fault(f) || e.begun_s < 0) {
      continue;
    }
    const bool own = f.component == sub.component;
    const bool upstream = f.component == publisher;
    const double ended_s = e.ended_s >= 0 ? e.ended_s : plan.scenario.duration_s;
    if (liveliness) {
      in.explained = in.explained || (upstream && f.kind == FaultKind::kKill) || (own && f.kind == FaultKind::kKill);
      in.expected = in.expected || (upstream && f.kind == FaultKind::kKill &&
                                    !own_fault_overlaps(run, sub.component, e.begun_s, e.begun_s + 1.0, true));
    } else {
      const bool long_gap = f.for_s * 1e9 >= 2.0 * static_cast<double>(sub.deadline_ns);
      in.explained = in.explained || upstream || own;
      in.expected =
          in.expected || (upstream && long_gap && !own_fault_overlaps(run, sub.component, e.begun_s, ended_s, false));
    }
  }
  in.explained = in.explained || in.expected;
  const SubscriptionChaosReport& r = run.shared.subscriptions[k];
  in.events = liveliness ? r.publisher_lost_events : r.deadline_events;
  return in;
}

/// Per subscription across a partition: the messages it took that were published after the partition healed.
std::vector<ResumeInput> resume_inputs(const RunView& run) {
  std::vector<ResumeInput> inputs;
  for (std::size_t k = 0; k < run.plan.subscriptions.size(); ++k) {
    const ChaosSubscription& sub = run.plan.subscriptions[k];
    const auto partitions = partitions_on(run, sub);
    if (partitions.empty()) {
      continue;
    }
    double healed_s = 0;
    for (const FaultEvent* e : partitions) {
      healed_s = std::max(healed_s, e->ended_s >= 0 ? e->ended_s : run.plan.scenario.duration_s);
    }
    ResumeInput in{.label = label_of(run.plan.scenario, sub), .healed_s = healed_s};
    for (const LatencySample& sample : samples_of(run, k)) {
      const double t = static_cast<double>(sample.publish_ns - run.result.times.window_begin_ns) / 1e9;
      if (t >= healed_s) {
        ++in.after;
        in.first_after_s = in.first_after_s < 0 ? t : std::min(in.first_after_s, t);
      }
    }
    in.reliable = run.plan.scenario.topics[static_cast<std::size_t>(sub.topic)].reliable;
    inputs.push_back(in);
  }
  return inputs;
}

std::vector<HandlerInput> handler_inputs(const RunView& run, bool liveliness) {
  std::vector<HandlerInput> inputs;
  for (std::size_t k = 0; k < run.plan.subscriptions.size(); ++k) {
    inputs.push_back(handler_input(run, k, liveliness));
  }
  return inputs;
}

/// Reliable subscriptions no partition cut (a partition longer than the lease loses the reader: what is published
/// meanwhile has nowhere to go; check_resumed() judges those).
std::vector<ReliableInput> reliable_inputs(const RunView& run, std::size_t& across_partitions) {
  const ChaosPlan& plan = run.plan;
  std::vector<ReliableInput> inputs;
  for (std::size_t k = 0; k < plan.subscriptions.size(); ++k) {
    const ChaosSubscription& sub = plan.subscriptions[k];
    const ScenarioTopic& t = plan.scenario.topics[static_cast<std::size_t>(sub.topic)];
    if (!t.reliable) {
      continue;
    }
    if (!partitions_on(run, sub).empty()) {
      ++across_partitions;
      continue;
    }
    const SubscriptionChaosReport& r = run.shared.subscriptions[k];
    ReliableInput in;
    in.label = label_of(plan.scenario, sub);
    in.streams.assign(r.tracker.streams.begin(),
                      r.tracker.streams.begin() + std::min<std::size_t>(r.tracker.count, kMaxStreams));
    in.overflowed = r.tracker.overflowed;
    const PublicationChaosReport& pub = run.shared.publications[static_cast<std::size_t>(sub.topic)];
    const std::size_t pubs = incarnations_of(plan, run.result.events, t.publisher);
    in.publishers.assign(pub.incarnations, pub.incarnations + pubs);
    const ComponentChaosReport& own = run.shared.components[static_cast<std::size_t>(sub.component)];
    const std::size_t subs = incarnations_of(plan, run.result.events, sub.component);
    in.subscribers.assign(own.incarnations, own.incarnations + subs);
    for (std::size_t i = 0; i < subs; ++i) {
      in.subscriber_killed.push_back(i + 1 < subs);  // every incarnation but the last ended by a kill
    }
    in.expected_subscribers = t.subscribers.size();
    inputs.push_back(std::move(in));
  }
  return inputs;
}

}  // namespace

ChaosPlan make_chaos_plan(Scenario scenario, std::vector<Fault> faults, std::uint32_t domain_id) {
  ChaosPlan plan;
  plan.domain_id = domain_id;
  for (std::size_t c = 0; c < scenario.components.size(); ++c) {
    for (const int topic : scenario.components[c].subscribes) {
      const ScenarioTopic& t = scenario.topics[static_cast<std::size_t>(topic)];
      double bursts = 0;  // messages bursts add
      for (const Fault& f : faults) {
        bursts += f.kind == FaultKind::kBurst && f.topic == topic ? (f.factor - 1) * t.rate_hz * f.for_s : 0;
      }
      ChaosSubscription sub;
      sub.component = static_cast<int>(c);
      sub.topic = topic;
      sub.latency_offset = plan.latency_slots;
      sub.capacity = static_cast<std::size_t>(std::ceil(t.rate_hz * scenario.duration_s + bursts)) + 16;
      sub.deadline_ns = std::max(kMinDeadlineNs, kDeadlinePeriods * static_cast<std::int64_t>(1e9 / t.rate_hz));
      plan.latency_slots += sub.capacity;
      plan.subscriptions.push_back(sub);
    }
  }
  plan.scenario = std::move(scenario);
  plan.faults = std::move(faults);
  return plan;
}

std::vector<std::pair<double, double>> touching_spans(const ChaosPlan& plan, const ChaosSubscription& sub,
                                                      const std::vector<FaultEvent>& events) {
  const Scenario& s = plan.scenario;
  const int publisher = s.topics[static_cast<std::size_t>(sub.topic)].publisher;
  const std::vector<int>& takes = s.components[static_cast<std::size_t>(sub.component)].subscribes;
  std::vector<std::pair<double, double>> spans;
  for (const FaultEvent& e : events) {
    const Fault& f = plan.faults[e.fault];
    if (e.begun_s < 0) {
      continue;
    }
    const bool touches =
        is_host_fault(f) || (is_component_fault(f) && (f.component == publisher || f.component == sub.component)) ||
        network_touches(plan, f, sub) ||
        (f.kind == FaultKind::kBurst && (s.topics[static_cast<std::size_t>(f.topic)].publisher == publisher ||
                                         std::find(takes.begin(), takes.end(), f.topic) != takes.end()));
    if (touches) {
      const double end = e.ended_s >= 0 ? e.ended_s : s.duration_s;
      spans.emplace_back(e.begun_s, end + kRecoverySeconds);
    }
  }
  return spans;
}

ChaosLog analyse_chaos(const RunView& baseline, const RunView& chaos, double latency_slack_ns) {
  const ChaosPlan& plan = chaos.plan;
  ChaosLog log;
  log.scenario = plan.scenario.name.empty() ? plan.scenario.file : plan.scenario.name;
  log.duration_s = plan.scenario.duration_s;
  log.baseline_duration_s = baseline.plan.scenario.duration_s;
  for (const FaultEvent& e : chaos.result.events) {
    const Fault& f = plan.faults[e.fault];
    std::string target;
    if (is_component_fault(f)) {
      target = plan.scenario.components[static_cast<std::size_t>(f.component)].name;
    } else if (is_network_fault(f.kind)) {
      target = plan.scenario.hosts[static_cast<std::size_t>(f.host)] +
               (f.peer >= 0 ? " | " + plan.scenario.hosts[static_cast<std::size_t>(f.peer)] : "");
    } else if (f.kind == FaultKind::kBurst) {
      target = plan.scenario.topics[static_cast<std::size_t>(f.topic)].name;
    }
    log.faults.push_back({.kind = fault_kind_name(f.kind),
                          .target = target,
                          .yaml = f.yaml(plan.scenario),
                          .at_s = f.at_s,
                          .begun_s = e.begun_s,
                          .ended_s = e.ended_s,
                          .note = e.note});
  }

  std::vector<CheckResult> checks;
  std::size_t across_partitions = 0;
  const std::vector<ReliableInput> reliable = reliable_inputs(chaos, across_partitions);
  if (!reliable.empty() || across_partitions == 0) {  // all across partitions: the resume check judges them
    checks.push_back(check_reliable(reliable));
    if (across_partitions > 0) {
      checks.back().figure += fmt::format("; {} across a partition judged by 'traffic resumes'", across_partitions);
    }
  }
  std::uint64_t received = 0;
  std::uint64_t corrupt = 0;
  for (const RunView* run : {&baseline, &chaos}) {
    for (std::size_t k = 0; k < run->plan.subscriptions.size(); ++k) {
      received += run->shared.subscriptions[k].received;
      corrupt += run->shared.subscriptions[k].corrupt;
    }
  }
  checks.push_back(check_intact(received, corrupt));
  std::vector<DeliveryInput> delivered;
  for (std::size_t k = 0; k < plan.subscriptions.size(); ++k) {
    delivered.push_back({.label = label_of(plan.scenario, plan.subscriptions[k]),
                         .baseline_received = baseline.shared.subscriptions[k].received,
                         .chaos_received = chaos.shared.subscriptions[k].received});
  }
  checks.push_back(check_delivered(delivered));
  checks.push_back(check_pools(chaos.result.pools.all_free, chaos.result.pools.seconds_to_free,
                               chaos.result.pools.pools_read, chaos.result.pools.chunks_total, chaos.result.pools.held,
                               kPoolBoundSeconds));

  std::vector<LatencyInput> latency;
  for (std::size_t k = 0; k < plan.subscriptions.size(); ++k) {
    const auto spans = touching_spans(plan, plan.subscriptions[k], chaos.result.events);
    log.series.push_back(series_of(chaos, k, log.bucket_s, !spans.empty()));
    std::vector<std::int64_t> with_faults = untouched(samples_of(chaos, k), chaos.result.times.window_begin_ns, spans);
    if (with_faults.empty()) {
      continue;  // touched all the time: nothing to hold to the baseline
    }
    const auto base = samples_of(baseline, k);
    std::vector<std::int64_t> without;
    without.reserve(base.size());
    for (const LatencySample& s : base) {
      without.push_back(s.latency_ns);
    }
    latency.push_back(
        {.label = label_of(plan.scenario, plan.subscriptions[k]) + (spans.empty() ? "" : " (outside faults)"),
         .baseline_p99_ns = summarize(without).p99_ns,
         .chaos_p99_ns = summarize(with_faults).p99_ns,
         .chaos_samples = with_faults.size()});
  }
  for (CheckResult& r : check_latency(latency, latency_slack_ns)) {
    checks.push_back(std::move(r));
  }
  checks.push_back(check_handlers("publisher-lost (liveliness)", handler_inputs(chaos, true)));
  checks.push_back(check_handlers("deadline", handler_inputs(chaos, false)));
  if (const std::vector<ResumeInput> resumed = resume_inputs(chaos); !resumed.empty()) {
    checks.push_back(check_resumed(resumed));
  }
  std::vector<std::string> shm_left;
  std::vector<int> stray;
  std::vector<std::string> net_left;
  for (const RunView* run : {&baseline, &chaos}) {
    shm_left.insert(shm_left.end(), run->result.shm_left.begin(), run->result.shm_left.end());
    stray.insert(stray.end(), run->result.stray.begin(), run->result.stray.end());
    net_left.insert(net_left.end(), run->result.net_left.begin(), run->result.net_left.end());
  }
  checks.push_back(check_leftovers(shm_left, stray, net_left, plan.hosts != nullptr));
  for (const CheckResult& c : checks) {
    log.checks.push_back({.name = c.name, .pass = c.pass, .figure = c.figure, .bound = c.bound});
  }
  return log;
}

std::vector<CaseResult> chaos_case_results(const RunView& run, const std::string& tag) {
  const Scenario& s = run.plan.scenario;
  std::vector<CaseResult> out;
  for (std::size_t k = 0; k < run.plan.subscriptions.size(); ++k) {
    const ChaosSubscription& sub = run.plan.subscriptions[k];
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(sub.topic)];
    std::vector<std::int64_t> latencies;
    for (const LatencySample& sample : samples_of(run, k)) {
      latencies.push_back(sample.latency_ns);
    }
    const std::uint64_t published = run.shared.publications[static_cast<std::size_t>(sub.topic)].published_in_window;
    CaseResult r;
    r.benchmark = "scenario";
    r.mode = "periodic";
    r.transport = "shm";
    r.wait_strategy = "blocking";
    r.payload_bytes = t.payload_bytes;
    r.rate_hz = t.rate_hz;
    r.topic = t.name;
    r.component = s.components[static_cast<std::size_t>(sub.component)].name + " [" + tag + "]";
    r.latency = summarize(latencies);
    r.published = published;
    r.delivered = latencies.size();
    r.lost = published - std::min<std::uint64_t>(published, latencies.size());
    r.dropped = *r.lost;
    r.msgs_per_s = static_cast<double>(latencies.size()) / s.duration_s;
    r.mb_per_s = *r.msgs_per_s * static_cast<double>(t.payload_bytes) / 1e6;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace axon_bench
