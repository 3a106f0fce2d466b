// Where this process's memory comes from, read in /proc/self/maps: a test
// checks that a message was read where its publisher wrote it (zero copy).
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace axon::test {

/// True when `address` lies in a mapping of this process whose name has `text`.
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
