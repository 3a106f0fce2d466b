// One JSON document built call by call, for the `--json` output of every axon command. Strings are escaped
// here and nowhere else, so no command writes JSON by hand.
//
// Thread safety: none (one writer per document). Allocates.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace axon::tools {

/// `text` as a JSON string, quotes included: `"` and `\` escaped, control characters as \n, \t, \r, \b, \f or
/// \u00XX; other bytes pass through unchanged (UTF-8 stays UTF-8).
[[nodiscard]] std::string json_quote(std::string_view text);

/// Writes compact JSON (no spaces, no newline). Keys and values must nest as JSON says: a value inside an
/// object needs its key() first; a mistake trips an assert.
class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  /// The key of the next value; only directly inside an object.
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  template <std::integral T>
  requires(!std::same_as<T, bool>) JsonWriter& value(T number) {
    if constexpr (std::signed_integral<T>) {
      return signed_value(number);
    } else {
      return unsigned_value(number);
    }
  }
  /// A finite number in its shortest exact form; NaN and infinities (which JSON cannot hold) as null.
  JsonWriter& value(double number);
  /// A float in its shortest form as a float (0.1F prints 0.1, not the double 0.10000000149011612).
  JsonWriter& value(float number);
  JsonWriter& null_value();
  /// A value that is JSON already (what FlatBuffers' and Protobuf's printers wrote for a message), as is:
  /// the caller vouches that it is one complete JSON value.
  JsonWriter& json_value(std::string_view json);
  /// key(name) then value(v).
  template <class T>
  JsonWriter& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  /// The document so far; complete once every object and array is closed.
  [[nodiscard]] const std::string& text() const noexcept { return out_; }
  /// Every object and array opened has been closed, and something was written.
  [[nodiscard]] bool complete() const noexcept { return open_.empty() && !out_.empty(); }

 private:
  JsonWriter& signed_value(std::int64_t number);
  JsonWriter& unsigned_value(std::uint64_t number);
  void before_value();
  /// Opens an object ('{') or an array ('['), as a value of what encloses it.
  void open(char bracket);
  void close(char kind, char bracket);

  std::string out_;
  std::vector<char> open_;  // '{' or '[' per level
  bool first_in_level_ = true;
  bool after_key_ = false;
};

}  // namespace axon::tools
