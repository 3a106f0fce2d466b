// Checked access to the nodes of a scenario file: the library's YAML reader
// (src/config/yaml_reader.hpp, shared with the deployment config) with its
// first failure thrown as ScenarioError "FILE:LINE:COLUMN: what is wrong".
// Used by scenario_config.cpp and the fault schedule (chaos/fault_schedule.cpp).
#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/scenario_config.hpp"
#include "src/config/yaml_reader.hpp"

namespace axon_bench {

/// Reads one scenario file; every failure names the file, line and column.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : reader_(std::move(file)) {}

  /// The document of scenario file `path` (the one this reader names): a file that cannot be opened or is not
  /// YAML is a ScenarioError.
  YAML::Node load_file(const std::string& path) {
    try {
      return YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
      throw ScenarioError(path + ": cannot open the scenario file");
    } catch (const YAML::Exception& e) {
      fail(e.mark, "not valid YAML: " + e.msg);
    }
  }

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) {
    reader_.fail(mark, what);
    throw_failure();
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) { fail(at.Mark(), what); }

  void expect_map(const YAML::Node& node, const std::string& what) {
    reader_.expect_map(node, what);
    throw_if_failed();
  }
  void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed, const std::string& what) {
    reader_.check_keys(map, allowed, what);
    throw_if_failed();
  }
  YAML::Node field(const YAML::Node& map, const char* key, const std::string& what, bool required) {
    return checked(reader_.field(map, key, what, required));
  }
  std::string text(const YAML::Node& node, const std::string& what) { return checked(reader_.text(node, what)); }
  double number(const YAML::Node& node, const std::string& what) { return checked(reader_.number(node, what)); }
  double positive(const YAML::Node& node, const std::string& what) { return checked(reader_.positive(node, what)); }
  std::uint64_t integer(const YAML::Node& node, const std::string& what, std::uint64_t min, std::uint64_t max) {
    return checked(reader_.integer(node, what, min, max));
  }
  bool boolean(const YAML::Node& node, const std::string& what) { return checked(reader_.boolean(node, what)); }
  std::string choice(const YAML::Node& node, const std::string& what, std::initializer_list<std::string_view> allowed) {
    return checked(reader_.choice(node, what, allowed));
  }

  /// A payload size, at most kScenarioMaxPayloadBytes.
  std::uint64_t size(const YAML::Node& node, const std::string& what) {
    const std::uint64_t bytes = checked(reader_.size(node, what, 1, ~std::uint64_t{0}));
    if (bytes > kScenarioMaxPayloadBytes) {
      fail(node, what + " is " + std::to_string(bytes) + " bytes; the largest scenario payload is 16 MiB");
    }
    return bytes;
  }

  /// A list of topic names, resolved to indices.
  std::vector<int> topic_list(const YAML::Node& node, const std::map<std::string, int>& topics,
                              const std::string& what) {
    if (!node.IsSequence()) {
      fail(node, what + " must be a list of topic names ([a, b] or '- a' lines), found " + kind_of(node));
    }
    std::vector<int> indices;
    for (const auto& item : node) {
      const std::string name = text(item, what + " entry");
      const auto found = topics.find(name);
      if (found == topics.end()) {
        fail(item, fmt::format("{}: unknown topic '{}' (define it under topics:)", what, name));
      }
      if (std::find(indices.begin(), indices.end(), found->second) != indices.end()) {
        fail(item, fmt::format("{}: topic '{}' is listed twice", what, name));
      }
      indices.push_back(found->second);
    }
    return indices;
  }

  static std::string kind_of(const YAML::Node& node) { return axon::detail::YamlReader::kind_of(node); }

 private:
  [[noreturn]] void throw_failure() const { throw ScenarioError(std::string(reader_.error().message())); }
  void throw_if_failed() const {
    if (!reader_.ok()) {
      throw_failure();
    }
  }
  template <class T>
  [[nodiscard]] T checked(T value) const {
    throw_if_failed();
    return value;
  }

  axon::detail::YamlReader reader_;
};

}  // namespace axon_bench
