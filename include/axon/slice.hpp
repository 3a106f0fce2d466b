// Slice<E>: a topic whose messages are a run-time number of trivially
// copyable elements (a camera frame's pixels, a point cloud's points),
// loaned and read in place in shared memory without a schema.
//
//     auto pub = *node->advertise<axon::Slice<std::uint8_t>>("camera/image");
//     auto loan = pub->loan(width * height * 3);   // or loan(n, axon::kZeroed)
//     if (loan) { fill(loan->data(), loan->size()); (void)pub->publish(std::move(*loan)); }
//
//     auto sub = *node->subscribe<axon::Slice<std::uint8_t>>("camera/image");
//     if (auto frame = sub->take()) { show(**frame); }  // std::span<const std::uint8_t>
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "axon/serializer.hpp"
#include "axon/type_identity.hpp"

namespace axon {

/// Names a topic's message type: any number of E (0 too), chosen per
/// message. A tag only, never constructed: Publisher<Slice<E>>::loan(n)
/// gives a Loan whose elements are a std::span<E> in shared memory, and
/// Subscriber<Slice<E>>::take() a Sample whose elements are a
/// std::span<const E>. E is trivially copyable, not a pointer, aligned to
/// at most alignof(std::max_align_t); its identity (name, size, alignment,
/// kAxonTypeVersion) is the topic's, so a Slice<float> and a Slice<double>
/// refuse each other.
template <class E>
struct Slice {
  Slice() = delete;
  Slice(const Slice&) = delete;
  Slice& operator=(const Slice&) = delete;
  ~Slice() = delete;
};

template <class E>
struct Serializer<Slice<E>> {
  static_assert(detail::RawMessage<E>,
                "axon::Slice<E>: the element type must be trivially copyable and not a pointer (no std::string, "
                "std::vector or smart pointer inside); use a fixed-size struct of plain fields");
  static_assert(alignof(E) <= detail::kMaxElementAlign,
                "axon::Slice<E>: the element type's alignment is above alignof(std::max_align_t), more than a "
                "loaned payload promises");

  static constexpr std::string_view kName = "slice";
  static constexpr DataPath kDataPath = DataPath::kZeroCopy;
  static constexpr bool kReadsInPlace = true;
  static constexpr bool kLoansElements = true;  ///< Publisher::loan(count) gives `count` elements.
  using Element = E;

  static TypeIdentity identity() { return slice_type_identity<E>(); }
  /// The elements, or why the payload is not a whole number of aligned E.
  static detail::ElementView<E> view_elements(std::span<const std::byte> in) noexcept {
    return detail::view_elements<E>(in);
  }
};

}  // namespace axon
