// A topic's stored schema (docs/design/schemas.md) loaded into the formats' own reflection, for the tools that
// print messages (message_printer) and build them (message_encoder) without their C++ types: a FlatBuffers
// binary schema into a flatbuffers::Parser, a Protobuf FileDescriptorSet into a DescriptorPool.
//
// Allocates. Errors are the reason in the user's words ("its stored ... does not ...").
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "axon/result.hpp"

namespace flatbuffers {
class Parser;
}  // namespace flatbuffers
namespace google::protobuf {
class Descriptor;
class DescriptorPool;
}  // namespace google::protobuf

namespace axon::tools {

/// Deserializes the binary schema `bfbs` (.bfbs, reflection.fbs) into `parser`, after checking it with the
/// reflection verifier, and makes the table `type_name` ("ns.Table") its root.
Result<void> load_flatbuffers_schema(flatbuffers::Parser& parser, std::span<const std::byte> bfbs,
                                     const std::string& type_name);

/// Builds every file of the serialized FileDescriptorSet `schema` into `pool` (each after its imports, as
/// stored) and returns the descriptor of the message `type_name` ("pkg.Message"), owned by `pool`.
Result<const google::protobuf::Descriptor*> load_protobuf_schema(google::protobuf::DescriptorPool& pool,
                                                                 std::span<const std::byte> schema,
                                                                 const std::string& type_name);

}  // namespace axon::tools
