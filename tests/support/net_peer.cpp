// axon_net_peer --config FILE --node NAME --role publisher|subscriber [options]
// Prints "READY" once its endpoint exists. A publisher then waits for
// --wait-subscribers ("SUBSCRIBED ..." with the routes then), sends --count messages of --bytes at
// --rate-hz (with --resend-dropped each again while dropped), prints "SENT ...", lingers and prints "PUBLISHER ..." on
// exit. A subscriber checks every message, prints "FIRST ..." on the first one, "LOST ..." when a publisher is lost,
// and "SUMMARY key=value ..." at the end (parsed by tests/support/peer_summary.hpp). Exit statuses: net_peer.hpp.
#include "tests/support/net_peer.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "tests/support/net_messages.hpp"

namespace axon::test::net_peer {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::shared_ptr<Node> make_node(const Options& options) {
  NodeOptions node_options;
  node_options.config_path = options.config;
  auto node = Node::create(options.node, node_options);
  if (!node) {
    say("ERROR Node::create(" + options.node + "): " + std::string(node.error().message()));
    return nullptr;
  }
  return *node;
}

std::string counters_text(const NetworkCounters& c) {
  const std::pair<const char*, std::uint64_t> fields[] = {
      {"datagrams_sent", c.datagrams_sent},
      {"datagrams_received", c.datagrams_received},
      {"datagrams_refused", c.datagrams_refused},
      {"messages_sent", c.messages_sent},
      {"messages_received", c.messages_received},
      {"messages_incomplete", c.messages_incomplete},
      {"messages_out_of_order", c.messages_out_of_order},
      {"net_duplicates", c.duplicates},
      {"nacks_sent", c.nacks_sent},
      {"nacks_received", c.nacks_received},
      {"fragments_resent", c.fragments_resent},
      {"gaps_sent", c.gaps_sent},
      {"messages_lost", c.messages_lost},
      {"hosts_discovered", c.hosts_discovered},
      {"hosts_lost", c.hosts_lost},
      {"type_mismatches", c.type_mismatches},
      {"pool_exhausted", c.pool_exhausted},
      {"auth_failures", c.auth_failures},
      {"replays", c.replays},
      {"not_allowed", c.not_allowed},
      {"unauthenticated", c.unauthenticated},
      {"not_encrypted", c.not_encrypted},
      {"unexpectedly_encrypted", c.unexpectedly_encrypted},
      {"rdma_links_up", c.rdma_links_up},
      {"rdma_streams_sent", c.rdma_streams_sent},
      {"rdma_messages_sent", c.rdma_messages_sent},
      {"rdma_messages_received", c.rdma_messages_received},
      {"rdma_credit_drops", c.rdma_credit_drops},
      {"rdma_credit_timeouts", c.rdma_credit_timeouts},
      {"rdma_send_failures", c.rdma_send_failures},
      {"rdma_no_stream_drops", c.rdma_no_stream_drops},
  };
  std::string text;
  for (const auto& [name, value] : fields) {
    text += (text.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
  }
  return text;
}

std::string routes_text(const std::vector<TopicRoute>& routes) {
  std::string text;
  for (const auto& r : routes) {
    text += (text.empty() ? "" : ",") + (r.host.empty() ? std::string("-") : r.host) + ":" +
            std::string(to_string(r.transport)) + ":" + std::to_string(r.subscribers) + ":" +
            (r.reliable ? "reliable" : "best_effort");
  }
  return text.empty() ? "none" : text;
}

}  // namespace axon::test::net_peer

namespace {

int run(int argc, char** argv) {
  using axon::test::net_peer::Options;
  Options o;
  CLI::App app{"axon_net_peer: one publisher or subscriber of the multi-host tests"};
  app.add_option("--config", o.config, "Deployment config file")->required()->check(CLI::ExistingFile);
  app.add_option("--node", o.node, "Node name in the config")->required();
  app.add_option("--role", o.role, "publisher, subscriber or graph-watcher")
      ->required()
      ->check(CLI::IsMember({"publisher", "subscriber", "graph-watcher"}));
  app.add_option("--topic", o.topic, "Topic name")->capture_default_str();
  app.add_option("--bytes", o.bytes, "Message size: 64, 2048, 65536, 1048576 or 4194304")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  app.add_option("--count", o.count, "Messages to send (publisher) or expect (subscriber)")->capture_default_str();
  app.add_option("--rate-hz", o.rate_hz, "Publisher: messages per second (0: as fast as possible)")
      ->check(CLI::NonNegativeNumber);
  auto* reliable = app.add_flag_callback(
      "--reliable", [&o] { o.reliability = "reliable"; },
      "Subscriber QoS RELIABLE (default: the topic's QoS from the config)");
  app.add_flag_callback(
         "--best-effort", [&o] { o.reliability = "best-effort"; }, "Subscriber QoS BEST_EFFORT")
      ->excludes(reliable);
  app.add_option("--depth", o.depth, "Subscriber queue depth with --reliable/--best-effort")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--timeout-ms", o.timeout_ms, "Give up after this long")->capture_default_str();
  app.add_option("--idle-ms", o.idle_ms, "Subscriber: stop this long after the last message (0: never)");
  app.add_flag("--wait-lost", o.wait_lost, "Subscriber: run until a publisher is lost (liveliness handler)");
  app.add_option("--wait-subscribers", o.wait_subscribers,
                 "Publisher: wait until this many subscribers (local and on other hosts) are known");
  app.add_flag("--resend-dropped", o.resend_dropped,
               "Publisher: publish a message again while its status says dropped (an RDMA stream drops until the "
               "receiver answers)");
  app.add_option("--linger-ms", o.linger_ms, "Publisher: stay this long after the last message, or until SIGTERM");
  app.add_option("--publisher-id", o.publisher_id,
                 "Publisher: the odd id its message bodies derive from (net_body_word), so that a test knows the "
                 "bytes to look for on the wire (0: random)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : axon::test::net_peer::kExitSetupFailed;
  }
  bool known_size = false;
  axon::test::with_net_message(o.bytes, [&]<class T>() { known_size = true; });
  if (!known_size) {
    axon::test::net_peer::say("ERROR --bytes " + std::to_string(o.bytes) + " has no message type");
    return axon::test::net_peer::kExitSetupFailed;
  }
  if (o.role == "graph-watcher") {
    return axon::test::net_peer::run_graph_watcher(o);
  }
  return o.role == "publisher" ? axon::test::net_peer::run_publisher(o) : axon::test::net_peer::run_subscriber(o);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    axon::test::net_peer::say(std::string("ERROR ") + e.what());
  }
  return axon::test::net_peer::kExitSetupFailed;
}
