#include "src/tools/axon/topic/schema_loader.hpp"

#include <flatbuffers/idl.h>
#include <flatbuffers/reflection.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <climits>
#include <cstdint>

namespace axon::tools {

Result<void> load_flatbuffers_schema(flatbuffers::Parser& parser, std::span<const std::byte> bfbs,
                                     const std::string& type_name) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bfbs.data());
  flatbuffers::Verifier verifier(data, bfbs.size());
  if (!reflection::VerifySchemaBuffer(verifier)) {
    return Error(ErrorCode::kMalformed, "its stored FlatBuffers binary schema does not verify");
  }
  if (!parser.Deserialize(data, bfbs.size())) {
    return Error(ErrorCode::kMalformed, "flatbuffers::Parser could not read its stored binary schema");
  }
  if (!parser.SetRootType(type_name.c_str())) {
    return Error(ErrorCode::kNotFound, "its stored FlatBuffers binary schema has no table '" + type_name + "'");
  }
  return {};
}

Result<const google::protobuf::Descriptor*> load_protobuf_schema(google::protobuf::DescriptorPool& pool,
                                                                 std::span<const std::byte> schema,
                                                                 const std::string& type_name) {
  google::protobuf::FileDescriptorSet set;
  if (schema.size() > INT_MAX || !set.ParseFromArray(schema.data(), static_cast<int>(schema.size()))) {
    return Error(ErrorCode::kMalformed, "its stored Protobuf FileDescriptorSet does not parse");
  }
  for (const google::protobuf::FileDescriptorProto& file : set.file()) {
    if (pool.BuildFile(file) == nullptr) {
      return Error(ErrorCode::kMalformed, "its stored FileDescriptorSet's file '" + file.name() + "' does not build");
    }
  }
  const google::protobuf::Descriptor* descriptor = pool.FindMessageTypeByName(type_name);
  if (descriptor == nullptr) {
    return Error(ErrorCode::kNotFound, "its stored FileDescriptorSet has no message '" + type_name + "'");
  }
  return descriptor;
}

}  // namespace axon::tools
