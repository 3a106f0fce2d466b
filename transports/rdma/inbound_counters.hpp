// What the receive side of the RDMA streams counts (inbound_streams.hpp):
// streams a peer opened or was refused, messages delivered into local mirrors,
// grants handed out, and the times a grant could not be made.
//
// Thread safety / Memory ordering: one writer, the RDMA thread (a relaxed
// load and store, no read-modify-write); snapshot() from any thread, relaxed:
// statistics, nothing else is published through them.
#pragma once

#include <atomic>
#include <cstdint>

namespace axon::rdma {

/// A copy of the counters at one moment.
struct InboundCountersSnapshot {
  std::uint64_t streams_opened = 0;      ///< OPENs answered with OPEN: a mirror advertised.
  std::uint64_t streams_refused = 0;     ///< OPENs answered with CLOSE (no such topic, other type, no mirror).
  std::uint64_t messages_delivered = 0;  ///< Writes published through their stream's mirror.
  std::uint64_t grants_sent = 0;         ///< Grant entries in GRANT messages the link took.
  std::uint64_t loans_exhausted = 0;     ///< A grant was due and the mirror's loan found no chunk.
  std::uint64_t chunks_reclaimed = 0;    ///< Granted, unwritten chunks given back (CLOSE, link lost).
};

class InboundCounters {
 public:
  void add_opened() noexcept { bump(streams_opened_); }
  void add_refused() noexcept { bump(streams_refused_); }
  void add_delivered() noexcept { bump(messages_delivered_); }
  void add_grants_sent(std::uint64_t n) noexcept { bump(grants_sent_, n); }
  void add_loan_exhausted() noexcept { bump(loans_exhausted_); }
  void add_reclaimed(std::uint64_t n) noexcept { bump(chunks_reclaimed_, n); }

  [[nodiscard]] InboundCountersSnapshot snapshot() const noexcept {
    // Relaxed: statistics with a single writer (above).
    return InboundCountersSnapshot{.streams_opened = streams_opened_.load(std::memory_order_relaxed),
                                   .streams_refused = streams_refused_.load(std::memory_order_relaxed),
                                   .messages_delivered = messages_delivered_.load(std::memory_order_relaxed),
                                   .grants_sent = grants_sent_.load(std::memory_order_relaxed),
                                   .loans_exhausted = loans_exhausted_.load(std::memory_order_relaxed),
                                   .chunks_reclaimed = chunks_reclaimed_.load(std::memory_order_relaxed)};
  }

 private:
  static void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) noexcept {
    // Relaxed load and store: the RDMA thread is the only writer.
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::atomic<std::uint64_t> streams_opened_{0};
  std::atomic<std::uint64_t> streams_refused_{0};
  std::atomic<std::uint64_t> messages_delivered_{0};
  std::atomic<std::uint64_t> grants_sent_{0};
  std::atomic<std::uint64_t> loans_exhausted_{0};
  std::atomic<std::uint64_t> chunks_reclaimed_{0};
};

}  // namespace axon::rdma
