// One row of a table of invalid deployment files, and the check every such
// table makes: the file is refused with kInvalidArgument, and the message
// starts with the place of the mistake and says what is expected.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "axon/deployment_config.hpp"

namespace axon::test {

struct ConfigErrorCase {
  const char* what;      ///< the mistake, as the test's name for the row
  const char* text;      ///< the file, parsed as "bad.yaml"
  const char* where;     ///< "file:line:" or "file:line:column:" the error must start with
  const char* expected;  ///< a piece of the message
};

inline std::ostream& operator<<(std::ostream& out, const ConfigErrorCase& c) { return out << c.what; }

/// Parses `c.text` as "bad.yaml" and expects it refused as `c` says.
inline void expect_refused(const ConfigErrorCase& c) {
  auto sut = parse_deployment_config(c.text, "bad.yaml");

  ASSERT_FALSE(sut.ok()) << "accepted: " << c.text;
  EXPECT_EQ(sut.error().code(), ErrorCode::kInvalidArgument);
  const std::string message(sut.error().message());
  EXPECT_EQ(message.rfind(c.where, 0), 0U) << "message: " << message;
  EXPECT_NE(message.find(c.expected), std::string::npos) << "message: " << message;
}

}  // namespace axon::test
