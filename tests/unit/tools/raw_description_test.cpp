// Raw struct field descriptions (axon/raw_fields.hpp): what axon::RawFields<T> encodes, how the tools read it back
// (every part another process wrote is checked: a damaged description is refused and says what is wrong), and
// how `axon topic echo` prints a described struct's messages.
#include "src/tools/axon/topic/raw_description.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "axon/serializer.hpp"
#include "src/tools/axon/topic/json_member.hpp"
#include "src/tools/axon/topic/message_printer.hpp"
#include "tests/support/topic_messages.hpp"

namespace axon::tools {
namespace {

namespace raw = detail::raw_fields;
namespace topics = test::topics;
using topics::Odometry;
using topics::Vec3;

static_assert(detail::DescribesSchema<Odometry>, "a described raw struct stores a schema");
static_assert(!detail::DescribesSchema<topics::Pose>, "an undescribed one does not");
static_assert(raw::struct_count<Odometry>() == 3, "Odometry, and Vec3 once per field that holds it");

std::string text_of(const Result<std::string>& json) {
  return json ? *json : "<error " + std::string(json.error().message()) + ">";
}

std::string member(const std::string& json, const char* path) {
  auto found = json_member(json, path);
  return found ? std::string(*found) : "<missing " + std::string(path) + " in " + json + ">";
}

std::span<const std::byte> bytes_of(const Odometry& odometry) { return std::as_bytes(std::span(&odometry, 1)); }

TopicRecord odometry_record() {
  return TopicRecord{.name = "t", .type = type_identity_of<Odometry>(), .schema = detail::schema_of<Odometry>()};
}

/// Odometry's description as RawFields<Odometry> builds it, to break on purpose.
std::vector<raw::StructDescription> odometry_structs() {
  std::vector<raw::StructDescription> structs;
  (void)raw::describe_struct<Odometry>(structs);
  return structs;
}

TEST(RawFieldsSchema, DescribesEachFieldWithItsOffsetKindAndCount) {
  auto sut = decode_raw_description(raw_fields_schema<Odometry>());

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_EQ(sut->structs.size(), 3U);
  const raw::StructDescription& root = sut->structs[0];
  EXPECT_EQ(root.type_name, "axon.test.Odometry");
  EXPECT_EQ(root.size_bytes, sizeof(Odometry));
  ASSERT_EQ(root.fields.size(), 9U);
  const auto expect_field = [&](std::size_t i, const char* name, raw::Kind kind, bool array, std::size_t offset,
                                std::uint32_t count) {
    const raw::FieldDescription& f = root.fields[i];
    EXPECT_EQ(f.name, name);
    EXPECT_EQ(f.kind, kind) << name;
    EXPECT_EQ(f.array, array) << name;
    EXPECT_EQ(f.offset, offset) << name;
    EXPECT_EQ(f.count, count) << name;
  };
  expect_field(0, "sequence", raw::Kind::kUint64, false, offsetof(Odometry, sequence), 1);
  expect_field(1, "stamp_ns", raw::Kind::kInt64, false, offsetof(Odometry, stamp_ns), 1);
  expect_field(2, "position", raw::Kind::kStruct, false, offsetof(Odometry, position), 1);
  expect_field(3, "velocities", raw::Kind::kStruct, true, offsetof(Odometry, velocities), 2);
  expect_field(4, "frame_id", raw::Kind::kChar, true, offsetof(Odometry, frame_id), 12);
  expect_field(5, "wheel_ticks", raw::Kind::kInt16, true, offsetof(Odometry, wheel_ticks), 4);
  expect_field(6, "mode", raw::Kind::kUint8, false, offsetof(Odometry, mode), 1);  // an enum: its underlying type
  expect_field(7, "moving", raw::Kind::kBool, false, offsetof(Odometry, moving), 1);
  expect_field(8, "battery_v", raw::Kind::kFloat64, false, offsetof(Odometry, battery_v), 1);
  const raw::StructDescription& position = sut->structs[root.fields[2].struct_index];
  EXPECT_EQ(position.type_name, message_type_name<Vec3>());
  EXPECT_EQ(position.size_bytes, sizeof(Vec3));
  ASSERT_EQ(position.fields.size(), 3U);
  EXPECT_EQ(position.fields[2].name, "z");
  EXPECT_EQ(position.fields[2].kind, raw::Kind::kFloat32);
  EXPECT_EQ(position.fields[2].offset, offsetof(Vec3, z));
}

TEST(RawFieldsSchema, HasTheSizeCheckedAtCompileTime) {
  EXPECT_EQ(raw_fields_schema<Odometry>().size(), raw::kMagic.size() + 2 + raw::encoded_struct_bytes<Odometry>());
}

TEST(RawDescriptionPrinter, PrintsEveryDescribedFieldWithItsValue) {
  const Odometry odometry = topics::odometry_for(1234);
  const MessagePrinter sut(odometry_record());

  auto json = sut.to_json(bytes_of(odometry));

  ASSERT_TRUE(json.ok()) << json.error().message();
  EXPECT_EQ(sut.hex_reason(), "");
  EXPECT_EQ(member(*json, "sequence"), "1234");
  EXPECT_EQ(member(*json, "stamp_ns"), std::to_string(topics::stamp_for(1234)));
  EXPECT_EQ(member(*json, "position"), R"({"x":1.5,"y":-2.25,"z":0.1})");  // floats in their shortest form
  EXPECT_EQ(member(*json, "velocities.1.z"), "4");
  EXPECT_EQ(member(*json, "velocities.0.x"), "0.5");
  EXPECT_EQ(member(*json, "frame_id"), "\"base_link\"");
  EXPECT_EQ(member(*json, "wheel_ticks"), "[-3,0,7,32000]");
  EXPECT_EQ(member(*json, "mode"), "2");
  EXPECT_EQ(member(*json, "moving"), "true");
  EXPECT_EQ(member(*json, "battery_v"), "24.75");
  EXPECT_EQ(json->find("reserved"), std::string::npos) << "an undescribed member is not printed: " << *json;
}

TEST(RawDescriptionPrinter, PrintsAStringWithoutNulWhollyAndBytesThatAreNotUtf8AsReplacements) {
  Odometry odometry = topics::odometry_for(1);
  std::memcpy(odometry.frame_id, "abcdefghij\xff\xc3", 12);  // no NUL; a stray byte and a cut-off sequence
  const MessagePrinter sut(odometry_record());

  const std::string json = text_of(sut.to_json(bytes_of(odometry)));

  EXPECT_EQ(member(json, "frame_id"), "\"abcdefghij\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST(RawDescriptionPrinter, RefusesAMessageOfAnotherSize) {
  const Odometry odometry = topics::odometry_for(1);
  const MessagePrinter sut(odometry_record());

  auto json = sut.to_json(bytes_of(odometry).first(sizeof(Odometry) - 1));

  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.error().code(), ErrorCode::kMalformed);
}

TEST(RawDescriptionPrinter, PrintsHexAndSaysWhyWhenTheDescriptionIsOfAnotherType) {
  TopicRecord record = odometry_record();
  record.type.size = 96;  // the topic's type grew; the stored description is the old one

  const MessagePrinter sut(record);

  EXPECT_NE(sut.hex_reason().find("is of 'axon.test.Odometry' (88 bytes), not of the topic's type"), std::string::npos)
      << sut.hex_reason();
}

TEST(RawDescriptionPrinter, PrintsHexAndSaysWhyWhenTheDescriptionIsDamaged) {
  TopicRecord record = odometry_record();
  record.schema.resize(record.schema.size() - 3);

  const MessagePrinter sut(record);

  EXPECT_NE(sut.hex_reason().find("raw field description is damaged: it ends early"), std::string::npos)
      << sut.hex_reason();
  const Odometry odometry = topics::odometry_for(1);
  EXPECT_EQ(member(text_of(sut.to_json(bytes_of(odometry))), "hex"), "\"" + to_hex(bytes_of(odometry)) + "\"");
}

/// One way to break a description, and the words the refusal must contain.
struct Damage {
  const char* what;
  std::function<void(std::vector<raw::StructDescription>&)> edit;
  const char* says;
};

class RawDescriptionDecoder : public ::testing::TestWithParam<Damage> {};

TEST_P(RawDescriptionDecoder, RefusesADamagedDescriptionAndSaysWhatIsWrong) {
  std::vector<raw::StructDescription> structs = odometry_structs();
  GetParam().edit(structs);

  auto sut = decode_raw_description(raw::encode(structs));

  ASSERT_FALSE(sut.ok()) << GetParam().what;
  EXPECT_EQ(sut.error().code(), ErrorCode::kMalformed);
  EXPECT_NE(sut.error().message().find(GetParam().says), std::string::npos)
      << GetParam().what << ": " << sut.error().message();
  EXPECT_NE(sut.error().message().find("its raw field description is damaged"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Damages, RawDescriptionDecoder,
    ::testing::Values(
        Damage{"a field past its struct's end", [](auto& s) { s[0].fields[8].offset = 84; },
               "field 'battery_v' of 'axon.test.Odometry' ends at byte 92, past the struct's 88 bytes"},
        Damage{"an array longer than its struct", [](auto& s) { s[0].fields[5].count = 100; },
               "field 'wheel_ticks' of 'axon.test.Odometry' ends at byte 264"},
        Damage{"a nested struct larger than its field's room", [](auto& s) { s[1].size_bytes = 4096; },
               "field 'position' of 'axon.test.Odometry' ends at byte"},
        Damage{"a huge offset", [](auto& s) { s[0].fields[0].offset = 0xFFFFFFFF; }, "ends at byte 4294967303"},
        Damage{"an unknown kind", [](auto& s) { s[0].fields[0].kind = static_cast<raw::Kind>(99); },
               "field 'sequence' of 'axon.test.Odometry' has the unknown kind 99"},
        Damage{"a nested struct that points back (a cycle)", [](auto& s) { s[1].fields[0] = s[0].fields[2]; },
               "names struct 1 of 3"},
        Damage{"a nested struct index out of range", [](auto& s) { s[0].fields[2].struct_index = 3; },
               "names struct 3 of 3"},
        Damage{"a struct index on a scalar", [](auto& s) { s[0].fields[0].struct_index = 1; }, "names struct 1"},
        Damage{"two fields of one name", [](auto& s) { s[0].fields[1].name = "sequence"; },
               "two fields named 'sequence'"},
        Damage{"a name that is no identifier", [](auto& s) { s[0].fields[1].name = "a.b"; },
               "has the name 'a.b', which is not an identifier"},
        Damage{"several elements without the array flag", [](auto& s) { s[0].fields[5].array = false; },
               "has 4 elements (not an array"},
        Damage{"an array of no element", [](auto& s) { s[0].fields[5].count = 0; }, "has 0 elements"},
        Damage{"no struct", [](auto& s) { s.clear(); }, "it holds 0 structs"},
        Damage{"too many structs", [](auto& s) { s.resize(raw::kMaxStructs + 1, s[1]); }, "it holds 65 structs"},
        Damage{"a struct without fields", [](auto& s) { s[2].fields.clear(); }, "has 0 fields"},
        Damage{"a struct of no bytes", [](auto& s) { s[2].size_bytes = 0; }, "has a size of 0 bytes"},
        Damage{"a struct without a name", [](auto& s) { s[2].type_name.clear(); }, "has a type name of 0 bytes"},
        Damage{"overlapping fields that would print without end",
               [](auto& s) {
                 // Each level's 200 fields all cover the next level whole: 200^4 values from 8 bytes.
                 s.resize(4);
                 for (std::size_t level = 0; level < 3; ++level) {
                   s[level].size_bytes = 8;
                   s[level].fields.clear();
                   for (int f = 0; f < 200; ++f) {
                     s[level].fields.push_back({.name = "f" + std::to_string(f),
                                                .kind = raw::Kind::kStruct,
                                                .array = false,
                                                .offset = 0,
                                                .count = 1,
                                                .struct_index = static_cast<std::uint16_t>(level + 1)});
                   }
                 }
                 s[3].type_name = "Leaf";
                 s[3].size_bytes = 8;
                 s[3].fields.assign(200, raw::FieldDescription{.name = "v", .kind = raw::Kind::kUint8});
                 for (int f = 0; f < 200; ++f) {
                   s[3].fields[f].name = "v" + std::to_string(f);
                 }
               },
               "a message would print more than 4194304 values"}),
    [](const ::testing::TestParamInfo<Damage>& info) { return "Case" + std::to_string(info.index); });

TEST(RawDescriptionDecoder, RefusesBytesThatAreNotADescription) {
  const std::vector<std::byte> valid = raw_fields_schema<Odometry>();
  const auto refusal = [](std::vector<std::byte> bytes) {
    auto decoded = decode_raw_description(bytes);
    return decoded ? std::string("<accepted>") : std::string(decoded.error().message());
  };

  std::vector<std::byte> magic = valid;
  magic[0] = std::byte{'X'};
  EXPECT_NE(refusal(magic).find("does not start with the format's magic"), std::string::npos) << refusal(magic);
  EXPECT_NE(refusal({}).find("does not start with the format's magic"), std::string::npos);

  std::vector<std::byte> trailing = valid;
  trailing.push_back(std::byte{0});
  EXPECT_NE(refusal(trailing).find("1 bytes follow its last struct"), std::string::npos) << refusal(trailing);

  std::vector<std::byte> flags = valid;
  // The first field's flags byte: magic, struct count, size, name length, name, field count, name length, name,
  // kind.
  const std::size_t first_flags =
      8 + 2 + 4 + 2 + std::strlen("axon.test.Odometry") + 2 + 1 + std::strlen("sequence") + 1;
  ASSERT_EQ(flags[first_flags], std::byte{0});
  flags[first_flags] = std::byte{0x80};
  EXPECT_NE(refusal(flags).find("field 'sequence' of 'axon.test.Odometry' has unknown flags 0x80"), std::string::npos)
      << refusal(flags);

  for (std::size_t cut = 0; cut < valid.size(); ++cut) {  // every truncation is refused, none reads past the end
    const std::vector<std::byte> truncated(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_FALSE(decode_raw_description(truncated).ok()) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace axon::tools
