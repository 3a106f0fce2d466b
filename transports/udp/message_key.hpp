// Which message a fragment belongs to.
#pragma once

#include <cstdint>

namespace axon::udp {

struct MessageKey {
  std::uint64_t sender_id = 0;
  std::uint64_t sequence = 0;
  std::uint32_t writer_id = 0;
  friend bool operator==(const MessageKey&, const MessageKey&) = default;
};

}  // namespace axon::udp
