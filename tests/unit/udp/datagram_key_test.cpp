// Key files: raw or hex keys read; a file others may read, a missing file, a
// file of the wrong length refused with what to do.
#include "transports/udp/datagram_key.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "tests/support/common/temp_dir.hpp"

namespace axon::udp {
namespace {

std::string key_file(const test::TempDir& dir, const std::string& text, mode_t mode) {
  const std::string path = dir.write("domain.key", text);
  EXPECT_EQ(::chmod(path.c_str(), mode), 0);
  return path;
}

TEST(DatagramKey, ReadsThirtyTwoRawBytes) {
  const test::TempDir dir("axon-key");
  const std::string raw(32, 'k');
  const auto sut = read_key_file(key_file(dir, raw, 0600), "udp security key_file");
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->bytes[0], std::byte{'k'});
  EXPECT_EQ(sut->bytes[31], std::byte{'k'});
}

TEST(DatagramKey, ReadsSixtyFourHexDigitsWithANewlineAndAcceptsMode0400) {
  const test::TempDir dir("axon-key");
  std::string hex;
  for (int i = 0; i < 32; ++i) {
    hex += "a5";
  }
  const auto sut = read_key_file(key_file(dir, hex + "\n", 0400), "udp security key_file");
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(sut->bytes[0], std::byte{0xA5});
  EXPECT_EQ(sut->bytes[31], std::byte{0xA5});
}

TEST(DatagramKey, RefusesAFileGroupOrOthersMayReadWithTheFix) {
  const test::TempDir dir("axon-key");
  const std::string path = key_file(dir, std::string(32, 'k'), 0644);
  const auto sut = read_key_file(path, "udp security key_file");
  ASSERT_FALSE(sut.ok());
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("udp security key_file '" + path + "' has mode 0644"), std::string::npos) << message;
  EXPECT_NE(message.find("chmod 600 " + path), std::string::npos) << message;
}

TEST(DatagramKey, RefusesAFileOnlyTheGroupMayWrite) {
  const test::TempDir dir("axon-key");
  const auto sut = read_key_file(key_file(dir, std::string(32, 'k'), 0620), "udp security key_file");
  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("has mode 0620"), std::string::npos) << sut.error().message();
}

TEST(DatagramKey, RefusesAMissingFileSayingHowToMakeOne) {
  const test::TempDir dir("axon-key");
  const auto sut = read_key_file(dir.path() + "/none.key", "udp security key_file");
  ASSERT_FALSE(sut.ok());
  EXPECT_NE(sut.error().message().find("cannot be opened"), std::string::npos) << sut.error().message();
  EXPECT_NE(sut.error().message().find("head -c 32 /dev/urandom"), std::string::npos) << sut.error().message();
}

TEST(DatagramKey, RefusesAShortOrLongFile) {
  const test::TempDir dir("axon-key");
  const auto short_key = read_key_file(key_file(dir, std::string(16, 'k'), 0600), "udp security key_file");
  ASSERT_FALSE(short_key.ok());
  EXPECT_NE(short_key.error().message().find("holds 16 bytes; a key is 32 random bytes"), std::string::npos)
      << short_key.error().message();
  const auto long_key = read_key_file(key_file(dir, std::string(100, 'k'), 0600), "udp security key_file");
  ASSERT_FALSE(long_key.ok());
  EXPECT_NE(long_key.error().message().find("holds more than"), std::string::npos) << long_key.error().message();
}

TEST(DatagramKey, GivesTheSameIdToTheSameKeyAndUsuallyAnotherToAnother) {
  std::array<std::byte, kKeyBytes> a{};
  std::array<std::byte, kKeyBytes> b{};
  b[0] = std::byte{1};
  EXPECT_EQ(make_datagram_key(a)->id, make_datagram_key(a)->id);
  EXPECT_NE(make_datagram_key(a)->id, make_datagram_key(b)->id);  // SHA-256's first bytes of these differ
}

}  // namespace
}  // namespace axon::udp
