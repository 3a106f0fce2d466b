// The chaos fault schedule of a scenario file: what it reads, the errors that
// name the key that is wrong, and the random faults drawn from a seed.
#include "bench/axon_bench/chaos/fault_schedule.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/common/temp_dir.hpp"

namespace axon_bench {
namespace {

constexpr const char* kScenario = R"(name: t
duration_s: 10
topics:
  - {name: a, payload: 64, rate_hz: 100, reliable: true}
  - {name: b, payload: 2 KiB, rate_hz: 20}
components:
  - {name: p, publishes: [a, b]}
  - {name: q, subscribes: [a, b]}
)";

class FaultSchedule : public ::testing::Test {
 protected:
  /// The scenario above with `faults` appended; loads both.
  FaultPlan load(const std::string& faults) {
    path_ = dir_.write("s.yaml", std::string(kScenario) + faults);
    scenario_ = load_scenario(path_);
    return load_fault_plan(path_, scenario_);
  }

  /// The message of the ScenarioError that loading `faults` throws ("" when none).
  std::string error_of(const std::string& faults) {
    try {
      (void)load(faults);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  }

  axon::test::TempDir dir_{"axon-chaos"};
  std::string path_;
  Scenario scenario_;
};

TEST_F(FaultSchedule, ReadsEveryKindWithItsFields) {
  const FaultPlan sut = load(R"(faults:
  - {at_s: 1, kind: kill, component: q, restart_after_s: 0.5}
  - {at_s: 2, kind: stop, component: p, for_s: 1}
  - {at_s: 3, kind: burst, topic: b, factor: 4, for_s: 2}
  - {at_s: 4, kind: cpu_hog, for_s: 1}
  - {at_s: 5, kind: memory_pressure, for_s: 1, fill_percent: 30}
  - {at_s: 6, kind: shm_full, for_s: 1, leave_mib: 512}
)");

  ASSERT_EQ(sut.fixed.size(), 6U);
  EXPECT_EQ(sut.fixed[0].kind, FaultKind::kKill);
  EXPECT_EQ(sut.fixed[0].component, 1);
  EXPECT_DOUBLE_EQ(sut.fixed[0].for_s, 0.5);
  EXPECT_EQ(sut.fixed[1].kind, FaultKind::kStop);
  EXPECT_EQ(sut.fixed[1].component, 0);
  EXPECT_EQ(sut.fixed[2].topic, 1);
  EXPECT_DOUBLE_EQ(sut.fixed[2].factor, 4);
  EXPECT_EQ(sut.fixed[3].kind, FaultKind::kCpuHog);
  EXPECT_DOUBLE_EQ(sut.fixed[4].fill_percent, 30);
  EXPECT_EQ(sut.fixed[5].leave_mib, 512U);
  EXPECT_FALSE(sut.random.has_value());
  EXPECT_TRUE(scenario_.topics[0].reliable);
  EXPECT_FALSE(scenario_.topics[1].reliable);
}

TEST_F(FaultSchedule, EachEntryPrintsAsTheYamlThatGivesItAgain) {
  const FaultPlan first = load("faults:\n  - {at_s: 3, kind: burst, topic: b, factor: 4, for_s: 2}\n");
  const std::string line = first.fixed[0].yaml(scenario_);

  const FaultPlan again = load("faults:\n  - " + line + "\n");

  EXPECT_EQ(line, "{at_s: 3, kind: burst, topic: b, factor: 4, for_s: 2}");
  EXPECT_EQ(again.fixed[0].yaml(scenario_), line);
}

TEST_F(FaultSchedule, ErrorsNameTheFileLineAndKey) {
  EXPECT_NE(error_of("faults:\n  - {at_s: 1, kind: explode}\n").find(":10:"), std::string::npos);
  EXPECT_NE(error_of("faults:\n  - {at_s: 1, kind: explode}\n").find("faults #1 kind"), std::string::npos);
  EXPECT_NE(error_of("faults:\n  - {at_s: 1, kind: kill, component: q}\n").find("restart_after_s"), std::string::npos);
  EXPECT_NE(error_of("faults:\n  - {at_s: 1, kind: kill, component: nobody, restart_after_s: 1}\n")
                .find("component: no component 'nobody'"),
            std::string::npos);
  EXPECT_NE(error_of("faults:\n  - {at_s: 1, kind: stop, component: q, for_s: 1, factor: 2}\n").find("factor"),
            std::string::npos);
  EXPECT_NE(error_of("faults:\n  - {at_s: 1, kind: burst, topic: nowhere, for_s: 1}\n").find("topic: no topic"),
            std::string::npos);
  EXPECT_NE(error_of("faults:\n  - {at_s: -1, kind: cpu_hog, for_s: 1}\n").find("at_s"), std::string::npos);
  EXPECT_NE(error_of("faults: {at_s: 1}\n").find("faults must be a list"), std::string::npos);
  EXPECT_NE(error_of("random: {count: 2}\n").find("seed"), std::string::npos);
  EXPECT_NE(error_of("random: {seed: 1, kinds: [kill, nap]}\n").find("random kinds entry"), std::string::npos);
}

TEST_F(FaultSchedule, RefusesMemoryPressureThatCouldExhaustTheMachine) {
  const std::string error = error_of("faults:\n  - {at_s: 1, kind: memory_pressure, for_s: 1, fill_percent: 95}\n");

  EXPECT_NE(error.find("fill_percent is 95"), std::string::npos) << error;
  EXPECT_NE(error.find("at most 80"), std::string::npos) << error;
}

TEST_F(FaultSchedule, RefusesTwoFaultsOnOneComponentAtOnce) {
  const std::string error = error_of(R"(faults:
  - {at_s: 1, kind: stop, component: q, for_s: 2}
  - {at_s: 2, kind: kill, component: q, restart_after_s: 1}
)");

  EXPECT_NE(error.find("faults #2 overlaps faults #1 on component 'q'"), std::string::npos) << error;
}

TEST_F(FaultSchedule, RefusesFaultsThatDoNotEndBeforeTheWindow) {
  const FaultPlan plan = load("faults:\n  - {at_s: 8, kind: cpu_hog, for_s: 1.5}\n");

  EXPECT_EQ(check_schedule_fits(plan.fixed, 10, 0.5), "");
  EXPECT_NE(check_schedule_fits(plan.fixed, 10, 1.0).find("ends at 9.5 s"), std::string::npos);
}

TEST_F(FaultSchedule, TheSameSeedDrawsTheSameFaults) {
  const FaultPlan plan = load("random: {seed: 42, count: 6, kinds: [kill, stop, burst, cpu_hog]}\n");
  ASSERT_TRUE(plan.random.has_value());

  const auto first = schedule_of(plan, scenario_, 30);
  const auto second = schedule_of(plan, scenario_, 30);
  RandomFaults other = *plan.random;
  other.seed = 43;
  const auto third = draw_random_faults(other, scenario_, 30);

  ASSERT_FALSE(first.empty());
  ASSERT_EQ(first.size(), second.size());
  std::string a;
  std::string b;
  std::string c;
  for (std::size_t i = 0; i < first.size(); ++i) {
    a += first[i].yaml(scenario_) + "\n";
    b += second[i].yaml(scenario_) + "\n";
  }
  for (const Fault& f : third) {
    c += f.yaml(scenario_) + "\n";
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (const Fault& f : first) {
    EXPECT_GE(f.at_s, 3.0);
    EXPECT_LE(f.end_s(), 30.0 - 1.0) << f.yaml(scenario_);
  }
}

TEST_F(FaultSchedule, DrawnFaultsNeverOverlapOnOneComponent) {
  const FaultPlan plan = load("random: {seed: 7, count: 40, kinds: [kill, stop]}\n");

  const auto sut = schedule_of(plan, scenario_, 20);

  for (std::size_t i = 0; i < sut.size(); ++i) {
    for (std::size_t k = i + 1; k < sut.size(); ++k) {
      const bool overlap =
          sut[i].component == sut[k].component && sut[i].at_s < sut[k].end_s() && sut[k].at_s < sut[i].end_s();
      EXPECT_FALSE(overlap) << sut[i].yaml(scenario_) << " and " << sut[k].yaml(scenario_);
    }
  }
}

}  // namespace
}  // namespace axon_bench
