// Whether an address lies in a mapping of this process whose /proc/self/maps
// line names a given text (a pool's shared-memory file): what the zero-copy
// tests assert about where a message is read.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace axon::test {

inline bool inside_mapping(const void* address, const std::string& text) {
  std::ifstream maps("/proc/self/maps");
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  for (std::string line; std::getline(maps, line);) {
    if (line.find(text) == std::string::npos) {
      continue;
    }
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::istringstream(line) >> std::hex >> begin >> dash >> end;
    if (a >= begin && a < end) {
      return true;
    }
  }
  return false;
}

/// The name of `node`'s pool file in `domain` (what its mapping's line names).
inline std::string pool_file_of(std::uint32_t domain, const std::string& node) {
  return "axon_pool_d" + std::to_string(domain) + "_" + node;
}

}  // namespace axon::test
