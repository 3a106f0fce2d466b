// Checked access to the nodes of a YAML file: every failure throws
// ScenarioError with "FILE:LINE:COLUMN: what is wrong" (yaml-cpp's marks).
// Internal to scenario_config.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "scenario_config.hpp"

namespace axon_bench {

/// Reads one scenario file; every failure names the file, line and column.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    std::string where = file_;
    if (!mark.is_null()) {
      where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    throw ScenarioError(where + ": " + what);
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const { fail(at.Mark(), what); }

  void expect_map(const YAML::Node& node, const std::string& what) const {
    if (!node.IsMap()) {
      fail(node, what + " must be a mapping (key: value lines), found " + kind_of(node));
    }
  }

  /// Rejects keys of `map` not in `allowed`, and keys given twice.
  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                  const std::string& what) const {
    std::set<std::string> seen;
    for (const auto& entry : map) {
      const YAML::Node& key = entry.first;
      if (!key.IsScalar()) {
        fail(key, what + ": keys must be plain words");
      }
      const std::string name = key.Scalar();
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        std::string list;
        for (const auto a : allowed) {
          list += list.empty() ? "" : ", ";
          list += std::string(a);
        }
        fail(key, what + ": unknown key '" + name + "' (known keys: " + list + ")");
      }
      if (!seen.insert(name).second) {
        fail(key, what + ": key '" + name + "' is given twice");
      }
    }
  }

  /// The value of `key` in `map`; fails when it is required and missing.
  YAML::Node field(const YAML::Node& map, const char* key, const std::string& what, bool required) const {
    YAML::Node value = map[key];
    if (!value.IsDefined() && required) {
      fail(map, what + ": missing required key '" + key + "'");
    }
    return value;
  }

  std::string text(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      fail(node, what + " must be a non-empty text, found " + kind_of(node));
    }
    return node.Scalar();
  }

  double number(const YAML::Node& node, const std::string& what) const {
    double value = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value)) {
      fail(node, what + " must be a number, found " + describe(node));
    }
    return value;
  }

  double positive(const YAML::Node& node, const std::string& what) const {
    const double value = number(node, what);
    if (value <= 0) {
      fail(node, what + " must be > 0, found " + node.Scalar());
    }
    return value;
  }

  std::uint64_t integer(const YAML::Node& node, const std::string& what, std::uint64_t min, std::uint64_t max) const {
    const double value = number(node, what);
    if (value != std::floor(value) || value < static_cast<double>(min) || value > static_cast<double>(max)) {
      fail(node, what + " must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                     ", found " + node.Scalar());
    }
    return static_cast<std::uint64_t>(value);
  }

  bool boolean(const YAML::Node& node, const std::string& what) const {
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      fail(node, what + " must be true or false, found " + describe(node));
    }
    return value;
  }

  std::uint64_t size(const YAML::Node& node, const std::string& what) const {
    const std::uint64_t bytes = node.IsScalar() ? parse_size(node.Scalar()) : 0;
    if (bytes == 0) {
      fail(node, what + " must be a size such as 2048, \"2 KiB\" or \"1 MiB\", found " + describe(node));
    }
    if (bytes > kScenarioMaxPayloadBytes) {
      fail(node, what + " is " + std::to_string(bytes) + " bytes; the largest scenario payload is 16 MiB");
    }
    return bytes;
  }

  /// A list of topic names, resolved to indices.
  std::vector<int> topic_list(const YAML::Node& node, const std::map<std::string, int>& topics,
                              const std::string& what) const {
    if (!node.IsSequence()) {
      fail(node, what + " must be a list of topic names ([a, b] or '- a' lines), found " + kind_of(node));
    }
    std::vector<int> indices;
    for (const auto& item : node) {
      const std::string name = text(item, what + " entry");
      const auto found = topics.find(name);
      if (found == topics.end()) {
        fail(item, what + ": unknown topic '" + name + "' (define it under topics:)");
      }
      if (std::find(indices.begin(), indices.end(), found->second) != indices.end()) {
        fail(item, what + ": topic '" + name + "' is listed twice");
      }
      indices.push_back(found->second);
    }
    return indices;
  }

  static std::string kind_of(const YAML::Node& node) {
    switch (node.Type()) {
      case YAML::NodeType::Null: return "nothing";
      case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
      case YAML::NodeType::Sequence: return "a list";
      case YAML::NodeType::Map: return "a mapping";
      case YAML::NodeType::Undefined: return "nothing";
    }
    return "something else";
  }
  static std::string describe(const YAML::Node& node) { return kind_of(node); }

 private:
  std::string file_;
};

}  // namespace axon_bench
