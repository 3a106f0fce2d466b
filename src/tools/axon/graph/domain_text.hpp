// What the commands that read a domain's registry (topic list/info, node list/info, clean) share: reading the
// view for the global options, and the words and JSON members they print the same way.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "axon/domain_view.hpp"
#include "axon/result.hpp"
#include "src/tools/axon/global_options.hpp"
#include "src/tools/axon/json_writer.hpp"

namespace axon::tools {

/// The domain of `globals` as this host has it (read_domain_view()).
[[nodiscard]] Result<DomainView> read_view(const GlobalOptions& globals);

/// Prints `error` on stderr as "axon: <message>" and returns kExitFailed.
int report_error(const Error& error);

/// The lines a text output ends with: that no node runs (no registry), or that the tables were read without
/// the domain lock. Empty when there is nothing to say.
[[nodiscard]] std::string view_notes(const DomainView& view);

/// "domain", "shm_dir", "exists" and "consistent" members (inside an open object).
void write_view_members(JsonWriter& json, const DomainView& view);

/// A subscriber's queue in the deployment file's words: "depth 16, drop_oldest, best_effort",
/// "depth 8, block_publisher 100 ms, reliable"; "" for a publisher.
[[nodiscard]] std::string qos_text(const EndpointView& endpoint);

/// The endpoint's QoS members (subscribers only) inside an open object.
void write_qos_members(JsonWriter& json, const EndpointView& endpoint);

/// "publisher" or "subscriber".
[[nodiscard]] const char* kind_word(GraphEndpointKind kind) noexcept;

/// "yes", or "no (dead, not reclaimed yet)" for a participant whose process is gone.
[[nodiscard]] std::string alive_text(const ParticipantView& participant);

/// How many of `view`'s endpoints of `kind` belong to topic slot `topic` (or participant slot `node`).
[[nodiscard]] std::size_t endpoints_of_topic(const DomainView& view, GraphEndpointKind kind, std::uint32_t topic);
[[nodiscard]] std::size_t endpoints_of_node(const DomainView& view, GraphEndpointKind kind, std::uint32_t node);

/// Calls `visit(endpoint, topic, node)` for every publisher, then every subscriber, of `view` that `keep` accepts,
/// with its topic and node (an endpoint whose topic or node is not in the view, a torn copy, is left out).
void for_each_endpoint(const DomainView& view, const std::function<bool(const EndpointView&)>& keep,
                       const std::function<void(const EndpointView&, const TopicView&, const ParticipantView&)>& visit);

/// What carries an endpoint's messages beyond this host ("shm", "udp", "rdma"), or "?" when its entry says nothing.
[[nodiscard]] std::string transport_text(const EndpointView& endpoint);
/// The transports of topic slot `topic`'s endpoints, each once, sorted ("shm", "udp"...).
[[nodiscard]] std::vector<std::string> topic_transports(const DomainView& view, std::uint32_t topic);

/// Writes `text` to `out`.
void print(std::FILE* out, const std::string& text);

}  // namespace axon::tools
