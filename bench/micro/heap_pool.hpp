// A ChunkPool over ordinary heap memory for micro benchmarks: a
// std::vector<std::byte> whose used part starts on a cache line, as a
// shared-memory segment would.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "transports/shm/chunk_pool.hpp"

namespace axon::bench {

class HeapPool {
 public:
  explicit HeapPool(std::vector<ChunkClassConfig> classes) : classes_(std::move(classes)) {
    auto bytes = shm::ChunkPool::bytes_needed(classes_);
    if (!bytes) {
      throw std::invalid_argument(std::string(bytes.error().message()));
    }
    storage_.resize(*bytes + shm::kCacheLine);
    void* base = storage_.data();
    std::size_t space = storage_.size();
    std::align(shm::kCacheLine, *bytes, base, space);
    pool_ = shm::ChunkPool::format(static_cast<std::byte*>(base), classes_);
  }

  shm::ChunkPool& pool() noexcept { return pool_; }

 private:
  std::vector<ChunkClassConfig> classes_;
  std::vector<std::byte> storage_;
  shm::ChunkPool pool_;
};

}  // namespace axon::bench
