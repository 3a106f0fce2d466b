#include "transports/rdma/outbound_streams.hpp"

#include <algorithm>

#include "src/base/clock.hpp"
#include "src/base/log.hpp"

namespace axon::rdma {

OutboundStreams::~OutboundStreams() {
  const std::lock_guard lock(mutex_);
  // The links still listed are up (on_link_lost() forgets the others): their
  // receivers get a CLOSE.
  for (LinkStreams& streams : links_) {
    for (const Route& route : streams.routes) {
      (void)route.writer->remove_destination(*streams.link, route.stream_id, true);
    }
  }
}

OutboundStreams::LinkStreams* OutboundStreams::streams_of(const LinkPort& link) {
  const auto found = std::find_if(links_.begin(), links_.end(), [&](const LinkStreams& s) { return s.link == &link; });
  return found == links_.end() ? nullptr : &*found;
}

void OutboundStreams::open(LinkStreams& streams, RdmaWriter& writer) {
  const std::uint32_t id = streams.next_stream_id;
  if (id == 0 || !stream_is_senders_own(streams.link->active(), id)) {
    note(counters_.opens_failed);
    logger().warn("rdma: every stream id of the link to participant {:#x} is used; writer {} is not sent over it",
                  streams.link->peer(), writer.fields().writer_id);
    return;
  }
  if (auto added = writer.add_destination(*streams.link, id); !added.ok()) {
    note(counters_.opens_failed);
    logger().warn("{}", added.error().message());
    return;
  }
  ++streams.next_stream_id;  // never reused on the link: a late GRANT names a closed stream, not a new one
  streams.routes.push_back(Route{.stream_id = id, .writer = &writer});
  note(counters_.streams_opened);
}

std::vector<OutboundStreams::Route>::const_iterator OutboundStreams::route_of(const LinkStreams& streams,
                                                                              const RdmaWriter& writer) noexcept {
  return std::find_if(streams.routes.begin(), streams.routes.end(),
                      [&](const Route& r) { return r.writer == &writer; });
}

void OutboundStreams::count_unreached() noexcept {
  for (const Registered& registered : writers_) {
    std::uint32_t unreached = 0;
    std::int64_t wait_until_ns = 0;
    if (registered.peers) {  // nullopt (every link): no host is named that a link could miss
      for (std::size_t i = 0; i < registered.peers->size(); ++i) {
        const std::uint64_t peer = (*registered.peers)[i];
        const bool reached = std::any_of(links_.begin(), links_.end(), [&](const LinkStreams& s) {
          return s.link->peer() == peer && route_of(s, *registered.writer) != s.routes.end();
        });
        if (!reached) {
          ++unreached;
          wait_until_ns = std::max(wait_until_ns, registered.named_at_ns[i] + kOpenAnswerWaitNs);
        }
      }
    }
    registered.writer->set_unreached_peers(unreached, wait_until_ns);
  }
}

bool OutboundStreams::Registered::sends_to(std::uint64_t peer) const noexcept {
  return !peers || std::find(peers->begin(), peers->end(), peer) != peers->end();
}

void OutboundStreams::Registered::name(std::vector<std::uint64_t> named, std::int64_t now_ns) {
  std::vector<std::int64_t> since(named.size(), now_ns);
  if (peers) {
    for (std::size_t i = 0; i < named.size(); ++i) {
      const auto before = std::find(peers->begin(), peers->end(), named[i]);
      if (before != peers->end()) {
        since[i] = named_at_ns[static_cast<std::size_t>(before - peers->begin())];
      }
    }
  }
  peers = std::move(named);
  named_at_ns = std::move(since);
}

void OutboundStreams::add_writer(std::shared_ptr<RdmaWriter> writer, std::optional<std::vector<std::uint64_t>> peers) {
  const std::lock_guard lock(mutex_);
  Registered& added =
      writers_.emplace_back(Registered{.writer = std::move(writer), .peers = std::nullopt, .named_at_ns = {}});
  if (peers) {
    added.name(std::move(*peers), monotonic_now_ns());
  }
  for (LinkStreams& streams : links_) {
    if (added.sends_to(streams.link->peer())) {
      open(streams, *added.writer);
    }
  }
  count_unreached();
}

void OutboundStreams::set_peers(const RdmaWriter& writer, std::vector<std::uint64_t> peers) {
  const std::lock_guard lock(mutex_);
  const auto found =
      std::find_if(writers_.begin(), writers_.end(), [&](const Registered& r) { return r.writer.get() == &writer; });
  if (found == writers_.end()) {
    return;
  }
  found->name(std::move(peers), monotonic_now_ns());
  for (LinkStreams& streams : links_) {
    const bool wanted = found->sends_to(streams.link->peer());
    const auto route = route_of(streams, writer);
    if (wanted && route == streams.routes.end()) {
      open(streams, *found->writer);  // a new receiver, or one that refused an earlier stream
    } else if (!wanted && route != streams.routes.end()) {
      (void)found->writer->remove_destination(*streams.link, route->stream_id, true);
      streams.routes.erase(route);
    }
  }
  count_unreached();
}

void OutboundStreams::remove_writer(const RdmaWriter& writer) {
  std::shared_ptr<RdmaWriter> gone;  // destroyed after the lock is released
  const std::lock_guard lock(mutex_);
  for (LinkStreams& streams : links_) {
    std::erase_if(streams.routes, [&](const Route& route) {
      if (route.writer != &writer) {
        return false;
      }
      (void)route.writer->remove_destination(*streams.link, route.stream_id, true);
      return true;
    });
  }
  const auto found =
      std::find_if(writers_.begin(), writers_.end(), [&](const Registered& r) { return r.writer.get() == &writer; });
  if (found != writers_.end()) {
    add_counters(retired_, found->writer->counters());  // its publisher is gone: no more counts
    gone = std::move(found->writer);
    writers_.erase(found);
  }
}

void OutboundStreams::on_link_up(LinkPort& link) noexcept {
  const std::lock_guard lock(mutex_);
  if (streams_of(link) != nullptr) {
    return;  // told once per link; a second time changes nothing
  }
  links_.push_back(LinkStreams{.link = &link, .next_stream_id = first_stream_id(link.active()), .routes = {}});
  for (const Registered& registered : writers_) {
    if (registered.sends_to(link.peer())) {
      open(links_.back(), *registered.writer);
    }
  }
  count_unreached();
}

void OutboundStreams::on_control(LinkPort& link, const ControlMessage& message) noexcept {
  if (!stream_is_senders_own(link.active(), message.stream_id)) {
    link.fail("rdma: the peer opened a stream towards this node, which has no receive side for it");
    return;
  }
  const std::lock_guard lock(mutex_);
  LinkStreams* streams = streams_of(link);
  if (streams == nullptr) {
    link.fail("rdma: a control message on a link that is not up");
    return;
  }
  const auto route = std::find_if(streams->routes.begin(), streams->routes.end(),
                                  [&](const Route& r) { return r.stream_id == message.stream_id; });
  if (route == streams->routes.end()) {
    // Below the next id: a stream this side opened and closed since; its
    // receiver had not seen the CLOSE yet. Above: never opened.
    const bool was_opened = (message.stream_id & ~kPassiveStreamBit) < (streams->next_stream_id & ~kPassiveStreamBit) &&
                            message.kind != ControlKind::kWant;
    if (was_opened) {
      note(counters_.late_messages);
    } else {
      link.fail("rdma: a control message names a stream this node never opened on the link");
    }
    return;
  }
  RdmaWriter& writer = *route->writer;
  switch (message.kind) {
    case ControlKind::kGrant:
      if (const std::string_view why = writer.on_grant(link, message.stream_id, message.grant); !why.empty()) {
        link.fail(why);
      }
      return;
    case ControlKind::kOpen:
      if (message.open.topic_id != writer.fields().topic_id || message.open.type_hash != writer.fields().type_hash) {
        link.fail("rdma: the receiver's OPEN answer names another topic or type than the stream's");
        return;
      }
      (void)writer.on_open_answer(link, message.stream_id, message.open);
      return;
    case ControlKind::kClose:
      // The receiver refused the stream (no receiver of the topic there, or
      // another type): it reclaimed its grants; nothing is sent to it on
      // this link until set_peers() names the peer again.
      (void)writer.remove_destination(link, message.stream_id, false);
      streams->routes.erase(route);
      note(counters_.streams_refused);
      count_unreached();
      return;
    case ControlKind::kWant:
      link.fail("rdma: the peer sent WANT for a stream it receives (only a stream's sender wants credit)");
      return;
  }
}

void OutboundStreams::on_write(LinkPort& link, const ResolvedWrite& /*write*/) noexcept {
  link.fail("rdma: a write into a grant of this node, which has no receive side");
}

void OutboundStreams::on_link_lost(LinkPort& link) noexcept {
  const std::lock_guard lock(mutex_);
  for (const Registered& registered : writers_) {
    registered.writer->on_link_lost(link);  // credits forgotten, pending messages unpinned, waiters woken
  }
  std::erase_if(links_, [&](const LinkStreams& s) { return s.link == &link; });
  count_unreached();
}

OutboundCounters OutboundStreams::counters() const noexcept {
  // Relaxed: statistics.
  return OutboundCounters{.streams_opened = counters_.streams_opened.load(std::memory_order_relaxed),
                          .streams_refused = counters_.streams_refused.load(std::memory_order_relaxed),
                          .opens_failed = counters_.opens_failed.load(std::memory_order_relaxed),
                          .late_messages = counters_.late_messages.load(std::memory_order_relaxed)};
}

void OutboundStreams::add_counters(RdmaWriterCounters& total, const RdmaWriterCounters& c) noexcept {
  total.messages_written += c.messages_written;
  total.bytes_written += c.bytes_written;
  total.credit_drops += c.credit_drops;
  total.evicted += c.evicted;
  total.timed_out += c.timed_out;
  total.wants_sent += c.wants_sent;
  total.send_failures += c.send_failures;
  total.pending_dropped += c.pending_dropped;
  total.no_stream_drops += c.no_stream_drops;
}

RdmaWriterCounters OutboundStreams::writer_totals() const {
  const std::lock_guard lock(mutex_);
  RdmaWriterCounters total = retired_;
  for (const Registered& registered : writers_) {
    add_counters(total, registered.writer->counters());
  }
  return total;
}

std::uint32_t OutboundStreams::stream_of(const LinkPort& link, const RdmaWriter& writer) const {
  const std::lock_guard lock(mutex_);
  for (const LinkStreams& streams : links_) {
    if (streams.link == &link) {
      const auto route = route_of(streams, writer);
      return route != streams.routes.end() ? route->stream_id : 0;
    }
  }
  return 0;
}

}  // namespace axon::rdma
