// Node's graph calls (axon/graph.hpp): watchers of a topic's endpoints over
// the transport's GraphSource.
#include <chrono>

#include "axon/graph.hpp"
#include "axon/node.hpp"

namespace axon {

Result<GraphWatcher> Node::watch_graph(std::string_view topic) {
  GraphSource* source = transport_->graph();
  if (source == nullptr) {
    return Error(ErrorCode::kRequirementNotMet,
                 std::string("graph events: the '") + std::string(transport_->name()) +
                     "' transport does not report the domain's publishers and subscribers");
  }
  if (topic.empty()) {
    return Error(ErrorCode::kInvalidArgument, "graph events: the topic name is empty");
  }
  return GraphWatcher(transport_, *source, std::string(topic));
}

Result<std::vector<GraphEndpoint>> Node::graph_endpoints(std::string_view topic, std::chrono::nanoseconds timeout) {
  auto watcher = watch_graph(topic);
  if (!watcher) {
    return watcher.error();
  }
  auto taken = watcher->wait_until([](std::span<const GraphEndpoint>) { return true; }, timeout);
  if (!taken) {
    return taken.error();
  }
  if (!*taken) {
    return Error(ErrorCode::kTimeout, "graph of topic '" + std::string(topic) +
                                          "': the domain lock stayed held by another process for the whole timeout");
  }
  return std::vector<GraphEndpoint>(watcher->endpoints().begin(), watcher->endpoints().end());
}

Result<GraphWait> Node::wait_for_graph(std::string_view topic,
                                       const std::function<bool(std::span<const GraphEndpoint>)>& holds,
                                       std::chrono::nanoseconds timeout) {
  auto watcher = watch_graph(topic);
  if (!watcher) {
    return watcher.error();
  }
  auto met = watcher->wait_until(holds, timeout);
  if (!met) {
    return met.error();
  }
  return *met ? GraphWait::kMet : GraphWait::kTimedOut;
}

Result<GraphWait> Node::wait_for_endpoints(std::string_view topic, GraphEndpointKind kind, std::size_t at_least,
                                           std::chrono::nanoseconds timeout) {
  return wait_for_graph(
      topic, [&](std::span<const GraphEndpoint> now) { return count_endpoints(now, kind) >= at_least; }, timeout);
}

Result<std::shared_ptr<GraphSubscription>> Node::on_graph_event(std::string_view topic,
                                                                GraphSubscription::Callback callback) {
  if (!callback) {
    return Error(ErrorCode::kInvalidArgument, "on_graph_event(): the callback is empty");
  }
  auto watcher = watch_graph(topic);
  if (!watcher) {
    return watcher.error();
  }
  return std::make_shared<GraphSubscription>(std::move(*watcher), std::move(callback));
}

Result<void> Node::refuse_second_server(std::string_view service, std::string_view requests_topic) {
  auto now = graph_endpoints(requests_topic);
  if (!now) {
    return now.error();
  }
  for (const GraphEndpoint& e : *now) {
    if (e.kind == GraphEndpointKind::kSubscriber) {
      return Error(ErrorCode::kLimitReached, "service '" + std::string(service) + "' already has a server (node '" +
                                                 e.node_name + "', pid " + std::to_string(e.pid) +
                                                 "); a service has one server: stop that one or use another name");
    }
  }
  return {};
}

}  // namespace axon
