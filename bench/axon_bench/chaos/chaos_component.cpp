// One incarnation of a chaos component: one node, a publisher per topic it
// publishes (on the topic's schedule, faster during a burst), a callback
// subscription per topic it subscribes with publisher-lost and deadline
// handlers, all served by one axon::SingleThreadedExecutor. The first
// incarnation starts with the others; a restarted one (after a kill) joins
// the running scenario, its publishers counting from sequence number 0 as a
// new incarnation. Every incarnation continues the shared reports of the one
// before it.
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "chaos/chaos_endpoints.hpp"
#include "chaos/chaos_run.hpp"
#include "harness/payload.hpp"
#include "harness/worker_setup.hpp"
#include "scenario/component_pool.hpp"
#include "tests/support/common/netns.hpp"
#include <axon/axon.hpp>

namespace axon_bench {
namespace {

constexpr auto kFirstConnectTimeout = std::chrono::seconds(30);
/// A restarted incarnation waits this long for its peers (a stopped one cannot answer), then runs anyway.
constexpr auto kRejoinTimeout = std::chrono::seconds(5);
constexpr auto kReleaseTimeout = std::chrono::seconds(60);

struct Publication {
  int topic = 0;
  std::string name;
  std::size_t expected_subscribers = 0;
  PublisherIncarnation* report = nullptr;
  std::uint64_t* in_window = nullptr;
  std::uint32_t* burst = nullptr;
  std::unique_ptr<ChaosWriter> writer;
  std::int64_t period_ns = 0;
  std::int64_t next_due_ns = 0;
};

struct Subscription {
  SubscriptionChaosReport* report = nullptr;
  LatencySample* latencies = nullptr;
  std::size_t capacity = 0;
  std::unique_ptr<ChaosReader> reader;
  std::shared_ptr<axon::SubscriptionBase> callbacks;
};

/// `p`'s subscribers: those on this host, and those other hosts announced (virtual hosts; Node::routes()).
std::uint32_t subscribers_of(const axon::Node& node, const Publication& p) {
  std::uint32_t count = p.writer->subscriber_count();
  if (!node.host().empty()) {
    for (const axon::TopicRoute& route : node.routes(p.name)) {
      count += route.host != node.host() && route.transport != axon::TransportKind::kShm ? route.subscribers : 0;
    }
  }
  return count;
}

bool connected(const axon::Node& node, const std::vector<Publication>& pubs, const std::vector<Subscription>& subs) {
  return std::all_of(pubs.begin(), pubs.end(),
                     [&](const auto& p) { return subscribers_of(node, p) >= p.expected_subscribers; }) &&
         std::all_of(subs.begin(), subs.end(), [](const auto& s) { return s.reader->publisher_count() >= 1; });
}

template <class Rep, class Period>
bool wait_connected(const axon::Node& node, const std::vector<Publication>& pubs, const std::vector<Subscription>& subs,
                    std::chrono::duration<Rep, Period> timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!connected(node, pubs, subs)) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

/// Publishes `p`'s message due by `now` (a publisher a whole period late sends now and skips the older ones, as
/// the scenario's do). Returns "" or what failed.
std::string publish_due(const axon::Node& node, Publication& p, std::uint32_t incarnation, std::int64_t now,
                        const ChaosTimes& times) {
  const auto period = static_cast<std::int64_t>(static_cast<double>(p.period_ns) / burst_of(*p.burst));
  if (now - p.next_due_ns >= period) {
    p.next_due_ns = now - (now - p.next_due_ns) % period;
  }
  PublisherIncarnation& r = *p.report;
  const std::uint64_t seq = r.attempted;
  if (r.first_publish_ns == 0) {
    r.first_publish_ns = now;
    r.subscribers_at_start = subscribers_of(node, p);
  }
  r.attempted = seq + 1;  // before publish(): a kill inside it leaves attempted = completed + 1
  auto status = p.writer->send(seq, incarnation);
  if (status.exhausted()) {
    r.attempted = seq;  // nothing was published: the sequence number is not spent
    ++r.loan_failures;
  } else if (status.failed()) {
    return "publish '" + std::to_string(p.topic) + "': " + std::string(status.error().message());
  } else {
    r.completed = seq + 1;
    r.timed_out += status->timed_out;
    if (p.next_due_ns >= times.window_begin_ns) {
      ++*p.in_window;
    }
  }
  p.next_due_ns += period;
  return "";
}

void sleep_until_ns(std::int64_t when_ns) {
  timespec ts{};
  ts.tv_sec = when_ns / 1'000'000'000;
  ts.tv_nsec = when_ns % 1'000'000'000;
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

int run_chaos_component(const ChaosPlan& plan, ChaosShared& shared, std::size_t index, std::uint32_t incarnation) {
  const Scenario& s = plan.scenario;
  const ScenarioComponent& self = s.components[index];
  ComponentChaosReport& report = shared.components[index];
  if (incarnation >= kMaxIncarnations) {
    return report.error.set("restarted more than " + std::to_string(kMaxIncarnations - 1) + " times");
  }
  if (const std::string error = pin_to_cpu(self.cpu); !error.empty()) {
    return report.error.set(error);
  }
  ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  const bool on_host = plan.hosts != nullptr && self.host >= 0;
  axon::NodeOptions options = workers::node_in_domain(
      plan.domain_id, on_host ? component_chunk_classes_on_hosts(s, self) : component_chunk_classes(s, self));
  if (on_host) {
    // This process (forked, single-threaded) moves onto its virtual host: its network and its /dev/shm.
    if (auto entered = plan.hosts->enter(static_cast<std::size_t>(self.host)); !entered) {
      return report.error.set("entering host '" + s.hosts[static_cast<std::size_t>(self.host)] +
                              "': " + std::string(entered.error().message()));
    }
    options.config_path = plan.config_path;
  }
  auto node = axon::Node::create(self.name, options);
  if (!node) {
    return report.error.set("Node::create: " + std::string(node.error().message()));
  }

  std::vector<Publication> publications;
  for (const int topic : self.publishes) {
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(topic)];
    Publication p;
    p.topic = topic;
    p.name = t.name;
    p.expected_subscribers = t.subscribers.size();
    p.report = &shared.publications[static_cast<std::size_t>(topic)].incarnations[incarnation];
    p.in_window = &shared.publications[static_cast<std::size_t>(topic)].published_in_window;
    p.burst = &shared.burst_permille[static_cast<std::size_t>(topic)];
    p.period_ns = static_cast<std::int64_t>(1e9 / t.rate_hz + 0.5);
    std::string error;
    with_payload_type(t.payload_bytes, [&]<class T>() {
      auto pub = (*node)->advertise<T>(t.name);
      if (!pub) {
        error = "advertise '" + t.name + "': " + std::string(pub.error().message());
        return;
      }
      p.writer = std::make_unique<ChaosWriterOf<T>>(std::move(*pub));
    });
    if (!error.empty()) {
      return report.error.set(error);
    }
    publications.push_back(std::move(p));
  }

  // Set once the start is known; the callbacks run only after it.
  ChaosTimes times;
  std::vector<Subscription> subscriptions;
  subscriptions.reserve(plan.subscriptions.size());  // the callbacks hold pointers into it
  axon::SingleThreadedExecutor executor({.wait_strategy = axon::WaitStrategy::blocking()});
  for (std::size_t k = 0; k < plan.subscriptions.size(); ++k) {
    const ChaosSubscription& planned = plan.subscriptions[k];
    if (planned.component != static_cast<int>(index)) {
      continue;
    }
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(planned.topic)];
    Subscription& sub = subscriptions.emplace_back();
    sub.report = &shared.subscriptions[k];
    sub.latencies = shared.latencies.data() + planned.latency_offset;
    sub.capacity = planned.capacity;
    const axon::SubscriberQos qos{
        .depth = t.depth,
        .reliability = t.reliable ? axon::Reliability::kReliable : axon::Reliability::kBestEffort,
        .overflow = t.block_publisher ? axon::Overflow::kBlockPublisher : axon::Overflow::kRejectNewest,
        .deadline_ns = planned.deadline_ns};
    std::string error;
    with_payload_type(t.payload_bytes, [&]<class T>() {
      auto subscriber = (*node)->subscribe<T>(t.name, qos);
      if (!subscriber) {
        error = "subscribe '" + t.name + "': " + std::string(subscriber.error().message());
        return;
      }
      sub.reader = std::make_unique<ChaosReaderOf<T>>(std::move(*subscriber));
    });
    if (!error.empty()) {
      return report.error.set(error);
    }
    SubscriptionChaosReport* r = sub.report;
    // From another host: its latency runs from the publisher's stamp (the same clock: virtual hosts share the kernel).
    const bool remote = self.host >= 0 && s.components[static_cast<std::size_t>(t.publisher)].host != self.host;
    sub.callbacks = sub.reader->subscription([r, &sub, &times, incarnation, remote](const ChaosTaken& raw) {
      ChaosTaken taken = raw;
      taken.publish_ns = remote ? raw.stamped_ns : raw.publish_ns;
      ++r->received;
      if (!taken.read.intact) {
        ++r->corrupt;  // its sequence number cannot be trusted
        return;
      }
      r->tracker.on_message(incarnation, taken.read.header.incarnation, taken.read.header.seq);
      if (taken.publish_ns >= times.window_begin_ns && taken.publish_ns < times.window_end_ns &&
          r->recorded < sub.capacity) {
        sub.latencies[r->recorded++] = {taken.publish_ns, taken.received_ns - taken.publish_ns};
      }
    });
    // Counted inside the measured window only: before it the publishers have not begun, after it they stopped.
    sub.callbacks->on_publisher_lost([r, &times](const axon::LivelinessEvent& event) {
      const std::int64_t now = now_ns();
      if (now >= times.window_begin_ns && now < times.stop_ns) {
        r->first_lost_ns = r->first_lost_ns == 0 ? now : r->first_lost_ns;
        ++r->publisher_lost_events;
        r->publishers_lost += event.lost;
      }
    });
    sub.callbacks->on_deadline_missed([r, &times](const axon::DeadlineEvent& /*event*/) {
      const std::int64_t now = now_ns();
      if (now >= times.window_begin_ns && now < times.window_end_ns) {
        r->first_deadline_ns = r->first_deadline_ns == 0 ? now : r->first_deadline_ns;
        ++r->deadline_events;
      }
    });
    if (auto added = executor.add(sub.callbacks); !added) {
      return report.error.set("executor add: " + std::string(added.error().message()));
    }
  }

  ChaosControl& control = *shared.control;
  std::int64_t start_ns = 0;
  std::int64_t connected_ns = 0;
  if (incarnation == 0) {
    if (!wait_connected(**node, publications, subscriptions, kFirstConnectTimeout)) {
      return report.error.set("its publishers and subscribers did not all connect within 30 s");
    }
    connected_ns = now_ns();
    control.ready.fetch_add(1, std::memory_order_acq_rel);  // pairs with the parent's acquire load
    // Acquire pairs with the parent's release store of start_ns.
    while ((start_ns = control.start_ns.load(std::memory_order_acquire)) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } else {
    // A peer that is stopped cannot connect now: the run goes on, and the checks see what that cost.
    (void)wait_connected(**node, publications, subscriptions, kRejoinTimeout);
    connected_ns = now_ns();
    start_ns = control.start_ns.load(std::memory_order_acquire);  // set before any restart: acquire as above
  }
  report.incarnations[incarnation].connected_ns = connected_ns;
  times = ChaosTimes::from(s, start_ns);
  const std::int64_t joined_ns = std::max(now_ns(), start_ns);
  for (auto& p : publications) {
    const ScenarioTopic& t = s.topics[static_cast<std::size_t>(p.topic)];
    const std::int64_t first = start_ns + static_cast<std::int64_t>(t.phase_ms * 1e6);
    // A restart continues the schedule: its first message is the next one due.
    p.next_due_ns =
        first + std::max<std::int64_t>(0, (joined_ns - first + p.period_ns - 1) / p.period_ns) * p.period_ns;
  }
  sleep_until_ns(joined_ns);

  for (;;) {
    const std::int64_t now = now_ns();
    if (now >= times.stop_ns) {
      break;
    }
    std::int64_t next_event = times.stop_ns;
    for (auto& p : publications) {
      if (p.next_due_ns < times.window_end_ns && now >= p.next_due_ns) {
        if (std::string error = publish_due(**node, p, incarnation, now, times); !error.empty()) {
          return report.error.set(error);
        }
      }
      if (p.next_due_ns < times.window_end_ns) {
        next_event = std::min(next_event, p.next_due_ns);
      }
    }
    if (auto ran = executor.spin_some(); !ran) {
      return report.error.set("spin_some: " + std::string(ran.error().message()));
    }
    const std::int64_t wait_ns = next_event - now_ns();
    if (wait_ns > 0) {
      if (auto slept = executor.spin_for(std::chrono::nanoseconds(wait_ns)); !slept) {
        return report.error.set("spin_for: " + std::string(slept.error().message()));
      }
    }
  }
  report.incarnations[incarnation].drained_ns = now_ns();
  // Stay (and keep the pool mapped) while the parent reads every pool; acq_rel/acquire as for `ready`.
  control.drained.fetch_add(1, std::memory_order_acq_rel);
  const auto leave_by = std::chrono::steady_clock::now() + kReleaseTimeout;
  while (control.release.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < leave_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

}  // namespace axon_bench
