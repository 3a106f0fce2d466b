// A host for axon doctor's checks made of files in a scratch directory (proc/meminfo, sys/...) and process
// facts set by the test.
#pragma once

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "src/tools/axon/doctor/host_view.hpp"
#include "tests/support/common/temp_dir.hpp"

namespace axon::tools::doctor {

class FakeHost {
 public:
  /// Writes `text` to `path` ("/proc/cmdline") under the fake root, making its directories.
  void file(const std::string& path, const std::string& text) const {
    const std::filesystem::path full = std::filesystem::path(root_.path()) / path.substr(1);
    std::filesystem::create_directories(full.parent_path());
    std::ofstream out(full, std::ios::trunc);
    out << text;
    if (!out) {
      throw std::runtime_error("cannot write " + full.string());
    }
  }

  [[nodiscard]] HostView view() const { return {root_.path(), facts}; }

  ProcessFacts facts;

 private:
  test::TempDir root_{"axon-doctor"};
};

constexpr std::uint64_t kMiB = 1024 * 1024;

}  // namespace axon::tools::doctor
