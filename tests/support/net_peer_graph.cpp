// axon_net_peer --role graph-watcher: watches a topic's graph without
// publishing or subscribing it, for the multi-host graph tests. Prints
// "WATCHING", then "WAITED host=H" once Node::wait_for_graph() saw a
// publisher of another host, "APPEARED host=H" and "LEFT host=H" as its
// on_graph_event() callback sees such a publisher come and go; exits 0 after
// LEFT, kExitIncomplete at --timeout-ms.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "tests/support/net_peer.hpp"

namespace axon::test::net_peer {
namespace {

bool remote_publisher(const GraphEndpoint& e) { return e.kind == GraphEndpointKind::kPublisher && !e.host.empty(); }

}  // namespace

int run_graph_watcher(const Options& options) {
  auto node = make_node(options);
  if (!node) {
    return kExitSetupFailed;
  }
  std::atomic<bool> left{false};
  auto events = node->on_graph_event(options.topic, [&](const GraphEvent& event) {
    if (!remote_publisher(event.endpoint)) {
      return;
    }
    const bool gone = event.change == GraphChange::kLeft;
    say(std::string(gone ? "LEFT" : "APPEARED") + " host=" + event.endpoint.host);
    if (gone) {
      left.store(true);
    }
  });
  if (!events) {
    say("ERROR on_graph_event: " + std::string(events.error().message()));
    return kExitSetupFailed;
  }
  SingleThreadedExecutor executor;
  if (!executor.add(*events)) {
    return kExitSetupFailed;
  }
  const auto timeout = std::chrono::milliseconds(options.timeout_ms);
  std::thread spinning([&] { (void)executor.spin_for(timeout); });
  say("WATCHING");
  std::string host;
  auto waited = node->wait_for_graph(
      options.topic,
      [&](std::span<const GraphEndpoint> now) {
        for (const GraphEndpoint& e : now) {
          if (remote_publisher(e)) {
            host = e.host;
            return true;
          }
        }
        return false;
      },
      timeout);
  if (waited && *waited == GraphWait::kMet) {
    say("WAITED host=" + host);
  }
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!left.load() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  executor.stop();
  spinning.join();
  return left.load() ? kExitOk : kExitIncomplete;
}

}  // namespace axon::test::net_peer
