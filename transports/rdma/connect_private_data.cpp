#include "transports/rdma/connect_private_data.hpp"

#include <fmt/format.h>

#include <limits>

namespace axon::rdma {
namespace {

template <class T>
void put(std::span<std::byte> out, std::size_t offset, T value) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out[offset + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFFU);
  }
}

template <class T>
T get(std::span<const std::byte> in, std::size_t offset) noexcept {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>(value | (static_cast<T>(in[offset + i]) << (8 * i)));
  }
  return value;
}

constexpr std::array<std::byte, 4> kRejectMagic{std::byte{'A'}, std::byte{'X'}, std::byte{'R'}, std::byte{'J'}};

Error malformed(std::string what) {
  return {ErrorCode::kMalformed, fmt::format("the peer's rdma_cm private data is not valid: {}", what)};
}

}  // namespace

ConnectPrivateBytes encode_connect_private_data(const ConnectPrivateData& data) noexcept {
  ConnectPrivateBytes out{};
  put<std::uint16_t>(out, 0, data.version);
  put<std::uint16_t>(out, 2, 0);
  put<std::uint32_t>(out, 4, data.rkey);
  put<std::uint64_t>(out, 8, data.sender_id);
  put<std::uint64_t>(out, 16, data.incarnation);
  put<std::uint64_t>(out, 24, data.abi_hash);
  put<std::uint64_t>(out, 32, data.base);
  put<std::uint64_t>(out, 40, data.length);
  put<std::uint32_t>(out, 48, data.receive_depth);
  return out;
}

Result<ConnectPrivateData> decode_connect_private_data(std::span<const std::byte> bytes) {
  if (bytes.size() < kConnectPrivateDataBytes) {
    return malformed(fmt::format("{} bytes, at least {} expected", bytes.size(), kConnectPrivateDataBytes));
  }
  ConnectPrivateData d;
  d.version = get<std::uint16_t>(bytes, 0);
  if (d.version != kConnectProtocolVersion) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("the peer speaks RDMA connection protocol version {}, this build version {}: run the "
                             "same axon release on both hosts",
                             d.version, kConnectProtocolVersion));
  }
  d.rkey = get<std::uint32_t>(bytes, 4);
  d.sender_id = get<std::uint64_t>(bytes, 8);
  d.incarnation = get<std::uint64_t>(bytes, 16);
  d.abi_hash = get<std::uint64_t>(bytes, 24);
  d.base = get<std::uint64_t>(bytes, 32);
  d.length = get<std::uint64_t>(bytes, 40);
  d.receive_depth = get<std::uint32_t>(bytes, 48);
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
  put<std::uint16_t>(out, 4, kConnectProtocolVersion);
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
