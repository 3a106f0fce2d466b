// Reads the "WORD key=value key=value ..." lines peers print (axon_net_peer's
// SUMMARY and PUBLISHER lines) into a map, so tests assert on named fields.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace axon::test {

class PeerSummary {
 public:
  /// Parses `line`; the first word (SUMMARY, PUBLISHER) is skipped.
  explicit PeerSummary(const std::string& line) : line_(line) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    while (words >> word) {
      if (const auto eq = word.find('='); eq != std::string::npos) {
        fields_[word.substr(0, eq)] = word.substr(eq + 1);
      }
    }
  }

  [[nodiscard]] bool has(const std::string& key) const { return fields_.contains(key); }
  /// The field as text ("" when absent).
  [[nodiscard]] std::string text(const std::string& key) const {
    const auto it = fields_.find(key);
    return it == fields_.end() ? std::string() : it->second;
  }
  /// The field as a number (0 when absent).
  [[nodiscard]] std::uint64_t number(const std::string& key) const {
    return std::strtoull(text(key).c_str(), nullptr, 10);
  }
  [[nodiscard]] const std::string& line() const noexcept { return line_; }

 private:
  std::string line_;
  std::map<std::string, std::string> fields_;
};

}  // namespace axon::test
