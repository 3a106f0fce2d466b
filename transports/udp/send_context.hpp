// What every sender of a UDP participant shares: the socket, the participant's
// id on the wire and its counters.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transports/udp/udp_counters.hpp"
#include "transports/udp/udp_socket.hpp"

namespace axon::udp {

struct SendContext {
  UdpSocket* socket = nullptr;
  std::uint64_t sender_id = 0;
  NetworkCounterCells* counters = nullptr;
  bool checksum = false;
  std::uint32_t fragment_bytes = 0;
  std::uint32_t max_message_bytes = 0;
  /// RELIABLE: bytes of messages a reader has not acknowledged that may be on
  /// their way to it (flow control, UdpWriter); 0: only the history limits.
  std::size_t window_bytes = 0;
};

}  // namespace axon::udp
