// The checklist as a whole: every check runs, in order, and both outputs carry every result and the counts.
#include "src/tools/axon/doctor/doctor_report.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "tests/unit/tools/fake_host.hpp"

namespace axon::tools::doctor {
namespace {

using ::testing::HasSubstr;

TEST(RunChecks, RunsEveryCheckInOrderAndNamesEach) {
  FakeHost host;

  const auto sut = run_checks(host.view());

  const auto names = check_names();
  ASSERT_EQ(sut.size(), names.size());
  ASSERT_EQ(names.size(), 13U);
  for (std::size_t i = 0; i < sut.size(); ++i) {
    EXPECT_EQ(sut[i].name, names[i]);
    EXPECT_FALSE(sut[i].found.empty()) << sut[i].name;
    // A fix exactly when something is to be fixed.
    EXPECT_EQ(sut[i].fix.empty(), sut[i].status == Status::kPass || sut[i].status == Status::kSkip) << sut[i].name;
  }
}

std::vector<CheckResult> sample_results() {
  return {{.name = "shm", .status = Status::kPass, .found = "/dev/shm: tmpfs", .fix = ""},
          {.name = "swap", .status = Status::kWarn, .found = "1 swap area(s)", .fix = "sudo swapoff -a"},
          {.name = "rdma_memlock", .status = Status::kFail, .found = "pins \"all\"", .fix = "ulimit -l unlimited"},
          {.name = "rdma_devices", .status = Status::kSkip, .found = "no RDMA device", .fix = ""}};
}

TEST(DoctorReport, CountsEachStatus) {
  const Summary sut = summarize(sample_results());

  EXPECT_EQ(sut.passed, 1U);
  EXPECT_EQ(sut.warnings, 1U);
  EXPECT_EQ(sut.failed, 1U);
  EXPECT_EQ(sut.skipped, 1U);
}

TEST(DoctorReport, TextIsATableThenTheFixesThenTheCounts) {
  const std::string sut = render_text(sample_results());

  EXPECT_EQ(sut,
            "STATUS  CHECK         FOUND\n"
            "PASS    shm           /dev/shm: tmpfs\n"
            "WARN    swap          1 swap area(s)\n"
            "FAIL    rdma_memlock  pins \"all\"\n"
            "SKIP    rdma_devices  no RDMA device\n"
            "\n"
            "fix swap: sudo swapoff -a\n"
            "fix rdma_memlock: ulimit -l unlimited\n"
            "\n"
            "4 checks: 1 passed, 1 warnings, 1 failed, 1 skipped\n");
}

TEST(DoctorReport, JsonHoldsEveryCheckAndTheCounts) {
  const std::string sut = render_json(sample_results());

  EXPECT_THAT(sut, HasSubstr(R"({"name":"rdma_memlock","status":"fail","found":"pins \"all\"",)"));
  const YAML::Node doc = YAML::Load(sut);
  ASSERT_TRUE(doc["checks"].IsSequence());
  ASSERT_EQ(doc["checks"].size(), 4U);
  EXPECT_EQ(doc["checks"][1]["status"].as<std::string>(), "warn");
  EXPECT_EQ(doc["checks"][1]["fix"].as<std::string>(), "sudo swapoff -a");
  EXPECT_EQ(doc["checks"][2]["found"].as<std::string>(), "pins \"all\"");
  EXPECT_EQ(doc["passed"].as<int>(), 1);
  EXPECT_EQ(doc["warnings"].as<int>(), 1);
  EXPECT_EQ(doc["failed"].as<int>(), 1);
  EXPECT_EQ(doc["skipped"].as<int>(), 1);
}

}  // namespace
}  // namespace axon::tools::doctor
