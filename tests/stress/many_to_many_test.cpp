// 4 publisher processes x 4 subscriber processes, 1,000,000 messages: with
// queues that hold publishers back when full, nothing is lost or duplicated
// and every publisher's order is kept.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;

std::uint64_t total_messages() {
  // AXON_STRESS_MESSAGES lets a developer run a shorter or longer storm.
  const char* text = std::getenv("AXON_STRESS_MESSAGES");  // NOLINT(concurrency-mt-unsafe): before any thread
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 1'000'000;
}

TEST(Stress, FourPublishersToFourSubscribersLoseNothing) {
  constexpr int kPublishers = 4;
  constexpr int kSubscribers = 4;
  const std::uint64_t per_publisher = total_messages() / kPublishers;
  const std::uint32_t domain = test::unique_domain();
  auto args = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv{test::peer_path(), extra[0], "domain=" + std::to_string(domain), "topic=storm"};
    argv.insert(argv.end(), extra.begin() + 1, extra.end());
    return argv;
  };
  std::vector<ChildProcess> subscribers;
  subscribers.reserve(kSubscribers);
  for (int s = 0; s < kSubscribers; ++s) {
    subscribers.push_back(
        ChildProcess::spawn(args({"subscribe", "expect=" + std::to_string(per_publisher * kPublishers), "depth=256",
                                  "block=1", "timeout_ms=1500000"})));
  }
  for (auto& s : subscribers) {
    ASSERT_TRUE(s.wait_for_line("READY", 30s));
  }
  std::vector<ChildProcess> publishers;
  publishers.reserve(kPublishers);
  for (int p = 0; p < kPublishers; ++p) {
    publishers.push_back(ChildProcess::spawn(args({"publish", "count=" + std::to_string(per_publisher),
                                                   "id=" + std::to_string(p + 1), "wait_subs=4", "linger_ms=2000"})));
  }
  for (auto& p : publishers) {
    EXPECT_EQ(p.wait(1500s), 0) << p.output();
    EXPECT_NE(p.output().find("dropped=0"), std::string::npos) << p.output();
  }
  const std::string expected =
      "RESULT received=" + std::to_string(per_publisher * kPublishers) + " publishers=4 errors=0";
  for (auto& s : subscribers) {
    EXPECT_EQ(s.wait(1500s), 0) << s.output();
    EXPECT_NE(s.output().find(expected), std::string::npos) << s.output();
  }
  EXPECT_TRUE(test::domain_files(domain).empty());
}

}  // namespace
}  // namespace axon
