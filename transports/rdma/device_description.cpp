#include "transports/rdma/device_description.hpp"

#include <fmt/format.h>

namespace axon::rdma {

std::string_view to_string(PortState state) noexcept {
  switch (state) {
    case PortState::kNop: return "NOP";
    case PortState::kDown: return "DOWN";
    case PortState::kInit: return "INIT";
    case PortState::kArmed: return "ARMED";
    case PortState::kActive: return "ACTIVE";
    case PortState::kActiveDefer: return "ACTIVE_DEFER";
  }
  return "UNKNOWN";
}

std::string_view to_string(GidType type) noexcept {
  switch (type) {
    case GidType::kInfiniBand: return "IB";
    case GidType::kRoceV1: return "RoCE v1";
    case GidType::kRoceV2: return "RoCE v2";
  }
  return "unknown";
}

std::string gid_text(const std::array<std::uint8_t, 16>& gid) {
  std::string text;
  for (std::size_t i = 0; i < gid.size(); i += 2) {
    text += fmt::format("{}{:02x}{:02x}", i == 0 ? "" : ":", gid[i], gid[i + 1]);
  }
  return text;
}

bool gid_is_ipv4(const std::array<std::uint8_t, 16>& gid) noexcept {
  for (std::size_t i = 0; i < 10; ++i) {
    if (gid[i] != 0) {
      return false;
    }
  }
  return gid[10] == 0xff && gid[11] == 0xff;
}

std::uint32_t gid_ipv4(const std::array<std::uint8_t, 16>& gid) noexcept {
  return std::uint32_t{gid[12]} << 24 | std::uint32_t{gid[13]} << 16 | std::uint32_t{gid[14]} << 8 | gid[15];
}

}  // namespace axon::rdma
