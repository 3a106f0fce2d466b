// Must not compile: axon::RawFields<Pose> lists a member of another struct. check_first_error.cmake checks that the
// compiler's first error is axon's (the field names a member of another struct than T) and no cascade follows.
#include <cstdint>
#include <tuple>

#include <axon/axon.hpp>

struct Other {
  double x;
};
struct Pose {
  double x;
  std::uint32_t sequence;
};

template <>
struct axon::RawFields<Pose> {
  static constexpr auto kFields = std::tuple{axon::raw_field("x", &Other::x)};
};

int main() {
  auto node = axon::Node::create("compile_fail");
  if (!node) {
    return 1;
  }
  auto publisher = (*node)->advertise<Pose>("pose");
  return publisher ? 0 : 1;
}
