// The FileDescriptorSet a Protobuf topic stores for tools (docs/design/schemas.md).
#include <google/protobuf/descriptor.pb.h>

#include <cstring>
#include <set>
#include <string>

#include "axon/serializers/protobuf.hpp"

namespace axon::detail {
namespace {

/// Adds `file` to `set` after every file it imports (depth first), once.
void add_after_imports(const google::protobuf::FileDescriptor* file, std::set<std::string>& added,
                       google::protobuf::FileDescriptorSet& set) {
  if (!added.insert(file->name()).second) {
    return;
  }
  for (int i = 0; i < file->dependency_count(); ++i) {
    add_after_imports(file->dependency(i), added, set);
  }
  file->CopyTo(set.add_file());
}

}  // namespace

std::vector<std::byte> protobuf_schema(const google::protobuf::Descriptor* descriptor) {
  google::protobuf::FileDescriptorSet set;
  std::set<std::string> added;
  add_after_imports(descriptor->file(), added, set);
  const std::string bytes = set.SerializeAsString();
  std::vector<std::byte> schema(bytes.size());
  std::memcpy(schema.data(), bytes.data(), bytes.size());
  return schema;
}

}  // namespace axon::detail
