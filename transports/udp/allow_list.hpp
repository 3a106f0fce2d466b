// The source addresses a participant accepts datagrams from (the config's
// `udp: security: allow:`): IPv4 networks in CIDR notation or single addresses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "axon/result.hpp"

namespace axon::udp {

/// An IPv4 network: the addresses whose first `prefix_bits` bits are `network`'s (host order).
struct AddressRange {
  std::uint32_t network = 0;
  std::uint8_t prefix_bits = 32;
  friend bool operator==(const AddressRange&, const AddressRange&) = default;

  [[nodiscard]] bool contains(std::uint32_t ipv4) const noexcept {
    const std::uint32_t mask = prefix_bits == 0 ? 0U : ~std::uint32_t{0} << (32U - prefix_bits);
    return (ipv4 & mask) == (network & mask);
  }
};

/// "10.0.0.0/24" or "192.168.1.7" (a /32); kInvalidArgument otherwise (the
/// message says what is wrong; bits set past the prefix are refused, as they
/// usually mean a mistyped prefix).
[[nodiscard]] Result<AddressRange> parse_address_range(const std::string& text);

/// Empty: every source is allowed.
class AllowList {
 public:
  AllowList() = default;
  explicit AllowList(std::vector<AddressRange> ranges) : ranges_(std::move(ranges)) {}

  [[nodiscard]] bool empty() const noexcept { return ranges_.empty(); }
  /// Whether datagrams from `ipv4` (host order) are accepted. Does not allocate.
  [[nodiscard]] bool allows(std::uint32_t ipv4) const noexcept {
    if (ranges_.empty()) {
      return true;
    }
    for (const AddressRange& range : ranges_) {
      if (range.contains(ipv4)) {
        return true;
      }
    }
    return false;
  }

 private:
  std::vector<AddressRange> ranges_;
};

}  // namespace axon::udp
