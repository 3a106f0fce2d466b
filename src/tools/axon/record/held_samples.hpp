// The samples whose payloads an uncompressed MCAP writer still points at (mcap::Writer's zero-copy contract):
// a ring of fixed capacity, filled in the order the payloads were added and emptied from its oldest end as the
// writer releases them. Dropping a sample gives its shared-memory chunk back to its publisher.
//
// Thread safety: none (the recorder's one thread). Allocates only when built.
#pragma once

#include <cassert>
#include <cstddef>
#include <optional>
#include <vector>

#include "axon/bytes.hpp"
#include "axon/sample.hpp"

namespace axon::tools {

class HeldSamples {
 public:
  explicit HeldSamples(std::size_t capacity) : slots_(capacity) { assert(capacity > 0); }

  /// Keeps `sample` until released; the caller never holds more than capacity() (the writer's chunk_messages).
  void push(Sample<Bytes>&& sample) {
    assert(size_ < slots_.size() && "the writer holds at most chunk_messages payloads");
    slots_[(head_ + size_) % slots_.size()].emplace(std::move(sample));
    ++size_;
  }
  /// Drops the `count` oldest samples (what one writer call released).
  void release_oldest(std::size_t count) {
    assert(count <= size_ && "the writer released more payloads than it was given");
    for (std::size_t i = 0; i < count; ++i) {
      slots_[head_].reset();
      head_ = (head_ + 1) % slots_.size();
    }
    size_ -= count;
  }
  void release_all() { release_oldest(size_); }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return slots_.size(); }

 private:
  std::vector<std::optional<Sample<Bytes>>> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace axon::tools
