// A registry segment in ordinary memory, sized and formatted for some limits,
// for the tests that drive a Registry without a domain.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>

#include "transports/shm/registry.hpp"

namespace axon::shm::test_support {

class RegistryMemory {
 public:
  explicit RegistryMemory(const RegistryLimits& limits = {})
      : layout_(RegistryLayout::of(limits)),
        bytes_(static_cast<std::byte*>(std::aligned_alloc(kCacheLine, round_up(layout_.total_bytes)))) {
    auto* segment = new (bytes_.get()) RegistrySegment();
    Registry::format(segment, layout_);
  }

  [[nodiscard]] RegistrySegment* segment() const noexcept {
    return std::launder(reinterpret_cast<RegistrySegment*>(bytes_.get()));
  }
  [[nodiscard]] Registry registry() const noexcept { return Registry(segment(), layout_); }
  [[nodiscard]] const RegistryLayout& layout() const noexcept { return layout_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { std::free(p); }  // NOLINT(cppcoreguidelines-no-malloc)
  };
  static std::size_t round_up(std::size_t bytes) noexcept { return (bytes + kCacheLine - 1) / kCacheLine * kCacheLine; }

  RegistryLayout layout_;
  std::unique_ptr<std::byte, Free> bytes_;
};

}  // namespace axon::shm::test_support
