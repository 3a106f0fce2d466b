// A scratch directory under $TMPDIR (/tmp) that is removed with everything in
// it when the object goes, also when a test fails.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/support/common/error_text.hpp"

namespace axon::test {

class TempDir {
 public:
  /// Throws std::runtime_error when the directory cannot be made.
  explicit TempDir(const std::string& name_prefix = "axon-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (name_prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("mkdtemp " + pattern + ": " + error_text(errno));
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Writes `text` to `name` in the directory; returns the file's path.
  /// Throws std::runtime_error when it cannot be written.
  [[nodiscard]] std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      throw std::runtime_error("cannot write " + file);
    }
    return file;  // NOLINT(performance-no-automatic-move): copied once, for a test
  }

 private:
  std::string path_;
};

}  // namespace axon::test
