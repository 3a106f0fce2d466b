#include <google/protobuf/descriptor.pb.h>

#include <algorithm>
#include <set>
#include <string>

#include "axon/serializers/protobuf.hpp"

namespace axon::detail {
namespace {

void collect(const google::protobuf::FileDescriptor* file, std::set<std::string>& seen, std::string& bytes) {
  if (!seen.insert(file->name()).second) {
    return;
  }
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  bytes += proto.SerializeAsString();
  for (int i = 0; i < file->dependency_count(); ++i) {
    collect(file->dependency(i), seen, bytes);
  }
}

}  // namespace

TypeIdentity protobuf_identity(const google::protobuf::Descriptor* descriptor) {
  std::set<std::string> seen;
  std::string bytes;
  collect(descriptor->file(), seen, bytes);
  TypeIdentity id;
  id.name = descriptor->full_name();
  id.hash = fnv1a(bytes, fnv1a(id.name));
  id.serializer = "protobuf";
  return id;
}

}  // namespace axon::detail
