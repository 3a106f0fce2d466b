#include "transports/rdma/rdma_participant.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <ctime>
#include <utility>

#include "src/base/clock.hpp"
#include "src/base/errors.hpp"
#include "src/base/log.hpp"
#include "src/base/thread_name.hpp"
#include "transports/rdma/async_event.hpp"
#include "transports/rdma/post_write.hpp"

namespace axon::rdma {
namespace {

/// The one place that fills what this participant tells each peer.
Result<ConnectPrivateData> own_private_data(const PoolRegistration& registration,
                                            const RdmaParticipantOptions& options) {
  auto max_message = port_max_message_bytes(registration.context(), registration.device().port);
  if (!max_message) {
    return max_message.error();
  }
  return ConnectPrivateData{.version = kConnectProtocolVersion,
                            .sender_id = options.sender_id,
                            .incarnation = options.incarnation,
                            .abi_hash = options.abi_hash,
                            .rkey = registration.rkey(),
                            .base = reinterpret_cast<std::uintptr_t>(registration.base()),
                            .length = registration.length(),
                            .receive_depth = kLinkReceiveDepth,
                            .max_message_bytes = *max_message};
}

/// Why a link was lost, in words ("the peer disconnected", "... (the pool
/// layout ABI hash differs)", "... : <detail>").
std::string why_lost(const LinkEvent& e) {
  std::string why = to_string(e.why);
  if (e.reason) {
    why += fmt::format(" ({})", to_string(*e.reason));
  }
  if (!e.detail.empty()) {
    why += ": " + e.detail;
  }
  return why;
}

}  // namespace

std::string to_string(const Ipv4Endpoint& e) {
  return fmt::format("{}.{}.{}.{}:{}", (e.address >> 24U) & 0xFFU, (e.address >> 16U) & 0xFFU,
                     (e.address >> 8U) & 0xFFU, e.address & 0xFFU, e.port);
}

Result<std::unique_ptr<RdmaParticipant>> RdmaParticipant::start(std::shared_ptr<const PoolRegistration> registration,
                                                                RdmaParticipantOptions options) {
  auto own_data = own_private_data(*registration, options);
  if (!own_data) {
    return own_data.error();
  }
  auto channel = make_completion_channel(registration->context());
  if (!channel) {
    return channel.error();
  }
  auto cq = CompletionQueue::create(registration->context(), channel.value().get(), kParticipantCqDepth);
  if (!cq) {
    return cq.error();
  }
  if (auto armed = cq->arm(); !armed.ok()) {
    return armed.error();
  }
  std::unique_ptr<RdmaParticipant> self(
      new RdmaParticipant(std::move(registration), std::move(options), std::move(*channel), std::move(*cq)));
  self->own_max_message_bytes_ = own_data->max_message_bytes;
  self->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // before any link: each one is given it
  if (self->wake_fd_ < 0) {
    return Error(ErrorCode::kSystem, fmt::format("eventfd failed ({})", errno_text(errno)));
  }
  auto device_events = DeviceEventInbox::subscribe(self->registration_->context(), self->wake_fd_);
  if (!device_events) {
    return device_events.error();
  }
  self->device_events_ = std::move(*device_events);
  self->rdma_links_.reserve(kMaxRdmaLinks);
  self->batch_.resize(kPollBatch);
  auto links = PeerLinks::listen(
      PeerLinksOptions{.own = self->options_.own,
                       .qp = {.pd = self->registration_->pd(),
                              .send_cq = self->cq_.get(),
                              .recv_cq = self->cq_.get(),
                              .send_depth = kLinkSendDepth,
                              .recv_depth = kLinkReceiveDepth},
                       .own_data = *own_data,
                       .on_qp = [p = self.get()](std::uint64_t peer, ibv_qp* qp) { return p->link_ready(peer, qp); },
                       .on_qp_gone = [p = self.get()](std::uint64_t /*peer*/, ibv_qp* qp) { p->link_closing(qp); }});
  if (!links) {
    return Error(links.error().code(), fmt::format("node '{}': RDMA participant on {}: {}", self->options_.node_name,
                                                   to_string(self->options_.own), links.error().message()));
  }
  self->links_.emplace(std::move(*links));
  self->cm_port_ = self->links_->port();
  self->stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (self->stop_fd_ < 0) {
    return Error(ErrorCode::kSystem, fmt::format("eventfd failed ({})", errno_text(errno)));
  }
  self->turn_->attach(self.get());  // before the thread: from here on, the turn guards the links
  self->thread_ = std::thread([p = self.get()] {
    axon::detail::name_this_thread("axon-rdma");
    p->run();
  });
  return self;
}

RdmaParticipant::RdmaParticipant(std::shared_ptr<const PoolRegistration> registration, RdmaParticipantOptions options,
                                 CompChannelHandle channel, CompletionQueue cq)
    : registration_(std::move(registration)),
      options_(std::move(options)),
      channel_(std::move(channel)),
      cq_(std::move(cq)) {}

RdmaParticipant::~RdmaParticipant() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    if (::write(stop_fd_, &one, sizeof one) != static_cast<ssize_t>(sizeof one)) {
      logger().error("node '{}': could not stop the RDMA participant's thread ({})", options_.node_name,
                     errno_text(errno));
    }
    thread_.join();
  }
  turn_->take();  // no spinner polls from here on: the links go
  turn_->detach();
  stop_links();
  turn_->give_back();
  device_events_.reset();  // before wake_fd_ closes: no other participant's read writes it any more
  if (stop_fd_ >= 0) {
    ::close(stop_fd_);
  }
  if (wake_fd_ >= 0) {
    ::close(wake_fd_);  // after the links (stop_links()): none can write it any more
  }
}

RdmaLinkCounters RdmaParticipant::counters() const noexcept {
  return RdmaLinkCounters{.links_up = links_up_.load(std::memory_order_relaxed),
                          .link_losses = link_losses_.load(std::memory_order_relaxed),
                          .link_failures = link_failures_.load(std::memory_order_relaxed),
                          .control_refusals = faults_.control_refusals.load(std::memory_order_relaxed),
                          .write_refusals = faults_.write_refusals.load(std::memory_order_relaxed),
                          .completion_errors = faults_.completion_errors.load(std::memory_order_relaxed),
                          .completions_on_waiting_threads = turn_->completions_by_spinners(),
                          .port_errors = port_errors_.load(std::memory_order_relaxed)};
}

Result<void> RdmaParticipant::link_ready(std::uint64_t peer, ibv_qp* qp) {
  if (rdma_links_.size() >= kMaxRdmaLinks) {
    return Error(ErrorCode::kNoSpace,
                 fmt::format("this participant holds {} RDMA links, the most it serves (its completion queue is "
                             "sized for them): the link to participant {:016x} is refused",
                             kMaxRdmaLinks, peer));
  }
  auto link = RdmaLink::create(*registration_, peer, qp, own_max_message_bytes_, options_.handler, faults_, wake_fd_);
  if (!link.ok()) {
    return link.error();
  }
  rdma_links_.push_back(std::move(link.value()));
  return {};
}

RdmaLink* RdmaParticipant::link_of(std::uint32_t qp_num) noexcept {
  for (const auto& link : rdma_links_) {
    if (link->qp_num() == qp_num) {
      return link.get();
    }
  }
  return nullptr;
}

Result<void> RdmaParticipant::drain_completions() {
  for (;;) {
    auto event = take_channel_event(channel_.get());
    if (!event.ok()) {
      return event.error();
    }
    if (event.value() == nullptr) {
      break;
    }
    if (auto rearmed = cq_.event_taken(); !rearmed.ok()) {
      return rearmed;
    }
  }
  // After the re-arm: a completion between the last poll and the arm raised no event, this poll finds it.
  for (;;) {
    auto n = cq_.poll(batch_);
    if (!n.ok()) {
      return n.error();
    }
    for (std::size_t i = 0; i < n.value(); ++i) {
      route(batch_[i]);
    }
    if (n.value() < batch_.size()) {
      return {};
    }
  }
}

std::size_t RdmaParticipant::poll_batch() noexcept {
  if (options_.handler != nullptr) {
    options_.handler->before_poll();  // after the last poll's subscriber had its message
  }
  auto n = cq_.poll(batch_);
  if (!n.ok()) {
    return 0;
  }
  for (std::size_t i = 0; i < n.value(); ++i) {
    route(batch_[i]);
  }
  return n.value();
}

void RdmaParticipant::route(const Completion& c) noexcept {
  // A completion of a QP already destroyed (its link torn down) has no link: nothing is left to do for it.
  if (RdmaLink* link = link_of(c.qp_num); link != nullptr) {
    link->handle(c);
  }
}

void RdmaParticipant::link_closing(const ibv_qp* qp) noexcept {
  // The first link of that QP: a newer one cannot have its address while this one's QP still exists.
  const auto it = std::find_if(rdma_links_.begin(), rdma_links_.end(),
                               [qp](const std::unique_ptr<RdmaLink>& l) { return l->qp() == qp; });
  if (it != rdma_links_.end()) {
    (*it)->close();
  }
}

void RdmaParticipant::end_failed_links(std::vector<LinkEvent>& events) {
  for (const auto& link : rdma_links_) {
    if (!link->failed()) {
      continue;
    }
    const std::string why = link->failure();
    if (links_->fail(link->peer(), link->qp(), why, events)) {
      link_failures_.fetch_add(1, std::memory_order_relaxed);
      logger().warn("node '{}': ended the RDMA link to participant {:016x} at {}: {}", options_.node_name, link->peer(),
                    where(link->peer()), why);
    }
  }
}

Result<void> RdmaParticipant::handle_device_events() {
  if (!device_events_->has_pending()) {
    return {};
  }
  device_events_->take(device_batch_);
  const AsyncEventScope scope{
      .device = registration_->device().device, .port = registration_->device().port, .cq = cq_.get()};
  for (const ibv_async_event& event : device_batch_) {
    AsyncEventOutcome outcome = classify_async_event(event, scope);
    switch (outcome.action) {
      case AsyncEventAction::kNone:
        logger().debug("node '{}': RDMA device event: {}", options_.node_name, outcome.why);
        break;
      case AsyncEventAction::kLog:
        logger().info("node '{}': RDMA device event: {}", options_.node_name, outcome.why);
        break;
      case AsyncEventAction::kFailLink:
        // By the QP's address (compared only): an event of a QP already destroyed finds no link.
        for (const auto& link : rdma_links_) {
          if (link->qp() == outcome.qp) {
            link->fail(outcome.why);  // end_failed_links() ends it, as after a failed completion
          }
        }
        break;
      case AsyncEventAction::kPortDown:
        port_errors_.fetch_add(1, std::memory_order_relaxed);
        logger().warn("node '{}': {}: its {} RDMA links are ended; they connect again once the port is up",
                      options_.node_name, outcome.why, rdma_links_.size());
        for (const auto& link : rdma_links_) {
          link->fail(outcome.why);
        }
        links_->port_down();
        break;
      case AsyncEventAction::kPortUp:
        logger().info("node '{}': {}: the RDMA links connect again", options_.node_name, outcome.why);
        links_->port_up();
        break;
      case AsyncEventAction::kStop: return Error(ErrorCode::kClosed, std::move(outcome.why));
    }
  }
  return {};
}

void RdmaParticipant::give_up(std::string_view what, std::string_view why) {
  logger().error(
      "node '{}': the RDMA participant's {} failed ({}); its links are closed and no RDMA link is made until the "
      "node restarts",
      options_.node_name, what, why);
  const std::uint64_t up = links_up_.load(std::memory_order_relaxed);
  link_losses_.fetch_add(up, std::memory_order_relaxed);
  stop_links();
  turn_->give_back();
}

void RdmaParticipant::apply(const std::vector<LinkEvent>& events) {
  for (const LinkEvent& e : events) {
    if (e.qp == nullptr || e.kind == LinkEventKind::kRefused) {
      continue;
    }
    // By the QP's address: a lost event's QP is destroyed (never dereferenced).
    const auto it = std::find_if(rdma_links_.begin(), rdma_links_.end(),
                                 [&e](const std::unique_ptr<RdmaLink>& l) { return l->qp() == e.qp; });
    if (it == rdma_links_.end()) {
      continue;  // on_qp refused it
    }
    RdmaLink& link = **it;
    if (e.kind == LinkEventKind::kUp) {
      if (auto up = link.up(e.peer_data, e.active); !up.ok()) {
        link.fail(up.error().message());
        continue;
      }
      if (options_.handler != nullptr) {
        options_.handler->on_link_up(link);
      }
      link.deliver_early_receives();
      continue;
    }
    // Lost: the QP is destroyed, so the card reads no chunk of it any more and writes nothing into the pool.
    std::unique_ptr<RdmaLink> gone = std::move(*it);
    rdma_links_.erase(it);
    const std::uint32_t released = gone->release_all();
    if (released != 0) {
      logger().debug("node '{}': {} chunks of writes to participant {:016x} unpinned with its link", options_.node_name,
                     released, e.peer);
    }
    if (gone->is_up() && options_.handler != nullptr) {
      options_.handler->on_link_lost(*gone);
    }
  }  // `gone` freed here: its ring after its QP
}

void RdmaParticipant::stop_links() {
  if (!links_) {
    return;
  }
  // forget() sends each peer the DREQ and destroys the QP, before the CQ goes.
  std::vector<LinkEvent> events;
  for (const auto& [peer, at] : wanted_) {
    links_->forget(peer, events);
  }
  apply(events);
  wanted_.clear();
  links_.reset();  // links never wanted: their QPs go with their CM ids
  for (const auto& link : rdma_links_) {
    (void)link->release_all();  // never up: no handler saw them
  }
  rdma_links_.clear();  // the rings, after their QPs
  links_up_.store(0, std::memory_order_relaxed);
}

void RdmaParticipant::run() noexcept {
  std::vector<LinkEvent> events;
  std::vector<int> fds;
  std::vector<pollfd> ready;
  auto next_check = PeerLinks::Clock::now();
  SpinnerWatch spinners;
  // Each step's events are applied before the CQ is polled again: a lost link's QP is destroyed, so no
  // completion may reach that link (a repost on it) after the step that destroyed it.
  const auto settle = [&] {
    report(events);
    apply(events);
    events.clear();
  };
  for (;;) {
    turn_->take();  // given back before the sleep: spinners poll meanwhile
    const auto now = PeerLinks::Clock::now();
    if (now >= next_check) {
      follow_discovery(events);
      settle();
      next_check = now + options_.recheck;
    }
    if (auto handled = handle_device_events(); !handled) {
      give_up("device", handled.error().message());
      return;
    }
    if (auto drained = drain_completions(); !drained) {
      give_up("completion queue", drained.error().message());
      return;
    }
    end_failed_links(events);
    settle();
    if (auto stepped = links_->step(now, events); !stepped) {
      settle();
      give_up("listener", stepped.error().message());
      return;
    }
    settle();
    // The streams' retries (grants a waiting sender asked for, control
    // messages a full send queue held back) run on each pass, and again
    // after tick_period while they say something still waits.
    const bool ticking = options_.tick && options_.tick();
    turn_->give_back();
    // While spinners poll the CQ, the card's events would wake this thread
    // for completions they take: the channel stays out, and the thread
    // looks again (a drain, a re-arm) once a lease may have ended.
    const std::int64_t now_ns = monotonic_now_ns();
    const bool leased = spinners.leased(*turn_, now_ns);

    links_->poll_fds(fds);
    ready.clear();
    ready.push_back({.fd = stop_fd_, .events = POLLIN, .revents = 0});
    ready.push_back({.fd = leased ? -1 : channel_->fd, .events = POLLIN, .revents = 0});
    ready.push_back({.fd = wake_fd_, .events = POLLIN, .revents = 0});
    ready.push_back({.fd = device_events_->fd(), .events = POLLIN, .revents = 0});
    for (const int fd : fds) {
      ready.push_back({.fd = fd, .events = POLLIN, .revents = 0});
    }
    auto wake = next_check;
    if (const auto deadline = links_->next_deadline(); deadline && *deadline < wake) {
      wake = *deadline;
    }
    if (ticking) {
      wake = std::min(wake, PeerLinks::Clock::now() + options_.tick_period);
    }
    const int n = sleep(ready, wake, leased ? &spinners : nullptr);
    if (n > 0 && (ready[0].revents & POLLIN) != 0) {
      return;  // the destructor stops the links
    }
    if (n > 0 && (ready[2].revents & POLLIN) != 0) {
      std::uint64_t woken = 0;  // a link failed on another thread: end_failed_links() next
      (void)::read(wake_fd_, &woken, sizeof woken);
    }
    if (n > 0 && (ready[3].revents & POLLIN) != 0) {
      if (auto read = device_events_->read_device(); !read) {
        turn_->take();  // the links go: no spinner may poll them
        give_up("device", read.error().message());
        return;
      }
    }
  }
}

int RdmaParticipant::sleep(std::vector<pollfd>& ready, PeerLinks::Clock::time_point wake, SpinnerWatch* leased) {
  auto now = PeerLinks::Clock::now();
  for (;;) {
    auto until = wake;
    if (leased != nullptr) {
      until = std::min(until, now + std::chrono::nanoseconds(leased->next_look_in_ns(monotonic_now_ns())));
    }
    const auto left =
        std::max(std::chrono::duration_cast<std::chrono::nanoseconds>(until - now), std::chrono::nanoseconds(0));
    const timespec timeout{.tv_sec = static_cast<time_t>(left.count() / 1'000'000'000),
                           .tv_nsec = static_cast<long>(left.count() % 1'000'000'000)};
    const int n = ::ppoll(ready.data(), ready.size(), &timeout, nullptr);
    if (n != 0 || leased == nullptr) {
      return n;
    }
    now = PeerLinks::Clock::now();
    // Only the look at the spinners was due. While they still poll, they
    // drain the queue: back to sleep without a pass, whose system calls
    // (a drain, a re-arm) would take the CPU a spinner shares with this thread.
    // When they stopped, or the pass's own time came, a pass drains what they
    // left and watches the channel again.
    if (now >= wake || !leased->leased(*turn_, monotonic_now_ns())) {
      return 0;
    }
  }
}

void RdmaParticipant::follow_discovery(std::vector<LinkEvent>& events) {
  options_.peers(listed_);
  for (const RdmaPeer& peer : listed_) {
    const auto it = wanted_.find(peer.sender_id);
    if (it == wanted_.end() || it->second.address != peer.at.address || it->second.port != peer.at.port) {
      wanted_[peer.sender_id] = peer.at;
      links_->want(peer.sender_id, peer.at);
    }
  }
  for (auto it = wanted_.begin(); it != wanted_.end();) {
    const std::uint64_t id = it->first;
    const bool listed =
        std::any_of(listed_.begin(), listed_.end(), [id](const RdmaPeer& p) { return p.sender_id == id; });
    if (listed) {
      ++it;
      continue;
    }
    it = wanted_.erase(it);
    links_->forget(id, events);
  }
}

std::string RdmaParticipant::where(std::uint64_t peer) const {
  const auto it = wanted_.find(peer);
  return it == wanted_.end() ? std::string("an address discovery no longer lists") : to_string(it->second);
}

void RdmaParticipant::report(const std::vector<LinkEvent>& events) {
  for (const LinkEvent& e : events) {
    switch (e.kind) {
      case LinkEventKind::kUp:
        links_up_.fetch_add(1, std::memory_order_relaxed);
        logger().info("node '{}': RDMA link to participant {:016x} at {} up (this side {}){}", options_.node_name,
                      e.peer, where(e.peer), e.active ? "connected" : "accepted",
                      options_.handler == nullptr ? "; no topic uses it yet" : "");
        break;
      case LinkEventKind::kLost:
        if (e.was_up) {
          links_up_.fetch_sub(1, std::memory_order_relaxed);
          link_losses_.fetch_add(1, std::memory_order_relaxed);
          logger().info("node '{}': RDMA link to participant {:016x} at {} lost: {}", options_.node_name, e.peer,
                        where(e.peer), why_lost(e));
        } else {
          logger().debug("node '{}': RDMA connection attempt to participant {:016x} at {} failed: {}",
                         options_.node_name, e.peer, where(e.peer), why_lost(e));
        }
        break;
      case LinkEventKind::kRefused:
        if (e.reason == RejectReason::kNotExpected) {
          logger().debug("node '{}': refused an RDMA connection of participant {:016x}: {}", options_.node_name, e.peer,
                         to_string(*e.reason));
        } else {
          logger().warn("node '{}': refused an RDMA connection of participant {:016x}: {}{}", options_.node_name,
                        e.peer, e.reason ? std::string(to_string(*e.reason)) : std::string("its request"),
                        e.detail.empty() ? std::string() : ": " + e.detail);
        }
        break;
    }
  }
}

}  // namespace axon::rdma
