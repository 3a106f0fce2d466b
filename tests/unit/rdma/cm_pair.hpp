// Two ends of one rdma_cm connection in one process, for the on-device
// data plane tests: host A (10.0.2.15) connects to a listener of host B
// (10.0.2.16), both on the Soft-RoCE guest's rxe0. Each end has its
// registered MAP_SHARED memfd and PD (registered_memfd.hpp), a completion
// channel with a send and a receive queue, a control ring whose receives are
// posted before the connection carries anything, and a send queue budget.
// (tests/unit/rdma/loopback_qp.hpp connects two bare QPs by hand on one
// address instead, for the verbs and pool tests that need no rdma_cm and no
// control ring; the two share no set-up.)
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tests/unit/rdma/registered_memfd.hpp"
#include "transports/rdma/cm_connection.hpp"
#include "transports/rdma/cm_listener.hpp"
#include "transports/rdma/completion_queue.hpp"
#include "transports/rdma/control_ring.hpp"
#include "transports/rdma/send_queue_budget.hpp"

namespace axon::rdma::test {

inline constexpr std::uint32_t kPairReceiveSlots = 8;
inline constexpr std::uint32_t kPairSendSlots = 4;
inline constexpr std::uint32_t kPairSendDepth = 16;

struct CmEnd {
  // Declared so that they go in the right order: the QP (connection) first,
  // then the ring's region and the queues, the channel, the PD (mem) last.
  std::unique_ptr<RegisteredMemfd> mem;
  CompChannelHandle channel;
  std::optional<CompletionQueue> send_cq;
  std::optional<CompletionQueue> recv_cq;
  std::optional<ControlRing> ring;
  SendQueueBudget budget{kPairSendDepth};
  std::optional<CmConnection> connection;

  [[nodiscard]] ibv_qp* qp() const { return connection->qp(); }
  [[nodiscard]] QpConfig qp_config() const {
    return {.pd = mem->pd(),
            .send_cq = send_cq->get(),
            .recv_cq = recv_cq->get(),
            .send_depth = kPairSendDepth,
            .recv_depth = kPairReceiveSlots};
  }
  [[nodiscard]] ConnectPrivateData private_data(std::uint64_t sender) const {
    return {.version = kConnectProtocolVersion,
            .sender_id = sender,
            .incarnation = 1,
            .abi_hash = 0xAB1,
            .rkey = mem->mr()->rkey,
            .base = reinterpret_cast<std::uintptr_t>(mem->base()),
            .length = mem->bytes(),
            .receive_depth = kPairReceiveSlots,
            .max_message_bytes = mem->max_message_bytes()};
  }
  [[nodiscard]] PeerRegion region() const {
    return {.base = reinterpret_cast<std::uintptr_t>(mem->base()), .length = mem->bytes()};
  }

  // Everything but the connection; "" or what failed.
  std::string open(const std::string& device, std::size_t region_bytes) {
    std::string error;
    mem = RegisteredMemfd::open(device, region_bytes, error);
    if (mem == nullptr) {
      return error;
    }
    auto made = make_completion_channel(mem->pd()->context);
    if (!made.ok()) {
      return std::string(made.error().message());
    }
    channel = std::move(made.value());
    auto s = CompletionQueue::create(mem->pd()->context, channel.get(), 64);
    auto r = CompletionQueue::create(mem->pd()->context, channel.get(), 64);
    auto g = ControlRing::create(mem->pd(), kPairReceiveSlots, kPairSendSlots);
    if (!s.ok() || !r.ok() || !g.ok()) {
      return std::string(!s.ok() ? s.error().message() : !r.ok() ? r.error().message() : g.error().message());
    }
    send_cq.emplace(std::move(s.value()));
    recv_cq.emplace(std::move(r.value()));
    ring.emplace(std::move(g.value()));
    return "";
  }
};

struct CmPair {
  CmEnd a;  // active side, host A
  CmEnd b;  // passive side, host B
  std::optional<CmListener> listener;

  // Listens on B, connects from A, accepts on B (B's receives posted before
  // the accept unless `post_b_receives` is false, A's once its QP exists),
  // until both are ESTABLISHED.
  std::string connect(const std::string& device, std::size_t region_bytes, bool post_b_receives = true) {
    if (auto e = a.open(device, region_bytes); !e.empty()) {
      return "host A: " + e;
    }
    if (auto e = b.open(device, region_bytes); !e.empty()) {
      return "host B: " + e;
    }
    auto l = CmListener::listen({.address = kHostB, .port = 0});
    if (!l.ok()) {
      return std::string(l.error().message());
    }
    listener.emplace(std::move(l.value()));
    auto c = CmConnection::connect({.address = kHostA, .port = 0}, {.address = kHostB, .port = listener->port()},
                                   a.qp_config(), a.private_data(0xA));
    if (!c.ok()) {
      return std::string(c.error().message());
    }
    a.connection.emplace(std::move(c.value()));
    const AcceptCheck accept_all = [](const ConnectPrivateData&) { return std::optional<RejectReason>(); };
    bool a_posted = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      if (auto e = a.connection->next_event(); !e.ok()) {
        return "host A: " + std::string(e.error().message());
      }
      if (!a_posted && a.connection->qp() != nullptr) {
        if (auto posted = a.ring->post_all_receives(a.qp()); !posted.ok()) {
          return std::string(posted.error().message());
        }
        a_posted = true;
      }
      if (!b.connection) {
        auto event = listener->next_event(accept_all);
        if (!event.ok()) {
          return "host B: " + std::string(event.error().message());
        }
        if (event->kind == ListenerEventKind::kRequest) {
          auto qp = event->request->create_qp(b.qp_config());
          if (!qp.ok()) {
            return std::string(qp.error().message());
          }
          if (auto posted = post_b_receives ? b.ring->post_all_receives(qp.value()) : Result<void>(); !posted.ok()) {
            return std::string(posted.error().message());
          }
          auto accepted = std::move(*event->request).accept(b.private_data(0xB));
          if (!accepted.ok()) {
            return std::string(accepted.error().message());
          }
          b.connection.emplace(std::move(accepted.value()));
        }
      } else if (auto e = b.connection->next_event(); !e.ok()) {
        return "host B: " + std::string(e.error().message());
      }
      if (a_posted && a.connection->established() && b.connection && b.connection->established()) {
        return "";
      }
    }
    return "the connection was not ESTABLISHED on both sides within 10 s";
  }
};

}  // namespace axon::rdma::test
