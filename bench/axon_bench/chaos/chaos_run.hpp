// One run of a chaos scenario (the fault-free baseline or the run with
// faults): what the parent plans before forking the components and the
// shared memory where they, and every later incarnation of them, report.
// Shared between the parent (chaos_runner.cpp, chaos.cpp) and the component
// processes (chaos_component.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chaos/chaos_payload.hpp"
#include "chaos/fault_schedule.hpp"
#include "harness/shared_memory.hpp"
#include "harness/system.hpp"
#include "scenario/scenario_config.hpp"

namespace axon::test {
class VirtualHosts;
}  // namespace axon::test

namespace axon_bench {

/// Incarnations of one component (the first and its restarts) a run follows.
inline constexpr std::size_t kMaxIncarnations = 16;
/// Streams (subscriber incarnation x publisher incarnation) one subscription records.
inline constexpr std::size_t kMaxStreams = 32;
/// Messages a subscriber may still take after the publishers stop.
inline constexpr std::int64_t kChaosGraceNs = 500'000'000;

/// One (component, topic) subscription.
struct ChaosSubscription {
  int component = 0;
  int topic = 0;
  std::size_t latency_offset = 0;  ///< First slot in the shared latency array.
  std::size_t capacity = 0;        ///< Slots it may fill.
  std::int64_t deadline_ns = 0;    ///< Its SubscriberQos::deadline_ns.
};

struct ChaosPlan {
  Scenario scenario;
  std::vector<Fault> faults;  ///< Empty for the baseline.
  std::uint32_t domain_id = 0;
  std::vector<ChaosSubscription> subscriptions;
  std::size_t latency_slots = 0;
  /// A scenario whose components name `host:`: the virtual hosts they run on, and the deployment config that puts
  /// each component's node on its host (UDP between hosts). Null and "" on one machine.
  const axon::test::VirtualHosts* hosts = nullptr;
  std::string config_path;
};

/// Start, end and release. Thread safety / memory ordering: `ready` and
/// `drained` are incremented by the components (acq_rel); the parent stores
/// `start_ns` and `release` once (release), the components load them
/// (acquire).
struct ChaosControl {
  alignas(kCacheLine) std::atomic<std::uint32_t> ready{0};
  alignas(kCacheLine) std::atomic<std::int64_t> start_ns{0};
  /// Incremented by every component incarnation that published and took
  /// everything; the parent then reads the pools.
  alignas(kCacheLine) std::atomic<std::uint32_t> drained{0};
  alignas(kCacheLine) std::atomic<std::uint32_t> release{0};
};

/// A topic's burst: its rate multiplier in thousandths (0 or 1000 outside
/// bursts), kept in the shared array ChaosShared::burst_permille. A
/// standalone value written by the parent and read by the publisher through
/// std::atomic_ref, relaxed: it orders nothing else.
inline void set_burst(std::uint32_t& slot, double factor) noexcept {
  std::atomic_ref<std::uint32_t>(slot).store(static_cast<std::uint32_t>(factor * 1000), std::memory_order_relaxed);
}
inline double burst_of(std::uint32_t& slot) noexcept {
  const std::uint32_t permille = std::atomic_ref<std::uint32_t>(slot).load(std::memory_order_relaxed);
  return permille <= 1000 ? 1.0 : permille / 1000.0;
}

/// One incarnation of a component. Written by that process only; read by
/// the parent after it exited (waitpid orders it).
struct IncarnationReport {
  std::int64_t connected_ns = 0;  ///< Its endpoints connected (or the wait gave up): it runs from here.
  std::int64_t drained_ns = 0;    ///< Done publishing and taking.
};

struct ComponentChaosReport {
  ErrorText error;
  IncarnationReport incarnations[kMaxIncarnations];
};

/// One incarnation of a topic's publisher; written by it only.
struct PublisherIncarnation {
  std::int64_t first_publish_ns = 0;       ///< 0: it published nothing.
  std::uint32_t subscribers_at_start = 0;  ///< Connected subscribers when it began.
  std::uint64_t attempted = 0;             ///< publish() calls begun (seq of the next one).
  std::uint64_t completed = 0;             ///< publish() calls that returned.
  std::uint64_t timed_out = 0;             ///< Deliveries a reliable queue refused after the block timeout.
  std::uint64_t loan_failures = 0;         ///< No free chunk: not published (no sequence number spent).
};

struct PublicationChaosReport {
  PublisherIncarnation incarnations[kMaxIncarnations];
  std::uint64_t published_in_window = 0;  ///< Every incarnation's, published inside the window.
};

/// One subscription, over all incarnations of its component (each continues
/// where the dead one stopped).
struct SubscriptionChaosReport {
  SequenceTracker<kMaxStreams> tracker;
  std::uint64_t received = 0;               ///< Every message taken.
  std::uint64_t corrupt = 0;                ///< Checksum mismatch (not fed to the tracker).
  std::uint64_t recorded = 0;               ///< Latency slots filled.
  std::uint64_t publisher_lost_events = 0;  ///< on_publisher_lost calls.
  std::uint64_t publishers_lost = 0;        ///< Publishers those calls said were lost.
  std::uint64_t deadline_events = 0;        ///< on_deadline_missed calls.
  std::int64_t first_lost_ns = 0;
  std::int64_t first_deadline_ns = 0;
};

/// A received message inside the window: when it was published and how long it took.
struct LatencySample {
  std::int64_t publish_ns = 0;
  std::int64_t latency_ns = 0;
};

/// Timeline of a run.
struct ChaosTimes {
  std::int64_t start_ns = 0;
  std::int64_t window_begin_ns = 0;  ///< Faults' at_s count from here.
  std::int64_t window_end_ns = 0;    ///< Publishers stop.
  std::int64_t stop_ns = 0;          ///< Subscribers stop.

  static ChaosTimes from(const Scenario& s, std::int64_t start_ns) noexcept {
    ChaosTimes t;
    t.start_ns = start_ns;
    t.window_begin_ns = start_ns + static_cast<std::int64_t>(s.warmup_s * 1e9);
    t.window_end_ns = t.window_begin_ns + static_cast<std::int64_t>(s.duration_s * 1e9);
    t.stop_ns = t.window_end_ns + kChaosGraceNs;
    return t;
  }
};

struct ChaosShared {
  explicit ChaosShared(const ChaosPlan& plan)
      : burst_permille(plan.scenario.topics.size()),
        filled_bytes(plan.faults.size()),
        components(plan.scenario.components.size()),
        publications(plan.scenario.topics.size()),
        subscriptions(plan.subscriptions.size()),
        latencies(plan.latency_slots) {}
  Shared<ChaosControl> control;
  SharedArray<std::uint32_t> burst_permille;  ///< Per topic: see set_burst().
  SharedArray<std::uint64_t> filled_bytes;    ///< Per fault: what a memory_pressure filler held.
  SharedArray<ComponentChaosReport> components;
  SharedArray<PublicationChaosReport> publications;
  SharedArray<SubscriptionChaosReport> subscriptions;
  SharedArray<LatencySample> latencies;
};

/// Body of incarnation `incarnation` of component `index`; returns its exit status.
int run_chaos_component(const ChaosPlan& plan, ChaosShared& shared, std::size_t index, std::uint32_t incarnation);

}  // namespace axon_bench
