// The 64-bit wr_id of every work request the data plane posts, so that a
// completion (which carries only the wr_id when it failed) says what it was:
//
//   [kind : 8][tag : 16][sequence : 40]
//
// kind: a receive (tag = its control ring slot), a control SEND (tag = its
// send slot) or a write (tag = the caller's, e.g. its in-flight table
// index). sequence: for send-queue work, the send queue budget's count of
// work requests posted up to and including this one (mod 2^40): a
// completion retires every work request up to it (RC completes a send
// queue in order), signalled or not (send_queue_budget.hpp).
//
// Thread safety: pure functions. No allocation (data path).
#pragma once

#include <cstdint>
#include <optional>

namespace axon::rdma {

enum class WorkKind : std::uint8_t {
  kReceive = 1,      ///< A posted receive (control ring slot).
  kControlSend = 2,  ///< A control message SEND (send slot).
  kWrite = 3,        ///< The last work request of a write (chain).
};

inline constexpr std::uint32_t kWorkSequenceBits = 40;
inline constexpr std::uint64_t kWorkSequenceMask = (std::uint64_t{1} << kWorkSequenceBits) - 1;

struct WorkRequestId {
  WorkKind kind = WorkKind::kReceive;
  std::uint16_t tag = 0;
  std::uint64_t sequence = 0;  ///< Below 2^40.
  friend constexpr bool operator==(const WorkRequestId&, const WorkRequestId&) = default;
};

[[nodiscard]] constexpr std::uint64_t encode_work_request_id(const WorkRequestId& id) noexcept {
  return std::uint64_t{static_cast<std::uint8_t>(id.kind)} << 56U | std::uint64_t{id.tag} << kWorkSequenceBits |
         (id.sequence & kWorkSequenceMask);
}

/// What `wr_id` says; nullopt for a kind this code never posts.
[[nodiscard]] constexpr std::optional<WorkRequestId> decode_work_request_id(std::uint64_t wr_id) noexcept {
  const auto kind = static_cast<std::uint8_t>(wr_id >> 56U);
  if (kind < static_cast<std::uint8_t>(WorkKind::kReceive) || kind > static_cast<std::uint8_t>(WorkKind::kWrite)) {
    return std::nullopt;
  }
  return WorkRequestId{.kind = static_cast<WorkKind>(kind),
                       .tag = static_cast<std::uint16_t>(wr_id >> kWorkSequenceBits),
                       .sequence = wr_id & kWorkSequenceMask};
}

}  // namespace axon::rdma
