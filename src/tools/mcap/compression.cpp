// LZ4 frame and Zstandard streams for chunks (compression.hpp).
#include "src/tools/mcap/compression.hpp"

#include <lz4frame.h>
#include <zstd.h>

#include <string>

namespace axon::mcap {
namespace {

Error codec_error(const char* codec, const char* what, const char* detail) {
  return {ErrorCode::kSystem, std::string(codec) + " " + what + ": " + detail};
}

class NoneCompressor final : public ChunkCompressor {
 public:
  Result<void> begin() override {
    clear();
    return {};
  }
  // Kept for completeness (the writer writes uncompressed chunks from the caller's memory instead).
  Result<void> feed(std::span<const std::uint8_t> bytes) override {
    std::uint8_t* at = reserve(bytes.size());
    std::copy(bytes.begin(), bytes.end(), at);
    commit(bytes.size());
    return {};
  }
  Result<void> finish() override { return {}; }
};

class Lz4Compressor final : public ChunkCompressor {
 public:
  Lz4Compressor() { prefs_.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum; }
  ~Lz4Compressor() override { LZ4F_freeCompressionContext(ctx_); }
  Lz4Compressor(const Lz4Compressor&) = delete;
  Lz4Compressor& operator=(const Lz4Compressor&) = delete;

  Result<void> init() {
    if (LZ4F_isError(LZ4F_createCompressionContext(&ctx_, LZ4F_VERSION))) {
      return Error(ErrorCode::kSystem, "lz4: cannot create a compression context (out of memory?)");
    }
    return {};
  }
  Result<void> begin() override {
    clear();
    std::uint8_t* at = reserve(LZ4F_HEADER_SIZE_MAX);
    const std::size_t n = LZ4F_compressBegin(ctx_, at, LZ4F_HEADER_SIZE_MAX, &prefs_);
    if (LZ4F_isError(n)) {
      return codec_error("lz4", "begin", LZ4F_getErrorName(n));
    }
    commit(n);
    return {};
  }
  Result<void> feed(std::span<const std::uint8_t> bytes) override {
    const std::size_t bound = LZ4F_compressBound(bytes.size(), &prefs_);
    std::uint8_t* at = reserve(bound);
    const std::size_t n = LZ4F_compressUpdate(ctx_, at, bound, bytes.data(), bytes.size(), nullptr);
    if (LZ4F_isError(n)) {
      return codec_error("lz4", "compress", LZ4F_getErrorName(n));
    }
    commit(n);
    return {};
  }
  Result<void> finish() override {
    const std::size_t bound = LZ4F_compressBound(0, &prefs_);
    std::uint8_t* at = reserve(bound);
    const std::size_t n = LZ4F_compressEnd(ctx_, at, bound, nullptr);
    if (LZ4F_isError(n)) {
      return codec_error("lz4", "end", LZ4F_getErrorName(n));
    }
    commit(n);
    return {};
  }

 private:
  LZ4F_cctx* ctx_ = nullptr;
  LZ4F_preferences_t prefs_{};
};

class ZstdCompressor final : public ChunkCompressor {
 public:
  ~ZstdCompressor() override { ZSTD_freeCCtx(ctx_); }
  ZstdCompressor() = default;
  ZstdCompressor(const ZstdCompressor&) = delete;
  ZstdCompressor& operator=(const ZstdCompressor&) = delete;

  Result<void> init(int level) {
    ctx_ = ZSTD_createCCtx();
    if (ctx_ == nullptr) {
      return Error(ErrorCode::kSystem, "zstd: cannot create a compression context (out of memory?)");
    }
    const std::size_t rc = ZSTD_CCtx_setParameter(ctx_, ZSTD_c_compressionLevel, level);
    if (ZSTD_isError(rc)) {
      return codec_error("zstd", "level", ZSTD_getErrorName(rc));
    }
    return {};
  }
  Result<void> begin() override {
    clear();
    const std::size_t rc = ZSTD_CCtx_reset(ctx_, ZSTD_reset_session_only);
    if (ZSTD_isError(rc)) {
      return codec_error("zstd", "reset", ZSTD_getErrorName(rc));
    }
    return {};
  }
  Result<void> feed(std::span<const std::uint8_t> bytes) override {
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    while (in.pos < in.size) {
      if (auto r = step(in, ZSTD_e_continue); !r.ok()) {
        return r.error();
      }
    }
    return {};
  }
  Result<void> finish() override {
    ZSTD_inBuffer in{nullptr, 0, 0};
    for (;;) {
      auto left = step(in, ZSTD_e_end);
      if (!left.ok()) {
        return left.error();
      }
      if (*left == 0) {
        return {};
      }
    }
  }

 private:
  // One call of the stream: room for at least a block's output, what is left to flush (for e_end).
  Result<std::size_t> step(ZSTD_inBuffer& in, ZSTD_EndDirective directive) {
    const std::size_t room = ZSTD_CStreamOutSize();
    ZSTD_outBuffer out{reserve(room), room, 0};
    const std::size_t rc = ZSTD_compressStream2(ctx_, &out, &in, directive);
    if (ZSTD_isError(rc)) {
      return codec_error("zstd", "compress", ZSTD_getErrorName(rc));
    }
    commit(out.pos);
    return rc;
  }

  ZSTD_CCtx* ctx_ = nullptr;
};

Result<void> decompress_lz4(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
  LZ4F_dctx* ctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) {
    return Error(ErrorCode::kSystem, "lz4: cannot create a decompression context (out of memory?)");
  }
  std::size_t in_at = 0;
  std::size_t out_at = 0;
  std::size_t hint = 1;
  while (hint != 0) {
    std::size_t out_n = out.size() - out_at;
    std::size_t in_n = in.size() - in_at;
    if (in_n == 0) {
      LZ4F_freeDecompressionContext(ctx);
      return Error(ErrorCode::kMalformed, "lz4 chunk: the compressed stream ends before its frame does");
    }
    hint = LZ4F_decompress(ctx, out.data() + out_at, &out_n, in.data() + in_at, &in_n, nullptr);
    if (LZ4F_isError(hint)) {
      LZ4F_freeDecompressionContext(ctx);
      return Error(ErrorCode::kMalformed, std::string("lz4 chunk: ") + LZ4F_getErrorName(hint));
    }
    in_at += in_n;
    out_at += out_n;
    if (hint != 0 && in_n == 0 && out_n == 0) {  // no progress: the output is full, the frame goes on
      LZ4F_freeDecompressionContext(ctx);
      return Error(ErrorCode::kMalformed, "lz4 chunk: decompresses to more than its declared uncompressed size");
    }
  }
  LZ4F_freeDecompressionContext(ctx);
  if (out_at != out.size()) {
    return Error(ErrorCode::kMalformed, "lz4 chunk: decompresses to " + std::to_string(out_at) +
                                            " bytes, it declares " + std::to_string(out.size()));
  }
  return {};
}

Result<void> decompress_zstd(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n)) {
    return Error(ErrorCode::kMalformed, std::string("zstd chunk: ") + ZSTD_getErrorName(n) +
                                            " (corrupt, or larger than its declared uncompressed size)");
  }
  if (n != out.size()) {
    return Error(ErrorCode::kMalformed, "zstd chunk: decompresses to " + std::to_string(n) + " bytes, it declares " +
                                            std::to_string(out.size()));
  }
  return {};
}

}  // namespace

std::string_view compression_name(Compression compression) noexcept {
  switch (compression) {
    case Compression::kLz4: return "lz4";
    case Compression::kZstd: return "zstd";
    case Compression::kNone: break;
  }
  return "";
}

Result<Compression> parse_compression(std::string_view name) {
  if (name.empty() || name == "none") {
    return Compression::kNone;
  }
  if (name == "lz4") {
    return Compression::kLz4;
  }
  if (name == "zstd") {
    return Compression::kZstd;
  }
  return Error(ErrorCode::kInvalidArgument,
               "unknown MCAP chunk compression '" + std::string(name) + "': axon reads none, lz4 and zstd");
}

std::uint8_t* ChunkCompressor::reserve(std::size_t bytes) {
  if (out_.size() - used_ < bytes) {
    out_.resize(used_ + bytes);
  }
  return out_.data() + used_;
}

Result<std::unique_ptr<ChunkCompressor>> ChunkCompressor::create(Compression compression, int level) {
  switch (compression) {
    case Compression::kLz4: {
      auto c = std::make_unique<Lz4Compressor>();
      if (auto r = c->init(); !r.ok()) {
        return r.error();
      }
      return std::unique_ptr<ChunkCompressor>(std::move(c));
    }
    case Compression::kZstd: {
      auto c = std::make_unique<ZstdCompressor>();
      if (auto r = c->init(level); !r.ok()) {
        return r.error();
      }
      return std::unique_ptr<ChunkCompressor>(std::move(c));
    }
    case Compression::kNone: break;
  }
  return std::unique_ptr<ChunkCompressor>(std::make_unique<NoneCompressor>());
}

Result<void> decompress(Compression compression, std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
  switch (compression) {
    case Compression::kLz4: return decompress_lz4(in, out);
    case Compression::kZstd: return decompress_zstd(in, out);
    case Compression::kNone: break;
  }
  if (in.size() != out.size()) {
    return Error(ErrorCode::kMalformed, "uncompressed chunk: records hold " + std::to_string(in.size()) +
                                            " bytes, the chunk declares " + std::to_string(out.size()));
  }
  std::copy(in.begin(), in.end(), out.begin());
  return {};
}

}  // namespace axon::mcap
