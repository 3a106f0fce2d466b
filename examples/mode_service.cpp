// A mode-change service and graph events:
//   axon-example-mode-service server   serves "vehicle/set_mode" until Ctrl-C
//   axon-example-mode-service client   waits for the server, calls it 5 times
//   axon-example-mode-service          both, in one process (what CI runs)
// The client watches the graph of the service's request topic, so it prints
// when the server appears or leaves.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <thread>

#include "axon/axon.hpp"

namespace vehicle {
struct SetMode {
  static constexpr std::string_view kAxonTypeName = "vehicle::SetMode";
  std::uint32_t mode = 0;  // 0 manual, 1 assisted, 2 autonomous
};
struct ModeAck {
  static constexpr std::string_view kAxonTypeName = "vehicle::ModeAck";
  std::uint32_t mode = 0;
  bool accepted = false;
};
}  // namespace vehicle

using namespace std::chrono_literals;
using vehicle::ModeAck;
using vehicle::SetMode;

namespace {

int serve(axon::Node& node, std::chrono::nanoseconds how_long) {
  auto server = node.serve<SetMode, ModeAck>("vehicle/set_mode", [](const SetMode& request, ModeAck& reply) {
    reply.mode = request.mode;  // written in place in shared memory
    reply.accepted = request.mode <= 2;
  });
  if (!server) {
    std::fprintf(stderr, "serve: %s\n", std::string(server.error().message()).c_str());
    return 1;
  }
  axon::SingleThreadedExecutor executor;
  if (!executor.add(*server) || !executor.spin_for(how_long)) {
    return 1;
  }
  std::printf("server: handled %llu requests\n", static_cast<unsigned long long>((*server)->counters().handled));
  return 0;
}

int call(axon::Node& node) {
  auto client = node.client<SetMode, ModeAck>("vehicle/set_mode");
  if (!client) {
    std::fprintf(stderr, "client: %s\n", std::string(client.error().message()).c_str());
    return 1;
  }
  if ((*client)->wait_for_server(10s).value() != axon::GraphWait::kMet) {
    std::fprintf(stderr, "client: no server within 10 s\n");
    return 1;
  }
  for (std::uint32_t mode = 0; mode < 5; ++mode) {
    auto request = (*client)->loan();  // zero copy: the request is written where the server reads it
    if (!request) {
      return 1;
    }
    (*request)->mode = mode;
    auto reply = (*client)->call(std::move(*request), 500ms);
    if (!reply) {  // kNoServer, kTimeout: an error, never a hang
      std::printf("client: set_mode(%u) failed: %s\n", mode, std::string(reply.error().message()).c_str());
      return 1;
    }
    std::printf("client: set_mode(%u) -> %s\n", mode, (*reply)->accepted ? "accepted" : "refused");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view role = argc > 1 ? argv[1] : "both";
  auto node = axon::Node::create(std::string("mode_") + std::string(role));
  if (!node) {
    std::fprintf(stderr, "%s\n", std::string(node.error().message()).c_str());
    return 1;
  }
  if (role == "server") {
    return serve(**node, 24h);
  }
  // Graph events: who serves (subscribes the request topic) comes and goes.
  axon::SingleThreadedExecutor graph_executor;
  auto watcher = (*node)->on_graph_event("vehicle/set_mode/request", [&](const axon::GraphEvent& e) {
    if (e.endpoint.kind == axon::GraphEndpointKind::kSubscriber) {
      const bool left = e.change == axon::GraphChange::kLeft;
      std::printf("graph: server '%s' (pid %d) %s\n", e.endpoint.node_name.c_str(), e.endpoint.pid,
                  left ? "left" : "appeared");
      if (left && role != "client") {
        graph_executor.stop();  // the demo is over once its server left
      }
    }
  });
  if (!watcher) {
    return 1;
  }
  (void)graph_executor.add(*watcher);
  std::thread graph_thread([&] { (void)graph_executor.spin_for(role == "client" ? 30s : 10s); });
  int result = 0;
  if (role == "client") {
    result = call(**node);
  } else {
    std::thread server([&] { (void)serve(**node, 1s); });
    result = call(**node);
    server.join();
    graph_thread.join();  // until the server's leaving was seen (at most 10 s)
    return result;
  }
  graph_executor.stop();
  graph_thread.join();
  return result;
}
