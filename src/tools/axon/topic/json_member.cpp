#include "src/tools/axon/topic/json_member.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstddef>
#include <cstdint>

namespace axon::tools {
namespace {

/// A cursor over JSON text: skips whole values without building them.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r' || text_[at_] == '\t')) {
      ++at_;
    }
  }
  [[nodiscard]] bool eat(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  [[nodiscard]] char peek() {
    skip_space();
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  /// The text of the string starting here, quotes included.
  [[nodiscard]] std::optional<std::string_view> string() {
    skip_space();
    if (at_ >= text_.size() || text_[at_] != '"') {
      return std::nullopt;
    }
    const std::size_t begin = at_++;
    while (at_ < text_.size() && text_[at_] != '"') {
      at_ += text_[at_] == '\\' ? 2 : 1;
    }
    if (at_ >= text_.size()) {
      return std::nullopt;
    }
    ++at_;
    return text_.substr(begin, at_ - begin);
  }
  /// The text of the value starting here (nested values skipped whole).
  [[nodiscard]] std::optional<std::string_view> value(int depth = 0) {
    if (depth > 256) {
      return std::nullopt;
    }
    skip_space();
    const std::size_t begin = at_;
    const char c = peek();
    if (c == '"') {
      return string();
    }
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++at_;
      if (eat(close)) {
        return text_.substr(begin, at_ - begin);
      }
      do {
        if (c == '{' && (!string() || !eat(':'))) {
          return std::nullopt;
        }
        if (!value(depth + 1)) {
          return std::nullopt;
        }
      } while (eat(','));
      if (!eat(close)) {
        return std::nullopt;
      }
      return text_.substr(begin, at_ - begin);
    }
    // A number, true, false or null: up to the next delimiter.
    while (at_ < text_.size() && text_[at_] != ',' && text_[at_] != '}' && text_[at_] != ']' && text_[at_] != ' ' &&
           text_[at_] != '\n' && text_[at_] != '\r' && text_[at_] != '\t') {
      ++at_;
    }
    if (at_ == begin) {
      return std::nullopt;
    }
    return text_.substr(begin, at_ - begin);
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

std::optional<std::string_view> step_into(std::string_view value, std::string_view step, std::string* why) {
  Scanner in(value);
  const char open = in.peek();
  if (open == '{') {
    (void)in.eat('{');
    if (in.peek() == '}') {
      return std::nullopt;
    }
    do {
      auto key = in.string();
      if (!key || !in.eat(':')) {
        return std::nullopt;
      }
      auto member = in.value();
      if (!member) {
        return std::nullopt;
      }
      if (auto name = json_string(*key); name && *name == step) {
        return member;
      }
    } while (in.eat(','));
    if (why != nullptr) {
      *why = fmt::format("no member '{}'", step);
    }
    return std::nullopt;
  }
  if (open == '[') {
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(step.data(), step.data() + step.size(), index);
    if (ec != std::errc() || end != step.data() + step.size()) {
      if (why != nullptr) {
        *why = fmt::format("'{}' names a member, but the value there is an array (use an index)", step);
      }
      return std::nullopt;
    }
    (void)in.eat('[');
    for (std::size_t i = 0; in.peek() != ']'; ++i) {
      auto element = in.value();
      if (!element) {
        return std::nullopt;
      }
      if (i == index) {
        return element;
      }
      if (!in.eat(',')) {
        break;
      }
    }
    if (why != nullptr) {
      *why = fmt::format("the array has no element {}", step);
    }
    return std::nullopt;
  }
  if (why != nullptr) {
    *why = fmt::format("'{}' steps into a value that is neither an object nor an array", step);
  }
  return std::nullopt;
}

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

}  // namespace

std::optional<std::string_view> json_member(std::string_view json, std::string_view path, std::string* why) {
  Scanner whole(json);
  auto value = whole.value();
  if (!value) {
    if (why != nullptr) {
      *why = "the text is not JSON";
    }
    return std::nullopt;
  }
  std::string_view rest = path;
  while (!rest.empty()) {
    const std::size_t dot = rest.find('.');
    const std::string_view step = rest.substr(0, dot);
    std::string reason;
    value = step_into(*value, step, &reason);
    if (!value) {
      if (why != nullptr) {
        const std::string_view walked = path.substr(0, static_cast<std::size_t>(step.data() - path.data()));
        *why = fmt::format(
            "{}{}", reason.empty() ? "the text is not JSON" : reason,
            walked.empty() ? std::string() : fmt::format(" after '{}'", walked.substr(0, walked.size() - 1)));
      }
      return std::nullopt;
    }
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  return value;
}

std::optional<std::string> json_string(std::string_view quoted) {
  if (quoted.size() < 2 || quoted.front() != '"' || quoted.back() != '"') {
    return std::nullopt;
  }
  std::string out;
  for (std::size_t i = 1; i + 1 < quoted.size(); ++i) {
    const char c = quoted[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i + 1 > quoted.size() - 1) {
      return std::nullopt;
    }
    switch (quoted[i]) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        std::uint32_t code = 0;
        if (i + 4 >= quoted.size() ||
            std::from_chars(quoted.data() + i + 1, quoted.data() + i + 5, code, 16).ptr != quoted.data() + i + 5) {
          return std::nullopt;
        }
        append_utf8(out, code);
        i += 4;
        break;
      }
      default: out += quoted[i]; break;  // \" \\ \/
    }
  }
  return out;
}

}  // namespace axon::tools
