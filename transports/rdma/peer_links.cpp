#include "transports/rdma/peer_links.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <string>
#include <utility>

namespace axon::rdma {
namespace {

// Whether `fd` has an event now. Asked before each rdma_get_cm_event(): librdmacm mallocs (and frees) its event
// struct even when there is none, and an idle step() must not allocate.
bool readable(int fd) noexcept {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) > 0;
}

}  // namespace

const char* to_string(LinkLoss why) noexcept {
  switch (why) {
    case LinkLoss::kDisconnected: return "the peer disconnected";
    case LinkLoss::kRejected: return "the peer rejected the connection";
    case LinkLoss::kUnreachable: return "the peer is unreachable over RDMA";
    case LinkLoss::kDeviceRemoval: return "the RDMA device was removed";
    case LinkLoss::kReplaced: return "a new connection of the same peer replaced it";
    case LinkLoss::kForgotten: return "discovery lost the peer";
    case LinkLoss::kPeerMismatch: return "the peer's answer named another participant or pool layout";
    case LinkLoss::kFailed: return "a set-up step failed";
    case LinkLoss::kLinkFailed: return "this side ended the broken link";
  }
  return "unknown";
}

Result<PeerLinks> PeerLinks::listen(PeerLinksOptions options) {
  auto listener = CmListener::listen(options.own);
  if (!listener.ok()) {
    return listener.error();
  }
  return PeerLinks(std::move(options), std::move(listener.value()));
}

PeerLinks::Link* PeerLinks::find(std::uint64_t peer) noexcept {
  const auto it = std::find_if(links_.begin(), links_.end(), [peer](const Link& l) { return l.peer == peer; });
  return it == links_.end() ? nullptr : &*it;
}

void PeerLinks::want(std::uint64_t peer, Ipv4Endpoint at) {
  Link* link = find(peer);
  if (link == nullptr) {
    links_.push_back(Link{.peer = peer,
                          .wanted = true,
                          .active = connects_actively(options_.own_data.sender_id, peer),
                          .at = at,
                          .retry_at = Clock::time_point::min()});
    return;
  }
  const bool moved = link->at.address != at.address || link->at.port != at.port;
  link->at = at;
  if (!link->wanted || moved) {  // a held request is reported up by the next step()
    link->wanted = true;
    link->stopped = false;
    link->failures = 0;
    link->retry_at = Clock::time_point::min();
  }
}

void PeerLinks::forget(std::uint64_t peer, std::vector<LinkEvent>& events) {
  Link* link = find(peer);
  if (link == nullptr) {
    return;
  }
  if (link->connection) {
    if (link->connection->established() && !port_down_) {  // port down: parked, its DREQ sent by port_up()
      (void)link->connection->disconnect();  // the DREQ; destroying the id right after is what rdma_cm expects
    }
    drop(*link, Clock::now(), LinkEvent{.why = LinkLoss::kForgotten}, events);
  }
  links_.erase(links_.begin() + (link - links_.data()));
}

bool PeerLinks::fail(std::uint64_t peer, const ibv_qp* qp, std::string detail, std::vector<LinkEvent>& events) {
  Link* link = find(peer);
  if (link == nullptr || !link->connection || link->connection->qp() != qp) {
    return false;
  }
  if (link->connection->established() && !port_down_) {  // port down: parked by drop(), its DREQ sent by port_up()
    (void)link->connection->disconnect();                // the DREQ: the peer's side ends too
  }
  drop(*link, Clock::now(), LinkEvent{.why = LinkLoss::kLinkFailed, .detail = std::move(detail)}, events);
  return true;
}

void PeerLinks::port_up() {
  port_down_ = false;
  for (CmConnection& parked : parked_) {
    if (parked.established()) {
      (void)parked.disconnect();  // the DREQ, now that it can go out
    }
  }
  parked_.clear();  // destroys each QP, then its id
  for (Link& link : links_) {
    if (link.wanted && link.active && !link.connection && !link.stopped) {
      link.failures = 0;
      link.retry_at = Clock::time_point::min();
    }
  }
}

void PeerLinks::poll_fds(std::vector<int>& fds) const {
  fds.clear();
  fds.push_back(listener_.fd());
  for (const Link& link : links_) {
    if (link.connection) {
      fds.push_back(link.connection->fd());
    }
  }
}

std::optional<PeerLinks::Clock::time_point> PeerLinks::next_deadline() const noexcept {
  std::optional<Clock::time_point> next;
  for (const Link& link : links_) {
    if (!port_down_ && link.wanted && link.active && !link.connection && !link.stopped &&
        (!next || link.retry_at < *next)) {
      next = link.retry_at;
    }
  }
  return next;
}

std::size_t PeerLinks::connections() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(links_.begin(), links_.end(), [](const Link& l) { return l.connection.has_value(); }));
}

std::optional<RejectReason> PeerLinks::check(const ConnectPrivateData& peer) {
  last_checked_ = peer.sender_id;
  const ConnectPrivateData& own = options_.own_data;
  if (peer.abi_hash != own.abi_hash) {
    return RejectReason::kAbiHash;
  }
  if (peer.sender_id == own.sender_id) {
    return RejectReason::kSenderId;
  }
  if (connects_actively(own.sender_id, peer.sender_id)) {
    return RejectReason::kNotExpected;  // this side connects to that peer, not the other way round
  }
  const Link* link = find(peer.sender_id);
  if (link != nullptr && link->wanted) {
    return std::nullopt;
  }
  const auto held =
      std::count_if(links_.begin(), links_.end(), [](const Link& l) { return !l.wanted && l.connection.has_value(); });
  if (link == nullptr && static_cast<std::size_t>(held) >= kMaxUnwantedLinks) {
    return RejectReason::kNotExpected;
  }
  return std::nullopt;
}

void PeerLinks::accept(ConnectRequest request, Clock::time_point now, std::vector<LinkEvent>& events) {
  const ConnectPrivateData peer = request.peer();
  Link* link = find(peer.sender_id);
  if (link == nullptr) {
    links_.push_back(Link{.peer = peer.sender_id});
    link = &links_.back();
  }
  if (link->connection) {
    drop(*link, now, LinkEvent{.why = LinkLoss::kReplaced}, events);
  }
  auto qp = request.create_qp(options_.qp);
  Result<void> ready = qp.ok() ? Result<void>() : Result<void>(qp.error());
  if (ready.ok() && options_.on_qp) {
    link->qp_given = true;
    ready = options_.on_qp(peer.sender_id, qp.value());
  }
  auto connection = ready.ok() ? std::move(request).accept(options_.own_data) : Result<CmConnection>(ready.error());
  if (!connection.ok()) {
    // Dropping the request destroys its id (and the QP): the peer's CM times out and retries.
    if (link->wanted || link->qp_given) {
      events.push_back(LinkEvent{.kind = LinkEventKind::kLost,
                                 .peer = peer.sender_id,
                                 .qp = qp.ok() ? qp.value() : nullptr,
                                 .why = LinkLoss::kFailed,
                                 .detail = std::string(connection.error().message())});
    }
    link->qp_given = false;
    return;
  }
  link->connection.emplace(std::move(connection.value()));
}

void PeerLinks::start_connect(Link& link, Clock::time_point now, std::vector<LinkEvent>& events) {
  auto connection =
      CmConnection::connect({.address = options_.own.address, .port = 0}, link.at, options_.qp, options_.own_data);
  if (!connection.ok()) {
    drop(link, now, LinkEvent{.why = LinkLoss::kFailed, .detail = std::string(connection.error().message())}, events);
    return;
  }
  link.connection.emplace(std::move(connection.value()));
}

bool PeerLinks::give_qp(Link& link, Clock::time_point now, std::vector<LinkEvent>& events) {
  if (link.qp_given || link.connection->qp() == nullptr) {
    return true;
  }
  link.qp_given = true;
  if (!options_.on_qp) {
    return true;
  }
  if (auto r = options_.on_qp(link.peer, link.connection->qp()); !r.ok()) {
    drop(link, now, LinkEvent{.why = LinkLoss::kFailed, .detail = std::string(r.error().message())}, events);
    return false;
  }
  return true;
}

void PeerLinks::drain(Link& link, Clock::time_point now, std::vector<LinkEvent>& events) {
  while (link.connection && readable(link.connection->fd())) {
    auto event = link.connection->next_event();
    if (!event.ok()) {
      drop(link, now, LinkEvent{.why = LinkLoss::kFailed, .detail = std::string(event.error().message())}, events);
      return;
    }
    if (!give_qp(link, now, events)) {
      return;
    }
    switch (event->kind) {
      case ConnectionEventKind::kNothing: return;
      case ConnectionEventKind::kOther: break;
      case ConnectionEventKind::kEstablished: {
        const ConnectPrivateData& peer = *link.connection->peer();
        if (link.active && (peer.sender_id != link.peer || peer.abi_hash != options_.own_data.abi_hash)) {
          (void)link.connection->disconnect();
          link.stopped = true;  // that endpoint hosts someone else now: discovery will say whom
          drop(link, now,
               LinkEvent{.why = LinkLoss::kPeerMismatch,
                         .reason = peer.sender_id != link.peer ? RejectReason::kSenderId : RejectReason::kAbiHash,
                         .detail = fmt::format("the peer answered as sender id {:#x} with ABI hash {:#x}",
                                               peer.sender_id, peer.abi_hash)},
               events);
          return;
        }
        break;
      }
      case ConnectionEventKind::kDisconnected:
        drop(link, now, LinkEvent{.why = LinkLoss::kDisconnected}, events);
        return;
      case ConnectionEventKind::kRejected:
        // An axon reason will not change by retrying (another ABI, another participant); "not expected" may.
        link.stopped = event->reason.has_value() && *event->reason != RejectReason::kNotExpected;
        drop(link, now, LinkEvent{.why = LinkLoss::kRejected, .reason = event->reason, .status = event->status},
             events);
        return;
      case ConnectionEventKind::kUnreachable:
        drop(link, now, LinkEvent{.why = LinkLoss::kUnreachable, .status = event->status}, events);
        return;
      case ConnectionEventKind::kDeviceRemoval:
        drop(link, now, LinkEvent{.why = LinkLoss::kDeviceRemoval}, events);
        return;
    }
  }
}

void PeerLinks::drop(Link& link, Clock::time_point now, LinkEvent lost, std::vector<LinkEvent>& events) {
  // Forgotten links are reported too: the caller may have given that QP receive buffers.
  const bool tell = link.wanted || link.qp_given || link.up || lost.why == LinkLoss::kForgotten;
  lost.kind = LinkEventKind::kLost;
  lost.peer = link.peer;
  lost.qp = link.connection ? link.connection->qp() : nullptr;
  lost.active = link.active;
  lost.was_up = link.up;
  if (link.qp_given && lost.qp != nullptr && options_.on_qp_gone) {
    options_.on_qp_gone(link.peer, lost.qp);
  }
  if (port_down_ && link.connection) {
    if (ibv_qp* qp = link.connection->qp(); qp != nullptr) {
      ibv_qp_attr attr{};
      attr.qp_state = IBV_QPS_ERR;
      (void)ibv_modify_qp(qp, &attr, IBV_QP_STATE);  // the card stops: outstanding work requests flush
    }
    parked_.push_back(std::move(*link.connection));
  }
  link.connection.reset();  // destroys the QP, then the id (DestroyCmId); nothing when parked
  if (link.up) {
    link.failures = 0;  // a link that was up starts the backoff again
  }
  link.up = false;
  link.qp_given = false;
  if (link.active && link.wanted && !link.stopped) {
    ++link.failures;
    link.retry_at = now + options_.backoff.delay(link.failures);
  }
  if (tell) {
    events.push_back(std::move(lost));
  }
}

Result<void> PeerLinks::step(Clock::time_point now, std::vector<LinkEvent>& events) {
  // Captures one pointer: std::function keeps it without allocating.
  const AcceptCheck check = [this](const ConnectPrivateData& peer) { return this->check(peer); };
  bool device_removed = false;
  while (readable(listener_.fd())) {
    last_checked_ = 0;
    auto event = listener_.next_event(check);
    if (!event.ok()) {
      return event.error();
    }
    if (event->kind == ListenerEventKind::kNothing) {
      break;
    }
    if (event->kind == ListenerEventKind::kRequest) {
      accept(std::move(*event->request), now, events);
    } else if (event->kind == ListenerEventKind::kRefused) {
      events.push_back(LinkEvent{.kind = LinkEventKind::kRefused,
                                 .peer = last_checked_,
                                 .reason = event->refused,
                                 .detail = std::move(event->why)});
    } else if (event->kind == ListenerEventKind::kDeviceRemoval) {
      device_removed = true;
    }
  }
  for (Link& link : links_) {
    if (link.connection) {
      drain(link, now, events);
    } else if (!port_down_ && link.wanted && link.active && !link.stopped && now >= link.retry_at) {
      start_connect(link, now, events);
    }
    if (link.connection && link.wanted && !link.up && link.connection->established()) {
      link.up = true;
      link.failures = 0;
      events.push_back(LinkEvent{.kind = LinkEventKind::kUp,
                                 .peer = link.peer,
                                 .peer_data = *link.connection->peer(),
                                 .qp = link.connection->qp(),
                                 .active = link.active});
    }
  }
  std::erase_if(links_, [](const Link& l) { return !l.wanted && !l.connection; });
  if (device_removed) {
    return Error(ErrorCode::kClosed,
                 "the RDMA device of the rdma_cm listener was removed: this participant's RDMA links are gone "
                 "(each link reports its own loss); restart the node once the device is back");
  }
  return {};
}

}  // namespace axon::rdma
