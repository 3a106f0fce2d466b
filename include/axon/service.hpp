// Server<Req, Rep>: the serving side of a service, request/response on top of
// topics (docs/design/services.md). Requests of every client arrive on one
// topic; each reply goes to its caller's own reply topic, so it reaches that
// client's process only. Raw and FlatBuffers requests and replies are
// loaned (built) and read in place; Protobuf ones are serialized into loaned
// chunks and decoded.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "axon/callback_subscription.hpp"
#include "axon/publisher.hpp"
#include "axon/result.hpp"
#include "axon/service_format.hpp"
#include "axon/service_message.hpp"
#include "axon/subscriber.hpp"
#include "axon/transport.hpp"

namespace axon {

/// What a server did so far.
struct ServerCounters {
  std::uint64_t handled = 0;         ///< Requests whose handler ran and whose reply was sent.
  std::uint64_t replies_failed = 0;  ///< Handled, but the reply could not be sent (logged).
};

/// Usage (Node::serve() makes one):
///   auto server = node->serve<SetMode, ModeAck>("set_mode",
///       [](const SetMode& req, ModeAck& reply) { reply.accepted = apply(req); });
///   executor.add(*server);            // or: server->handle_one(100ms) in a loop
///
/// The handler writes the reply straight into a loaned chunk of shared
/// memory. FlatBuffers: it builds the reply in a builder over a loaned chunk
/// and returns its root:
///   [](const SetMode& req, flatbuffers::FlatBufferBuilder& b) { return CreateModeAck(b, apply(req)); }
/// Protobuf: it fills a reply message the server reuses (cleared first),
/// which is then serialized straight into a loaned chunk. Thread safety: one thread at a time (an executor, or the
/// thread that calls handle_one()). Steady state (a client seen before): taking the request, running the handler and
/// sending the reply do not allocate, lock or make system calls beyond the futex wake of a sleeping client. A client's
/// first request advertises its reply topic (slow path).
template <class Req, class Rep>
class Server final : public SubscriptionBase {
  using RequestFormat = detail::ServiceFormat<Req>;
  using ReplyFormat = detail::ServiceFormat<Rep>;
  using RequestMessage = typename RequestFormat::Incoming;
  using ReplyMessage = typename ReplyFormat::Outgoing;

 public:
  /// Raw and Protobuf replies: void(const Req&, Rep&); FlatBuffers replies:
  /// flatbuffers::Offset<Rep>(const Req&, flatbuffers::FlatBufferBuilder&).
  using Handler = typename ReplyFormat::template Handler<Req>;
  /// Advertises a reply topic (Node::serve() passes one over its transport).
  using ReplyAdvertiser = std::function<Result<std::shared_ptr<Publisher<ReplyMessage>>>(std::string_view topic)>;

  Server(std::string service, std::shared_ptr<Subscriber<RequestMessage>> requests, Handler handler,
         ReplyAdvertiser advertise) noexcept
      : service_(std::move(service)),
        requests_(std::move(requests)),
        handler_(std::move(handler)),
        advertise_(std::move(advertise)) {}

  /// Takes one request, runs the handler and sends the reply to its caller
  /// (kNoData: no request queued). For executors; see handle_one().
  DispatchResult dispatch_one() noexcept override {
    auto request = requests_->take();
    if (!request) {
      return request.empty() ? DispatchResult::kNoData : DispatchResult::kDropped;
    }
    reply_to(*request);
    return DispatchResult::kDispatched;
  }

  /// Waits up to `timeout` for a request and handles it: true when one was
  /// handled, false when the timeout passed first (an outcome).
  Result<bool> handle_one(std::chrono::nanoseconds timeout) noexcept {
    const std::int64_t deadline = detail::monotonic_ns() + timeout.count();
    WakeWord* word = requests_->wake_word();
    const std::span<WakeWord* const> words(&word, word == nullptr ? 0 : 1);
    for (;;) {
      const DispatchResult done = dispatch_one();
      if (done == DispatchResult::kDispatched) {
        return true;
      }
      auto check = detail::ReadyCheck{
          .fn = [](void* self) noexcept { return static_cast<Server*>(self)->requests_->has_data(); }, .context = this};
      if (!detail::wait_until_ready(words, check, deadline, kSliceNs)) {
        return false;
      }
    }
  }

  [[nodiscard]] bool has_data() noexcept override { return requests_->has_data(); }
  [[nodiscard]] WakeWord* wake_word() noexcept override { return requests_->wake_word(); }
  [[nodiscard]] WaitSource* wait_source() noexcept override { return requests_->wait_source(); }
  [[nodiscard]] std::int64_t deadline_ns() const noexcept override { return 0; }
  [[nodiscard]] std::uint64_t publishers_lost() const noexcept override { return requests_->publishers_lost(); }
  [[nodiscard]] const std::string& topic() const noexcept override { return requests_->topic(); }

  [[nodiscard]] const std::string& service() const noexcept { return service_; }
  [[nodiscard]] ServerCounters counters() const noexcept { return counters_; }
  /// Clients this server keeps a reply topic open for.
  [[nodiscard]] std::size_t clients() const noexcept { return replies_.size(); }

 private:
  /// A sleep lasts at most this long: a request whose publisher this server
  /// has not linked yet moves no word of ours.
  static constexpr std::int64_t kSliceNs = 10'000'000;
  /// Past this many clients, reply topics nobody subscribes any more are closed.
  static constexpr std::size_t kPruneAbove = 8;

  void reply_to(const Sample<RequestMessage>& request) noexcept {
    const detail::ServiceHeader header = RequestFormat::header(*request);
    Publisher<ReplyMessage>* out = reply_publisher(header.client_key);
    if (out == nullptr) {
      ++counters_.replies_failed;
      return;
    }
    const PublishResult sent = ReplyFormat::reply(*out, header, RequestFormat::body(*request), handler_, scratch_);
    if (!sent || sent.status().delivered == 0) {
      ++counters_.replies_failed;  // no chunk, the client left, or its queue is full
      return;
    }
    ++counters_.handled;
  }

  /// The reply publisher of `client_key`, advertised on first use; nullptr
  /// when that failed (logged by the caller's counters).
  Publisher<ReplyMessage>* reply_publisher(std::uint64_t client_key) noexcept {
    if (auto it = replies_.find(client_key); it != replies_.end()) {
      return it->second.get();
    }
    try {
      if (replies_.size() >= kPruneAbove) {
        std::erase_if(replies_, [](const auto& entry) { return entry.second->subscriber_count() == 0; });
      }
      auto made = advertise_(detail::reply_topic(service_, client_key));
      if (!made) {
        detail::log_service_failure(service_, made.error());
        return nullptr;
      }
      return replies_.emplace(client_key, std::move(*made)).first->second.get();
    } catch (...) {
      return nullptr;  // no memory for a new client: it gets no reply and times out
    }
  }

  std::string service_;
  std::shared_ptr<Subscriber<RequestMessage>> requests_;
  Handler handler_;
  ReplyAdvertiser advertise_;
  typename ReplyFormat::ServerScratch scratch_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Publisher<ReplyMessage>>> replies_;
  ServerCounters counters_;
};

}  // namespace axon
