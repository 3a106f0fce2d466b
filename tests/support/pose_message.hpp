// The small raw struct the single-node API tests publish (no type name of its
// own: its identity is the C++ type's, axon::test::Pose).
#pragma once

#include <cstdint>

namespace axon::test {

struct Pose {
  double x = 0;
  double y = 0;
  std::uint64_t stamp = 0;
};

}  // namespace axon::test
