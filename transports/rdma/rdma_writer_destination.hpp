// One destination of an RdmaWriter (a stream on one link) and publish()'s
// plan for it: private to rdma_writer.cpp (the publish path) and
// rdma_writer_streams.cpp (the streams side). Thread safety as in
// rdma_writer.hpp; each field says who touches it.
#pragma once

#include <atomic>
#include <cstdint>

#include "src/base/spin_flag.hpp"
#include "transports/rdma/credit_fifo.hpp"
#include "transports/rdma/link_port.hpp"
#include "transports/rdma/rdma_writer.hpp"

namespace axon::rdma {

struct RdmaWriter::Destination {
  Destination(LinkPort& on, std::uint32_t id, std::uint32_t capacity, std::int64_t answer_due_ns)
      : link(&on), stream_id(id), credits(on.granted_slots(), capacity), answer_deadline_ns(answer_due_ns) {}

  LinkPort* link;
  std::uint32_t stream_id;
  /// Producer: the streams side (on_grant()); consumer: the publisher, or
  /// the streams side once the destination is out of every publish section.
  CreditFifo credits;

  // The receiver's QoS (its OPEN answer): stored by the streams side, loaded
  // by the publisher. The policy is stored with release after the timeout
  // and loaded with acquire, so a publisher that sees kBlock sees its
  // timeout; a publish that sees the older policy behaves as if it ran just
  // before the answer.
  std::atomic<NoCreditPolicy> policy{NoCreditPolicy::kAwaitAnswer};
  std::atomic<std::int64_t> block_timeout_ns{0};  ///< Relaxed: ordered by `policy`.
  /// kAwaitAnswer waits until then (the OPEN's time + kOpenAnswerWaitNs).
  /// Set before the destination is published (release), never changed.
  const std::int64_t answer_deadline_ns;
  /// A WANT is out and no GRANT came since: set by the publisher
  /// (exchange), cleared by on_grant(). Relaxed: it only spares the receiver
  /// repeated WANTs; one more or one less changes nothing it relies on.
  std::atomic<bool> want_sent{false};

  // Publisher only.
  /// A credit taken and not used (its post found the send queue full, or the
  /// local publish refused the message): used before the FIFO's next one.
  GrantEntry spare;
  bool has_spare = false;
  /// This publisher left a message pending since it last looked.
  bool pending_left = false;

  /// Guards `pending`, and on_grant()'s offers: a publisher that finds no
  /// credit while holding it either sees the GRANT's credits or leaves a
  /// message that on_grant() then writes, and a pending message is written
  /// before the credits of the same GRANT become visible (stream order).
  SpinFlag pending_flag;
  struct Pending {
    void* handle = nullptr;  ///< Pinned (one pin of its publish) while here.
    const std::byte* local = nullptr;
    std::uint32_t length = 0;
  } pending;
};

struct RdmaWriter::Plan {
  enum class Kind : std::uint8_t { kWrite, kPending, kWait };
  Kind kind = Kind::kWrite;
  bool done = false;
  std::uint32_t slot = 0;
  std::uint64_t generation = 0;
  Destination* destination = nullptr;
  GrantEntry grant;              ///< kWrite: the credit taken.
  std::int64_t deadline_ns = 0;  ///< kWait: when the wait gives up.
  /// kWait for the OPEN answer: when it comes, the receiver's QoS re-plans
  /// the wait (RdmaWriter::replan_after_answer()).
  bool awaits_answer = false;
  std::int64_t since_ns = 0;  ///< kWait: when publish() began waiting.
};

}  // namespace axon::rdma
