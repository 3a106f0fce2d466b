// The network checks: socket buffer limits for the UDP transport, RDMA devices and what they may pin.
#include <fmt/format.h>

#include <charconv>
#include <string>
#include <vector>

#include "axon/deployment_config.hpp"
#include "src/tools/axon/doctor/check.hpp"

namespace axon::tools::doctor {
namespace {

constexpr std::string_view kRdmaDir = "/sys/class/infiniband";

std::optional<std::uint64_t> read_number(const HostView& host, std::string_view path) {
  const auto text = host.read_trimmed(path);
  std::uint64_t value = 0;
  if (!text || std::from_chars(text->data(), text->data() + text->size(), value).ec != std::errc() ||
      text->find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return value;
}

struct RdmaPort {
  std::string device;
  std::string port;
  std::string state;       ///< "ACTIVE", "DOWN" ... (the text after "4: ")
  std::string link_layer;  ///< "InfiniBand" or "Ethernet" (RoCE)
};

std::vector<RdmaPort> rdma_ports(const HostView& host) {
  std::vector<RdmaPort> ports;
  for (const auto& device : host.list(kRdmaDir)) {
    const std::string dir = fmt::format("{}/{}/ports", kRdmaDir, device);
    for (const auto& port : host.list(dir)) {
      std::string state = host.read_trimmed(fmt::format("{}/{}/state", dir, port)).value_or("?");
      if (const auto colon = state.find(": "); colon != std::string::npos) {
        state = state.substr(colon + 2);
      }
      ports.push_back({.device = device,
                       .port = port,
                       .state = std::move(state),
                       .link_layer = host.read_trimmed(fmt::format("{}/{}/link_layer", dir, port)).value_or("?")});
    }
  }
  return ports;
}

}  // namespace

CheckResult check_socket_buffers(const HostView& host) {
  const auto rmem = read_number(host, "/proc/sys/net/core/rmem_max");
  const auto wmem = read_number(host, "/proc/sys/net/core/wmem_max");
  if (!rmem || !wmem) {
    return skip("net.core.rmem_max or wmem_max is not readable here");
  }
  const UdpConfig defaults;
  const std::uint64_t want_receive = defaults.receive_buffer_bytes;
  const std::uint64_t want_send = defaults.send_buffer_bytes;
  std::string found = fmt::format(
      "net.core.rmem_max {}, wmem_max {}; the UDP transport asks for {} to receive and {} to send (udp: "
      "receive_buffer_bytes, send_buffer_bytes)",
      format_bytes(*rmem), format_bytes(*wmem), format_bytes(want_receive), format_bytes(want_send));
  if (*rmem >= want_receive && *wmem >= want_send) {
    return pass(std::move(found));
  }
  if (host.facts().cap_net_admin) {
    return pass(found + ": below, but CAP_NET_ADMIN lets the transport force its sizes (SO_RCVBUFFORCE)");
  }
  const std::uint64_t receive = std::max(*rmem, want_receive);
  const std::uint64_t send = std::max(*wmem, want_send);
  return warn(found +
                  ": the kernel silently caps a socket's buffer at the limit, and a burst that does not fit is "
                  "dropped and, for RELIABLE topics, resent late",
              fmt::format("sudo sysctl -w net.core.rmem_max={0} net.core.wmem_max={1}; for good: the lines "
                          "net.core.rmem_max = {0} and net.core.wmem_max = {1} in /etc/sysctl.d/90-axon.conf",
                          receive, send));
}

CheckResult check_rdma_devices(const HostView& host) {
  const auto ports = rdma_ports(host);
  if (ports.empty()) {
    return skip(fmt::format("no RDMA device ({}): only topics with transport: rdma need one", kRdmaDir));
  }
  std::string found;
  bool active = false;
  for (const auto& port : ports) {
    found += fmt::format("{}{} port {} {} ({})", found.empty() ? "" : ", ", port.device, port.port, port.state,
                         port.link_layer);
    active = active || port.state == "ACTIVE";
  }
  if (active) {
    return pass(std::move(found));
  }
  return warn(found + ": no port is ACTIVE, so RDMA connections cannot be made",
              "ibv_devinfo and rdma link show each port's state; bring up the device's network interface (ip link "
              "set <netdev> up, RoCE) or its link (cable, switch, subnet manager for InfiniBand)");
}

CheckResult check_rdma_memlock(const HostView& host) {
  if (rdma_ports(host).empty()) {
    return skip("no RDMA device");
  }
  const ProcessFacts& facts = host.facts();
  const std::uint64_t pool = default_pool_bytes();
  const std::string limits = memlock_limits(facts);
  if (facts.cap_ipc_lock) {
    return pass(fmt::format(
        "CAP_IPC_LOCK, so the limit ({}) does not apply: any pool may be registered with the device", limits));
  }
  if (may_lock(facts, pool)) {
    return pass(fmt::format("{}: room to register the default pool ({}) with the device", limits, format_bytes(pool)));
  }
  return fail(fmt::format("{}, no CAP_IPC_LOCK: a node whose host names an rdma_device pins its whole pool at "
                          "start-up (the default pool: {}) and does not start",
                          limits, format_bytes(pool)),
              memlock_fix());
}

}  // namespace axon::tools::doctor
