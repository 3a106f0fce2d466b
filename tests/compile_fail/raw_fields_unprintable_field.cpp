// Must not compile: axon::RawFields<Frame> lists a field whose type tools cannot print (a struct without a
// description of its own). check_first_error.cmake checks that the compiler's first error is axon's advice.
#include <cstdint>
#include <tuple>

#include <axon/axon.hpp>

struct Size {
  std::uint16_t width;
  std::uint16_t height;
};
struct Frame {
  std::uint64_t sequence;
  Size size;
};

template <>
struct axon::RawFields<Frame> {
  static constexpr auto kFields =
      std::tuple{axon::raw_field("sequence", &Frame::sequence), axon::raw_field("size", &Frame::size)};
};

int main() {
  auto node = axon::Node::create("compile_fail");
  if (!node) {
    return 1;
  }
  auto publisher = (*node)->advertise<Frame>("frame");
  return publisher ? 0 : 1;
}
