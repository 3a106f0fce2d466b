#include "transports/udp/nack_planner.hpp"

#include <algorithm>
#include <array>

#include "transports/udp/reassembly.hpp"
#include "transports/udp/remote_writer.hpp"

namespace axon::udp {

bool nack_due(const RemoteWriter& writer, std::int64_t now_ns) noexcept {
  return writer.reliable() && now_ns - writer.nacks.last_round_ns >= kNackIntervalNs;
}

std::size_t plan_nack(RemoteWriter& writer, const Reassembler& reassembler, const NackRound& round,
                      std::span<NackRange> out) noexcept {
  NackHistory& history = writer.nacks;
  const std::size_t limit = std::min(round.max_ranges, out.size());
  // Quiet: nothing arrived for a while and nothing waits to be read. A
  // receiver that fell behind (its socket full of the stream) would otherwise
  // ask for fragments it is about to read, and every resend, queued behind the
  // rest, would be asked for again each round: duplicates on the wire, and
  // the sender's CPU spent on them.
  const bool quiet = !round.backlog && round.now_ns - writer.last_data_ns() > kNackDelayNs;
  if (writer.expected() != history.expected_when_asked) {
    history.wait_ns = kNackIntervalNs;  // the stream moved on: what is missing now is new
  }
  // A resend can take long to come: the writer may be busy sending, or not
  // running at all on a loaded host; asking again at once would only resend
  // the same fragments again. So ask again only after the writer was heard
  // from since (a writer that paused answers the first NACK when it resumes;
  // its heartbeats bring another chance if that NACK was lost), and with
  // growing waits.
  const std::int64_t since_asked = round.now_ns - history.asked_at_ns;
  const bool heard_since = writer.last_heard_ns() > history.asked_at_ns;
  const bool ask_again = heard_since && since_asked >= (round.backlog ? kRepairTimeoutNs : history.wait_ns);
  std::size_t count = 0;
  std::uint64_t newest_asked = 0;
  std::array<FragmentRange, kMaxNackRanges> holes{};
  writer.for_each_missing(limit, [&](std::uint64_t sequence, bool overtaken) {
    if (count == limit || (!overtaken && !quiet) || (sequence <= history.asked_through && !ask_again)) {
      return;  // still arriving, or its resend may still be on its way
    }
    const MessageKey key{.sender_id = writer.sender_id(), .sequence = sequence, .writer_id = writer.writer_id()};
    const std::size_t n = reassembler.missing_fragments(key, std::span(holes).first(limit - count));
    if (n == 0) {
      out[count++] = NackRange{.sequence = sequence, .first_fragment = 0, .end_fragment = kAllFragments};
    }
    for (std::size_t i = 0; i < n; ++i) {
      out[count++] = NackRange{.sequence = sequence, .first_fragment = holes[i].first, .end_fragment = holes[i].end};
    }
    newest_asked = sequence;
  });
  if (count == 0) {
    return 0;
  }
  history.last_round_ns = round.now_ns;
  if (ask_again || history.asked_through == 0) {
    // Only a round that could ask for everything restarts the repair clock:
    // new holes asked for meanwhile must not postpone the older ones forever.
    if (history.asked_through != 0 && writer.expected() == history.expected_when_asked) {
      history.wait_ns = std::min(2 * history.wait_ns, kRepairTimeoutNs);
    }
    history.asked_at_ns = round.now_ns;
    history.expected_when_asked = writer.expected();
  }
  history.asked_through = std::max(history.asked_through, newest_asked);
  return count;
}

}  // namespace axon::udp
