// What the slice tests' processes write into each element and check on the
// other side: element i of message `sequence`, for each element type tested.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace axon::test {

/// A struct element: 16 bytes, alignment 4, a stable name.
struct SlicePoint {
  static constexpr std::string_view kAxonTypeName = "axon_test::SlicePoint";
  float x = 0;
  float y = 0;
  float z = 0;
  std::uint32_t ring = 0;
  friend bool operator==(const SlicePoint&, const SlicePoint&) = default;
};

template <class E>
E slice_element(std::uint64_t sequence, std::size_t i) {
  if constexpr (std::is_same_v<E, SlicePoint>) {
    return {.x = static_cast<float>(sequence),
            .y = static_cast<float>(i % 100000),
            .z = -static_cast<float>(i % 1000),
            .ring = static_cast<std::uint32_t>(i % 16)};
  } else if constexpr (std::is_same_v<E, float>) {
    return static_cast<float>(sequence * 1000 + i % 1000);
  } else {
    return static_cast<E>((sequence * 31 + i) % 251);
  }
}

template <class E>
void fill_slice(std::span<E> out, std::uint64_t sequence) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = slice_element<E>(sequence, i);
  }
}

/// The index of the first element that is not what `sequence` wrote, or
/// in.size() when all are.
template <class E>
std::size_t first_wrong_element(std::span<const E> in, std::uint64_t sequence) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!(in[i] == slice_element<E>(sequence, i))) {
      return i;
    }
  }
  return in.size();
}

}  // namespace axon::test
