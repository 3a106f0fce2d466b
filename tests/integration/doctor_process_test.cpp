// The installed-to-be axon binary on this machine: `axon doctor --json` prints one document with every check
// and a valid status, its exit status follows the FAIL count, and the command line behaves (help, unknown
// command). Verdicts depend on the machine, so none is asserted.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "src/tools/axon/doctor/check.hpp"
#include "tests/support/common/run_command.hpp"

namespace axon::tools {
namespace {

const std::string kAxon = AXON_CLI;

TEST(AxonDoctorProcess, PrintsOneJsonDocumentWithEveryCheck) {
  const test::CommandOutput run = test::run_command({kAxon, "doctor", "--json"});
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << ": " << run.output;

  YAML::Node doc;
  ASSERT_NO_THROW(doc = YAML::Load(run.output)) << run.output;
  ASSERT_TRUE(doc.IsMap()) << run.output;
  ASSERT_TRUE(doc["checks"].IsSequence()) << run.output;
  const auto names = doctor::check_names();
  ASSERT_EQ(doc["checks"].size(), names.size()) << run.output;
  const std::set<std::string> statuses = {"pass", "warn", "fail", "skip"};
  std::size_t passed = 0;
  std::size_t warnings = 0;
  std::size_t failed = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const YAML::Node check = doc["checks"][i];
    ASSERT_TRUE(check.IsMap());
    EXPECT_EQ(check["name"].as<std::string>(), names[i]);
    const auto status = check["status"].as<std::string>();
    EXPECT_TRUE(statuses.contains(status)) << status;
    EXPECT_FALSE(check["found"].as<std::string>().empty()) << names[i];
    ASSERT_TRUE(check["fix"].IsScalar()) << names[i];
    EXPECT_EQ(check["fix"].as<std::string>().empty(), status == "pass" || status == "skip") << names[i];
    passed += status == "pass" ? 1 : 0;
    warnings += status == "warn" ? 1 : 0;
    failed += status == "fail" ? 1 : 0;
  }
  EXPECT_EQ(doc["passed"].as<std::size_t>(), passed);
  EXPECT_EQ(doc["warnings"].as<std::size_t>(), warnings);
  EXPECT_EQ(doc["failed"].as<std::size_t>(), failed);
  EXPECT_EQ(run.exit_code, failed > 0 ? 1 : 0);
}

TEST(AxonDoctorProcess, TakesGlobalOptionsBeforeOrAfterTheCommand) {
  const test::CommandOutput before = test::run_command({kAxon, "--domain", "3", "--json", "doctor"});
  const test::CommandOutput after = test::run_command({kAxon, "doctor", "--json", "--domain", "3"});

  EXPECT_TRUE(YAML::Load(before.output)["checks"].IsSequence()) << before.output;
  EXPECT_TRUE(YAML::Load(after.output)["checks"].IsSequence()) << after.output;
}

TEST(AxonDoctorProcess, PrintsTheTableWithoutJson) {
  const test::CommandOutput run = test::run_command({kAxon, "doctor"});

  EXPECT_EQ(run.output.rfind("STATUS  CHECK", 0), 0U) << run.output;
  EXPECT_NE(run.output.find(" checks: "), std::string::npos) << run.output;
}

TEST(AxonCommandLine, HelpExitsZeroAndListsDoctor) {
  const test::CommandOutput top = test::run_command({kAxon, "--help"});
  const test::CommandOutput doctor = test::run_command({kAxon, "doctor", "--help"});

  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.output.find("doctor"), std::string::npos) << top.output;
  EXPECT_NE(top.output.find("--domain"), std::string::npos) << top.output;
  EXPECT_EQ(doctor.exit_code, 0);
  EXPECT_NE(doctor.output.find("Exit status: 0 when no check fails"), std::string::npos) << doctor.output;
}

TEST(AxonCommandLine, UnknownCommandsAndMissingOnesExitTwo) {
  const test::CommandOutput unknown = test::run_command({kAxon, "frobnicate"});
  const test::CommandOutput none = test::run_command({kAxon});

  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("frobnicate"), std::string::npos) << unknown.output;
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.output.find("name a command"), std::string::npos) << none.output;
}

}  // namespace
}  // namespace axon::tools
