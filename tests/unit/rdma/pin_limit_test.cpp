// The locked-memory check before the pool is registered for RDMA.
#include "transports/rdma/pin_limit.hpp"

#include <gtest/gtest.h>

#include <string>

namespace axon::rdma {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
// Debian's default: 8 MiB soft and hard.
constexpr PinAllowance kDebianDefault{
    .soft_limit = 8 * kMiB, .hard_limit = 8 * kMiB, .ipc_lock = false, .pinned_bytes = 0};

TEST(RdmaPinLimit, APoolAboveTheLimitNamesTheLimitTheSizeAndTheFix) {
  const auto r = check_pin_allowance(61 * kMiB + 1, kDebianDefault, "the pool of node 'camera'");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kNoSpace);
  const std::string text(r.error().message());
  EXPECT_NE(text.find("cannot register the pool of node 'camera' for RDMA"), std::string::npos) << text;
  EXPECT_NE(text.find("RLIMIT_MEMLOCK, whose soft limit is 8192 KiB (hard limit 8192 KiB)"), std::string::npos) << text;
  EXPECT_NE(text.find("63963137 bytes (62465 KiB) are needed"), std::string::npos) << text;
  EXPECT_NE(text.find("only root can raise it"), std::string::npos) << text;
  EXPECT_NE(text.find("`ulimit -l 62465`"), std::string::npos) << text;
  EXPECT_NE(text.find("CAP_IPC_LOCK"), std::string::npos) << text;
}

TEST(RdmaPinLimit, WhatIsPinnedAlreadyCounts) {
  PinAllowance a = kDebianDefault;
  a.hard_limit = RLIM_INFINITY;
  EXPECT_TRUE(check_pin_allowance(8 * kMiB, a, "x").ok());
  a.pinned_bytes = 1;
  const auto r = check_pin_allowance(8 * kMiB, a, "x");
  ASSERT_FALSE(r.ok());
  const std::string text(r.error().message());
  EXPECT_NE(text.find("1 KiB of them pinned already"), std::string::npos) << text;
  EXPECT_EQ(text.find("only root"), std::string::npos) << text;
}

TEST(RdmaPinLimit, CapIpcLockOrNoLimitLetsAnySizeThrough) {
  PinAllowance cap = kDebianDefault;
  cap.ipc_lock = true;
  EXPECT_TRUE(check_pin_allowance(std::size_t{1} << 40, cap, "x").ok());
  PinAllowance unlimited = kDebianDefault;
  unlimited.soft_limit = RLIM_INFINITY;
  EXPECT_TRUE(check_pin_allowance(std::size_t{1} << 40, unlimited, "x").ok());
}

TEST(RdmaPinLimit, ThisProcessesAllowanceIsReadAndJudged) {
  const PinAllowance now = current_pin_allowance();
  EXPECT_LE(now.soft_limit, now.hard_limit);
  // Nothing is too large for a process with CAP_IPC_LOCK or no limit, and
  // twice the limit always is for one without.
  const bool limited = !now.ipc_lock && now.soft_limit != RLIM_INFINITY;
  EXPECT_EQ(check_can_pin(limited ? 2 * now.soft_limit + kMiB : kMiB, "x").ok(), !limited);
}

}  // namespace
}  // namespace axon::rdma
