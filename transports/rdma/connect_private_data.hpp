// The private data of the rdma_cm connection between two participants
// (docs/design/rdma-transport.md, "Connection set-up"): what each side tells
// the other once, in the CM REQ (at most 56 bytes) and the CM REP (at most
// 196), and the reason byte of a rejection (rdma_reject's private data).
//
// Layout (little-endian, kConnectPrivateDataBytes = 56, fills the REQ):
//
//   offset  0  u16  protocol version (kConnectProtocolVersion)
//   offset  2  u16  reserved, 0
//   offset  4  u32  rkey of the pool region
//   offset  8  u64  sender id (UDP discovery's id of the participant)
//   offset 16  u64  incarnation
//   offset 24  u64  pool layout ABI hash
//   offset 32  u64  base address of the pool region
//   offset 40  u64  length of the pool region in bytes
//   offset 48  u32  receive queue depth
//   offset 52  u32  largest message of the sender's port (max_msg_sz)
//
// The CM pads what it delivers to the full REQ/REP size, so a decoder takes
// at least 56 bytes and ignores the rest. The receiver needs the sender's
// max_msg_sz: a message above it arrives as a chain of writes whose receive
// completion reports only the last part (write_chain.hpp). Rejection (kRejectBytes = 8):
// "AXRJ" (4 bytes), u16 version, u8 reason, u8 0.
//
// Thread safety: pure functions. The decoders read bytes another host sent:
// every field is checked before it becomes a size or an address.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "axon/result.hpp"

namespace axon::rdma {

inline constexpr std::uint16_t kConnectProtocolVersion = 2;
inline constexpr std::size_t kConnectPrivateDataBytes = 56;
inline constexpr std::size_t kCmReqPrivateDataMax = 56;
inline constexpr std::size_t kCmRepPrivateDataMax = 196;
static_assert(kConnectPrivateDataBytes <= kCmReqPrivateDataMax, "the private data fits the CM REQ");
/// The deepest receive queue a peer may announce (rxe's max_qp_wr is 1 << 20;
/// the transport posts far fewer: grants plus the control ring).
inline constexpr std::uint32_t kMaxReceiveDepth = 1U << 16;
/// The largest max_msg_sz a peer may announce: InfiniBand's largest message
/// (2^31 bytes; mlx5 reports 1 GiB, rxe 8 MiB).
inline constexpr std::uint32_t kMaxPortMessageBytes = 1U << 31;

struct ConnectPrivateData {
  std::uint16_t version = kConnectProtocolVersion;
  std::uint64_t sender_id = 0;
  std::uint64_t incarnation = 0;
  std::uint64_t abi_hash = 0;
  std::uint32_t rkey = 0;
  std::uint64_t base = 0;
  std::uint64_t length = 0;
  std::uint32_t receive_depth = 0;
  std::uint32_t max_message_bytes = 0;  ///< ibv_port_attr::max_msg_sz of the sender's port.

  friend bool operator==(const ConnectPrivateData&, const ConnectPrivateData&) = default;
};

using ConnectPrivateBytes = std::array<std::byte, kConnectPrivateDataBytes>;

[[nodiscard]] ConnectPrivateBytes encode_connect_private_data(const ConnectPrivateData& data) noexcept;

/// The private data a peer sent, checked: at least 56 bytes, our version,
/// a nonzero region that does not wrap past 2^64, a nonzero receive depth of
/// at most kMaxReceiveDepth, a nonzero max_msg_sz of at most
/// kMaxPortMessageBytes. The error (kMalformed, kIncompatible for the
/// version) names the field and its value.
[[nodiscard]] Result<ConnectPrivateData> decode_connect_private_data(std::span<const std::byte> bytes);

/// Why the passive side refused a connect request (the reason byte).
enum class RejectReason : std::uint8_t {
  kMalformedPrivateData = 1,  ///< The REQ's private data did not decode.
  kVersion = 2,               ///< Another protocol version.
  kAbiHash = 3,               ///< Another pool layout (ABI hash).
  kSenderId = 4,              ///< Not the participant discovery announced.
  kIncarnation = 5,           ///< An older or newer incarnation than announced.
  kNotExpected = 6,           ///< No stream of this side wants that peer.
};

/// "the pool layout ABI hash differs", ... (the reason in words).
[[nodiscard]] std::string_view to_string(RejectReason reason) noexcept;

inline constexpr std::size_t kRejectBytes = 8;
[[nodiscard]] std::array<std::byte, kRejectBytes> encode_reject(RejectReason reason) noexcept;
/// The reason of a rejection axon sent; nullopt when the bytes are not one
/// (the CM's own rejection, e.g. no listener on the port, or a bad byte).
[[nodiscard]] std::optional<RejectReason> decode_reject(std::span<const std::byte> bytes) noexcept;

}  // namespace axon::rdma
