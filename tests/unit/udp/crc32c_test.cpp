#include "transports/udp/crc32c.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string_view>
#include <vector>

namespace axon::udp {
namespace {

std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> out;
  for (const char c : text) {
    out.push_back(static_cast<std::byte>(c));
  }
  return out;
}

TEST(Crc32c, MatchesTheStandardCheckValue) {
  const auto input = bytes_of("123456789");
  EXPECT_EQ(crc32c(input), 0xE3069283U);
}

TEST(Crc32c, OfNothingIsZero) { EXPECT_EQ(crc32c({}), 0U); }

TEST(Crc32c, GivesTheSameValueFedInPieces) {
  std::vector<std::byte> input(1000);
  for (std::size_t i = 0; i < input.size(); ++i) {
    input[i] = static_cast<std::byte>(i * 7 + 3);
  }
  const std::span<const std::byte> all(input);
  for (const std::size_t cut : {0UL, 1UL, 7UL, 8UL, 13UL, 500UL, 999UL}) {
    EXPECT_EQ(crc32c(all.subspan(cut), crc32c(all.first(cut))), crc32c(all)) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace axon::udp
