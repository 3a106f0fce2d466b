// Topic selection of `axon record` (topic_selection.hpp).
#include "src/tools/axon/record/topic_selection.hpp"

#include <fnmatch.h>

namespace axon::tools {

Result<TopicSelection> TopicSelection::create(const std::vector<std::string>& patterns,
                                              const std::vector<std::string>& regexes, bool all) {
  if (!all && patterns.empty() && regexes.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "name the topics to record (names or globs such as 'camera/*'), --regex RE, or --all");
  }
  TopicSelection selection;
  selection.all_ = all;
  selection.patterns_ = patterns;
  for (const std::string& text : regexes) {
    try {
      selection.regexes_.emplace_back(text, std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
      return Error(ErrorCode::kInvalidArgument,
                   "--regex '" + text + "' is not a valid regular expression (" + error.what() + ")");
    }
    selection.regex_texts_.push_back(text);
  }
  return selection;
}

bool TopicSelection::matches(const std::string& topic) const {
  if (all_) {
    return true;
  }
  for (const std::string& pattern : patterns_) {
    // No FNM_PATHNAME: `camera/*` also takes `camera/front/raw`, as a user who writes it expects.
    if (::fnmatch(pattern.c_str(), topic.c_str(), 0) == 0) {
      return true;
    }
  }
  for (const std::regex& re : regexes_) {
    if (std::regex_match(topic, re)) {
      return true;
    }
  }
  return false;
}

std::string TopicSelection::text() const {
  if (all_) {
    return "all topics";
  }
  std::string out;
  const auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  for (const std::string& pattern : patterns_) {
    add(pattern);
  }
  for (const std::string& re : regex_texts_) {
    add("--regex " + re);
  }
  return out;
}

}  // namespace axon::tools
