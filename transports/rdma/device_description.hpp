// What this process can see of its RDMA devices: each device's ports, their
// state and GID tables. Plain values, read once at start (device_list.hpp)
// and judged by choose_device() (device_choice.hpp), so the choice and its
// errors are tested without a device.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace axon::rdma {

/// What the kernel says a GID is for (ibv_gid_entry::gid_type).
enum class GidType : std::uint8_t { kInfiniBand, kRoceV1, kRoceV2 };

/// One valid entry of a port's GID table.
struct GidEntry {
  std::uint32_t index = 0;
  std::array<std::uint8_t, 16> gid{};
  GidType type = GidType::kInfiniBand;
};

/// The states of ibv_port_attr::state, with the values libibverbs gives them.
enum class PortState : std::uint8_t { kNop = 0, kDown = 1, kInit = 2, kArmed = 3, kActive = 4, kActiveDefer = 5 };

/// One port of a device (ports are numbered from 1).
struct PortDescription {
  std::uint32_t number = 1;
  PortState state = PortState::kDown;
  bool ethernet = true;  ///< Link layer Ethernet (RoCE); false: InfiniBand.
  std::string netdev;    ///< The network interface behind it (empty: not known).
  std::vector<GidEntry> gids;
};

struct DeviceDescription {
  std::string name;  ///< ibv_get_device_name(): "rxe0", "mlx5_0".
  std::vector<PortDescription> ports;
};

/// "ACTIVE", "DOWN", ... as ibv_devinfo prints them.
[[nodiscard]] std::string_view to_string(PortState state) noexcept;
/// "RoCE v2", "RoCE v1", "IB".
[[nodiscard]] std::string_view to_string(GidType type) noexcept;
/// The GID as ibv_devinfo prints it: eight groups of four hex digits.
[[nodiscard]] std::string gid_text(const std::array<std::uint8_t, 16>& gid);
/// Whether the GID is an IPv4-mapped address (::ffff:a.b.c.d) ...
[[nodiscard]] bool gid_is_ipv4(const std::array<std::uint8_t, 16>& gid) noexcept;
/// ... and that address in host order.
[[nodiscard]] std::uint32_t gid_ipv4(const std::array<std::uint8_t, 16>& gid) noexcept;

}  // namespace axon::rdma
