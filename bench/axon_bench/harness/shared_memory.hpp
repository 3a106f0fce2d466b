// Memory the parent maps before fork() and every worker process of a run
// shares, and the plain values kept in it: a worker's error message and the
// start barrier. What is kept there holds atomics and bytes, never pointers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace axon_bench {

inline constexpr std::size_t kCacheLine = 64;

/// Anonymous MAP_SHARED memory made before fork(): the parent and the
/// workers see the same (zero-filled) bytes. Move-only.
class SharedMapping {
 public:
  /// Throws std::system_error when mmap fails.
  explicit SharedMapping(std::size_t bytes);
  ~SharedMapping();
  SharedMapping(SharedMapping&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  SharedMapping& operator=(SharedMapping&&) = delete;
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// One T in its own shared mapping (T holds atomics, not pointers).
template <class T>
class Shared {
 public:
  Shared() : mapping_(sizeof(T)), value_(new (mapping_.data()) T()) {}
  ~Shared() { value_->~T(); }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
  T& operator*() const noexcept { return *value_; }
  T* operator->() const noexcept { return value_; }

 private:
  SharedMapping mapping_;
  T* value_;
};

/// `count` values in a shared mapping, zero-filled.
template <class T>
class SharedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit SharedArray(std::size_t count) : mapping_(count * sizeof(T) + 1), count_(count) {}
  [[nodiscard]] T* data() const noexcept { return reinterpret_cast<T*>(mapping_.data()); }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  T& operator[](std::size_t i) const noexcept { return data()[i]; }

 private:
  SharedMapping mapping_;
  std::size_t count_;
};

/// Why a worker failed, written by that worker and read by the parent after
/// waitpid() (which orders it).
struct ErrorText {
  char text[512] = {};

  /// Keeps `message` (cut to fit). Returns 1, the failed worker's exit
  /// status: `return report.error.set(...)`.
  int set(std::string_view message) noexcept;
  [[nodiscard]] std::string str() const { return text; }
};

/// Where the workers of a run start together: each arrives, then waits for
/// the others. acq_rel/acquire: what each did before arriving (connecting,
/// first writes) happens before any leaves.
struct StartBarrier {
  std::atomic<std::uint32_t> arrived{0};

  /// Spins a while, then yields: the workers may share CPUs when not pinned.
  void arrive_and_wait(std::uint32_t workers) noexcept;
};

}  // namespace axon_bench
