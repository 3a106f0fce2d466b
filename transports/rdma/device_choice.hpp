// Which device, port and GID the RDMA transport uses on this host, from the
// deployment config, and the start-up errors when there is none to use: no
// device, the named one missing (listing those present), its port missing or
// not active, no RoCE v2 GID (or the configured index is not one).
//
// Thread safety: a pure function of its arguments; allocates (start-up only).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "axon/result.hpp"
#include "transports/rdma/device_description.hpp"

namespace axon::rdma {

/// What the config asks for.
struct DeviceRequest {
  std::string host;                        ///< The host's name in the config, for messages.
  std::string device;                      ///< hosts[].rdma_device; empty: the only device present.
  std::uint32_t port = 1;                  ///< rdma.port.
  std::optional<std::uint32_t> gid_index;  ///< rdma.gid_index; unset: auto.
  /// The host's IPv4 address (host order; 0: not IPv4): auto prefers the
  /// RoCE v2 GID that carries it.
  std::uint32_t ipv4 = 0;
};

/// What the transport opens.
struct DeviceChoice {
  std::string device;
  std::uint32_t port = 1;
  GidEntry gid;
};

/// The device, port and GID to use among `present`, or an error (kInvalidArgument
/// when the config names what is not there, kSystem when the machine has no
/// usable device) that says what is wrong and how to fix it.
[[nodiscard]] Result<DeviceChoice> choose_device(std::span<const DeviceDescription> present,
                                                 const DeviceRequest& request);

}  // namespace axon::rdma
