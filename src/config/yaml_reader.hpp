// Checked access to the nodes of a YAML file, shared by the deployment config
// (src/config) and axon-bench's scenario files. Every failure becomes an
// Error "FILE:LINE:COLUMN: what is wrong" (yaml-cpp's marks). Not public API.
//
// The reader keeps the first failure (like a stream's fail state): each
// accessor returns a harmless value once something failed, so a parser reads
// a section and then checks ok() once instead of after every field.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "axon/result.hpp"

namespace axon::detail {

/// "2048", "2 KiB", "1.5 MiB", "64kb", "1G" in bytes; 0 when not a size.
std::uint64_t parse_size(std::string_view text);

/// The candidate nearest to `word` when it looks like a typo of it (edit
/// distance at most 2, and less than half the word), else "".
std::string closest_match(std::string_view word, std::initializer_list<std::string_view> candidates);
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// Not thread-safe; one reader per file being parsed. Allocates.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  [[nodiscard]] bool ok() const noexcept { return !error_.has_value(); }
  /// The first failure (kInvalidArgument). Only when !ok().
  [[nodiscard]] const Error& error() const { return *error_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

  /// Records "FILE:LINE:COLUMN: what" unless a failure is recorded already.
  void fail(const YAML::Mark& mark, const std::string& what);
  void fail(const YAML::Node& at, const std::string& what) { fail(at.Mark(), what); }

  /// True when `node` is a mapping; else records a failure.
  bool expect_map(const YAML::Node& node, const std::string& what);
  /// True when `node` is a list; else records a failure.
  bool expect_list(const YAML::Node& node, const std::string& what);
  /// Rejects keys of `map` not in `allowed` (suggesting the nearest known key)
  /// and keys given twice.
  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed, const std::string& what);
  /// The value of `key` in `map`; records a failure when required and missing.
  YAML::Node field(const YAML::Node& map, const char* key, const std::string& what, bool required);

  std::string text(const YAML::Node& node, const std::string& what);
  double number(const YAML::Node& node, const std::string& what);
  double positive(const YAML::Node& node, const std::string& what);
  std::uint64_t integer(const YAML::Node& node, const std::string& what, std::uint64_t min, std::uint64_t max);
  bool boolean(const YAML::Node& node, const std::string& what);
  /// A size such as 2048 or "2 KiB", from `min` to `max` bytes.
  std::uint64_t size(const YAML::Node& node, const std::string& what, std::uint64_t min, std::uint64_t max);
  /// One of `allowed` (a failure lists them, and the nearest one).
  std::string choice(const YAML::Node& node, const std::string& what, std::initializer_list<std::string_view> allowed);

  /// "nothing", "'text'", "a list", "a mapping": what a node holds, for messages.
  static std::string kind_of(const YAML::Node& node);

 private:
  std::string file_;
  std::optional<Error> error_;
};

/// Parses `text`; a YAML syntax error is recorded in `reader`. An empty text
/// gives a null node.
YAML::Node load_yaml(YamlReader& reader, std::string_view text);

}  // namespace axon::detail
