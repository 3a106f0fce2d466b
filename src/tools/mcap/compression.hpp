// Chunk compression: none, LZ4 (frame format) and Zstandard, as MCAP names them ("", "lz4", "zstd").
// Compression streams: the caller's bytes go straight into the compressor, which writes into a buffer the
// compressor owns and reuses from chunk to chunk. Decompression is bounded by the size the chunk declares.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "axon/result.hpp"

namespace axon::mcap {

enum class Compression : std::uint8_t { kNone, kLz4, kZstd };

/// The name MCAP writes in a chunk ("", "lz4", "zstd").
[[nodiscard]] std::string_view compression_name(Compression compression) noexcept;
/// The compression a chunk names; an unknown name is refused with the names axon reads.
[[nodiscard]] Result<Compression> parse_compression(std::string_view name);

/// One chunk's compressed stream at a time: begin(), feed() any number of times, finish(), then output().
/// Not thread-safe. Allocates only when a chunk compresses to more than any before it.
class ChunkCompressor {
 public:
  /// `level`: zstd's level (1 is fast); LZ4 uses its default.
  [[nodiscard]] static Result<std::unique_ptr<ChunkCompressor>> create(Compression compression, int level);
  virtual ~ChunkCompressor() = default;
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;

  [[nodiscard]] virtual Result<void> begin() = 0;
  /// Compresses `bytes`; once it returns the compressor no longer needs them.
  [[nodiscard]] virtual Result<void> feed(std::span<const std::uint8_t> bytes) = 0;
  [[nodiscard]] virtual Result<void> finish() = 0;
  /// The compressed chunk so far (complete after finish()), valid until the next begin().
  [[nodiscard]] std::span<const std::uint8_t> output() const noexcept { return {out_.data(), used_}; }

 protected:
  ChunkCompressor() = default;
  /// Makes room for `bytes` more after what is used; returns where they go.
  std::uint8_t* reserve(std::size_t bytes);
  /// `bytes` more of the room reserve() made are used.
  void commit(std::size_t bytes) noexcept { used_ += bytes; }
  /// Starts the output over (the buffer is kept).
  void clear() noexcept { used_ = 0; }

 private:
  std::vector<std::uint8_t> out_;
  std::size_t used_ = 0;
};

/// Decompresses a chunk's records into `out`, whose size is the size the chunk declares: a stream that
/// makes more or fewer bytes, or is corrupt, is refused.
[[nodiscard]] Result<void> decompress(Compression compression, std::span<const std::uint8_t> in,
                                      std::span<std::uint8_t> out);

}  // namespace axon::mcap
