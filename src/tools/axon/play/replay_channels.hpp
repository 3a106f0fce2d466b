// How a channel of an MCAP file becomes a topic to publish on (docs/design/replay.md, "Channels"): the type
// identity, schema and largest payload the recorder wrote in the channel's axon.* metadata (the mapping every
// axon tool shares), or, for a file of another tool, a FlatBuffers or Protobuf channel with its schema; anything
// else is skipped with the reason in the user's words.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "axon/any_publication.hpp"
#include "src/tools/mcap/records.hpp"

namespace axon::tools {

/// A channel that can be replayed: the type to publish it as.
struct ReplayType {
  DeclaredType declared;
  /// The channel carried axon.* metadata (the identity is the recorded one). false: a file of another tool,
  /// whose identity is derived from its schema (a topic of that type name already in the domain is joined).
  bool recorded_by_axon = true;
};

/// Why a channel is not replayed ("message encoding 'cdr' is not ...").
struct SkipReason {
  std::string text;
};

/// The type `channel` is replayed as, or why it cannot be; `schema` is the channel's schema record (nullptr:
/// the channel names none, or one the file does not have).
std::variant<ReplayType, SkipReason> replay_type_of(const mcap::Channel& channel, const mcap::Schema* schema);

}  // namespace axon::tools
