// A chunk pool over heap memory, formatted like a shared one: what the pool
// and ledger unit tests allocate from.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "transports/shm/chunk_pool.hpp"

namespace axon::test {

struct AlignedFree {
  void operator()(std::byte* p) const { std::free(p); }  // NOLINT(cppcoreguidelines-no-malloc): aligned_alloc's pair
};

/// A pool over heap memory, formatted like a shared one.
class PoolFixture {
 public:
  explicit PoolFixture(std::vector<ChunkClassConfig> classes) : classes_(std::move(classes)) {
    auto bytes = shm::ChunkPool::bytes_needed(classes_);
    EXPECT_TRUE(bytes.ok());
    bytes_ = *bytes;
    const std::size_t rounded = (bytes_ + shm::kCacheLine - 1) / shm::kCacheLine * shm::kCacheLine;
    memory_.reset(static_cast<std::byte*>(std::aligned_alloc(shm::kCacheLine, rounded)));
    std::memset(memory_.get(), 0, rounded);  // like a fresh memfd
    pool = shm::ChunkPool::format(memory_.get(), classes_);
  }
  [[nodiscard]] std::byte* base() const { return memory_.get(); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  shm::ChunkPool pool;

 private:
  std::vector<ChunkClassConfig> classes_;
  std::size_t bytes_ = 0;
  std::unique_ptr<std::byte, AlignedFree> memory_;
};

}  // namespace axon::test
