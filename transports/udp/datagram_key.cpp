#include "transports/udp/datagram_key.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace axon::udp {
namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

/// 64 hex digits (then at most a newline) as 32 bytes; false for anything else.
bool parse_hex(const std::array<char, 2 * kKeyBytes + 2>& text, std::size_t length,
               std::array<std::byte, kKeyBytes>& out) noexcept {
  while (length > 2 * kKeyBytes && (text[length - 1] == '\n' || text[length - 1] == '\r')) {
    --length;
  }
  if (length != 2 * kKeyBytes) {
    return false;
  }
  for (std::size_t i = 0; i < kKeyBytes; ++i) {
    const int high = hex_value(text[2 * i]);
    const int low = hex_value(text[2 * i + 1]);
    if (high < 0 || low < 0) {
      return false;
    }
    out[i] = static_cast<std::byte>((high << 4) | low);
  }
  return true;
}

std::string errno_text(int error) { return std::strerror(error); }  // NOLINT(concurrency-mt-unsafe): start-up only

}  // namespace

Result<DatagramKey> make_datagram_key(const std::array<std::byte, kKeyBytes>& bytes) {
  DatagramKey key{.bytes = bytes, .id = 0};
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &digest_length, EVP_sha256(), nullptr) != 1) {
    return Error(ErrorCode::kSystem, "udp security: OpenSSL could not compute SHA-256 (is libcrypto usable?)");
  }
  key.id = digest[0];
  return key;
}

Result<DatagramKey> read_key_file(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int error = errno;
    return Error(error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kSystem,
                 fmt::format("{} '{}' cannot be opened: {}; create it with 32 random bytes, e.g. `head -c 32 "
                             "/dev/urandom > {} && chmod 600 {}` (the same file on every host of the domain)",
                             what, path, errno_text(error), path, path));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Error(ErrorCode::kInvalidArgument, fmt::format("{} '{}' is not a regular file", what, path));
  }
  const unsigned mode = info.st_mode & 07777U;
  if ((mode & 077U) != 0) {
    ::close(fd);
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{} '{}' has mode {:04o}: group or others may access it, so anyone on this machine "
                             "could forge the domain's datagrams; run `chmod 600 {}` (0400 also works)",
                             what, path, mode, path));
  }
  if (info.st_uid != ::geteuid()) {
    ::close(fd);
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{} '{}' is owned by uid {}, not by this process's uid {}; run `chown {} {}`", what, path,
                             info.st_uid, ::geteuid(), ::geteuid(), path));
  }
  std::array<char, 2 * kKeyBytes + 2> text{};
  std::size_t length = 0;
  while (length < text.size()) {
    const ssize_t n = ::read(fd, text.data() + length, text.size() - length);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    length += static_cast<std::size_t>(n);
  }
  char extra = 0;
  const bool longer = length == text.size() && ::read(fd, &extra, 1) > 0;
  ::close(fd);
  std::array<std::byte, kKeyBytes> bytes{};
  bool parsed = false;
  if (length == kKeyBytes) {
    std::memcpy(bytes.data(), text.data(), kKeyBytes);
    parsed = true;
  } else if (!longer) {
    parsed = parse_hex(text, length, bytes);
  }
  OPENSSL_cleanse(text.data(), text.size());
  if (!parsed) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{} '{}' holds {}{} bytes; a key is 32 random bytes, raw or as 64 hex digits: create it "
                             "with `head -c 32 /dev/urandom > {}`",
                             what, path, longer ? "more than " : "", length, path));
  }
  auto key = make_datagram_key(bytes);
  OPENSSL_cleanse(bytes.data(), bytes.size());
  return key;
}

}  // namespace axon::udp
