#include "src/tools/axon/graph/domain_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "src/tools/axon/command.hpp"

namespace axon::tools {

Result<DomainView> read_view(const GlobalOptions& globals) {
  return read_domain_view(DomainAddress{.domain_id = globals.domain_id, .shm_dir = {}});
}

int report_error(const Error& error) {
  std::fprintf(stderr, "axon: %s\n", std::string(error.message()).c_str());
  return kExitFailed;
}

std::string view_notes(const DomainView& view) {
  if (!view.exists) {
    return fmt::format(
        "no node of domain {} runs on this host (no registry in {}); --domain or AXON_DOMAIN picks "
        "another domain, AXON_SHM_DIR another directory\n",
        view.address.domain_id, view.address.shm_dir);
  }
  if (!view.consistent) {
    return "note: read without the domain lock (a process held it for over 100 ms): the lists may mix two moments\n";
  }
  return {};
}

void write_view_members(JsonWriter& json, const DomainView& view) {
  json.member("domain", view.address.domain_id)
      .member("shm_dir", view.address.shm_dir)
      .member("exists", view.exists)
      .member("consistent", view.consistent);
}

std::string qos_text(const EndpointView& endpoint) {
  if (endpoint.kind != GraphEndpointKind::kSubscriber) {
    return {};
  }
  std::string text = fmt::format("depth {}, {}", endpoint.depth, endpoint.overflow);
  if (endpoint.overflow == "block_publisher" || endpoint.reliable) {
    text += fmt::format(" {} ms", endpoint.block_timeout_ns / 1'000'000);
  }
  if (endpoint.quarantine_after_ns > 0) {
    text += fmt::format(", quarantine after {} ms", endpoint.quarantine_after_ns / 1'000'000);
  }
  return text + (endpoint.reliable ? ", reliable" : ", best_effort");
}

void write_qos_members(JsonWriter& json, const EndpointView& endpoint) {
  if (endpoint.kind != GraphEndpointKind::kSubscriber) {
    return;
  }
  json.member("depth", endpoint.depth)
      .member("overflow", endpoint.overflow)
      .member("reliability", endpoint.reliable ? "reliable" : "best_effort")
      .member("block_timeout_ns", endpoint.block_timeout_ns)
      .member("quarantine_after_ns", endpoint.quarantine_after_ns);
}

const char* kind_word(GraphEndpointKind kind) noexcept {
  return kind == GraphEndpointKind::kPublisher ? "publisher" : "subscriber";
}

std::string alive_text(const ParticipantView& participant) {
  return participant.alive ? "yes" : "no (dead, not reclaimed yet)";
}

std::size_t endpoints_of_topic(const DomainView& view, GraphEndpointKind kind, std::uint32_t topic) {
  const auto& list = kind == GraphEndpointKind::kPublisher ? view.publishers : view.subscribers;
  return static_cast<std::size_t>(
      std::count_if(list.begin(), list.end(), [topic](const EndpointView& e) { return e.topic_slot == topic; }));
}

std::size_t endpoints_of_node(const DomainView& view, GraphEndpointKind kind, std::uint32_t node) {
  const auto& list = kind == GraphEndpointKind::kPublisher ? view.publishers : view.subscribers;
  return static_cast<std::size_t>(
      std::count_if(list.begin(), list.end(), [node](const EndpointView& e) { return e.participant_slot == node; }));
}

void for_each_endpoint(
    const DomainView& view, const std::function<bool(const EndpointView&)>& keep,
    const std::function<void(const EndpointView&, const TopicView&, const ParticipantView&)>& visit) {
  for (const auto* list : {&view.publishers, &view.subscribers}) {
    for (const EndpointView& e : *list) {
      const TopicView* t = view.topic(e.topic_slot);
      const ParticipantView* p = view.participant(e.participant_slot);
      if (t != nullptr && p != nullptr && keep(e)) {
        visit(e, *t, *p);
      }
    }
  }
}

void print(std::FILE* out, const std::string& text) { std::fputs(text.c_str(), out); }

std::string transport_text(const EndpointView& endpoint) {
  return endpoint.transport.empty() ? "?" : endpoint.transport;
}

std::vector<std::string> topic_transports(const DomainView& view, std::uint32_t topic) {
  std::vector<std::string> out;
  for (const auto* endpoints : {&view.publishers, &view.subscribers}) {
    for (const EndpointView& e : *endpoints) {
      if (e.topic_slot == topic) {
        out.push_back(transport_text(e));
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace axon::tools
