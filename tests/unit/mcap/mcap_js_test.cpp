// axon's MCAP writer and reader against the MCAP project's own TypeScript library (tests/mcap_js/check.js,
// installed by scripts/install-deps.sh): the library reads every kind of file axon writes, and axon reads a
// file the library wrote, both described as the same JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <tuple>

#include "tests/support/shell_run.hpp"
#include "tests/unit/mcap/mcap_test_files.hpp"

namespace axon::mcap::test {
namespace {

using axon::test::ShellRun;

// Runs check.js with node; stderr goes to the test's output.
ShellRun run_check(const std::string& mode, const std::string& file) {
  ShellRun run =
      axon::test::run_shell(std::string(AXON_NODE) + " " + AXON_MCAP_JS_DIR + "/check.js " + mode + " " + file);
  if (!run.out.empty() && run.out.back() == '\n') {
    run.out.pop_back();
  }
  return run;
}

class McapLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(std::string(AXON_MCAP_JS_DIR) + "/node_modules/@mcap/core"))
        << "the MCAP TypeScript library is not installed: run scripts/install-deps.sh (npm ci in tests/mcap_js)";
  }
  TempDir dir_;
};

class McapLibraryReads : public McapLibrary, public ::testing::WithParamInterface<std::tuple<Compression, bool>> {};

TEST_P(McapLibraryReads, EveryMessageSchemaAndChannelAxonWrote) {
  const auto [compression, summary] = GetParam();
  const std::string path = dir_.file("axon.mcap");
  const Recording written = write_recording(
      path, {.compression = compression, .chunk_bytes = 64 * 1024, .summary = summary, .library = "axon test"}, 600);
  ASSERT_GT(written.compressions.size(), 3U) << "the test wants several chunks";

  const ShellRun run = run_check("read", path);

  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(run.out, describe(written, "true"));
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, McapLibraryReads,
                         ::testing::Combine(::testing::ValuesIn(kAllCompressions), ::testing::Bool()),
                         [](const auto& info) {
                           return compression_test_name(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_with_summary" : "_without_summary");
                         });

TEST_F(McapLibrary, AxonReadsWhatTheReferenceWriterWrote) {
  const std::string path = dir_.file("reference.mcap");
  const ShellRun run = run_check("write", path);
  ASSERT_EQ(run.status, 0) << run.out;
  ASSERT_NE(run.out.find("\"counts\":[[0,100],[1,100],[2,100]]"), std::string::npos) << run.out;

  auto read = read_recording(path);

  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_TRUE(read->summary);
  EXPECT_EQ(read->messages.size(), 300U);
  EXPECT_EQ(describe(*read, "true"), run.out);
}

TEST_F(McapLibrary, AxonScansTheReferenceFileWithoutItsSummaryToo) {
  const std::string path = dir_.file("reference.mcap");
  const ShellRun run = run_check("write", path);
  ASSERT_EQ(run.status, 0) << run.out;

  auto read = read_recording(path, {.use_summary = false});

  ASSERT_TRUE(read.ok()) << read.error().message();
  read->summary = true;  // the JSON describes the file, which has one
  EXPECT_EQ(describe(*read, "true"), run.out);
}

}  // namespace
}  // namespace axon::mcap::test
