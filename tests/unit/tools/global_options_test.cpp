#include "src/tools/axon/global_options.hpp"

#include <gtest/gtest.h>

namespace axon::tools {
namespace {

TEST(DomainFromEnvironment, UnsetOrEmptyIsDomainZero) {
  EXPECT_EQ(*domain_from_environment(nullptr), 0U);
  EXPECT_EQ(*domain_from_environment(""), 0U);
}

TEST(DomainFromEnvironment, ReadsADecimalDomainUpToTheLargest) {
  EXPECT_EQ(*domain_from_environment("7"), 7U);
  EXPECT_EQ(*domain_from_environment("4294967295"), 4294967295U);
}

TEST(DomainFromEnvironment, RefusesWhatIsNotADomainIdNamingTheValue) {
  for (const char* bad : {"x", "4294967296", "-1", " 3", "3 ", "+3", "1e3", "99999999999999999999999"}) {
    auto sut = domain_from_environment(bad);
    ASSERT_FALSE(sut) << bad;
    EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(sut.error().message().find(std::string("AXON_DOMAIN='") + bad + "'"), std::string_view::npos)
        << sut.error().message();
  }
}

}  // namespace
}  // namespace axon::tools
