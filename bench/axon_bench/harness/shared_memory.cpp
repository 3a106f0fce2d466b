#include "harness/shared_memory.hpp"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "harness/system.hpp"

namespace axon_bench {

SharedMapping::SharedMapping(std::size_t bytes) : bytes_(bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw std::system_error(errno, std::generic_category(),
                            "mmap of " + std::to_string(bytes) + " shared bytes for the benchmark");
  }
  data_ = static_cast<std::byte*>(p);
}

SharedMapping::~SharedMapping() {
  if (data_ != nullptr) {
    ::munmap(data_, bytes_);
  }
}

int ErrorText::set(std::string_view message) noexcept {
  const std::size_t n = std::min(message.size(), sizeof(text) - 1);
  std::memcpy(text, message.data(), n);
  text[n] = '\0';
  return 1;
}

void StartBarrier::arrive_and_wait(std::uint32_t workers) noexcept {
  arrived.fetch_add(1, std::memory_order_acq_rel);
  for (std::uint64_t spins = 0; arrived.load(std::memory_order_acquire) < workers; ++spins) {
    if (spins < 100'000) {
      cpu_relax();
    } else {
      ::sched_yield();
    }
  }
}

}  // namespace axon_bench
