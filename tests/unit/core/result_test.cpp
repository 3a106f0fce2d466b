#include "axon/result.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace axon {
namespace {

struct Point {
  int x = 0;
};

TEST(Result, HoldsAValue) {
  Result<int> sut(42);
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(*sut, 42);
}

TEST(Result, HoldsAnErrorWithCodeAndMessage) {
  Result<int> sut(Error(ErrorCode::kTimeout, std::string("waited 5 ms")));
  ASSERT_FALSE(sut);
  EXPECT_EQ(sut.error().code(), ErrorCode::kTimeout);
  EXPECT_EQ(sut.error().message(), "waited 5 ms");
  EXPECT_EQ(to_string(sut.error().code()), "timeout");
}

TEST(Result, StaticMessagesNeedNoAllocation) {
  Error sut(ErrorCode::kClosed, "the peer left");
  EXPECT_EQ(sut.message(), "the peer left");
}

TEST(Result, ArrowReachesMembersOfPlainValues) {
  Result<Point> sut(Point{7});
  EXPECT_EQ(sut->x, 7);
}

TEST(Result, ArrowForwardsThroughPointerLikeValues) {
  Result<std::shared_ptr<Point>> sut(std::make_shared<Point>(Point{9}));
  EXPECT_EQ(sut->x, 9);
}

TEST(Result, MovesOwnershipOfItsValue) {
  Result<std::unique_ptr<int>> source(std::make_unique<int>(5));
  Result<std::unique_ptr<int>> sut(std::move(source));
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(**sut, 5);
}

TEST(ResultDeathTest, UsingTheValueOfAFailedResultAbortsWithItsMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<int> sut(Error(ErrorCode::kClosed, "the peer left"));
  EXPECT_DEATH({ [[maybe_unused]] int v = *sut; }, "the peer left");
}

TEST(Result, VoidResultsCarryOnlyAnError) {
  Result<void> ok;
  Result<void> failed(Error(ErrorCode::kSystem, "boom"));
  EXPECT_TRUE(ok.ok());
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message(), "boom");
}

}  // namespace
}  // namespace axon
