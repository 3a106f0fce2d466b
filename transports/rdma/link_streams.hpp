// The one LinkHandler a participant gives its links: it hands each event to
// the half it belongs to. A stream's sender gets what its receiver says about
// it (the OPEN answer, GRANT, and a CLOSE that refuses it); the receiver gets
// what the sender says (OPEN, WANT, CLOSE) and every write. Which is which
// follows from the stream id alone (stream_is_senders_own(), link_port.hpp).
//
// Thread safety: the RDMA thread, as LinkHandler. No allocation.
#pragma once

#include "transports/rdma/link_port.hpp"

namespace axon::rdma {

class LinkStreams final : public LinkHandler {
 public:
  /// `receive_half` handles streams peers send here, `send_half` streams
  /// this node sends; both outlive the links.
  LinkStreams(LinkHandler& receive_half, LinkHandler& send_half) noexcept
      : receive_half_(receive_half), send_half_(send_half) {}

  void on_link_up(LinkPort& link) noexcept override {
    receive_half_.on_link_up(link);
    send_half_.on_link_up(link);
  }
  void on_control(LinkPort& link, const ControlMessage& message) noexcept override {
    if (stream_is_senders_own(link.active(), message.stream_id)) {
      send_half_.on_control(link, message);
    } else {
      receive_half_.on_control(link, message);
    }
  }
  void on_write(LinkPort& link, const ResolvedWrite& write) noexcept override { receive_half_.on_write(link, write); }
  void before_poll() noexcept override { receive_half_.before_poll(); }
  /// The send half first: its pending messages and blocked publishers are
  /// let go before the receive half drops the mirrors.
  void on_link_lost(LinkPort& link) noexcept override {
    send_half_.on_link_lost(link);
    receive_half_.on_link_lost(link);
  }

 private:
  LinkHandler& receive_half_;
  LinkHandler& send_half_;
};

}  // namespace axon::rdma
