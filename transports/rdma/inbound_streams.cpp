#include "transports/rdma/inbound_streams.hpp"

#include <algorithm>
#include <string>

#include "src/base/log.hpp"
#include "transports/rdma/immediate.hpp"
#include "transports/shm/chunk_header.hpp"

namespace axon::rdma {
namespace {

/// The largest payload a grant can carry: the largest class of the pool
/// that the immediate can name (below 256 MiB).
std::uint32_t largest_receivable(const shm::ChunkArea& area) noexcept {
  std::uint32_t largest = 0;
  for (const shm::ChunkClassExtent& c : area.class_list()) {
    if (immediate_split(c.payload_capacity)) {
      largest = std::max(largest, c.payload_capacity);
    }
  }
  return largest;
}

}  // namespace

Result<std::unique_ptr<InboundStreams>> InboundStreams::create(std::shared_ptr<shm::ShmTransport> shm,
                                                               InboundLookup lookup, const InboundSettings& settings) {
  if (settings.credits == 0 || settings.credits > kLinkGrantBudget) {
    return Error(ErrorCode::kInvalidArgument,
                 "rdma.credits is " + std::to_string(settings.credits) + ": a stream keeps 1 to " +
                     std::to_string(kLinkGrantBudget) +
                     " grants out (the grants one link may have out at once); set rdma.credits in that range");
  }
  if (settings.refill_poll_us == 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "rdma.refill_poll_us is 0: a receiver whose sender waits for credit looks for free chunks every "
                 "refill_poll_us microseconds; set it to 1 or more (default 100)");
  }
  if (shm == nullptr || !lookup) {
    return Error(ErrorCode::kInvalidArgument, "rdma receive streams: no shared-memory transport or topic lookup given");
  }
  return std::unique_ptr<InboundStreams>(new InboundStreams(std::move(shm), std::move(lookup), settings));
}

InboundStreams::InboundStreams(std::shared_ptr<shm::ShmTransport> shm, InboundLookup lookup,
                               const InboundSettings& settings)
    : shm_(std::move(shm)),
      lookup_(std::move(lookup)),
      settings_(settings),
      fill_scratch_(shm::kMaxSubscribersPerPublisher) {
  const shm::ChunkArea area = shm_->own_chunk_area();
  own_region_ = PeerRegion{.base = reinterpret_cast<std::uintptr_t>(area.base), .length = area.bytes};
  largest_receivable_ = largest_receivable(area);
}

InboundStreams::~InboundStreams() = default;

std::size_t InboundStreams::stream_count() const noexcept {
  std::size_t n = 0;
  for (const auto& link : links_) {
    n += link->streams.size();
  }
  return n;
}

void InboundStreams::on_link_up(LinkPort& link) noexcept { (void)link_of(link); }

void InboundStreams::on_control(LinkPort& link, const ControlMessage& message) noexcept {
  if (stream_is_senders_own(link.active(), message.stream_id)) {
    return;  // a stream this node sends: the send half's
  }
  Link& l = link_of(link);
  switch (message.kind) {
    case ControlKind::kOpen: open(l, message); return;
    case ControlKind::kClose: close(l, message.stream_id); return;
    case ControlKind::kWant: {
      const auto found = l.streams.find(message.stream_id);
      if (found == l.streams.end()) {
        return;  // a stream refused or closed meanwhile: its CLOSE answer says so
      }
      InboundStream& stream = *found->second;
      stream.set_want(message.messages_waiting);
      if (message.messages_waiting > 0) {
        refill(l, stream);
        flush(l, stream);
      }
      return;
    }
    case ControlKind::kGrant:
      link.fail("rdma control: a GRANT for a stream the peer sends; only a stream's receiver grants");
      return;
  }
}

void InboundStreams::open(Link& l, const ControlMessage& message) {
  const OpenFields& asked = message.open;
  if (const auto found = l.streams.find(message.stream_id); found != l.streams.end()) {
    // The sender opens again (its largest message grew): same stream, new size.
    InboundStream& stream = *found->second;
    if (stream.answer().topic_id != asked.topic_id || stream.answer().type_hash != asked.type_hash) {
      l.port->fail("rdma control: OPEN of a stream already open names another topic or type");
      return;
    }
    if (asked.largest_message_bytes > largest_receivable_) {
      close(l, message.stream_id);
      refuse(l, message.stream_id);
      return;
    }
    stream.set_largest_message_bytes(std::max(stream.answer().largest_message_bytes, asked.largest_message_bytes));
    stream.set_answer_pending(true);
    refill(l, stream);
    flush(l, stream);
    return;
  }
  const std::optional<InboundTopic> topic = lookup_(asked.topic_id);
  if (!topic) {
    logger().debug(
        "rdma: participant {:016x} opens stream {} of topic id {:016x}, which this node does not "
        "receive over RDMA: refused",
        l.port->peer(), message.stream_id, asked.topic_id);
    refuse(l, message.stream_id);
    return;
  }
  if (topic->descriptor.type.hash != asked.type_hash) {
    logger().warn(
        "rdma: participant {:016x} sends topic '{}' with type hash {:016x}, this node's subscribers "
        "expect '{}' (hash {:016x}): the stream is refused; publish and subscribe the same type",
        l.port->peer(), topic->descriptor.name, asked.type_hash, topic->descriptor.type.name,
        topic->descriptor.type.hash);
    refuse(l, message.stream_id);
    return;
  }
  if (asked.largest_message_bytes > largest_receivable_) {
    logger().warn(
        "rdma: participant {:016x} opens topic '{}' for messages of {} bytes, larger than the largest "
        "chunk this node receives over RDMA ({} bytes): refused; add a larger class to "
        "nodes[].pool.chunk_classes (below 256 MiB)",
        l.port->peer(), topic->descriptor.name, asked.largest_message_bytes, largest_receivable_);
    refuse(l, message.stream_id);
    return;
  }
  // The mirror: a local publisher standing for the remote one, so every
  // subscriber of this host gets its messages through shared memory.
  auto port = shm_->advertise(topic->descriptor, PublisherQos{});
  if (!port.ok()) {
    logger().error("rdma: cannot mirror a remote publisher of topic '{}' on this host: {}", topic->descriptor.name,
                   port.error().message());
    refuse(l, message.stream_id);
    return;
  }
  OpenFields answer = asked;
  answer.reliability = topic->reliability;
  answer.overflow = topic->overflow;
  answer.block_timeout_ns = topic->block_timeout_ns;
  auto stream = std::make_unique<InboundStream>(message.stream_id, answer,
                                                std::static_pointer_cast<shm::ShmPublisherPort>(std::move(*port)),
                                                delivery_may_wait(*topic), settings_.credits);
  InboundStream& opened = *l.streams.emplace(message.stream_id, std::move(stream)).first->second;
  counters_.add_opened();
  refill(l, opened);
  flush(l, opened);
}

void InboundStreams::refuse(Link& l, std::uint32_t stream_id) {
  counters_.add_refused();
  l.closes_due.push_back(stream_id);
  (void)flush_closes(l);
}

void InboundStreams::close(Link& l, std::uint32_t stream_id) noexcept {
  const auto found = l.streams.find(stream_id);
  if (found == l.streams.end()) {
    return;
  }
  InboundStream& stream = *found->second;
  const std::uint32_t out = stream.outstanding();
  std::uint32_t reclaimed = 0;
  // Every grant of the stream is granted and unwritten here: a write is
  // delivered (and its slot released) in on_write(), before anything else.
  l.port->grants().reclaim_stream(stream_id, [&](const ReclaimedChunk& c) {
    if (const auto chunk = stream.take(GrantRef{.size_class = c.size_class, .slot = c.slot}, c.chunk_index)) {
      stream.discard(*chunk);
      ++reclaimed;
    }
  });
  counters_.add_reclaimed(reclaimed);
  l.grants_out -= out;
  l.streams.erase(found);  // drops the mirror: local subscribers see the publisher leave
}

void InboundStreams::on_write(LinkPort& link, const ResolvedWrite& write) noexcept {
  Link* l = find_link(link);
  InboundStream* found = nullptr;
  if (l != nullptr) {
    const auto entry = l->streams.find(write.stream_id);
    found = entry != l->streams.end() ? entry->second.get() : nullptr;
  }
  if (found == nullptr) {
    link.fail("rdma write: into a grant of a stream that is not open on this side");
    return;
  }
  InboundStream& stream = *found;
  const GrantRef ref{.size_class = write.size_class, .slot = write.slot};
  const std::optional<LoanedChunk> chunk = stream.take(ref, write.chunk_index);
  if (!chunk) {
    link.fail("rdma write: into a grant slot whose chunk is not the one this stream granted");
    return;
  }
  --l->grants_out;
  // Counted before the publish: a subscriber that has the message sees it
  // counted (the publish releases, its take acquires).
  counters_.add_delivered();
  stream.deliver(*chunk, write.length);
  (void)link.grants().release(ref);
  refill(*l, stream);
  if (!stream.pending().empty() && stream.pending().size() == stream.outstanding()) {
    flush(*l, stream);  // every grant out is pending here: the sender has none left, nothing to gain by waiting
  } else if (stream.pending().size() >= grant_batch()) {
    regrants_due_ = true;
  }
}

void InboundStreams::before_poll() noexcept {
  if (!regrants_due_) {
    return;
  }
  regrants_due_ = false;
  for (const auto& owned : links_) {
    for (auto& [id, stream] : owned->streams) {
      if (stream->pending().size() >= grant_batch()) {
        flush(*owned, *stream);  // a full send queue leaves it pending: tick() retries
      }
    }
  }
}

void InboundStreams::on_link_lost(LinkPort& link) noexcept {
  const auto found = std::find_if(links_.begin(), links_.end(), [&](const auto& l) { return l->port == &link; });
  if (found == links_.end()) {
    return;
  }
  Link& l = **found;
  std::uint32_t reclaimed = 0;
  link.grants().reclaim_all([&](const ReclaimedChunk& c) {
    const auto stream = l.streams.find(c.stream_id);
    if (stream == l.streams.end()) {
      return;
    }
    if (const auto chunk = stream->second->take(GrantRef{.size_class = c.size_class, .slot = c.slot}, c.chunk_index)) {
      stream->second->discard(*chunk);
      ++reclaimed;
    }
  });
  counters_.add_reclaimed(reclaimed);
  links_.erase(found);  // its streams and their mirrors: local subscribers see the publishers leave
}

bool InboundStreams::tick() noexcept {
  regrants_due_ = false;  // the loop below sends every batch due
  bool waiting = false;
  for (const auto& owned : links_) {
    Link& l = *owned;
    if (!flush_closes(l)) {
      waiting = true;  // the send queue is still full: the rest waits behind the CLOSE answers
      continue;
    }
    for (auto& [id, stream] : l.streams) {
      const bool wanted = stream->want() > 0;
      if (wanted) {
        refill(l, *stream);
      }
      if (wanted || stream->answer_pending() || stream->pending().size() >= grant_batch()) {
        flush(l, *stream);
      }
      // Fewer pending grants than a batch wait for the next write or WANT.
      waiting = waiting || stream->want() > 0 || stream->answer_pending() || stream->pending().size() >= grant_batch();
    }
  }
  return waiting;
}

void InboundStreams::refill(Link& l, InboundStream& stream) noexcept {
  std::uint32_t room = std::min(stream.room(fill_scratch_), kLinkGrantBudget - l.grants_out);
  for (; room > 0; --room) {
    LoanResult<LoanedChunk> loaned = stream.loan();
    if (!loaned.ok()) {
      if (loaned.exhausted()) {
        counters_.add_loan_exhausted();  // the subscribers still hold the chunks: tick() retries on WANT
      }
      return;
    }
    const LoanedChunk chunk = *loaned;
    const auto* header = static_cast<const shm::ChunkHeader*>(chunk.handle);
    const GrantResult granted = l.port->grants().grant(header->size_class, header->chunk_index, stream.id());
    if (granted.status != GrantStatus::kGranted) {
      // kFull: every slot of the class is out on this link; a class that
      // cannot be granted (a fallback into 256 MiB or more): not by RDMA.
      stream.discard(chunk);
      return;
    }
    const GrantEntry entry{.address = reinterpret_cast<std::uintptr_t>(chunk.payload),
                           .capacity_bytes = chunk.capacity_bytes,
                           .slot = granted.slot,
                           .size_class = static_cast<std::uint8_t>(header->size_class)};
    stream.record(GrantRef{.size_class = header->size_class, .slot = granted.slot}, chunk, entry);
    ++l.grants_out;
    // A sender that said WANT gets this grant; it says WANT again when it runs out once more.
    stream.set_want(0);
  }
}

void InboundStreams::flush(Link& l, InboundStream& stream) noexcept {
  if (stream.answer_pending()) {
    if (!send(l, encode_open(message_, stream.id(), stream.answer()))) {
      return;  // the GRANTs wait behind their OPEN answer
    }
    stream.set_answer_pending(false);
  }
  const std::span<const GrantEntry> pending = stream.pending();
  if (pending.empty()) {
    return;
  }
  const std::size_t bytes = encode_grant(message_, stream.id(), pending, own_region_);
  if (bytes == 0) {
    // Loaned from this pool, at most kLinkGrantBudget (< 169) entries: never.
    l.port->fail("rdma: a GRANT of this node's own chunks could not be encoded");
    return;
  }
  if (send(l, bytes)) {
    counters_.add_grants_sent(pending.size());
    stream.clear_pending();
  }
}

bool InboundStreams::flush_closes(Link& l) noexcept {
  while (!l.closes_due.empty()) {
    if (!send(l, encode_close(message_, l.closes_due.front()))) {
      return false;
    }
    l.closes_due.erase(l.closes_due.begin());
  }
  return true;
}

bool InboundStreams::send(Link& l, std::size_t bytes) noexcept {
  const Result<SendOutcome> sent = l.port->send_control(std::span<const std::byte>(message_.data(), bytes));
  // An error: the link is broken and its loss follows; either way nothing
  // more goes out on it now.
  return sent.ok() && *sent == SendOutcome::kPosted;
}

InboundStreams::Link& InboundStreams::link_of(LinkPort& port) {
  if (Link* found = find_link(port)) {
    return *found;
  }
  auto link = std::make_unique<Link>();
  link->port = &port;
  return *links_.emplace_back(std::move(link));
}

InboundStreams::Link* InboundStreams::find_link(const LinkPort& port) noexcept {
  for (const auto& l : links_) {
    if (l->port == &port) {
      return l.get();
    }
  }
  return nullptr;
}

}  // namespace axon::rdma
