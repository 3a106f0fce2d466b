#include "transports/rdma/rdma_participant.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "src/base/errors.hpp"
#include "src/base/log.hpp"
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
                            .receive_depth = kLinkQueueDepth,
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
  std::unique_ptr<RdmaParticipant> self(
      new RdmaParticipant(std::move(registration), std::move(options), std::move(*channel), std::move(*cq)));
  auto links = PeerLinks::listen(PeerLinksOptions{.own = self->options_.own,
                                                  .qp = {.pd = self->registration_->pd(),
                                                         .send_cq = self->cq_.get(),
                                                         .recv_cq = self->cq_.get(),
                                                         .send_depth = kLinkQueueDepth,
                                                         .recv_depth = kLinkQueueDepth},
                                                  .own_data = *own_data,
                                                  .on_qp = {}});
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
  self->thread_ = std::thread([p = self.get()] { p->run(); });
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
  stop_links();
  if (stop_fd_ >= 0) {
    ::close(stop_fd_);
  }
}

RdmaLinkCounters RdmaParticipant::counters() const noexcept {
  return RdmaLinkCounters{.links_up = links_up_.load(std::memory_order_relaxed),
                          .link_losses = link_losses_.load(std::memory_order_relaxed)};
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
  wanted_.clear();
  links_.reset();  // links never wanted: their QPs go with their CM ids
  links_up_.store(0, std::memory_order_relaxed);
}

void RdmaParticipant::run() noexcept {
  std::vector<LinkEvent> events;
  std::vector<int> fds;
  std::vector<pollfd> ready;
  auto next_check = PeerLinks::Clock::now();
  for (;;) {
    const auto now = PeerLinks::Clock::now();
    if (now >= next_check) {
      follow_discovery(events);
      next_check = now + options_.recheck;
    }
    if (auto stepped = links_->step(now, events); !stepped) {
      report(events);
      logger().error(
          "node '{}': the RDMA participant's listener failed ({}); its links are closed and no RDMA link "
          "is made until the node restarts",
          options_.node_name, stepped.error().message());
      const std::uint64_t up = links_up_.load(std::memory_order_relaxed);
      link_losses_.fetch_add(up, std::memory_order_relaxed);
      stop_links();
      return;
    }
    report(events);
    events.clear();

    links_->poll_fds(fds);
    ready.clear();
    ready.push_back({.fd = stop_fd_, .events = POLLIN, .revents = 0});
    for (const int fd : fds) {
      ready.push_back({.fd = fd, .events = POLLIN, .revents = 0});
    }
    auto wake = next_check;
    if (const auto deadline = links_->next_deadline(); deadline && *deadline < wake) {
      wake = *deadline;
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(wake - PeerLinks::Clock::now()).count();
    const int n = ::poll(ready.data(), ready.size(), static_cast<int>(std::max<long long>(left, 0)));
    if (n > 0 && (ready[0].revents & POLLIN) != 0) {
      return;  // the destructor stops the links
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
        logger().info("node '{}': RDMA link to participant {:016x} at {} up (this side {}); no topic uses it yet",
                      options_.node_name, e.peer, where(e.peer), e.active ? "connected" : "accepted");
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
