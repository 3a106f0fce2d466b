// The counters of a node's network transports (UDP, RDMA): what
// Node::network_counters() returns, what each node copies into its
// statistics segment and what `axon network` prints by name.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace axon {

/// Counters of this node's UDP participant (all zero without one). Each is
/// written by one thread and read with relaxed loads: statistics.
struct NetworkCounters {
  std::uint64_t datagrams_sent = 0;
  std::uint64_t datagrams_received = 0;
  std::uint64_t datagrams_refused = 0;      ///< Malformed, truncated, foreign, spoofed: dropped by the parser.
  std::uint64_t messages_sent = 0;          ///< Messages sent (each once per remote host).
  std::uint64_t messages_received = 0;      ///< Complete messages handed to local subscribers.
  std::uint64_t messages_incomplete = 0;    ///< BEST_EFFORT messages dropped with fragments missing.
  std::uint64_t messages_out_of_order = 0;  ///< BEST_EFFORT messages older than one already delivered: dropped.
  std::uint64_t duplicates = 0;             ///< Fragments or messages received twice (ignored).
  std::uint64_t fragments_in_place = 0;     ///< Fragments read from the socket straight into their chunk.
  std::uint64_t fragments_copied = 0;       ///< Fragments copied into their chunk after the read (not predicted).
  std::uint64_t fragments_stale = 0;        ///< Read into a chunk their message gave up meanwhile: dropped.
  std::uint64_t nacks_sent = 0;
  std::uint64_t nacks_received = 0;
  std::uint64_t fragments_resent = 0;  ///< Fragments sent again for a NACK.
  std::uint64_t gaps_sent = 0;         ///< NACKs the history could no longer serve.
  std::uint64_t messages_lost = 0;     ///< RELIABLE messages a GAP said are gone (reported, not waited for).
  std::uint64_t hosts_discovered = 0;
  std::uint64_t hosts_lost = 0;       ///< Hosts whose heartbeats stopped.
  std::uint64_t type_mismatches = 0;  ///< Remote subscriptions of a topic with another type: not served.
  std::uint64_t pool_exhausted = 0;   ///< Messages dropped: no chunk to reassemble into.
  /// Times a subscriber's waiting thread read the data socket itself (one
  /// wake-up per message instead of two; the UDP transport's WaitSource).
  std::uint64_t receives_on_waiting_threads = 0;
  /// Datagrams dropped before the parser when `udp: security:` is set (docs/security.md): a tag that does not
  /// match under the keys accepted (forged, corrupted, another key), ...
  std::uint64_t auth_failures = 0;
  /// ... a sender's counter accepted before or too old (a captured datagram sent again), ...
  std::uint64_t replays = 0;
  /// ... a source address outside `allow:`, ...
  std::uint64_t not_allowed = 0;
  /// ... no envelope while a key is configured (a node without the key, or a plain datagram), ...
  std::uint64_t unauthenticated = 0;
  /// ... a right tag, but only authenticated while this node sets `encrypt: true` (no downgrade): the sender
  /// holds the key and does not set it (both hosts must set the same `encrypt`), ...
  std::uint64_t not_encrypted = 0;
  /// ... a right tag, but encrypted while this node does not set `encrypt: true`: the sender does.
  std::uint64_t unexpectedly_encrypted = 0;
  /// RDMA links (one queue pair per pair of nodes) up now to nodes of other
  /// hosts; 0 unless this node's host names an rdma_device.
  std::uint64_t rdma_links_up = 0;
  /// RDMA links that were up and were lost (the peer went, disconnected or
  /// became unreachable), in total.
  std::uint64_t rdma_link_losses = 0;
  /// Times the RDMA device said the port of this node's links went down
  /// (each time every link is ended; they connect again once it is up).
  std::uint64_t rdma_port_errors = 0;
  /// RDMA streams peers opened towards this node that it receives (a topic
  /// subscribed here, this node its host's receiver), in total.
  std::uint64_t rdma_streams_received = 0;
  /// RDMA streams peers opened that this node refused (not subscribed here,
  /// another participant of the host receives it, another type), in total.
  std::uint64_t rdma_streams_refused = 0;
  /// Messages peers wrote over RDMA and this node delivered to its host's subscribers.
  std::uint64_t rdma_messages_received = 0;
  /// Times a credit was due to a peer's stream and the pool had no chunk to lend.
  std::uint64_t rdma_loans_exhausted = 0;
  /// RDMA streams this node's publishers opened towards receivers of other
  /// hosts, and those the receiver refused, in total.
  std::uint64_t rdma_streams_sent = 0;
  std::uint64_t rdma_streams_sent_refused = 0;
  /// Messages this node's publishers wrote over RDMA (one per receiving host).
  std::uint64_t rdma_messages_sent = 0;
  std::uint64_t rdma_bytes_sent = 0;
  /// Messages not written to a host for want of credit: dropped (best
  /// effort), evicted by a newer one (keep-last), or after the block timeout.
  std::uint64_t rdma_credit_drops = 0;
  std::uint64_t rdma_credit_evictions = 0;
  std::uint64_t rdma_credit_timeouts = 0;
  /// Messages not written because the post failed or the link went under them.
  std::uint64_t rdma_send_failures = 0;
  /// Messages not written to a host that discovery named as a receiver but
  /// no RDMA stream reaches (its link still connecting 100 ms after it was
  /// named, its link lost, or its receiver refused the stream): one per
  /// message and host. A message published within those 100 ms waits for
  /// the stream instead.
  std::uint64_t rdma_no_stream_drops = 0;
  /// RDMA completions (writes received, sends done) that a busy-spinning
  /// subscriber's thread polled and handled itself: no wake-up of the RDMA
  /// thread for them (the RDMA transport's WaitSource).
  std::uint64_t rdma_completions_on_waiting_threads = 0;
};

/// One counter of NetworkCounters by its name: the statistics segment stores
/// them in this order and the `axon network` command prints these names.
struct NetworkCounterField {
  std::string_view name;
  std::uint64_t NetworkCounters::*member;
  /// It counts traffic that was dropped or refused (what `axon network` marks).
  bool counts_drops = false;
};

/// Every counter of NetworkCounters, in the order of its declaration (a new
/// counter goes at the end, here and there).
inline constexpr std::array kNetworkCounterFields = {
    NetworkCounterField{"datagrams_sent", &NetworkCounters::datagrams_sent},
    NetworkCounterField{"datagrams_received", &NetworkCounters::datagrams_received},
    NetworkCounterField{"datagrams_refused", &NetworkCounters::datagrams_refused, true},
    NetworkCounterField{"messages_sent", &NetworkCounters::messages_sent},
    NetworkCounterField{"messages_received", &NetworkCounters::messages_received},
    NetworkCounterField{"messages_incomplete", &NetworkCounters::messages_incomplete, true},
    NetworkCounterField{"messages_out_of_order", &NetworkCounters::messages_out_of_order, true},
    NetworkCounterField{"duplicates", &NetworkCounters::duplicates},
    NetworkCounterField{"fragments_in_place", &NetworkCounters::fragments_in_place},
    NetworkCounterField{"fragments_copied", &NetworkCounters::fragments_copied},
    NetworkCounterField{"fragments_stale", &NetworkCounters::fragments_stale, true},
    NetworkCounterField{"nacks_sent", &NetworkCounters::nacks_sent},
    NetworkCounterField{"nacks_received", &NetworkCounters::nacks_received},
    NetworkCounterField{"fragments_resent", &NetworkCounters::fragments_resent},
    NetworkCounterField{"gaps_sent", &NetworkCounters::gaps_sent},
    NetworkCounterField{"messages_lost", &NetworkCounters::messages_lost, true},
    NetworkCounterField{"hosts_discovered", &NetworkCounters::hosts_discovered},
    NetworkCounterField{"hosts_lost", &NetworkCounters::hosts_lost},
    NetworkCounterField{"type_mismatches", &NetworkCounters::type_mismatches, true},
    NetworkCounterField{"pool_exhausted", &NetworkCounters::pool_exhausted, true},
    NetworkCounterField{"receives_on_waiting_threads", &NetworkCounters::receives_on_waiting_threads},
    NetworkCounterField{"auth_failures", &NetworkCounters::auth_failures, true},
    NetworkCounterField{"replays", &NetworkCounters::replays, true},
    NetworkCounterField{"not_allowed", &NetworkCounters::not_allowed, true},
    NetworkCounterField{"unauthenticated", &NetworkCounters::unauthenticated, true},
    NetworkCounterField{"not_encrypted", &NetworkCounters::not_encrypted, true},
    NetworkCounterField{"unexpectedly_encrypted", &NetworkCounters::unexpectedly_encrypted, true},
    NetworkCounterField{"rdma_links_up", &NetworkCounters::rdma_links_up},
    NetworkCounterField{"rdma_link_losses", &NetworkCounters::rdma_link_losses},
    NetworkCounterField{"rdma_port_errors", &NetworkCounters::rdma_port_errors},
    NetworkCounterField{"rdma_streams_received", &NetworkCounters::rdma_streams_received},
    NetworkCounterField{"rdma_streams_refused", &NetworkCounters::rdma_streams_refused, true},
    NetworkCounterField{"rdma_messages_received", &NetworkCounters::rdma_messages_received},
    NetworkCounterField{"rdma_loans_exhausted", &NetworkCounters::rdma_loans_exhausted, true},
    NetworkCounterField{"rdma_streams_sent", &NetworkCounters::rdma_streams_sent},
    NetworkCounterField{"rdma_streams_sent_refused", &NetworkCounters::rdma_streams_sent_refused},
    NetworkCounterField{"rdma_messages_sent", &NetworkCounters::rdma_messages_sent},
    NetworkCounterField{"rdma_bytes_sent", &NetworkCounters::rdma_bytes_sent},
    NetworkCounterField{"rdma_credit_drops", &NetworkCounters::rdma_credit_drops, true},
    NetworkCounterField{"rdma_credit_evictions", &NetworkCounters::rdma_credit_evictions, true},
    NetworkCounterField{"rdma_credit_timeouts", &NetworkCounters::rdma_credit_timeouts, true},
    NetworkCounterField{"rdma_send_failures", &NetworkCounters::rdma_send_failures, true},
    NetworkCounterField{"rdma_no_stream_drops", &NetworkCounters::rdma_no_stream_drops, true},
    NetworkCounterField{"rdma_completions_on_waiting_threads", &NetworkCounters::rdma_completions_on_waiting_threads},
};
static_assert(sizeof(NetworkCounters) == kNetworkCounterFields.size() * sizeof(std::uint64_t),
              "every counter of NetworkCounters is in kNetworkCounterFields");

}  // namespace axon
