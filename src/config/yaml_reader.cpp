#include "src/config/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

namespace axon::detail {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and swaps of neighbours (the usual typos) cost 1 each.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t width = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * width);
  const auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * width + j]; };
  for (std::size_t i = 0; i <= a.size(); ++i) {
    at(i, 0) = i;
  }
  for (std::size_t j = 0; j <= b.size(); ++j) {
    at(0, j) = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

std::string join(std::initializer_list<std::string_view> words) {
  std::string list;
  for (const auto word : words) {
    list += list.empty() ? "" : ", ";
    list += word;
  }
  return list;
}

std::string did_you_mean(std::string_view word, std::initializer_list<std::string_view> candidates) {
  const std::string near = closest_match(word, candidates);
  return near.empty() ? std::string() : " (did you mean '" + near + "'?)";
}

/// Line `line` (0-based) of `text`, without its line break.
std::string_view line_of(std::string_view text, int line) {
  std::size_t begin = 0;
  for (int i = 0; i < line && begin != std::string_view::npos; ++i) {
    begin = text.find('\n', begin);
    begin = begin == std::string_view::npos ? begin : begin + 1;
  }
  if (begin == std::string_view::npos || begin > text.size()) {
    return {};
  }
  const std::size_t end = text.find('\n', begin);
  return text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
}

/// What to look at after a YAML syntax error at `mark`, for the two mistakes
/// the parser's words ("illegal map value", "end of map not found") hide: a
/// tab in the indentation, and a line indented unlike its neighbours. ""
/// when neither applies.
std::string syntax_hint(std::string_view text, const YAML::Mark& mark, const std::string& parser_message) {
  // A tab in the leading white space of the failing line (tabs elsewhere,
  // inside a value or a flow list, are fine).
  if (!mark.is_null()) {
    const std::string_view content = line_of(text, mark.line);
    const std::size_t tab = content.substr(0, content.find_first_not_of(" \t")).find('\t');
    if (tab != std::string_view::npos) {
      return fmt::format(
          "; YAML does not allow tabs for indentation; line {} has a tab at column {}: indent with "
          "spaces",
          mark.line + 1, tab + 1);
    }
  }
  // yaml-cpp's messages when a block key or item is not lined up.
  static constexpr std::string_view kIndentation[] = {"illegal map value", "illegal block entry",
                                                      "end of map not found", "end of sequence not found"};
  if (!mark.is_null() &&
      std::find(std::begin(kIndentation), std::end(kIndentation), parser_message) != std::end(kIndentation)) {
    return fmt::format(
        "; check the indentation of line {} ('{}'): a key lines up with the other keys of its "
        "mapping, a '- ' item with the other items of its list (spaces only)",
        mark.line + 1, line_of(text, mark.line));
  }
  return {};
}

}  // namespace

std::uint64_t parse_size(std::string_view raw) {
  std::string text;
  for (const char ch : raw) {
    if (std::isspace(static_cast<unsigned char>(ch)) == 0) {
      text += ch;
    }
  }
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) != 0 || text[digits] == '.')) {
    ++digits;
  }
  if (digits == 0) {
    return 0;
  }
  double value = 0;
  try {
    value = std::stod(text.substr(0, digits));
  } catch (const std::exception&) {
    return 0;
  }
  static const std::map<std::string, double> kUnits = {
      {"", 1},        {"b", 1},         {"k", 1024},       {"kib", 1024},  {"kb", 1000},
      {"m", 1 << 20}, {"mib", 1 << 20}, {"mb", 1'000'000}, {"g", 1 << 30}, {"gib", 1 << 30},
  };
  const auto unit = kUnits.find(lower(text.substr(digits)));
  if (unit == kUnits.end()) {
    return 0;
  }
  const double bytes = std::ceil(value * unit->second);
  return bytes >= 1 && bytes < 1e12 ? static_cast<std::uint64_t>(bytes) : 0;
}

std::string closest_match(std::string_view word, std::initializer_list<std::string_view> candidates) {
  return closest_match(word, std::vector<std::string>(candidates.begin(), candidates.end()));
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(lower(word), lower(candidate));
    if (distance < best_distance && distance * 2 < std::max(word.size(), candidate.size())) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

void YamlReader::fail(const YAML::Mark& mark, const std::string& what) {
  if (error_) {
    return;
  }
  error_.emplace(ErrorCode::kInvalidArgument,
                 mark.is_null() ? fmt::format("{}: {}", file_, what)
                                : fmt::format("{}:{}:{}: {}", file_, mark.line + 1, mark.column + 1, what));
}

bool YamlReader::expect_map(const YAML::Node& node, const std::string& what) {
  if (!node.IsMap()) {
    fail(node, what + " must be a mapping (key: value lines), found " + kind_of(node));
    return false;
  }
  return true;
}

bool YamlReader::expect_list(const YAML::Node& node, const std::string& what) {
  if (!node.IsSequence()) {
    fail(node, what + " must be a list ('- ...' lines or [a, b]), found " + kind_of(node));
    return false;
  }
  return true;
}

void YamlReader::check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                            const std::string& what) {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      fail(key, what + ": keys must be plain words");
      return;
    }
    const std::string name = key.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      fail(key, fmt::format("{}: unknown key '{}'{}; known keys: {}", what, name, did_you_mean(name, allowed),
                            join(allowed)));
      return;
    }
    if (!seen.insert(name).second) {
      fail(key, fmt::format("{}: key '{}' is given twice", what, name));
      return;
    }
  }
}

YAML::Node YamlReader::field(const YAML::Node& map, const char* key, const std::string& what, bool required) {
  YAML::Node value = map[key];
  if (!value.IsDefined() && required) {
    fail(map, what + ": missing required key '" + key + "'");
  }
  return value;
}

std::string YamlReader::text(const YAML::Node& node, const std::string& what) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    fail(node, what + " must be a non-empty text, found " + kind_of(node));
    return {};
  }
  return node.Scalar();
}

double YamlReader::number(const YAML::Node& node, const std::string& what) {
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value)) {
    fail(node, what + " must be a number, found " + kind_of(node));
    return 0;
  }
  return value;
}

double YamlReader::positive(const YAML::Node& node, const std::string& what) {
  const double value = number(node, what);
  if (ok() && value <= 0) {
    fail(node, what + " must be > 0, found " + node.Scalar());
  }
  return value;
}

std::uint64_t YamlReader::integer(const YAML::Node& node, const std::string& what, std::uint64_t min,
                                  std::uint64_t max) {
  const double value = number(node, what);
  if (!ok()) {
    return min;
  }
  if (value != std::floor(value) || value < static_cast<double>(min) || value > static_cast<double>(max)) {
    fail(node, what + " must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                   ", found " + node.Scalar());
    return min;
  }
  return static_cast<std::uint64_t>(value);
}

bool YamlReader::boolean(const YAML::Node& node, const std::string& what) {
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    fail(node, what + " must be true or false, found " + kind_of(node));
  }
  return value;
}

std::uint64_t YamlReader::size(const YAML::Node& node, const std::string& what, std::uint64_t min, std::uint64_t max) {
  const std::uint64_t bytes = node.IsScalar() ? parse_size(node.Scalar()) : 0;
  if (bytes == 0) {
    fail(node, fmt::format(R"({} must be a size such as 2048, "2 KiB" or "1 MiB", found {})", what, kind_of(node)));
    return min;
  }
  if (bytes < min || bytes > max) {
    fail(node, what + " is " + std::to_string(bytes) + " bytes; it must be from " + std::to_string(min) + " to " +
                   std::to_string(max) + " bytes");
    return min;
  }
  return bytes;
}

std::string YamlReader::choice(const YAML::Node& node, const std::string& what,
                               std::initializer_list<std::string_view> allowed) {
  if (!node.IsScalar()) {
    fail(node, what + " must be one of " + join(allowed) + ", found " + kind_of(node));
    return {};
  }
  const std::string& value = node.Scalar();
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    fail(node, what + " must be one of " + join(allowed) + ", found '" + value + "'" + did_you_mean(value, allowed));
    return {};
  }
  return value;
}

std::string YamlReader::kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "something else";
}

YAML::Node load_yaml(YamlReader& reader, std::string_view text) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    reader.fail(e.mark, "not valid YAML: " + e.msg + syntax_hint(text, e.mark, e.msg));
  }
  return YAML::Node(YAML::NodeType::Null);
}

}  // namespace axon::detail
