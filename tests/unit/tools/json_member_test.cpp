#include "src/tools/axon/topic/json_member.hpp"

#include <gtest/gtest.h>

#include <string>

namespace axon::tools {
namespace {

constexpr const char* kDocument =
    R"({"header": {"sequence": "1000", "frame_id": 7}, "component": "lidar \"front\"", "objects": [{"id": 1},)"
    R"( {"id": 2, "tags": []}], "empty": {}, "ok": true, "none": null})";

TEST(JsonMember, FindsNestedMembersAndArrayElementsAsTheirText) {
  EXPECT_EQ(json_member(kDocument, "header.frame_id"), "7");
  EXPECT_EQ(json_member(kDocument, "header.sequence"), "\"1000\"");
  EXPECT_EQ(json_member(kDocument, "objects.1.id"), "2");
  EXPECT_EQ(json_member(kDocument, "objects.1"), R"({"id": 2, "tags": []})");
  EXPECT_EQ(json_member(kDocument, "empty"), "{}");
  EXPECT_EQ(json_member(kDocument, "ok"), "true");
  EXPECT_EQ(json_member(kDocument, "none"), "null");
  EXPECT_EQ(json_member(" [1, 2] ", ""), "[1, 2]");
}

TEST(JsonMember, SaysWhatIsMissing) {
  std::string why;
  EXPECT_FALSE(json_member(kDocument, "header.nope", &why));
  EXPECT_EQ(why, "no member 'nope' after 'header'");
  EXPECT_FALSE(json_member(kDocument, "objects.5", &why));
  EXPECT_EQ(why, "the array has no element 5 after 'objects'");
  EXPECT_FALSE(json_member(kDocument, "objects.id", &why));
  EXPECT_NE(why.find("is an array"), std::string::npos) << why;
  EXPECT_FALSE(json_member(kDocument, "ok.deeper", &why));
  EXPECT_NE(why.find("neither an object nor an array"), std::string::npos) << why;
  EXPECT_FALSE(json_member(R"({"a": )", "a", &why));
  EXPECT_EQ(why, "the text is not JSON");
}

TEST(JsonString, ResolvesEscapes) {
  EXPECT_EQ(json_string(*json_member(kDocument, "component")), "lidar \"front\"");
  EXPECT_EQ(json_string(R"("a\nb\u00b5")"), "a\nb\xc2\xb5");
  EXPECT_FALSE(json_string("7"));
}

}  // namespace
}  // namespace axon::tools
