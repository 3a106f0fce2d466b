#include "src/tools/axon/json_writer.hpp"

#include <fmt/format.h>

#include <cassert>
#include <cmath>

namespace axon::tools {

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        // JSON forbids raw control characters (below 0x20) in strings; 0x7f and UTF-8 bytes are allowed.
        if (static_cast<unsigned char>(c) < 0x20U) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void JsonWriter::before_value() {
  if (open_.empty()) {
    assert(out_.empty() && "JsonWriter: one document holds one top-level value");
    return;
  }
  if (open_.back() == '{') {
    assert(after_key_ && "JsonWriter: a value inside an object needs its key() first");
    after_key_ = false;
    return;
  }
  if (!first_in_level_) {
    out_ += ',';
  }
  first_in_level_ = false;
}

void JsonWriter::close(char kind, char bracket) {
  assert(!open_.empty() && open_.back() == kind && !after_key_ && "JsonWriter: end_*() does not match begin_*()");
  (void)kind;
  open_.pop_back();
  out_ += bracket;
  first_in_level_ = false;
}

void JsonWriter::open(char bracket) {
  before_value();
  open_.push_back(bracket);
  out_ += bracket;
  first_in_level_ = true;
}

JsonWriter& JsonWriter::begin_object() {
  open('{');
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  close('{', '}');
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  open('[');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close('[', ']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  assert(!open_.empty() && open_.back() == '{' && !after_key_ && "JsonWriter: key() outside an object");
  if (!first_in_level_) {
    out_ += ',';
  }
  first_in_level_ = false;
  out_ += json_quote(name);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ += json_quote(text);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) {
    return null_value();
  }
  before_value();
  out_ += fmt::format("{}", number);
  return *this;
}

JsonWriter& JsonWriter::value(float number) {
  if (!std::isfinite(number)) {
    return null_value();
  }
  before_value();
  out_ += fmt::format("{}", number);
  return *this;
}

JsonWriter& JsonWriter::json_value(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

JsonWriter& JsonWriter::null_value() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::signed_value(std::int64_t number) {
  before_value();
  out_ += fmt::format("{}", number);
  return *this;
}

JsonWriter& JsonWriter::unsigned_value(std::uint64_t number) {
  before_value();
  out_ += fmt::format("{}", number);
  return *this;
}

}  // namespace axon::tools
