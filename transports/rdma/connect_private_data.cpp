#include "transports/rdma/connect_private_data.hpp"

#include <fmt/format.h>

#include <limits>

#include "transports/rdma/little_endian.hpp"

namespace axon::rdma {
namespace {

using le::load;
using le::store;

constexpr std::array<std::byte, 4> kRejectMagic{std::byte{'A'}, std::byte{'X'}, std::byte{'R'}, std::byte{'J'}};

Error malformed(std::string what) {
  return {ErrorCode::kMalformed, fmt::format("the peer's rdma_cm private data is not valid: {}", what)};
}

}  // namespace

ConnectPrivateBytes encode_connect_private_data(const ConnectPrivateData& data) noexcept {
  ConnectPrivateBytes out{};
  store<std::uint16_t>(out, 0, data.version);
  store<std::uint16_t>(out, 2, 0);
  store<std::uint32_t>(out, 4, data.rkey);
  store<std::uint64_t>(out, 8, data.sender_id);
  store<std::uint64_t>(out, 16, data.incarnation);
  store<std::uint64_t>(out, 24, data.abi_hash);
  store<std::uint64_t>(out, 32, data.base);
  store<std::uint64_t>(out, 40, data.length);
  store<std::uint32_t>(out, 48, data.receive_depth);
  store<std::uint32_t>(out, 52, data.max_message_bytes);
  return out;
}

Result<ConnectPrivateData> decode_connect_private_data(std::span<const std::byte> bytes) {
  if (bytes.size() < kConnectPrivateDataBytes) {
    return malformed(fmt::format("{} bytes, at least {} expected", bytes.size(), kConnectPrivateDataBytes));
  }
  ConnectPrivateData d;
  d.version = load<std::uint16_t>(bytes, 0);
  if (d.version != kConnectProtocolVersion) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("the peer speaks RDMA connection protocol version {}, this build version {}: run the "
                             "same axon release on both hosts",
                             d.version, kConnectProtocolVersion));
  }
  d.rkey = load<std::uint32_t>(bytes, 4);
  d.sender_id = load<std::uint64_t>(bytes, 8);
  d.incarnation = load<std::uint64_t>(bytes, 16);
  d.abi_hash = load<std::uint64_t>(bytes, 24);
  d.base = load<std::uint64_t>(bytes, 32);
  d.length = load<std::uint64_t>(bytes, 40);
  d.receive_depth = load<std::uint32_t>(bytes, 48);
  d.max_message_bytes = load<std::uint32_t>(bytes, 52);
  if (d.length == 0) {
    return malformed("the pool region's length is 0");
  }
  if (d.base > std::numeric_limits<std::uint64_t>::max() - d.length) {
    return malformed(
        fmt::format("the pool region at {:#x} of {} bytes wraps past the end of the address space", d.base, d.length));
  }
  if (d.receive_depth == 0 || d.receive_depth > kMaxReceiveDepth) {
    return malformed(fmt::format("receive queue depth {}, expected 1..{}", d.receive_depth, kMaxReceiveDepth));
  }
  if (d.max_message_bytes == 0 || d.max_message_bytes > kMaxPortMessageBytes) {
    return malformed(fmt::format("largest message of the port (max_msg_sz) {} bytes, expected 1..{}",
                                 d.max_message_bytes, kMaxPortMessageBytes));
  }
  return d;
}

std::string_view to_string(RejectReason reason) noexcept {
  switch (reason) {
    case RejectReason::kMalformedPrivateData: return "its connect request's private data is not valid";
    case RejectReason::kVersion: return "the RDMA connection protocol version differs";
    case RejectReason::kAbiHash: return "the pool layout ABI hash differs (another axon build or chunk layout)";
    case RejectReason::kSenderId: return "the sender id is not the one discovery announced";
    case RejectReason::kIncarnation: return "the incarnation is not the one discovery announced";
    case RejectReason::kNotExpected: return "it expects no connection from this participant";
  }
  return "an unknown reason";
}

std::array<std::byte, kRejectBytes> encode_reject(RejectReason reason) noexcept {
  std::array<std::byte, kRejectBytes> out{};
  for (std::size_t i = 0; i < kRejectMagic.size(); ++i) {
    out[i] = kRejectMagic[i];
  }
  store<std::uint16_t>(out, 4, kConnectProtocolVersion);
  out[6] = static_cast<std::byte>(reason);
  return out;
}

std::optional<RejectReason> decode_reject(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < kRejectBytes) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < kRejectMagic.size(); ++i) {
    if (bytes[i] != kRejectMagic[i]) {
      return std::nullopt;
    }
  }
  const auto reason = static_cast<std::uint8_t>(bytes[6]);
  if (reason < static_cast<std::uint8_t>(RejectReason::kMalformedPrivateData) ||
      reason > static_cast<std::uint8_t>(RejectReason::kNotExpected)) {
    return std::nullopt;
  }
  return static_cast<RejectReason>(reason);
}

}  // namespace axon::rdma
