// The request and reply of the service tests and their server process.
#pragma once

#include <cstdint>

namespace axon::test {

/// A request: who sends it (a client number of the test), its number, and
/// how long the handler should take.
struct ModeRequest {
  static constexpr std::uint32_t kStuck = 0xFFFFFFFF;  ///< delay_ms: the handler never returns.
  std::uint32_t client = 0;
  std::uint32_t seq = 0;
  std::uint32_t delay_ms = 0;
  std::uint32_t mode = 0;
};

/// The reply: the request's client and number echoed, and the server's pid.
struct ModeReply {
  std::uint32_t client = 0;
  std::uint32_t seq = 0;
  std::int32_t server_pid = 0;
  std::uint32_t mode_squared = 0;
};

}  // namespace axon::test
