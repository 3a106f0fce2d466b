// axon_net_peer: the program multi-host tests start on each virtual host.
// One role per process (publisher or subscriber), public API only, its
// deployment taken from a config file. Shared by net_peer*.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "axon/axon.hpp"

namespace axon::test::net_peer {

/// Exit statuses, so a test can tell why a peer stopped.
inline constexpr int kExitOk = 0;           ///< Did what it was asked (all messages, or the loss it waited for).
inline constexpr int kExitBadMessages = 1;  ///< Corrupt, duplicate or out-of-order messages seen.
inline constexpr int kExitSetupFailed = 2;  ///< Bad options, Node::create or advertise/subscribe failed.
inline constexpr int kExitIncomplete = 3;   ///< Timed out (or idle) before it was done.

struct Options {
  std::string config;  ///< Deployment config (NodeOptions::config_path).
  std::string node;    ///< Node name, as in the config.
  std::string role;    ///< "publisher", "subscriber" or "graph-watcher".
  std::string topic = "net/test";
  std::uint64_t bytes = 64;  ///< Message size (see with_net_message()).
  std::uint64_t count = 100;
  double rate_hz = 0;                  ///< Publisher: 0 = as fast as publish() takes them.
  std::string reliability = "config";  ///< "config" (QoS from the file), "reliable", "best-effort".
  std::uint32_t depth = 16;            ///< Subscriber queue depth with --reliable/--best-effort.
  std::uint64_t timeout_ms = 30'000;   ///< Whole run.
  std::uint64_t idle_ms = 0;           ///< Subscriber: stop this long after the last message (0: never).
  bool wait_lost = false;              ///< Subscriber: run until a publisher is lost.
  std::uint32_t wait_subscribers = 0;  ///< Publisher: subscribers (local + remote) to wait for.
  std::uint64_t linger_ms = 0;         ///< Publisher: stay this long after the last message (or until SIGTERM).
  bool resend_dropped = false;         ///< Publisher: publish a message again while its status says dropped.
  std::uint32_t publisher_id = 0;      ///< Publisher: the id its messages' bodies derive from (0: a random one).
};

/// Prints one line on stdout and flushes it (tests read it through a pipe).
void say(const std::string& line);

/// The node of `options` (its config file); prints "ERROR ..." and returns
/// nullptr when it cannot be created.
std::shared_ptr<Node> make_node(const Options& options);

/// "datagrams_sent=1 datagrams_received=2 ...": every NetworkCounters field.
std::string counters_text(const NetworkCounters& c);

/// "host:transport:subscribers:reliable,..." of routes(topic).
std::string routes_text(const std::vector<TopicRoute>& routes);

int run_publisher(const Options& options);
int run_subscriber(const Options& options);
/// Watches the graph of options.topic for a publisher of another host (net_peer_graph.cpp).
int run_graph_watcher(const Options& options);

}  // namespace axon::test::net_peer
