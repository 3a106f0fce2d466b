// The publisher's own check of a finished FlatBuffers message: the same
// flatbuffers::Verifier its subscribers run, so a message they would all drop
// becomes an error from publish() instead of a silent loss (issue 13).
// Included by <axon/serializers/flatbuffers.hpp>.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "axon/result.hpp"

namespace axon::detail {

/// True when the builder's alignment shows the CreateUninitializedVectorOfStructs
/// pitfall of FlatBuffers 2.0.8: every alignment FlatBuffers tracks is a power
/// of two, except the struct size that call passes (see
/// create_uninitialized_struct_vector()). One comparison: checked on every
/// message, so such messages are always verified.
[[nodiscard]] inline bool has_struct_vector_pitfall(std::size_t builder_alignment) noexcept {
  return (builder_alignment & (builder_alignment - 1)) != 0;
}

/// Verifies the finished message `data[0, size)` whose root is a `T` (named
/// `type_name`), built with alignment `builder_alignment`. nullopt when it
/// verifies; else kMalformed with what is wrong and what to do. Allocates the
/// message only on failure.
template <class T>
[[nodiscard]] std::optional<Error> check_before_publish(const std::uint8_t* data, std::size_t size,
                                                        std::size_t builder_alignment,
                                                        std::string_view type_name) noexcept {
  flatbuffers::Verifier verifier(data, size);
  if (verifier.VerifyBuffer<T>(nullptr)) {
    return std::nullopt;
  }
  std::string message = "flatbuffers::Verifier rejects this ";
  message += std::to_string(size);
  message += "-byte message of root table ";
  message += type_name;
  message += ", so every subscriber would drop it; it was not published. ";
  if (has_struct_vector_pitfall(builder_alignment)) {
    // The one cause we can name for sure: 2.0.8's Verifier says only "no".
    message += "The builder's alignment is ";
    message += std::to_string(builder_alignment);
    message +=
        " bytes, not a power of two: a vector of " + std::to_string(builder_alignment) +
        "-byte structs was reserved with FlatBufferBuilder::CreateUninitializedVectorOfStructs, which FlatBuffers "
        "2.0.8 aligns to the struct's size instead of its alignment, so the message's 8-byte fields lie misaligned. "
        "Reserve it with axon::create_uninitialized_struct_vector(builder, count, &out) "
        "(<axon/serializers/flatbuffers.hpp>; docs/design/serializers.md, \"Vectors of structs\").";
    return Error(ErrorCode::kMalformed, std::move(message));
  }
  message += "FlatBuffers does not say which check failed (an offset, vector or string outside the buffer, a ";
  message += "misaligned field";
  if (size % builder_alignment != 0) {
    message += ": the size is not a multiple of the builder's alignment, " + std::to_string(builder_alignment);
  }
  message +=
      ", or tables nested too deep). Common causes: a vector of structs reserved with "
      "FlatBufferBuilder::CreateUninitializedVectorOfStructs (use axon::create_uninitialized_struct_vector), bytes "
      "written past a vector reserved in place, or an offset taken from another builder.";
  return Error(ErrorCode::kMalformed, std::move(message));
}

}  // namespace axon::detail
