// The check of a refusal that names what was wrong: the error's code, and
// each name the message must hold (the types, topic or sizes in question).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "axon/result.hpp"

namespace axon::test {

/// Expects `result` (a Result or PublishResult) refused with `code`, its
/// message naming each of `names`.
template <class Result>
void expect_error_naming(const Result& result, ErrorCode code, std::initializer_list<std::string_view> names) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), code);
  const std::string message(result.error().message());
  for (const std::string_view name : names) {
    EXPECT_NE(message.find(name), std::string::npos) << "no '" << name << "' in: " << message;
  }
}

}  // namespace axon::test
