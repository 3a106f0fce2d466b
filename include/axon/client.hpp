// Client<Req, Rep>: the calling side of a service (docs/design/services.md).
// A call publishes the request (a raw struct loaned, a FlatBuffers message
// built in a loaned chunk, a Protobuf message serialized into one) with this
// client's key and a call id, then sleeps on its own reply topic and on the domain's graph
// word until the reply with that id arrives, the server leaves, or the
// timeout passes. Replies to calls that timed out are dropped and counted.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "axon/graph.hpp"
#include "axon/loan.hpp"
#include "axon/outcome.hpp"
#include "axon/publisher.hpp"
#include "axon/result.hpp"
#include "axon/sample.hpp"
#include "axon/service_format.hpp"
#include "axon/service_message.hpp"
#include "axon/subscriber.hpp"

namespace axon {

template <class Req, class Rep>
class Client;

/// A raw request written in place in shared memory (Client::loan()).
template <class Req>
class RequestLoan {
  using Message = typename detail::ServiceFormat<Req>::Outgoing;

 public:
  Req& operator*() noexcept { return (*loan_).body; }
  Req* operator->() noexcept { return &(*loan_).body; }

 private:
  template <class, class>
  friend class Client;
  explicit RequestLoan(Loan<Message> loan) noexcept : loan_(std::move(loan)) {}
  Loan<Message> loan_;
};

/// A reply, read in place where the server wrote it (raw, FlatBuffers: the
/// root table) or decoded from it (Protobuf); gives its chunk (or decoded
/// object) back when dropped (a Sample). Move-only.
template <class Rep>
class Reply {
  using Format = detail::ServiceFormat<Rep>;

 public:
  explicit Reply(Sample<typename Format::Incoming> sample) noexcept : sample_(std::move(sample)) {}
  const Rep& operator*() const noexcept { return Format::body(*sample_); }
  const Rep* operator->() const noexcept { return &Format::body(*sample_); }
  [[nodiscard]] std::uint64_t call_id() const noexcept { return Format::header(*sample_).call_id; }

 private:
  Sample<typename Format::Incoming> sample_;
};

/// A call sent with Client::send(), to wait for with Client::wait().
struct CallId {
  std::uint64_t value = 0;
};

/// What a client saw so far.
struct ClientCounters {
  std::uint64_t calls = 0;                 ///< Requests sent.
  std::uint64_t replies = 0;               ///< Replies handed to the caller.
  std::uint64_t timeouts = 0;              ///< Calls that timed out.
  std::uint64_t servers_lost = 0;          ///< Calls whose server left (or died) before replying.
  std::uint64_t late_replies_dropped = 0;  ///< Replies to calls that had timed out (or been given up).
};

/// Usage (Node::client() makes one):
///   auto client = node->client<SetMode, ModeAck>("set_mode");
///   auto reply = (*client)->call(SetMode{.mode = 2}, 100ms);
///   if (reply) use((*reply)->accepted); else log(reply.error().message());
///
/// FlatBuffers requests are built in shared memory:
///   auto request = (*client)->loan_builder();
///   auto root = CreateSetMode(request->builder(), 2);
///   auto reply = (*client)->call(std::move(*request), root, 100ms);
/// Protobuf requests are serialized straight into a loaned chunk:
///   auto reply = (*client)->call(set_mode_message, 100ms);
///
/// Errors, never a hang: kNoServer when no server serves the service (or it
/// left, or died, during the call: the graph word wakes the caller), kTimeout
/// when no reply came in time, kLimitReached when the server's request
/// queue is full. One call is outstanding at a time: send() gives up the
/// previous call, whose reply is then dropped and counted as late.
///
/// Thread safety: one thread at a time. Steady state (the same server, the
/// graph unchanged): a call does not allocate or lock; it makes the futex
/// calls of a sleep and a wake. When the domain's graph moved, the next call
/// takes a snapshot of the service's endpoints (allocates).
template <class Req, class Rep>
class Client {
  using RequestFormat = detail::ServiceFormat<Req>;
  using ReplyFormat = detail::ServiceFormat<Rep>;
  using RequestMessage = typename RequestFormat::Outgoing;
  using ReplyMessage = typename ReplyFormat::Incoming;

 public:
  Client(std::string service, std::uint64_t key, std::shared_ptr<Publisher<RequestMessage>> requests,
         std::shared_ptr<Subscriber<ReplyMessage>> replies, GraphWatcher servers) noexcept
      : service_(std::move(service)),
        key_(key),
        requests_(std::move(requests)),
        replies_(std::move(replies)),
        servers_(std::move(servers)) {}

  /// Raw structs: a request in shared memory; exhausted() when the pool has
  /// no chunk.
  [[nodiscard]] LoanResult<RequestLoan<Req>> loan() noexcept requires detail::ServiceLoansValue<Req> {
    auto loan = requests_->loan();
    if (!loan) {
      return loan.exhausted() ? LoanResult<RequestLoan<Req>>(kPoolExhausted) : loan.error();
    }
    return RequestLoan<Req>(std::move(*loan));
  }
  /// FlatBuffers: a builder whose buffer is a chunk of shared memory (one at
  /// a time); build the request with builder(), then call() or send() it
  /// with its root. `expected_bytes` as Publisher::loan_builder().
  [[nodiscard]] auto loan_builder(std::size_t expected_bytes = 0) noexcept requires detail::ServiceBuildsInPlace<Req> {
    return requests_->loan_builder(expected_bytes);
  }

  /// Raw structs (copied into a loaned chunk) and Protobuf messages
  /// (serialized into one): sends `request` and waits up to `timeout` for
  /// its reply.
  Result<Reply<Rep>> call(const Req& request, std::chrono::nanoseconds timeout) noexcept requires
      detail::ServiceLoansValue<Req> || detail::ServiceEncodesValue<Req> {
    if constexpr (detail::ServiceLoansValue<Req>) {
      auto loaned = loan();
      if (!loaned) {
        return loaned.exhausted() ? no_chunk() : loaned.error();
      }
      **loaned = request;
      return call(std::move(*loaned), timeout);
    } else {
      const std::int64_t deadline = detail::monotonic_ns() + timeout.count();
      return finish_call(send_value_until(request, deadline), deadline);
    }
  }
  /// Raw structs: sends a loaned request (zero copy) and waits up to
  /// `timeout` for its reply.
  Result<Reply<Rep>> call(RequestLoan<Req>&& request,
                          std::chrono::nanoseconds timeout) noexcept requires detail::ServiceLoansValue<Req> {
    const std::int64_t deadline = detail::monotonic_ns() + timeout.count();
    return finish_call(send_until(std::move(request), deadline), deadline);
  }
  /// FlatBuffers: finishes the loaned builder's request at `root`, sends it
  /// (zero copy) and waits up to `timeout` for its reply.
  template <class Builder, class Root>
  Result<Reply<Rep>> call(Builder&& request, Root root,
                          std::chrono::nanoseconds timeout) noexcept requires detail::ServiceBuildsInPlace<Req> {
    const std::int64_t deadline = detail::monotonic_ns() + timeout.count();
    return finish_call(send_until(std::forward<Builder>(request), root, deadline), deadline);
  }

  /// Sends a request without waiting for the reply (waits at most
  /// `connect_timeout` for a server that just started to connect). Gives up
  /// a call still outstanding. Raw structs: a loan; FlatBuffers: a builder
  /// and its root; Protobuf: the message.
  Result<CallId> send(RequestLoan<Req>&& request, std::chrono::nanoseconds connect_timeout = std::chrono::seconds(
                                                      1)) noexcept requires detail::ServiceLoansValue<Req> {
    return send_until(std::move(request), detail::monotonic_ns() + connect_timeout.count());
  }
  template <class Builder, class Root>
  Result<CallId> send(Builder&& request, Root root,
                      std::chrono::nanoseconds connect_timeout =
                          std::chrono::seconds(1)) noexcept requires detail::ServiceBuildsInPlace<Req> {
    return send_until(std::forward<Builder>(request), root, detail::monotonic_ns() + connect_timeout.count());
  }
  Result<CallId> send(const Req& request, std::chrono::nanoseconds connect_timeout = std::chrono::seconds(
                                              1)) noexcept requires detail::ServiceEncodesValue<Req> {
    return send_value_until(request, detail::monotonic_ns() + connect_timeout.count());
  }
  /// Waits up to `timeout` for the reply of `call` (the outstanding one).
  Result<Reply<Rep>> wait(CallId call, std::chrono::nanoseconds timeout) noexcept {
    return wait_until(call, detail::monotonic_ns() + timeout.count());
  }

  /// Whether a server serves the service now (lock-free unless the graph moved).
  [[nodiscard]] bool server_present() noexcept {
    if (servers_.changed()) {
      try {
        (void)servers_.poll();  // an error keeps what was known
      } catch (...) {           // NOLINT(bugprone-empty-catch): no memory for a snapshot: keep what was known
      }
    }
    return count_endpoints(servers_.endpoints(), GraphEndpointKind::kSubscriber) > 0;
  }
  /// Sleeps until a server serves the service, or `timeout` passed
  /// (kTimedOut, an outcome). Slow path (allocates snapshots).
  Result<GraphWait> wait_for_server(std::chrono::nanoseconds timeout) {
    auto met = servers_.wait_until(
        [](std::span<const GraphEndpoint> now) { return count_endpoints(now, GraphEndpointKind::kSubscriber) > 0; },
        timeout);
    if (!met) {
      return met.error();
    }
    return *met ? GraphWait::kMet : GraphWait::kTimedOut;
  }
  [[nodiscard]] const std::string& service() const noexcept { return service_; }
  [[nodiscard]] ClientCounters counters() const noexcept { return counters_; }

 private:
  /// Longest single sleep: a server that connects moves no word of ours.
  static constexpr std::int64_t kSliceNs = 10'000'000;

  static Error no_chunk() { return {ErrorCode::kLimitReached, "service call: no free chunk for the request"}; }

  Result<Reply<Rep>> finish_call(const Result<CallId>& id, std::int64_t deadline) noexcept {
    if (!id) {
      return id.error();
    }
    return wait_until(*id, deadline);
  }

  // One send per request shape; each stamps the header and publishes through
  // publish_call(), which holds what they share.
  Result<CallId> send_until(RequestLoan<Req>&& request, std::int64_t deadline) noexcept {
    return publish_call(deadline, [&](const detail::ServiceHeader& header) {
      request.loan_->header = header;
      return requests_->publish(std::move(request.loan_));
    });
  }
  template <class Builder, class Root>
  Result<CallId> send_until(Builder&& request, Root root, std::int64_t deadline) noexcept {
    return publish_call(deadline, [&](const detail::ServiceHeader& header) {
      request.stamp(header);
      return requests_->publish(std::forward<Builder>(request), root);
    });
  }
  Result<CallId> send_value_until(const Req& request, std::int64_t deadline) noexcept {
    return publish_call(deadline, [&](const detail::ServiceHeader& header) {
      return requests_->publish(RequestFormat::outgoing(header, request));
    });
  }

  /// server_present(), but a snapshot that could not be taken (the domain
  /// lock was busy) is retried until `deadline`: a busy lock must not make a
  /// present server look absent. kTimeout when the graph stayed unreadable.
  Result<bool> server_present_by(std::int64_t deadline) noexcept {
    while (!server_present()) {
      if (!servers_.snapshot_owed()) {
        return false;  // a snapshot of now: no server
      }
      if (detail::monotonic_ns() >= deadline) {
        return Error(ErrorCode::kTimeout,
                     "service call: the domain's graph could not be read before the timeout (another process holds "
                     "the domain lock); call again");
      }
      WakeWord* graph = &servers_.word();
      auto read = detail::ReadyCheck{
          .fn = [](void* self) noexcept { return static_cast<Client*>(self)->servers_.changed(); }, .context = this};
      (void)detail::wait_until_ready(std::span<WakeWord* const>(&graph, 1), read, deadline, 1'000'000);
    }
    return true;
  }

  /// Checks that a server serves the service and has connected, then
  /// publishes the request through `publish(header)` and makes it the
  /// outstanding call.
  template <class Publish>
  Result<CallId> publish_call(std::int64_t deadline, Publish&& publish) noexcept {
    pending_ = 0;  // an outstanding call is given up: its reply will be late
    auto present = server_present_by(deadline);
    if (!present) {
      return present.error();
    }
    if (!*present) {
      return Error(ErrorCode::kNoServer, "service call: no server serves this service (nobody called serve())");
    }
    // A server that just started links our request publisher at its next take().
    while (requests_->subscriber_count() == 0) {
      if (detail::monotonic_ns() >= deadline) {
        return Error(ErrorCode::kTimeout, "service call: the server did not connect before the timeout");
      }
      WakeWord* graph = &servers_.word();
      auto connected = detail::ReadyCheck{
          .fn = [](void* self) noexcept { return static_cast<Client*>(self)->requests_->subscriber_count() != 0; },
          .context = this};
      (void)detail::wait_until_ready(std::span<WakeWord* const>(&graph, 1), connected, deadline, 1'000'000);
      if (!server_present()) {
        return Error(ErrorCode::kNoServer, "service call: the server left before the request was sent");
      }
    }
    const std::uint64_t id = ++next_id_;
    const PublishResult sent = publish(detail::ServiceHeader{.client_key = key_, .call_id = id});
    if (sent.exhausted()) {
      return no_chunk();
    }
    if (sent.failed()) {
      return sent.error();
    }
    if (sent.status().delivered == 0) {
      return Error(ErrorCode::kLimitReached,
                   "service call: the server's request queue is full (it does not keep up; raise "
                   "ServiceOptions::request_depth or call less often)");
    }
    ++counters_.calls;
    pending_ = id;
    return CallId{id};
  }

  Result<Reply<Rep>> wait_until(CallId call, std::int64_t deadline) noexcept {
    if (call.value == 0 || call.value != pending_) {
      return Error(ErrorCode::kInvalidArgument, "service call: not the outstanding call of this client");
    }
    std::array<WakeWord*, 2> words{replies_->wake_word(), &servers_.word()};
    const std::span<WakeWord* const> watched(words.data() + (words[0] == nullptr ? 1 : 0), words[0] == nullptr ? 1 : 2);
    for (;;) {
      for (;;) {
        auto reply = replies_->take();
        if (!reply) {
          if (reply.failed()) {
            return reply.error();
          }
          break;
        }
        const detail::ServiceHeader header = ReplyFormat::header(**reply);
        if (header.client_key == key_ && header.call_id == pending_) {
          pending_ = 0;
          ++counters_.replies;
          return Reply<Rep>(std::move(*reply));
        }
        ++counters_.late_replies_dropped;  // a reply to a call that timed out: never the answer to this one
      }
      if (!server_present()) {
        pending_ = 0;
        ++counters_.servers_lost;
        return Error(ErrorCode::kNoServer, "service call: the server left (or died) before it replied");
      }
      if (detail::monotonic_ns() >= deadline) {
        pending_ = 0;
        ++counters_.timeouts;
        return Error(ErrorCode::kTimeout, "service call: no reply before the timeout");
      }
      auto arrived = detail::ReadyCheck{.fn =
                                            [](void* self) noexcept {
                                              auto* client = static_cast<Client*>(self);
                                              return client->replies_->has_data() || client->servers_.changed();
                                            },
                                        .context = this};
      (void)detail::wait_until_ready(watched, arrived, deadline, kSliceNs);
    }
  }

  std::string service_;
  std::uint64_t key_;
  std::shared_ptr<Publisher<RequestMessage>> requests_;
  std::shared_ptr<Subscriber<ReplyMessage>> replies_;
  GraphWatcher servers_;  ///< The request topic's endpoints: its subscriber is the server.
  std::uint64_t next_id_ = 0;
  std::uint64_t pending_ = 0;  ///< The outstanding call's id (0: none).
  ClientCounters counters_;
};

}  // namespace axon
