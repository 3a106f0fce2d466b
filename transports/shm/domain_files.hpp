// A domain's files as a process outside the domain reaches them (the axon
// command): their paths, and the domain lock taken without joining.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "axon/domain_view.hpp"
#include "axon/result.hpp"

namespace axon::shm {

/// `address` with its shm directory resolved as Node::create resolves it
/// (AXON_SHM_DIR, else /dev/shm), and the names of the domain's files.
struct DomainFiles {
  explicit DomainFiles(const DomainAddress& address);

  DomainAddress address;
  [[nodiscard]] std::string lock_path() const;
  [[nodiscard]] std::string registry_path() const;
  /// Every other file of the domain starts with this ("axon_d7_"; a
  /// domain's number ends at the underscore, so 7 is not 71).
  [[nodiscard]] std::string file_prefix() const;
};

/// The domain lock (flock on axon_d<N>.lock) held by a process that is not a
/// node of the domain. Released by the destructor or when the process dies.
class OutsideLock {
 public:
  enum class Kind : std::uint8_t {
    kShared,     ///< Readers: keeps nodes from changing the registry meanwhile.
    kExclusive,  ///< As a node holds it: nobody joins or leaves meanwhile.
  };
  enum class State : std::uint8_t {
    kHeld,
    kBusy,    ///< Others held it for all of the patience.
    kNoFile,  ///< No lock file, and it was not to be created.
  };

  OutsideLock() = default;
  OutsideLock(OutsideLock&& other) noexcept;
  OutsideLock& operator=(OutsideLock&& other) noexcept;
  OutsideLock(const OutsideLock&) = delete;
  OutsideLock& operator=(const OutsideLock&) = delete;
  ~OutsideLock();

  /// Tries every millisecond for up to `patience` (never blocks in flock:
  /// the holder may be a stopped process). `create`: a missing lock file is
  /// created with mode 0600 (as a node would), else kNoFile. Like a node, it
  /// checks that the file it locked is still the one at `path` (the last
  /// node unlinks it while holding it).
  [[nodiscard]] static Result<OutsideLock> take(const std::string& path, Kind kind, std::chrono::milliseconds patience,
                                                bool create);

  [[nodiscard]] State state() const noexcept { return state_; }
  [[nodiscard]] bool held() const noexcept { return state_ == State::kHeld; }

 private:
  int fd_ = -1;
  State state_ = State::kNoFile;
};

/// A registry file's bytes, read whole without mapping it (a file truncated
/// meanwhile cannot fault), in a buffer aligned for its tables.
class RegistryCopy {
 public:
  /// The file at `path`; `found` false (and nothing read) when it does not exist.
  [[nodiscard]] static Result<RegistryCopy> read(const std::string& path, bool& found);

  [[nodiscard]] const std::byte* data() const noexcept { return bytes_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, Free> bytes_;
  std::size_t size_ = 0;
};

}  // namespace axon::shm
