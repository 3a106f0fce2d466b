// What every sender of a UDP participant shares: the socket, the participant's
// id on the wire and its counters.
#pragma once

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
};

}  // namespace axon::udp
