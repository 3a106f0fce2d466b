#include "transports/shm/topic_schema_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>

#include "axon/transport.hpp"
#include "src/base/errors.hpp"
#include "transports/shm/segment.hpp"

namespace axon::shm {
namespace {

/// Writes all of `bytes` at `offset` (a tmpfs write may still be short).
bool write_all(int fd, const void* bytes, std::size_t size, off_t offset) noexcept {
  const auto* p = static_cast<const char*>(bytes);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, p, size, offset);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return true;
}

bool read_all(int fd, void* bytes, std::size_t size, off_t offset) noexcept {
  auto* p = static_cast<char*>(bytes);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, offset);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return true;
}

Error damaged(const std::string& path, std::string_view what) {
  return {ErrorCode::kMalformed,
          fmt::format("the topic's schema file {} {}: it was damaged or replaced; restart the topic's publishers "
                      "to write it again",
                      path, what)};
}

}  // namespace

std::string schema_file_path(std::string_view shm_dir, std::uint32_t domain_id, std::uint32_t topic_slot,
                             std::uint32_t generation) {
  return fmt::format("{}/axon_d{}_t{}_g{}.schema", shm_dir, domain_id, topic_slot, generation);
}

void unlink_schema_file(const char* shm_dir, std::uint32_t domain_id, std::uint32_t topic_slot,
                        std::uint32_t generation) noexcept {
  char path[PATH_MAX];
  const int n =
      std::snprintf(path, sizeof(path), "%s/axon_d%u_t%u_g%u.schema", shm_dir, domain_id, topic_slot, generation);
  if (n > 0 && static_cast<std::size_t>(n) < sizeof(path)) {
    ::unlink(path);
  }
}

std::uint64_t schema_hash(std::span<const std::byte> schema) noexcept {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const std::byte b : schema) {
    hash ^= static_cast<std::uint8_t>(b);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

Result<void> write_schema_file(const std::string& path, std::span<const std::byte> schema,
                               std::uint32_t topic_generation, mode_t mode, const std::string& group) {
  // The registry says no file exists for this slot and generation; one that
  // does was left by a writer that died before the registry recorded it.
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return system_error(errno, fmt::format("create {}", path));
  }
  auto fail = [&](Error error) -> Result<void> {
    ::close(fd);
    ::unlink(path.c_str());
    return error;
  };
  if (auto permitted = apply_permissions(fd, mode, group, path); !permitted) {
    return fail(permitted.error());
  }
  const SchemaFileHeader header{.magic = kSchemaFileMagic,
                                .schema_bytes = static_cast<std::uint32_t>(schema.size()),
                                .topic_generation = topic_generation,
                                .schema_hash = schema_hash(schema)};
  if (!write_all(fd, &header, sizeof(header), 0) ||
      !write_all(fd, schema.data(), schema.size(), static_cast<off_t>(sizeof(header)))) {
    return fail(system_error(errno == 0 ? EIO : errno,
                             fmt::format("write of the topic's schema ({} bytes) to {}", schema.size(), path)));
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return system_error(err, fmt::format("close of {}", path));
  }
  return {};
}

Result<std::vector<std::byte>> read_schema_file(const std::string& path, std::uint32_t expected_bytes,
                                                std::uint64_t expected_hash, std::uint32_t topic_generation) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return damaged(path, "is missing although the registry records one");
    }
    return system_error(err, fmt::format("open of {}", path));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return system_error(errno, fmt::format("fstat of {}", path));
  }
  SchemaFileHeader header;
  if (static_cast<std::size_t>(st.st_size) < sizeof(header) || !read_all(fd, &header, sizeof(header), 0)) {
    return damaged(path, fmt::format("has {} bytes, fewer than its header", st.st_size));
  }
  if (header.magic != kSchemaFileMagic) {
    return damaged(path, fmt::format("does not start with axon's schema magic ({:#018x})", header.magic));
  }
  if (header.topic_generation != topic_generation) {
    return damaged(path, fmt::format("was written for generation {} of the topic's slot, not {}",
                                     header.topic_generation, topic_generation));
  }
  // Checked before anything is allocated: the bound and the registry's size.
  if (header.schema_bytes != expected_bytes || header.schema_bytes > kMaxSchemaBytes ||
      static_cast<std::uint64_t>(st.st_size) != sizeof(header) + std::uint64_t{header.schema_bytes}) {
    return damaged(path, fmt::format("says {} schema bytes and has {} (header included, {} bytes), the registry "
                                     "records {}",
                                     header.schema_bytes, st.st_size, sizeof(header), expected_bytes));
  }
  std::vector<std::byte> schema(header.schema_bytes);
  if (!read_all(fd, schema.data(), schema.size(), static_cast<off_t>(sizeof(header)))) {
    return damaged(path, "was shorter than its size when read");
  }
  const std::uint64_t hash = schema_hash(schema);
  if (hash != header.schema_hash || hash != expected_hash) {
    return damaged(path, fmt::format("has bytes of hash {:#018x}; its header says {:#018x}, the registry {:#018x}",
                                     hash, header.schema_hash, expected_hash));
  }
  return schema;
}

}  // namespace axon::shm
