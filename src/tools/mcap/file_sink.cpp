// Output file with vectored writes (file_sink.hpp).
#include "src/tools/mcap/file_sink.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "src/tools/mcap/errno_text.hpp"

namespace axon::mcap {
namespace {

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  if (bytes >= kMiB) {
    return std::to_string(bytes / kMiB) + " MiB";
  }
  return std::to_string(bytes) + " bytes";
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Result<FileSink> FileSink::create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Error(ErrorCode::kSystem, "cannot create " + path + ": " + errno_text(errno) +
                                         " (check that its directory exists and is writable)");
  }
  return FileSink(fd, path);
}

FileSink::FileSink(FileSink&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), offset_(other.offset_) {}

FileSink& FileSink::operator=(FileSink&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    offset_ = other.offset_;
  }
  return *this;
}

FileSink::~FileSink() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

Error FileSink::write_error(int error_number) const {
  if (error_number == ENOSPC || error_number == EDQUOT) {
    struct statvfs fs {};
    std::string free_text = "unknown";
    if (::statvfs(directory_of(path_).c_str(), &fs) == 0) {
      free_text = format_bytes(static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize);
    }
    return {ErrorCode::kNoSpace, "writing " + path_ + ": the disk is full (" + free_text +
                                     " free on its file system after " + format_bytes(offset_) +
                                     " written): free space or write to another disk; the file is readable up "
                                     "to its last complete chunk (recover it)"};
  }
  if (fd_ < 0) {
    return {ErrorCode::kClosed, "writing " + path_ + ": the file is already closed"};
  }
  return {ErrorCode::kSystem, "writing " + path_ + ": " + errno_text(error_number)};
}

Result<void> FileSink::write(std::span<const std::uint8_t> bytes) {
  iovec one{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};  // NOLINT: iovec's base is not const
  return writev(std::span<iovec>(&one, 1));
}

Result<void> FileSink::writev(std::span<iovec> iov) {
  if (fd_ < 0) {
    return write_error(EBADF);
  }
  std::size_t first = 0;
  while (first < iov.size()) {
    if (iov[first].iov_len == 0) {
      ++first;
      continue;
    }
    const int count = static_cast<int>(std::min<std::size_t>(iov.size() - first, IOV_MAX));
    const ssize_t n = ::writev(fd_, &iov[first], count);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return write_error(errno);
    }
    if (n == 0) {
      return write_error(ENOSPC);
    }
    offset_ += static_cast<std::uint64_t>(n);
    auto left = static_cast<std::size_t>(n);
    while (left > 0) {  // skip what was written; a partly written part keeps its tail
      const std::size_t part = std::min(left, iov[first].iov_len);
      iov[first].iov_base = static_cast<std::uint8_t*>(iov[first].iov_base) + part;
      iov[first].iov_len -= part;
      left -= part;
      if (iov[first].iov_len == 0) {
        ++first;
      }
    }
  }
  return {};
}

Result<void> FileSink::close() {
  if (fd_ < 0) {
    return {};
  }
  const int fd = std::exchange(fd_, -1);
  if (::fsync(fd) != 0 && errno != EINVAL) {
    const int e = errno;
    ::close(fd);
    return Error(ErrorCode::kSystem, "flushing " + path_ + ": " + errno_text(e));
  }
  if (::close(fd) != 0) {
    return Error(ErrorCode::kSystem, "closing " + path_ + ": " + errno_text(errno));
  }
  return {};
}

}  // namespace axon::mcap
