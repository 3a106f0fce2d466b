#include "transports/shm/process_identity.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace axon::shm {
namespace {

struct StatFields {
  char state = '?';
  std::uint64_t start_time = 0;
};

/// Reads state (field 3) and starttime (field 22) of /proc/<pid>/stat.
bool read_stat(pid_t pid, StatFields& out) noexcept {
  std::array<char, 64> path{};
  std::snprintf(path.data(), path.size(), "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path.data(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  std::array<char, 1024> buf{};
  const ssize_t n = ::read(fd, buf.data(), buf.size() - 1);
  ::close(fd);
  if (n <= 0) {
    return false;
  }
  // The command name (field 2) is in parentheses and may hold spaces or
  // parentheses itself: parse from the last ')'.
  const char* p = std::strrchr(buf.data(), ')');
  if (p == nullptr || p[1] == '\0') {
    return false;
  }
  p += 2;
  out.state = *p;
  // Skip fields 3..21 to reach field 22.
  for (int field = 3; field < 22; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) {
      return false;
    }
    ++p;
  }
  out.start_time = std::strtoull(p, nullptr, 10);
  return true;
}

}  // namespace

ProcessIdentity self_identity() noexcept { return identity_of(::getpid()); }

ProcessIdentity identity_of(pid_t pid) noexcept {
  ProcessIdentity id{.pid = pid, .start_time = 0};
  StatFields fields;
  if (read_stat(id.pid, fields)) {
    id.start_time = fields.start_time;
  }
  return id;
}

bool is_alive(const ProcessIdentity& id) noexcept {
  StatFields fields;
  if (!read_stat(id.pid, fields)) {
    return false;
  }
  if (fields.state == 'Z' || fields.state == 'X' || fields.state == 'x') {
    return false;  // killed and waiting to be reaped: it holds nothing any more
  }
  return fields.start_time == id.start_time;
}

}  // namespace axon::shm
