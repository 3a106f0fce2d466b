// The schemas topics carry (docs/design/schemas.md): stored by a topic's
// first endpoint (publisher or typed subscriber) that has one, in a file named from the topic's slot, and
// read back with the topic's record for programs that do not know its type.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "axon/result.hpp"
#include "axon/transport.hpp"
#include "transports/shm/domain.hpp"
#include "transports/shm/domain_lock.hpp"
#include "transports/shm/registry.hpp"

namespace axon::shm {

/// kInvalidArgument naming the topic, the schema's size and kMaxSchemaBytes
/// when `topic.schema` is larger than a topic stores. No lock needed.
Result<void> check_schema_size(const TopicDescriptor& topic);

/// Writes `schema` as `topic_slot`'s schema file when the topic has none yet
/// (kNone; an empty `schema` writes nothing), and records it in the registry.
/// On failure the registry records no file.
Result<void> store_topic_schema(const DomainLockGuard& held, Registry& registry, const Domain& domain,
                                std::uint32_t topic_slot, std::span<const std::byte> schema);

/// The record of `topic` (its type as registered and its schema, checked):
/// kNotFound when no endpoint has it. A schema file that fails its checks
/// leaves the schema empty and says why in schema_problem. Takes the domain
/// lock to copy the entry, reads the file after.
Result<TopicRecord> read_topic_record(Domain& domain, std::string_view topic);

}  // namespace axon::shm
