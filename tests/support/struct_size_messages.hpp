// Messages of struct_sizes.fbs (a vector of structs of every size 1..32 and
// alignment 1..16, in a table with an 8-byte field) for the tests of issue 13:
// built with axon::create_uninitialized_struct_vector() or with upstream's
// CreateUninitializedVectorOfStructs, and checked element by element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "axon/serializers/flatbuffers.hpp"
#include "struct_sizes_axon.h"
#include "tests/support/struct_sizes.hpp"

namespace axon::test {

namespace sizes = ::axon::schemas::fb::sizes;

/// One combination of struct_sizes.fbs: the table, its struct, their shape.
template <class TableT, class StructT, std::size_t kSizeV, std::size_t kAlignV>
struct StructCombo {
  using Table = TableT;
  using Struct = StructT;
  static constexpr std::size_t kSize = kSizeV;
  static constexpr std::size_t kAlign = kAlignV;
  static_assert(sizeof(StructT) == kSizeV && alignof(StructT) == kAlignV, "flatc gave the struct another shape");
  static std::string name() { return "S" + std::to_string(kSizeV) + "A" + std::to_string(kAlignV); }
};

/// Whether the tests run the combination: every one, or with AXON_STRUCT_COMBOS_SAMPLED (the sanitizer builds,
/// where each combination's code costs about 1.5 CPU-s to compile, and 62 of them were a test file's 75 s) each
/// alignment's smallest size, three elements' worth, the largest size, and three odd sizes of alignment 1.
constexpr bool struct_combo_runs(std::size_t size, std::size_t align) {
#ifdef AXON_STRUCT_COMBOS_SAMPLED
  return size == align || size == 3 * align || size == 32 || (align == 1 && (size == 5 || size == 7 || size == 13));
#else
  (void)size;
  (void)align;
  return true;
#endif
}

/// Combinations in struct_sizes.fbs: every size 1..32 with every alignment 1, 2, 4, 8, 16 that divides it.
inline constexpr int kStructCombos = 0
#define AXON_STRUCT_COMBO_COUNT(size, align) +1
    AXON_FOR_EACH_STRUCT_SIZE(AXON_STRUCT_COMBO_COUNT)
#undef AXON_STRUCT_COMBO_COUNT
    ;
static_assert(kStructCombos == 62, "struct_sizes.fbs has every size 1..32 with each alignment that divides it");

/// Combinations the tests run (struct_combo_runs()).
inline constexpr int kStructCombosRun = 0
#define AXON_STRUCT_COMBO_COUNT_RUN(size, align) +(struct_combo_runs(size, align) ? 1 : 0)
    AXON_FOR_EACH_STRUCT_SIZE(AXON_STRUCT_COMBO_COUNT_RUN)
#undef AXON_STRUCT_COMBO_COUNT_RUN
    ;

/// Calls `f(StructCombo<...>{})` for every combination the tests run, in file order.
template <class F>
void for_each_struct_combo(F&& f) {
#define AXON_STRUCT_COMBO_CALL(size, align)                                            \
  if constexpr (struct_combo_runs(size, align)) {                                      \
    f(StructCombo<sizes::V##size##A##align, sizes::S##size##A##align, size, align>{}); \
  }
  AXON_FOR_EACH_STRUCT_SIZE(AXON_STRUCT_COMBO_CALL)
#undef AXON_STRUCT_COMBO_CALL
}

/// Byte `b` of element `i` of message `stamp`.
inline std::uint8_t pattern_byte(std::uint64_t stamp, std::size_t i, std::size_t b) {
  return static_cast<std::uint8_t>(stamp * 7 + i * 31 + b);
}

enum class VectorCall { kAxonHelper, kUpstreamUninitialized };

/// Builds a V<size>A<align> with `count` elements (filled in place), stamp and
/// tag (0: the tag field is left out, which changes the layout).
template <class Combo>
flatbuffers::Offset<typename Combo::Table> build_struct_message(flatbuffers::FlatBufferBuilder& fbb, VectorCall call,
                                                                std::size_t count, std::uint64_t stamp,
                                                                std::uint16_t tag) {
  using S = typename Combo::Struct;
  S* out = nullptr;
  flatbuffers::Offset<flatbuffers::Vector<const S*>> items = call == VectorCall::kAxonHelper
                                                                 ? create_uninitialized_struct_vector(fbb, count, &out)
                                                                 : fbb.CreateUninitializedVectorOfStructs(count, &out);
  for (std::size_t i = 0; i < count; ++i) {
    auto* bytes = reinterpret_cast<std::uint8_t*>(&out[i]);
    for (std::size_t b = 0; b < Combo::kSize; ++b) {
      bytes[b] = pattern_byte(stamp, i, b);
    }
  }
  typename Combo::Table::Builder builder(fbb);
  builder.add_stamp(stamp);
  if (tag != 0) {
    builder.add_tag(tag);
  }
  builder.add_items(items);
  return builder.Finish();
}

/// "" when `message` (at `buffer_start`, the message's first byte) holds
/// `count` elements of `stamp`'s pattern, each aligned to the struct's
/// alignment; else what is wrong.
template <class Combo>
std::string struct_message_problem(const typename Combo::Table& message, const std::uint8_t* buffer_start,
                                   std::size_t count, std::uint64_t stamp) {
  if (message.stamp() != stamp) {
    return "stamp " + std::to_string(message.stamp()) + " instead of " + std::to_string(stamp);
  }
  const auto* items = message.items();
  if (items == nullptr || items->size() != count) {
    return "items: " + (items == nullptr ? std::string("missing") : std::to_string(items->size())) +
           " elements instead of " + std::to_string(count);
  }
  for (std::size_t i = 0; i < count; ++i) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(items->Get(static_cast<flatbuffers::uoffset_t>(i)));
    if (static_cast<std::size_t>(bytes - buffer_start) % Combo::kAlign != 0) {
      return "element " + std::to_string(i) + " lies " + std::to_string(bytes - buffer_start) +
             " bytes into the message, not a multiple of its alignment " + std::to_string(Combo::kAlign);
    }
    for (std::size_t b = 0; b < Combo::kSize; ++b) {
      if (bytes[b] != pattern_byte(stamp, i, b)) {
        return "element " + std::to_string(i) + " byte " + std::to_string(b) + " differs";
      }
    }
  }
  return "";
}

}  // namespace axon::test
