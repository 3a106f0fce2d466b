// Must not compile: a message type holding a std::string is not trivially
// copyable, so no axon serializer takes it. check_first_error.cmake checks
// that the compiler's first error is axon's advice (use a trivially copyable
// struct, FlatBuffers or Protobuf) and that no cascade of errors follows.
#include <string>

#include <axon/axon.hpp>

struct Named {
  std::string name;
  double value = 0;
};

int main() {
  auto node = axon::Node::create("compile_fail");
  if (!node) {
    return 1;
  }
  auto publisher = (*node)->advertise<Named>("named");
  auto subscriber = (*node)->subscribe<Named>("named");
  if (!publisher || !subscriber) {
    return 1;
  }
  (void)(*publisher)->publish(Named{.name = "a", .value = 1});
  auto sample = (*subscriber)->take();
  return sample && publisher && subscriber ? 0 : 1;
}
