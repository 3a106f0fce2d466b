#include "src/tools/axon/json_writer.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <string>

namespace axon::tools {
namespace {

TEST(JsonQuote, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(json_quote("C:\\dir"), "\"C:\\\\dir\"");
  EXPECT_EQ(json_quote("a\nb\tc\rd\be\ff"), "\"a\\nb\\tc\\rd\\be\\ff\"");
  EXPECT_EQ(json_quote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(json_quote(std::string("nul\0end", 7)), "\"nul\\u0000end\"");
}

TEST(JsonQuote, PassesUtf8AndDelThrough) { EXPECT_EQ(json_quote("µs \x7f"), "\"µs \x7f\""); }

TEST(JsonWriter, WritesNestedObjectsAndArraysWithCommasInPlace) {
  JsonWriter sut;
  sut.begin_object()
      .member("name", "doctor")
      .key("checks")
      .begin_array()
      .begin_object()
      .member("ok", true)
      .end_object()
      .value(7)
      .begin_array()
      .end_array()
      .null_value()
      .end_array()
      .key("empty")
      .begin_object()
      .end_object()
      .end_object();
  EXPECT_EQ(sut.text(), R"({"name":"doctor","checks":[{"ok":true},7,[],null],"empty":{}})");
  EXPECT_TRUE(sut.complete());
}

TEST(JsonWriter, IsIncompleteUntilEveryLevelIsClosed) {
  JsonWriter sut;
  EXPECT_FALSE(sut.complete());
  sut.begin_object().key("a").begin_array();
  EXPECT_FALSE(sut.complete());
  sut.end_array().end_object();
  EXPECT_TRUE(sut.complete());
}

TEST(JsonWriter, WritesIntegersOfEveryWidthExactly) {
  JsonWriter sut;
  sut.begin_array()
      .value(std::numeric_limits<std::uint64_t>::max())
      .value(std::numeric_limits<std::int64_t>::min())
      .value(std::uint8_t{200})
      .value(-3)
      .end_array();
  EXPECT_EQ(sut.text(), "[18446744073709551615,-9223372036854775808,200,-3]");
}

TEST(JsonWriter, WritesDoublesShortestAndNonFiniteAsNull) {
  JsonWriter sut;
  sut.begin_array()
      .value(0.5)
      .value(2.0)
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(std::numeric_limits<double>::infinity())
      .end_array();
  EXPECT_EQ(sut.text(), "[0.5,2,null,null]");
}

TEST(JsonWriter, EscapesKeysAndStringsSoAParserReadsThemBack) {
  const std::string hostile = "quote \" backslash \\ newline \n tab \t bell \x07 µ";
  JsonWriter sut;
  sut.begin_object().member(hostile, hostile).end_object();

  const YAML::Node parsed = YAML::Load(sut.text());  // JSON is YAML; yaml-cpp reads \uXXXX escapes too

  ASSERT_TRUE(parsed.IsMap());
  ASSERT_TRUE(parsed[hostile].IsScalar());
  EXPECT_EQ(parsed[hostile].as<std::string>(), hostile);
}

}  // namespace
}  // namespace axon::tools
