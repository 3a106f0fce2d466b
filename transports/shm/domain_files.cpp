#include "transports/shm/domain_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <new>
#include <thread>
#include <utility>

#include "src/base/clock.hpp"
#include "src/base/errors.hpp"
#include "transports/shm/shm_constants.hpp"

namespace axon::shm {
namespace {

std::string resolved_shm_dir(const std::string& configured) {
  if (!configured.empty()) {
    return configured;
  }
  const char* dir = std::getenv("AXON_SHM_DIR");  // NOLINT(concurrency-mt-unsafe): read once, before any thread
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string("/dev/shm");
}

/// Whether `fd` is still the file at `path` (the last node unlinks the lock
/// file while it holds it; a lock on the unlinked file guards nothing).
bool still_at(int fd, const std::string& path) noexcept {
  struct stat locked {};
  struct stat current {};
  return ::fstat(fd, &locked) == 0 && ::stat(path.c_str(), &current) == 0 && locked.st_ino == current.st_ino &&
         locked.st_dev == current.st_dev;
}

}  // namespace

DomainFiles::DomainFiles(const DomainAddress& where)
    : address{.domain_id = where.domain_id, .shm_dir = resolved_shm_dir(where.shm_dir)} {}

std::string DomainFiles::lock_path() const {
  return fmt::format("{}/axon_d{}.lock", address.shm_dir, address.domain_id);
}

std::string DomainFiles::registry_path() const {
  return fmt::format("{}/axon_d{}_registry", address.shm_dir, address.domain_id);
}

std::string DomainFiles::file_prefix() const { return fmt::format("axon_d{}_", address.domain_id); }

OutsideLock::OutsideLock(OutsideLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), state_(std::exchange(other.state_, State::kNoFile)) {}

OutsideLock& OutsideLock::operator=(OutsideLock&& other) noexcept {
  if (this != &other) {
    this->~OutsideLock();
    fd_ = std::exchange(other.fd_, -1);
    state_ = std::exchange(other.state_, State::kNoFile);
  }
  return *this;
}

OutsideLock::~OutsideLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);  // before close: a forked child may share the open file
    ::close(fd_);
    fd_ = -1;
  }
}

Result<OutsideLock> OutsideLock::take(const std::string& path, Kind kind, std::chrono::milliseconds patience,
                                      bool create) {
  const int operation = (kind == Kind::kShared ? LOCK_SH : LOCK_EX) | LOCK_NB;
  const std::int64_t give_up_ns = monotonic_now_ns() + std::chrono::nanoseconds(patience).count();
  OutsideLock lock;
  for (;;) {
    const int fd =
        create ? ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT && !create) {
        lock.state_ = State::kNoFile;
        return lock;
      }
      return system_error(errno, fmt::format("open the domain lock {}", path));
    }
    if (::flock(fd, operation) == 0) {
      if (still_at(fd, path)) {
        lock.fd_ = fd;
        lock.state_ = State::kHeld;
        return lock;
      }
      ::close(fd);  // unlinked under us by the last node: look again
      continue;
    }
    const int err = errno;
    ::close(fd);
    if (err != EWOULDBLOCK && err != EINTR) {
      return system_error(err, fmt::format("flock {}", path));
    }
    if (monotonic_now_ns() >= give_up_ns) {
      lock.state_ = State::kBusy;
      return lock;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void RegistryCopy::Free::operator()(std::byte* p) const noexcept {
  ::operator delete[](p, std::align_val_t{kCacheLine});
}

Result<RegistryCopy> RegistryCopy::read(const std::string& path, bool& found) {
  found = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      return RegistryCopy{};
    }
    return system_error(errno, fmt::format("open {} (run as the user the nodes run as, or as root)", path));
  }
  found = true;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return system_error(err, fmt::format("fstat of {}", path));
  }
  RegistryCopy copy;
  copy.size_ = static_cast<std::size_t>(st.st_size);
  copy.bytes_.reset(static_cast<std::byte*>(::operator new[](copy.size_ + 1, std::align_val_t{kCacheLine})));
  std::size_t done = 0;
  while (done < copy.size_) {
    const ssize_t n = ::pread(fd, copy.bytes_.get() + done, copy.size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      ::close(fd);
      if (n == 0) {  // shrunk since fstat: a node replaced a damaged registry
        return Error(ErrorCode::kIncompatible,
                     fmt::format("{} shrank from {} to {} bytes while it was read: run the command again", path,
                                 copy.size_, done));
      }
      return system_error(err, fmt::format("read {}", path));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return copy;
}

}  // namespace axon::shm
