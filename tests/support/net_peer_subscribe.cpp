// The subscriber role of axon_net_peer: an executor hands each message to a
// callback that checks its content and order; the liveliness handler reports
// lost publishers. Ends with one "SUMMARY key=value ..." line.
#include <chrono>
#include <map>
#include <optional>

#include "tests/support/net_messages.hpp"
#include "tests/support/net_peer.hpp"

namespace axon::test::net_peer {
namespace {

using Clock = std::chrono::steady_clock;

/// What the callback saw. Written on the spinning (main) thread only.
struct Tally {
  std::uint64_t received = 0;
  std::uint64_t first = 0;                        ///< Sequence of the first message.
  std::uint64_t last = 0;                         ///< Sequence of the latest message.
  std::uint64_t out_of_order = 0;                 ///< Older than one already seen from its publisher.
  std::uint64_t duplicates = 0;                   ///< The same sequence twice from one publisher.
  std::uint64_t missing = 0;                      ///< Sequences skipped (gaps between consecutive messages).
  std::uint64_t corrupt = 0;                      ///< Content or checksum wrong.
  std::map<std::uint32_t, std::uint64_t> newest;  ///< Per publisher id.
  Clock::time_point last_message{};
  std::uint64_t lost_events = 0;
};

template <class T>
void check_message(const T& m, Tally& t) {
  ++t.received;
  t.last_message = Clock::now();
  if (!net_message_intact(m)) {
    ++t.corrupt;  // its header cannot be trusted either: no order check
    return;
  }
  const std::uint64_t sequence = m.header.sequence;
  if (t.received == 1) {
    t.first = sequence;
    say("FIRST sequence=" + std::to_string(sequence));  // tests wait for it before they break things
  }
  t.last = sequence;
  auto [it, fresh] = t.newest.try_emplace(m.header.publisher, 0);
  if (!fresh && sequence == it->second) {
    ++t.duplicates;
  } else if (!fresh && sequence < it->second) {
    ++t.out_of_order;
  } else {
    t.missing += sequence - it->second - 1;  // from 0 for the first: sequences before it are missing too
    it->second = sequence;
  }
}

/// The QoS the options name; nullopt: the topic's QoS from the deployment config.
std::optional<SubscriberQos> qos_of(const Options& o) {
  if (o.reliability == "config") {
    return std::nullopt;
  }
  SubscriberQos qos;
  qos.depth = o.depth;
  qos.reliability = o.reliability == "reliable" ? Reliability::kReliable : Reliability::kBestEffort;
  return qos;
}

template <class T>
int receive_messages(const Options& o, Node& node) {
  Tally tally;
  auto on_message = [&tally](const Sample<T>& s) { check_message(*s, tally); };
  const std::optional<SubscriberQos> qos = qos_of(o);
  auto sub = qos ? node.subscribe<T>(o.topic, *qos, on_message) : node.subscribe<T>(o.topic, on_message);
  if (!sub) {
    say("ERROR subscribe(" + o.topic + "): " + std::string(sub.error().message()));
    return kExitSetupFailed;
  }
  const auto start = Clock::now();
  (*sub)->on_publisher_lost([&tally, start](const LivelinessEvent& e) {
    tally.lost_events += e.lost;
    const auto since = tally.received == 0 ? Clock::now() - start : Clock::now() - tally.last_message;
    say("LOST total=" + std::to_string(e.lost_total) + " since_last_message_ms=" +
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(since).count()));
  });
  SingleThreadedExecutor executor({.wait_strategy = WaitStrategy::blocking()});
  if (auto added = executor.add(*sub); !added) {
    say("ERROR executor.add: " + std::string(added.error().message()));
    return kExitSetupFailed;
  }
  say("READY");
  const auto deadline = start + std::chrono::milliseconds(o.timeout_ms);
  bool done = false;
  for (;;) {
    if (auto spun = executor.spin_for(std::chrono::milliseconds(20)); !spun) {
      say("ERROR spin: " + std::string(spun.error().message()));
      return kExitSetupFailed;
    }
    done = o.wait_lost ? tally.lost_events > 0 : tally.received >= o.count;
    const auto now = Clock::now();
    const bool idle =
        o.idle_ms > 0 && tally.received > 0 && now - tally.last_message > std::chrono::milliseconds(o.idle_ms);
    if (done || idle || now > deadline) {
      break;
    }
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  const SubscriberCounters counters = (*sub)->subscriber().counters();
  say("SUMMARY done=" + std::to_string(done ? 1 : 0) + " received=" + std::to_string(tally.received) +
      " first=" + std::to_string(tally.first) + " last=" + std::to_string(tally.last) +
      " out_of_order=" + std::to_string(tally.out_of_order) + " duplicates=" + std::to_string(tally.duplicates) +
      " missing=" + std::to_string(tally.missing) + " corrupt=" + std::to_string(tally.corrupt) +
      " rejected=" + std::to_string(counters.rejected) +
      " publishers_lost=" + std::to_string((*sub)->publishers_lost()) + " elapsed_ms=" + std::to_string(elapsed) +
      " transport_for=" + std::string(to_string(node.transport_for(o.topic))) + " " +
      counters_text(node.network_counters()));
  if (tally.corrupt != 0 || tally.out_of_order != 0 || tally.duplicates != 0) {
    return kExitBadMessages;
  }
  return done ? kExitOk : kExitIncomplete;
}

}  // namespace

int run_subscriber(const Options& options) {
  auto node = make_node(options);
  if (!node) {
    return kExitSetupFailed;
  }
  int status = kExitSetupFailed;
  with_net_message(options.bytes, [&]<class T>() { status = receive_messages<T>(options, *node); });
  return status;
}

}  // namespace axon::test::net_peer
