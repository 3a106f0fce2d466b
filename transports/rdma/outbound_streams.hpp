// The send half of the streams of a node's RDMA links
// (docs/design/rdma-transport.md, "Streams and credits"): the node's
// RdmaWriters, a stream of each writer on each link that is up, and what the
// receivers send back about them (the OPEN answer with their QoS, GRANTs,
// CLOSE when they refuse a stream).
//
// Stream ids: on each link the streams this side sends are numbered from
// first_stream_id(link.active()) up, one per writer, never reused on the
// link. A control message naming a stream id this side sends came from its
// receiver (stream_is_senders_own()); OutboundStreams handles those. Alone,
// as a link's whole handler (host tests, a node that only sends), it refuses
// the peer's own streams and writes; beside a receive half, LinkStreams
// (link_streams.hpp) hands it only what it owns.
//
// Thread safety: every method takes `mutex_` (add_writer() and
// remove_writer() from any thread, the LinkHandler calls on the RDMA
// thread), so the writers' streams side runs under it. It is held while a
// removed destination waits for its publisher to leave a publish section (a
// post at most) and is never taken by publish(). Lock order: mutex_, then a
// link's own mutex (send_control(), post_write()); a link must not hold its
// mutex while it calls a LinkHandler method. Allocates when writers and
// links come and go; the GRANT path does not.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "transports/rdma/link_port.hpp"
#include "transports/rdma/rdma_writer.hpp"

namespace axon::rdma {

/// Counts since construction (relaxed atomics: statistics, read by any thread).
struct OutboundCounters {
  std::uint64_t streams_opened = 0;
  std::uint64_t streams_refused = 0;  ///< The receiver answered CLOSE (unknown topic, type mismatch).
  std::uint64_t opens_failed = 0;     ///< OPEN not sent (no control slot, too many destinations).
  /// GRANTs and OPEN answers for streams this side closed already (in flight
  /// when CLOSE went out: the receiver reclaims those grants itself).
  std::uint64_t late_messages = 0;
};

class OutboundStreams final : public LinkHandler {
 public:
  OutboundStreams() = default;
  ~OutboundStreams() override;
  OutboundStreams(const OutboundStreams&) = delete;
  OutboundStreams& operator=(const OutboundStreams&) = delete;

  /// Registers `writer` and opens its stream on every link that is up (and
  /// on links that come up later) whose peer is in `peers` (the sender ids
  /// of the participants that receive its topic; nullopt: every link). Any
  /// thread.
  void add_writer(std::shared_ptr<RdmaWriter> writer, std::optional<std::vector<std::uint64_t>> peers = std::nullopt);
  /// The participants `writer` sends to now (discovery's receivers of its
  /// topic): a stream is opened on each link up to one of them that has
  /// none (a new receiver, or one that refused an earlier stream), and
  /// closed (CLOSE) on each link to a peer no longer listed. Any thread.
  void set_peers(const RdmaWriter& writer, std::vector<std::uint64_t> peers);
  /// Closes the writer's streams (CLOSE to each receiver) and lets go of it.
  /// Any thread; returns once no publish of the writer uses a destination.
  void remove_writer(const RdmaWriter& writer);

  // LinkHandler (the RDMA thread).
  void on_link_up(LinkPort& link) noexcept override;
  void on_control(LinkPort& link, const ControlMessage& message) noexcept override;
  void on_write(LinkPort& link, const ResolvedWrite& write) noexcept override;
  void on_link_lost(LinkPort& link) noexcept override;

  [[nodiscard]] OutboundCounters counters() const noexcept;
  /// The counters of every writer since construction (those registered now
  /// and those removed), added up. Any thread.
  [[nodiscard]] RdmaWriterCounters writer_totals() const;
  /// The stream id of `writer` on `link` (0: none open). Any thread.
  [[nodiscard]] std::uint32_t stream_of(const LinkPort& link, const RdmaWriter& writer) const;

 private:
  struct Route {
    std::uint32_t stream_id = 0;
    RdmaWriter* writer = nullptr;
  };
  struct LinkStreams {
    LinkPort* link = nullptr;
    std::uint32_t next_stream_id = 0;
    std::vector<Route> routes;
  };

  /// Opens a stream of `writer` on `streams`' link; mutex_ held.
  void open(LinkStreams& streams, RdmaWriter& writer);
  /// `writer`'s route on `streams`' link, or routes.end(); mutex_ held.
  [[nodiscard]] static std::vector<Route>::const_iterator route_of(const LinkStreams& streams,
                                                                   const RdmaWriter& writer) noexcept;
  /// Tells each writer how many of its named hosts no stream reaches; mutex_ held.
  void count_unreached() noexcept;
  [[nodiscard]] LinkStreams* streams_of(const LinkPort& link);
  static void note(std::atomic<std::uint64_t>& counter) noexcept {
    counter.fetch_add(1, std::memory_order_relaxed);  // a statistic
  }

  mutable std::mutex mutex_;
  struct Registered {
    std::shared_ptr<RdmaWriter> writer;
    std::optional<std::vector<std::uint64_t>> peers;  ///< nullopt: every link.
    /// When discovery first named each of `peers` (same order; monotonic
    /// ns): its messages wait kOpenAnswerWaitNs from then for its stream.
    std::vector<std::int64_t> named_at_ns;
    [[nodiscard]] bool sends_to(std::uint64_t peer) const noexcept;
    /// Sets `peers`, keeping the naming time of those named before.
    void name(std::vector<std::uint64_t> named, std::int64_t now_ns);
  };
  std::vector<Registered> writers_;
  RdmaWriterCounters retired_;  ///< Of the writers removed; guarded by mutex_.
  static void add_counters(RdmaWriterCounters& total, const RdmaWriterCounters& c) noexcept;
  std::vector<LinkStreams> links_;
  struct Counters {
    std::atomic<std::uint64_t> streams_opened{0};
    std::atomic<std::uint64_t> streams_refused{0};
    std::atomic<std::uint64_t> opens_failed{0};
    std::atomic<std::uint64_t> late_messages{0};
  } counters_;
};

}  // namespace axon::rdma
