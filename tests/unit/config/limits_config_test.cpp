// The deployment file's `limits:` (the domain's registry tables): read with
// defaults for the keys left out, and each mistake refused naming the key
// and its range; NodeOptions::domain_limits takes it when the code left it unset.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "axon/deployment_config.hpp"
#include "src/config/node_deployment.hpp"

namespace axon {
namespace {

TEST(LimitsConfig, ReadsTheKeysGivenAndDefaultsTheOthers) {
  auto sut = parse_deployment_config("limits:\n  nodes: 200\n  topics: 2000\n", "limits.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_TRUE(sut->limits.has_value());
  EXPECT_EQ(*sut->limits, (DomainLimits{.nodes = 200, .topics = 2000, .publishers = 4096, .subscribers = 4096}));
  EXPECT_EQ(sut->limits->publishers_per_topic, 64U);
}

TEST(LimitsConfig, ReadsPublishersPerTopic) {
  auto sut = parse_deployment_config("limits:\n  publishers_per_topic: 80\n", "links.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_TRUE(sut->limits.has_value());
  EXPECT_EQ(*sut->limits, (DomainLimits{.publishers_per_topic = 80}));
}

TEST(LimitsConfig, AFileWithoutLimitsLeavesThemUnset) {
  auto sut = parse_deployment_config("domain: 3\n", "none.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_FALSE(sut->limits.has_value());
}

TEST(LimitsConfig, AcceptsEachLimitAtItsMaximum) {
  auto sut = parse_deployment_config(
      "limits: {nodes: 4096, topics: 65536, publishers: 65536, subscribers: 65536, publishers_per_topic: 1024}\n",
      "max.yaml");

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  EXPECT_EQ(
      *sut->limits,
      (DomainLimits{
          .nodes = 4096, .topics = 65536, .publishers = 65536, .subscribers = 65536, .publishers_per_topic = 1024}));
}

struct Case {
  const char* text;
  const char* where;
  const char* expected;
};

class LimitsConfigErrors : public ::testing::TestWithParam<Case> {};

TEST_P(LimitsConfigErrors, NameTheKeyAndItsRange) {
  auto sut = parse_deployment_config(GetParam().text, "bad.yaml");

  ASSERT_FALSE(sut.ok()) << "accepted: " << GetParam().text;
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(sut.error().message());
  EXPECT_EQ(message.rfind(GetParam().where, 0), 0U) << message;
  EXPECT_NE(message.find(GetParam().expected), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    EachMistake, LimitsConfigErrors,
    ::testing::Values(
        Case{"limits:\n  nodes: 0\n", "bad.yaml:2:", "limits.nodes must be a whole number from 1 to 4096, found 0"},
        Case{"limits:\n  topics: 70000\n",
             "bad.yaml:2:", "limits.topics must be a whole number from 1 to 65536, found 70000"},
        Case{"limits:\n  publishers: 1.5\n", "bad.yaml:2:", "limits.publishers must be a whole number from 1 to 65536"},
        Case{"limits:\n  subscribers: many\n", "bad.yaml:2:", "limits.subscribers"},
        Case{"limits:\n  publishers_per_topic: 0\n",
             "bad.yaml:2:", "limits.publishers_per_topic must be a whole number from 1 to 1024, found 0"},
        Case{"limits:\n  publishers_per_topic: 1025\n",
             "bad.yaml:2:", "limits.publishers_per_topic must be a whole number from 1 to 1024, found 1025"},
        Case{"limits:\n  node: 8\n", "bad.yaml:2:", "node"},
        Case{"limits: 8\n", "bad.yaml:1:", "limits must be a mapping"}));

TEST(LimitsConfig, NodeOptionsTakeTheFilesLimitsWhenTheCodeLeftThemUnset) {
  const std::string path = ::testing::TempDir() + "axon_limits_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << "limits:\n  topics: 100\n";
  NodeOptions unset;
  unset.config_path = path;
  NodeOptions set;
  set.config_path = path;
  set.domain_limits = DomainLimits{.topics = 7};

  auto from_file = detail::apply_deployment("node", unset);
  auto from_code = detail::apply_deployment("node", set);

  std::remove(path.c_str());
  ASSERT_TRUE(from_file.ok() && from_code.ok());
  ASSERT_TRUE(unset.domain_limits.has_value());
  EXPECT_EQ(unset.domain_limits->topics, 100U);
  EXPECT_EQ(set.domain_limits->topics, 7U);
}

}  // namespace
}  // namespace axon
