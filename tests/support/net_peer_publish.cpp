// The publisher role of axon_net_peer: waits for its subscribers, sends
// numbered, checksummed messages at a fixed rate, then lingers so that a
// reliable transport can still answer NACKs, and reports where the topic went.
#include <csignal>
#include <random>
#include <thread>

#include "tests/support/net_messages.hpp"
#include "tests/support/net_peer.hpp"

namespace axon::test::net_peer {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop = 0;  // set by SIGTERM/SIGINT: leave the linger early

extern "C" void request_stop(int /*signal*/) { g_stop = 1; }

struct SubscriberCount {
  std::uint32_t local = 0;
  std::uint32_t remote = 0;
};

/// Subscribers on this host (shared memory) and those other hosts announced;
/// those of an RDMA host only once a stream to it is open (before, a publish
/// has nowhere to write them).
template <class T>
SubscriberCount count_subscribers(const Node& node, const Publisher<T>& pub) {
  SubscriberCount count{.local = pub.subscriber_count()};
  std::uint64_t rdma_hosts = 0;
  std::uint32_t rdma_subscribers = 0;
  for (const auto& route : node.routes(pub.topic())) {
    if (route.transport == TransportKind::kRdma && route.subscribers > 0) {
      ++rdma_hosts;
      rdma_subscribers += route.subscribers;
    } else if (route.transport != TransportKind::kShm && route.host != node.host()) {
      count.remote += route.subscribers;
    }
  }
  if (rdma_hosts > 0 && node.network_counters().rdma_streams_sent >= rdma_hosts) {
    count.remote += rdma_subscribers;
  }
  return count;
}

/// Loans (retrying while the pool is exhausted, until `deadline`), fills and
/// publishes message `sequence`.
template <class T>
PublishResult publish_one(Publisher<T>& pub, std::uint32_t id, std::uint64_t sequence, Clock::time_point deadline) {
  for (;;) {
    auto loan = pub.loan();
    if (loan) {
      fill_net_message(**loan, id, sequence);
      return pub.publish(std::move(*loan));
    }
    if (loan.failed()) {
      return loan.error();
    }
    if (Clock::now() > deadline) {
      return kPoolExhausted;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

template <class T>
int publish_messages(const Options& o, Node& node) {
  auto pub = node.advertise<T>(o.topic);
  if (!pub) {
    say("ERROR advertise(" + o.topic + "): " + std::string(pub.error().message()));
    return kExitSetupFailed;
  }
  say("READY");
  const auto deadline = Clock::now() + std::chrono::milliseconds(o.timeout_ms);
  SubscriberCount subs = count_subscribers(node, **pub);
  while (subs.local + subs.remote < o.wait_subscribers) {
    if (Clock::now() > deadline || g_stop != 0) {
      say("ERROR timed out waiting for " + std::to_string(o.wait_subscribers) + " subscribers (local " +
          std::to_string(subs.local) + ", remote " + std::to_string(subs.remote) + ", routes " +
          routes_text(node.routes(o.topic)) + ")");
      return kExitIncomplete;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    subs = count_subscribers(node, **pub);
  }
  say("SUBSCRIBED local_subscribers=" + std::to_string(subs.local) +
      " remote_subscribers=" + std::to_string(subs.remote) + " routes=" + routes_text(node.routes(o.topic)));

  const std::uint32_t id = o.publisher_id != 0 ? o.publisher_id : std::random_device{}() | 1U;
  const auto period = o.rate_hz > 0 ? std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / o.rate_hz))
                                    : std::chrono::nanoseconds(0);
  auto next = Clock::now();
  std::uint64_t sent = 0;
  std::uint64_t failed = 0;
  std::uint64_t dropped = 0;  // by publish()'s status, resent ones included
  std::string last_error = "none";
  for (std::uint64_t sequence = 1; sequence <= o.count && g_stop == 0; ++sequence) {
    if (period.count() > 0) {
      std::this_thread::sleep_until(next);
      next += period;
    }
    auto status = publish_one(**pub, id, sequence, deadline);
    while (o.resend_dropped && status && status.status().dropped > 0 && Clock::now() < deadline && g_stop == 0) {
      dropped += status.status().dropped;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      status = publish_one(**pub, id, sequence, deadline);
    }
    if (status) {
      ++sent;
      dropped += status.status().dropped;
    } else {
      ++failed;
      last_error = std::string(to_string(status.error().code()));
    }
  }
  say("SENT sent=" + std::to_string(sent) + " failed=" + std::to_string(failed) +
      " dropped=" + std::to_string(dropped) + " last_error=" + last_error);

  const auto linger_end = Clock::now() + std::chrono::milliseconds(o.linger_ms);
  while (g_stop == 0 && Clock::now() < linger_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  subs = count_subscribers(node, **pub);
  say("PUBLISHER sent=" + std::to_string(sent) + " failed=" + std::to_string(failed) +
      " dropped=" + std::to_string(dropped) + " local_subscribers=" + std::to_string(subs.local) +
      " remote_subscribers=" + std::to_string(subs.remote) + " routes=" + routes_text(node.routes(o.topic)) +
      " transport_for=" + std::string(to_string(node.transport_for(o.topic))) + " " +
      counters_text(node.network_counters()));
  return failed == 0 ? kExitOk : kExitIncomplete;
}

}  // namespace

int run_publisher(const Options& options) {
  std::signal(SIGTERM, request_stop);
  std::signal(SIGINT, request_stop);
  auto node = make_node(options);
  if (!node) {
    return kExitSetupFailed;
  }
  int status = kExitSetupFailed;
  with_net_message(options.bytes, [&]<class T>() { status = publish_messages<T>(options, *node); });
  return status;
}

}  // namespace axon::test::net_peer
