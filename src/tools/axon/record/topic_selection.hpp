// Which topics `axon record` records: names, shell globs (fnmatch: `camera/*`, `lidar_?`), regular expressions
// (--regex, ECMAScript, matched against the whole name) or every topic (--all).
//
// Thread safety: none needed after construction (matches() is const). Allocates when built.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "axon/result.hpp"

namespace axon::tools {

class TopicSelection {
 public:
  /// `patterns`: names or globs; `regexes`: --regex values; `all`: every topic. An invalid regular expression is
  /// refused with its text; so is a selection that names nothing.
  [[nodiscard]] static Result<TopicSelection> create(const std::vector<std::string>& patterns,
                                                     const std::vector<std::string>& regexes, bool all);

  [[nodiscard]] bool matches(const std::string& topic) const;
  /// What was asked, in the user's words ("all topics", "camera/*, --regex ^lidar").
  [[nodiscard]] std::string text() const;

 private:
  TopicSelection() = default;
  bool all_ = false;
  std::vector<std::string> patterns_;
  std::vector<std::string> regex_texts_;
  std::vector<std::regex> regexes_;
};

}  // namespace axon::tools
