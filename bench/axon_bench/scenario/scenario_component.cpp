// One component process of a scenario: one node, a publisher per topic it
// publishes (each on its own schedule), a subscriber per topic it
// subscribes, all served by one thread in one loop. With `wait: blocking`
// (the default) the subscribers are callbacks of an
// axon::SingleThreadedExecutor with WaitStrategy::blocking(), which sleeps
// until a message arrives or the next publication is due; else the loop
// polls them.
#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/payload.hpp"
#include "harness/worker_setup.hpp"
#include "scenario/component_pool.hpp"
#include "scenario/scenario_run.hpp"
#include "scenario/scenario_topics.hpp"
#include <axon/axon.hpp>

namespace axon_bench {
namespace {

constexpr auto kScenarioConnectTimeout = std::chrono::seconds(30);
/// Chunks a publisher may have in flight beyond its subscribers' queue depth.
/// Samples taken from one subscriber before the loop serves the others.
constexpr int kTakeBurst = 64;

/// The component's pool; one that subscribes only still needs a pool.
std::vector<axon::ChunkClassConfig> chunk_classes_of(const Scenario& s, const ScenarioComponent& c) {
  std::vector<axon::ChunkClassConfig> classes = component_chunk_classes(s, c);
  if (classes.empty()) {
    classes.push_back({.payload_bytes = 256, .count = 4});
  }
  return classes;
}

struct Publication {
  const ScenarioTopic* topic = nullptr;
  PublicationReport* report = nullptr;
  std::unique_ptr<TopicWriter> writer;
  std::int64_t period_ns = 0;
  std::uint64_t next_index = 0;
  std::int64_t next_due_ns = 0;
};

struct Subscription {
  SubscriptionReport* report = nullptr;
  std::int64_t* latencies = nullptr;
  std::size_t capacity = 0;
  /// Per window (ScenarioPlan::latency_windows of them), instead of `latencies`; else null.
  WindowLatency* windows = nullptr;
  std::unique_ptr<TopicReader> reader;
};

int fail_component(ScenarioShared& shared, std::size_t index, const std::string& message) {
  return shared.components[index].error.set(message);
}

/// Component `index`'s node, on its CPU, its pool sized for what it publishes.
axon::Result<std::shared_ptr<axon::Node>> open_node(const ScenarioPlan& plan, std::size_t index) {
  const ScenarioComponent& self = plan.scenario.components[index];
  if (const std::string error = pin_to_cpu(self.cpu); !error.empty()) {
    return axon::Error(axon::ErrorCode::kSystem, error);
  }
  // Sleeps end within a microsecond of their time instead of the default
  // 50 µs of timer slack.
  ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  auto node =
      axon::Node::create(self.name, workers::node_in_domain(plan.domain_id, chunk_classes_of(plan.scenario, self)));
  if (!node) {
    return workers::failed("Node::create", node.error());
  }
  return node;
}

/// A publisher per topic component `index` publishes. Returns "" or what failed.
std::string open_publications(const ScenarioPlan& plan, ScenarioShared& shared, std::size_t index, axon::Node& node,
                              std::vector<Publication>& publications) {
  const Scenario& s = plan.scenario;
  const ScenarioComponent& self = s.components[index];
  for (const int topic : self.publishes) {
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(topic)];
    Publication p;
    p.topic = &t;
    p.report = &shared.publications[static_cast<std::size_t>(topic)];
    p.period_ns = period_ns_of(t);
    std::string error;
    with_payload_type(t.payload_bytes, [&]<class T>() {
      auto pub = node.advertise<T>(t.name);
      if (!pub) {
        error = "advertise '" + t.name + "': " + std::string(pub.error().message());
        return;
      }
      p.writer = std::make_unique<WriterOf<T>>(std::move(*pub), t.touch);
    });
    if (!error.empty()) {
      return error;
    }
    publications.push_back(std::move(p));
  }
  return "";
}

/// A subscriber per planned subscription of component `index`. Returns ""
/// or what failed.
std::string open_subscriptions(const ScenarioPlan& plan, ScenarioShared& shared, std::size_t index, axon::Node& node,
                               std::vector<Subscription>& subscriptions) {
  const Scenario& s = plan.scenario;
  for (std::size_t k = 0; k < plan.subscriptions.size(); ++k) {
    const ScenarioSubscription& planned = plan.subscriptions[k];
    if (planned.component != static_cast<int>(index)) {
      continue;
    }
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(planned.topic)];
    Subscription sub;
    sub.report = &shared.subscriptions[k];
    sub.latencies = shared.latencies.data() + planned.latency_offset;
    sub.capacity = planned.capacity;
    if (plan.latency_windows > 0) {
      sub.windows = &shared.window_latencies[k * plan.latency_windows];
      // Written now, so that its pages count in this process's memory from the start and do not look like growth
      // to a soak that samples it as windows begin.
      std::memset(static_cast<void*>(sub.windows), 0, plan.latency_windows * sizeof(WindowLatency));
    }
    std::string error;
    with_payload_type(t.payload_bytes, [&]<class T>() {
      auto subscriber = node.subscribe<T>(
          t.name, {.depth = t.depth,
                   .reliability = t.reliable ? axon::Reliability::kReliable : axon::Reliability::kBestEffort,
                   .overflow = t.block_publisher ? axon::Overflow::kBlockPublisher : axon::Overflow::kRejectNewest});
      if (!subscriber) {
        error = "subscribe '" + t.name + "': " + std::string(subscriber.error().message());
        return;
      }
      sub.reader = std::make_unique<ReaderOf<T>>(std::move(*subscriber), t.touch);
    });
    if (!error.empty()) {
      return error;
    }
    subscriptions.push_back(std::move(sub));
  }
  return "";
}

/// Whether every publisher has its subscribers and every subscriber a publisher.
bool all_connected(const std::vector<Publication>& publications, const std::vector<Subscription>& subscriptions) {
  bool all = true;
  for (const auto& p : publications) {
    all = all && p.writer->subscriber_count() >= p.topic->subscribers.size();
  }
  for (const auto& sub : subscriptions) {
    all = all && sub.reader->publisher_count() >= 1;
  }
  return all;
}

bool in_window(const ScenarioTimes& times, std::int64_t due) {
  return due >= times.window_begin_ns && due < times.window_end_ns;
}

/// Sends `p`'s message due by `now`. A publisher a whole period late sends
/// the latest due message and skips the older ones (as a sensor driver
/// would), counting them. Returns "" or what failed.
std::string publish_due(Publication& p, std::int64_t now, const ScenarioTimes& times) {
  while (p.next_due_ns + p.period_ns <= now && p.next_due_ns + p.period_ns < times.window_end_ns) {
    if (in_window(times, p.next_due_ns)) {
      ++p.report->missed;
    }
    ++p.next_index;
    p.next_due_ns += p.period_ns;
  }
  const std::int64_t due = p.next_due_ns;
  auto status = p.writer->send(p.next_index, due);
  if (in_window(times, due)) {
    if (status) {
      ++p.report->published;
      p.report->queue_full += status->dropped;
      const std::int64_t late = now_ns() - due;
      p.report->late_max_ns = std::max(p.report->late_max_ns, late);
      p.report->late_sum_ns += late;
    } else if (status.exhausted()) {
      ++p.report->loan_failures;
    }
  }
  if (status.failed()) {
    return "publish '" + p.topic->name + "': " + std::string(status.error().message());
  }
  ++p.next_index;
  p.next_due_ns += p.period_ns;
  return "";
}

void sleep_until_ns(std::int64_t when_ns) {
  timespec ts{};
  ts.tv_sec = when_ns / 1'000'000'000;
  ts.tv_nsec = when_ns % 1'000'000'000;
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

/// Takes up to kTakeBurst samples from each polled subscriber and hands
/// each to `record`. Returns "" or what failed; `worked` when it took any.
template <class Record>
std::string take_bursts(std::vector<Subscription>& subscriptions, const Record& record, bool& worked) {
  for (auto& sub : subscriptions) {
    Taken taken;
    for (int burst = 0; burst < kTakeBurst; ++burst) {
      const int got = sub.reader->take(taken);
      if (got < 0) {
        return sub.reader->error();
      }
      if (got == 0) {
        break;
      }
      worked = true;
      record(sub, taken);
    }
  }
  return "";
}

/// One turn's work: the publications due by `now`, then the subscribers
/// (their callbacks in `executor`, or taken in bursts). Returns "" or what
/// failed; `worked` when there was any.
template <class Record>
std::string serve(std::vector<Publication>& publications, std::vector<Subscription>& subscriptions,
                  axon::SingleThreadedExecutor* executor, const Record& record, const ScenarioTimes& times,
                  std::int64_t now, bool& worked) {
  for (auto& p : publications) {
    if (p.next_due_ns >= times.window_end_ns || now < p.next_due_ns) {
      continue;
    }
    if (std::string error = publish_due(p, now, times); !error.empty()) {
      return error;
    }
    worked = true;
  }
  if (executor == nullptr) {
    return take_bursts(subscriptions, record, worked);
  }
  auto ran = executor->spin_some();
  if (!ran) {
    return "spin_some: " + std::string(ran.error().message());
  }
  worked = worked || *ran > 0;
  return "";
}

/// When the loop has something to do next: a publication due, the window
/// beginning or ending, the stop.
std::int64_t next_event_ns(const std::vector<Publication>& publications, const ScenarioTimes& times, bool begun,
                           bool ended) {
  std::int64_t next_event = times.stop_ns;
  for (const auto& p : publications) {
    if (p.next_due_ns < times.window_end_ns) {
      next_event = std::min(next_event, p.next_due_ns);
    }
  }
  if (!begun) {
    next_event = std::min(next_event, times.window_begin_ns);
  } else if (!ended) {
    next_event = std::min(next_event, times.window_end_ns);
  }
  return next_event;
}

/// Idles until `next_event` at the latest, as the scenario's wait says:
/// asleep in the executor (`executor`: a message wakes it), or polling.
/// Returns "" or what failed.
std::string idle_until(const BenchWait& wait, axon::SingleThreadedExecutor* executor, bool polls_subscribers,
                       std::int64_t next_event) {
  const std::int64_t now = now_ns();
  if (executor != nullptr) {
    if (auto slept = executor->spin_for(std::chrono::nanoseconds(std::max<std::int64_t>(0, next_event - now)));
        !slept) {
      return "spin_for: " + std::string(slept.error().message());
    }
  } else if (wait.strategy.kind() == axon::WaitStrategy::Kind::kBusySpin) {
    cpu_relax();
  } else if (!polls_subscribers || wait.strategy.kind() == axon::WaitStrategy::Kind::kBlocking) {
    const std::int64_t poll_ns = polls_subscribers ? std::int64_t{wait.sleep_us} * 1000 : next_event - now;
    sleep_until_ns(std::min(next_event, now + poll_ns));
  } else {
    ::sched_yield();
  }
  return "";
}

/// Waits until every endpoint is connected, tells the parent, and returns
/// the start it chose (0: not connected in time).
std::int64_t wait_for_start(ScenarioControl& control, const std::vector<Publication>& publications,
                            const std::vector<Subscription>& subscriptions) {
  const auto deadline = std::chrono::steady_clock::now() + kScenarioConnectTimeout;
  while (!all_connected(publications, subscriptions)) {
    if (std::chrono::steady_clock::now() > deadline) {
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  control.ready.fetch_add(1, std::memory_order_acq_rel);
  std::int64_t start_ns = 0;
  // Acquire pairs with the parent's release store of start_ns.
  while ((start_ns = control.start_ns.load(std::memory_order_acquire)) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return start_ns;
}

/// No one drops its node while another still takes: waits (at most 10 s)
/// until all `components` are through.
void leave_together(ScenarioControl& control, std::size_t components) {
  control.finished.fetch_add(1, std::memory_order_acq_rel);  // acq_rel/acquire: see above
  const auto leave_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (control.finished.load(std::memory_order_acquire) < components && std::chrono::steady_clock::now() < leave_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

int run_scenario_component(const ScenarioPlan& plan, ScenarioShared& shared, std::size_t index) {
  const Scenario& s = plan.scenario;
  auto node = open_node(plan, index);
  if (!node) {
    return fail_component(shared, index, std::string(node.error().message()));
  }
  std::vector<Publication> publications;
  std::vector<Subscription> subscriptions;
  if (std::string error = open_publications(plan, shared, index, **node, publications); !error.empty()) {
    return fail_component(shared, index, error);
  }
  if (std::string error = open_subscriptions(plan, shared, index, **node, subscriptions); !error.empty()) {
    return fail_component(shared, index, error);
  }

  // Set once the start is known; the callbacks run only after it.
  ScenarioTimes times;
  const auto record = [&times, &plan](Subscription& sub, const Taken& taken) {
    if (in_window(times, taken.due_ns)) {
      ++sub.report->delivered;
      if (sub.windows != nullptr) {
        const auto window = static_cast<std::size_t>((taken.due_ns - times.window_begin_ns) / plan.latency_window_ns);
        sub.windows[std::min(window, plan.latency_windows - 1)].add(taken.received_ns - taken.publish_ns);
        ++sub.report->recorded;
      } else if (sub.report->recorded < sub.capacity) {
        sub.latencies[sub.report->recorded++] = taken.received_ns - taken.publish_ns;
      }
    }
  };
  const bool executor_waits = s.wait.executor && !subscriptions.empty();
  axon::SingleThreadedExecutor executor({.wait_strategy = s.wait.strategy});
  for (auto& sub : subscriptions) {
    auto added =
        executor_waits
            ? executor.add(sub.reader->subscription([&record, &sub](const Taken& taken) { record(sub, taken); }))
            : axon::Result<void>{};
    if (!added) {
      return fail_component(shared, index, "executor add: " + std::string(added.error().message()));
    }
  }

  // Everyone connected before anyone starts.
  ScenarioControl& control = *shared.control;
  const std::int64_t start_ns = wait_for_start(control, publications, subscriptions);
  if (start_ns == 0) {
    return fail_component(shared, index, "its publishers and subscribers did not all connect within 30 s");
  }
  times = ScenarioTimes::from(s, start_ns);
  for (auto& p : publications) {
    p.next_due_ns = due_ns(*p.topic, start_ns, 0);
  }
  sleep_until_ns(start_ns);

  ComponentReport& report = shared.components[index];
  bool begun = false;
  bool ended = false;
  for (;;) {
    const std::int64_t now = now_ns();
    if (!begun && now >= times.window_begin_ns) {
      report.measure_begin = CpuTimes::now();
      begun = true;
    }
    if (!ended && now >= times.window_end_ns) {
      report.measure_end = CpuTimes::now();
      ended = true;
    }
    if (now >= times.stop_ns) {
      break;
    }
    bool worked = false;
    if (std::string error =
            serve(publications, subscriptions, executor_waits ? &executor : nullptr, record, times, now, worked);
        !error.empty()) {
      return fail_component(shared, index, error);
    }
    if (worked) {
      continue;
    }
    // Idle until the next message is due, waiting for or polling subscribers meanwhile.
    if (std::string error = idle_until(s.wait, executor_waits ? &executor : nullptr, !subscriptions.empty(),
                                       next_event_ns(publications, times, begun, ended));
        !error.empty()) {
      return fail_component(shared, index, error);
    }
  }
  if (!ended) {
    report.measure_end = CpuTimes::now();
  }
  leave_together(control, s.components.size());
  return 0;
}

}  // namespace axon_bench
