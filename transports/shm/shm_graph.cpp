#include "transports/shm/shm_graph.hpp"

#include <cstring>

#include "src/base/futex.hpp"

namespace axon::shm {
namespace {

template <std::size_t N>
std::string_view bounded(const char (&text)[N]) noexcept {
  // strnlen: another process may have left the text without its NUL.
  return {text, ::strnlen(text, N)};
}

/// The slot of the active topic named `topic`, or the domain's topic limit.
std::uint32_t find_topic(const DomainLockGuard& held, const Registry& registry, std::string_view topic) noexcept {
  for (std::uint32_t i = 0; i < registry.limits().topics; ++i) {
    const TopicEntry& t = registry.topic(held, i);
    if (t.state == EntryState::kActive && bounded(t.name) == topic) {
      return i;
    }
  }
  return registry.limits().topics;
}

void append_endpoint(const DomainLockGuard& held, const Registry& registry, const EndpointEntry& e, std::uint32_t slot,
                     GraphEndpointKind kind, std::vector<GraphEndpoint>& out) {
  if (e.participant >= registry.limits().participants) {
    return;  // written by another process: never an index unchecked
  }
  const ParticipantEntry& p = registry.participant(held, e.participant);
  if (p.state != EntryState::kActive || p.generation != e.participant_generation) {
    return;  // its participant left (a removal in progress): not an endpoint any more
  }
  out.push_back(GraphEndpoint{.kind = kind,
                              .endpoint_id = (std::uint64_t{slot} << 32U) | e.generation,
                              .node_name = std::string(bounded(p.name)),
                              .pid = p.pid,
                              .host = {}});
}

}  // namespace

void read_topic_endpoints(const DomainLockGuard& held, const Registry& registry, std::string_view topic,
                          std::vector<GraphEndpoint>& out) {
  out.clear();
  const std::uint32_t t = find_topic(held, registry, topic);
  if (t == registry.limits().topics) {
    return;  // no endpoint has the topic now
  }
  for (std::uint32_t i = 0; i < registry.limits().publishers; ++i) {
    const EndpointEntry& e = registry.publisher(held, i);
    if (e.state == EntryState::kActive && e.topic == t) {
      append_endpoint(held, registry, e, i, GraphEndpointKind::kPublisher, out);
    }
  }
  for (std::uint32_t i = 0; i < registry.limits().subscribers; ++i) {
    const EndpointEntry& e = registry.subscriber(held, i);
    if (e.state == EntryState::kActive && e.topic == t) {
      append_endpoint(held, registry, e, i, GraphEndpointKind::kSubscriber, out);
    }
  }
}

Result<bool> ShmGraph::try_snapshot(std::string_view topic, std::vector<GraphEndpoint>& out) {
  auto held = domain_.lock().try_lock();
  if (!held) {
    return false;  // another thread or process holds it now: the caller retries
  }
  if (!domain_.registry_intact(*held)) {
    return domain_.damaged_registry_error(topic);
  }
  read_topic_endpoints(*held, domain_.registry(*held), topic, out);
  return true;
}

void ShmGraph::notify_changed() noexcept {
  WakeWord& word = domain_.graph_word();
  // Seq_cst, then a full fence before the read of `waiters`: the same
  // protocol as Registry::graph_changed() (either a watcher sees the bump or
  // we see the watcher). What changed was stored (under its own mutex) before.
  word.sequence.fetch_add(1, std::memory_order_seq_cst);
  futex::full_fence();
  futex::notify_if_waiting(word);
}

}  // namespace axon::shm
