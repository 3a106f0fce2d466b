#include "src/tools/axon/doctor/cpu_list.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace axon::tools::doctor {
namespace {

TEST(CpuList, ParsesRangesAndSinglesSortedWithoutDuplicates) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5,1-2,2"), (std::vector<unsigned>{1, 2, 5}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<unsigned>{});
}

TEST(CpuList, RefusesWhatIsNotACpuList) {
  for (const char* bad : {"a", "3-1", "1-", "-2", "1,,2", "1 2", "99999999"}) {
    EXPECT_FALSE(parse_cpu_list(bad).has_value()) << bad;
  }
}

TEST(CpuList, WritesRunsAsRangesAsTheKernelDoes) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({1}), "1");
  EXPECT_EQ(format_cpu_list({}), "");
}

}  // namespace
}  // namespace axon::tools::doctor
