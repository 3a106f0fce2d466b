// The schema a topic carries (docs/design/schemas.md): stored by its first endpoint (publisher or typed
// subscriber) that has one, in a file of the shm directory that readers check, bounded, and gone with the topic.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "axon/serializers/flatbuffers.hpp"
#include "axon/serializers/protobuf.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/support/topic_messages.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/shm/topic_schema_file.hpp"

namespace axon::shm {
namespace {

std::vector<std::byte> pattern(std::size_t bytes) {
  std::vector<std::byte> out(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    out[i] = static_cast<std::byte>(i * 7 + 3);
  }
  return out;
}

TopicDescriptor described(const std::string& name, std::vector<std::byte> schema) {
  return TopicDescriptor{.name = name,
                         .type = TypeIdentity{.name = "test.Typed", .hash = 42, .serializer = "protobuf"},
                         .max_payload_bytes = 0,
                         .allow_compatible_evolution = false,
                         .schema = std::move(schema)};
}

/// The schema files in `dir`.
std::vector<std::string> schema_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".schema") {
      files.push_back(entry.path().string());
    }
  }
  return files;
}

class TopicSchema : public ::testing::Test {
 protected:
  std::shared_ptr<ShmTransport> join(const std::string& name) {
    auto created = ShmTransport::create(
        ShmConfig{.domain_id = 5, .node_name = name, .shm_dir = dir.path(), .chunk_classes = {{256, 8}}});
    EXPECT_TRUE(created.ok()) << created.error().message();
    return created ? *created : nullptr;
  }

  test::TempDir dir{"axon-schema"};
};

TEST_F(TopicSchema, PublisherStoresItAndAnotherProcessReadsItBack) {
  auto publisher_node = join("writer");
  auto reader_node = join("reader");
  const std::vector<std::byte> schema = pattern(5000);
  auto port = publisher_node->advertise(described("stored", schema), PublisherQos{});
  ASSERT_TRUE(port.ok()) << port.error().message();

  auto sut = reader_node->find_topic("stored");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->schema, schema);
  EXPECT_EQ(sut->schema_problem, "");
  EXPECT_EQ(sut->type.name, "test.Typed");
  EXPECT_EQ(sut->type.hash, 42U);
  EXPECT_EQ(sut->type.serializer, "protobuf");
}

TEST_F(TopicSchema, FirstPublisherWithOneWinsAndLaterOnesKeepIt) {
  auto node = join("writer");
  auto none = node->advertise(described("first", {}), PublisherQos{});
  auto first = node->advertise(described("first", pattern(10)), PublisherQos{});
  auto second = node->advertise(described("first", pattern(20)), PublisherQos{});
  ASSERT_TRUE(none.ok() && first.ok() && second.ok());

  auto sut = node->find_topic("first");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->schema, pattern(10));
}

TEST_F(TopicSchema, SubscriberStoresItWhenNoPublisherDidAndAPublisherKeepsIt) {
  auto subscriber_node = join("reader");
  auto sub = subscriber_node->subscribe(described("from_subscriber", pattern(300)), SubscriberQos{});
  ASSERT_TRUE(sub.ok()) << sub.error().message();
  auto publisher_node = join("writer");
  auto pub = publisher_node->advertise(described("from_subscriber", pattern(400)), PublisherQos{});
  ASSERT_TRUE(pub.ok()) << pub.error().message();

  auto sut = publisher_node->find_topic("from_subscriber");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->schema, pattern(300));  // the first endpoint's, written once
  EXPECT_EQ(schema_files(dir.path()).size(), 1U);
}

TEST_F(TopicSchema, SubscriberPastTheBoundIsRefused) {
  auto node = join("reader");

  auto sut = node->subscribe(described("sub_past_bound", pattern(kMaxSchemaBytes + 1)), SubscriberQos{});

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(node->find_topic("sub_past_bound").error().code(), ErrorCode::kNotFound);
}

TEST_F(TopicSchema, RawTypeKeepsItsNameSizeAndVersion) {
  auto node = join("writer");
  auto port =
      node->advertise(TopicDescriptor{.name = "raw", .type = raw_type_identity<test::topics::Pose>()}, PublisherQos{});
  ASSERT_TRUE(port.ok()) << port.error().message();

  auto sut = node->find_topic("raw");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->type.name, "axon.test.Pose");
  EXPECT_EQ(sut->type.size, 32U);
  EXPECT_EQ(sut->type.version, 3U);
  EXPECT_TRUE(sut->schema.empty());
  EXPECT_EQ(sut->schema_problem, "");
  EXPECT_TRUE(schema_files(dir.path()).empty());
}

TEST_F(TopicSchema, PastTheBoundIsRefusedNamingTopicSizeAndBound) {
  auto node = join("writer");
  EXPECT_TRUE(node->advertise(described("at_bound", pattern(kMaxSchemaBytes)), PublisherQos{}).ok());

  auto sut = node->advertise(described("past_bound", pattern(kMaxSchemaBytes + 1)), PublisherQos{});

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("topic 'past_bound'"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(kMaxSchemaBytes + 1) + " bytes"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(kMaxSchemaBytes)), std::string::npos) << message;
  EXPECT_EQ(node->find_topic("past_bound").error().code(), ErrorCode::kNotFound);  // refused before it was made
}

TEST_F(TopicSchema, UnknownTopicIsNotFound) {
  auto node = join("reader");
  auto sut = node->find_topic("nobody_has_it");
  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(sut.error().message().find("'nobody_has_it' does not exist"), std::string::npos);
}

TEST_F(TopicSchema, DamagedFileIsRefusedByTheReader) {
  auto node = join("writer");
  auto port = node->advertise(described("damaged", pattern(300)), PublisherQos{});
  ASSERT_TRUE(port.ok());
  const auto files = schema_files(dir.path());
  ASSERT_EQ(files.size(), 1U);
  // One byte of the schema flipped: the hash no longer matches.
  const int fd = ::open(files[0].c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const char flipped = 0x55;
  ASSERT_EQ(::pwrite(fd, &flipped, 1, sizeof(SchemaFileHeader) + 100), 1);
  ::close(fd);

  auto sut = node->find_topic("damaged");

  ASSERT_TRUE(sut.ok()) << sut.error().message();  // the topic is still there, without its schema
  EXPECT_TRUE(sut->schema.empty());
  EXPECT_NE(sut->schema_problem.find(files[0]), std::string::npos) << sut->schema_problem;
  EXPECT_NE(sut->schema_problem.find("hash"), std::string::npos) << sut->schema_problem;
}

TEST_F(TopicSchema, FileGoesWithTheTopic) {
  auto node = join("writer");
  {
    auto port = node->advertise(described("short_lived", pattern(64)), PublisherQos{});
    ASSERT_TRUE(port.ok());
    EXPECT_EQ(schema_files(dir.path()).size(), 1U);
  }
  EXPECT_TRUE(schema_files(dir.path()).empty());
  EXPECT_EQ(node->find_topic("short_lived").error().code(), ErrorCode::kNotFound);
}

class SchemaFile : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(write_schema_file(path, schema, 9, 0600, "").ok()); }
  void overwrite(off_t offset, const void* bytes, std::size_t size) const {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, bytes, size, offset), static_cast<ssize_t>(size));
    ::close(fd);
  }
  [[nodiscard]] std::string problem() const {
    auto read = read_schema_file(path, static_cast<std::uint32_t>(schema.size()), schema_hash(schema), 9);
    EXPECT_FALSE(read.ok());
    return read.ok() ? std::string() : std::string(read.error().message());
  }

  test::TempDir dir{"axon-schema-file"};
  std::string path = schema_file_path(dir.path(), 1, 2, 9);
  std::vector<std::byte> schema = pattern(1000);
};

TEST_F(SchemaFile, ReadsBackWhatWasWritten) {
  auto sut = read_schema_file(path, 1000, schema_hash(schema), 9);
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(*sut, schema);
}

TEST_F(SchemaFile, RefusesAnotherMagic) {
  const std::uint64_t magic = 0x1234;
  overwrite(0, &magic, sizeof(magic));
  EXPECT_NE(problem().find("magic"), std::string::npos);
}

TEST_F(SchemaFile, RefusesALengthOtherThanTheRegistrysOrTheFiles) {
  const std::uint32_t bytes = 999;
  overwrite(offsetof(SchemaFileHeader, schema_bytes), &bytes, sizeof(bytes));
  EXPECT_NE(problem().find("says 999 schema bytes"), std::string::npos) << problem();
}

TEST_F(SchemaFile, RefusesATruncatedFile) {
  ASSERT_EQ(::truncate(path.c_str(), 500), 0);
  EXPECT_NE(problem().find("has 500"), std::string::npos) << problem();
  ASSERT_EQ(::truncate(path.c_str(), 3), 0);
  EXPECT_NE(problem().find("fewer than its header"), std::string::npos) << problem();
}

TEST_F(SchemaFile, RefusesAnotherGeneration) {
  auto sut = read_schema_file(path, 1000, schema_hash(schema), 10);
  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("generation 9"), std::string::npos);
}

TEST_F(SchemaFile, RefusesAMissingFile) {
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_NE(problem().find("is missing"), std::string::npos);
}

}  // namespace
}  // namespace axon::shm
