// An output file for the writer and recover(): whole writes and vectored writes (partial writes and EINTR
// handled), the file offset, and errors that name the path (a full disk says how much space is free).
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <string>

#include "axon/result.hpp"

namespace axon::mcap {

class FileSink {
 public:
  /// Creates or truncates `path` (mode 0644).
  [[nodiscard]] static Result<FileSink> create(const std::string& path);
  FileSink(FileSink&& other) noexcept;
  FileSink& operator=(FileSink&& other) noexcept;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  ~FileSink();

  [[nodiscard]] Result<void> write(std::span<const std::uint8_t> bytes);
  /// Writes all of `iov` in order (in batches of IOV_MAX); `iov` is modified as parts are written.
  [[nodiscard]] Result<void> writev(std::span<iovec> iov);
  /// Bytes written so far: the offset of the next byte.
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// fsync and close; after it the sink writes nothing.
  [[nodiscard]] Result<void> close();

 private:
  FileSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  [[nodiscard]] Error write_error(int error_number) const;

  int fd_ = -1;
  std::string path_;
  std::uint64_t offset_ = 0;
};

}  // namespace axon::mcap
