#include "transports/udp/allow_list.hpp"

#include <fmt/format.h>

#include <charconv>

#include "transports/udp/udp_socket.hpp"

namespace axon::udp {

Result<AddressRange> parse_address_range(const std::string& text) {
  const std::size_t slash = text.find('/');
  auto address = parse_ipv4(text.substr(0, slash));
  if (!address) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("'{}' is not an IPv4 address or network (such as 10.0.0.0/24 or 192.168.1.7): {}", text,
                             address.error().message()));
  }
  AddressRange range{.network = *address, .prefix_bits = 32};
  if (slash != std::string::npos) {
    const std::string bits = text.substr(slash + 1);
    unsigned value = 0;
    const auto [end, error] = std::from_chars(bits.data(), bits.data() + bits.size(), value);
    if (error != std::errc{} || end != bits.data() + bits.size() || bits.empty() || value > 32) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("'{}': the prefix length after '/' must be a number from 0 to 32", text));
    }
    range.prefix_bits = static_cast<std::uint8_t>(value);
  }
  const std::uint32_t host_bits = range.prefix_bits == 32 ? 0U : ~std::uint32_t{0} >> range.prefix_bits;
  if ((range.network & host_bits) != 0) {
    const std::uint32_t network = range.network & ~host_bits;
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("'{}' has bits set past its /{} prefix; write the network {}.{}.{}.{}/{}, or a /32 for "
                             "one host",
                             text, range.prefix_bits, network >> 24U, (network >> 16U) & 0xFFU, (network >> 8U) & 0xFFU,
                             network & 0xFFU, range.prefix_bits));
  }
  return range;
}

}  // namespace axon::udp
