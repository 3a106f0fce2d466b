// Node: a process's (or component's) membership in a domain; creates
// publishers and subscribers.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "axon/any_publication.hpp"
#include "axon/any_subscription.hpp"
#include "axon/bytes.hpp"
#include "axon/callback_subscription.hpp"
#include "axon/client.hpp"
#include "axon/deployment_config.hpp"
#include "axon/graph.hpp"
#include "axon/network.hpp"
#include "axon/options.hpp"
#include "axon/publisher.hpp"
#include "axon/result.hpp"
#include "axon/serializer.hpp"
#include "axon/service.hpp"
#include "axon/service_message.hpp"
#include "axon/subscriber.hpp"
#include "axon/transport.hpp"
#include "axon/type_identity.hpp"

namespace axon {

namespace detail {
class NetworkView;
class ConfigUsage;
}  // namespace detail

/// Thread safety: all methods may be called from any thread. Publishers and
/// subscribers keep what they need alive, so they may outlive their node.
class Node {
 public:
  /// Joins the domain (NodeOptions::domain_id, AXON_DOMAIN, the deployment
  /// config's domain, or 0). Reads the deployment config named by
  /// NodeOptions::config_path or AXON_CONFIG, if any (docs/configuration.md).
  /// Fails with a message saying what to fix: an invalid config (file, line,
  /// column), a topic or peer this build has no transport for, no room in
  /// /dev/shm, a domain made by an incompatible axon build, too many
  /// participants, ...
  static Result<std::shared_ptr<Node>> create(std::string name, NodeOptions options = {});

  /// A publisher of T on `topic`, encoded by Serializer<T>, with the
  /// topic's QoS from the deployment config when it lists the topic, else
  /// the defaults (docs/configuration.md, "Precedence"). Refused when the
  /// topic carries another type, or when qos.require_zero_copy is set and
  /// T's data path is not zero copy.
  template <class T>
  Result<std::shared_ptr<Publisher<T>>> advertise(std::string_view topic) {
    return make_publisher<T>(topic, std::nullopt);
  }
  /// A publisher with exactly `qos`, whatever the deployment config says
  /// (also when `qos` equals the defaults); refused like advertise(topic).
  template <class T>
  Result<std::shared_ptr<Publisher<T>>> advertise(std::string_view topic, const PublisherQos& qos) {
    return make_publisher<T>(topic, qos);
  }

  /// A subscriber of T on `topic`, with the deployment config's QoS for the
  /// topic, else the defaults; refused like advertise().
  template <class T>
  Result<std::shared_ptr<Subscriber<T>>> subscribe(std::string_view topic) {
    return make_subscriber<T>(topic, std::nullopt);
  }
  /// A subscriber with exactly `qos`, whatever the deployment config says.
  template <class T>
  Result<std::shared_ptr<Subscriber<T>>> subscribe(std::string_view topic, const SubscriberQos& qos) {
    return make_subscriber<T>(topic, qos);
  }

  /// A subscriber of T on `topic` whose messages an executor hands to
  /// `callback` (add the result to a SingleThreadedExecutor or
  /// MultiThreadedExecutor), with the deployment config's QoS for the
  /// topic, else the defaults. Refused like subscribe(), and when `callback`
  /// is empty.
  template <class T, class Callback>
  requires std::is_invocable_v < Callback&, const Sample<T>
  & > Result<std::shared_ptr<CallbackSubscription<T>>> subscribe(std::string_view topic, Callback&& callback) {
    return make_callback_subscription<T>(topic, std::nullopt, std::forward<Callback>(callback));
  }
  /// The same with exactly `qos`, whatever the deployment config says.
  template <class T>
  Result<std::shared_ptr<CallbackSubscription<T>>> subscribe(
      std::string_view topic, const SubscriberQos& qos,
      std::type_identity_t<std::function<void(const Sample<T>&)>> callback) {
    return make_callback_subscription<T>(topic, qos, std::move(callback));
  }

  // Graph events (axon/graph.hpp, docs/design/graph-events.md): who
  // publishes and subscribes a topic, and waits for that to change, across
  // the processes of the domain. Slow path (allocates); none waits for the
  // domain lock behind another process.

  /// A watcher of `topic`'s publishers and subscribers (poll() / wait()).
  /// kRequirementNotMet when the transport does not report the graph.
  Result<GraphWatcher> watch_graph(std::string_view topic);
  /// `topic`'s endpoints now; kTimeout when the domain lock stayed held by
  /// another process for all of `timeout`.
  Result<std::vector<GraphEndpoint>> graph_endpoints(std::string_view topic,
                                                     std::chrono::nanoseconds timeout = std::chrono::seconds(1));
  /// Sleeps (no polling: the graph word wakes it) until `holds(endpoints of
  /// topic)` is true, or `timeout` passed (kTimedOut, an outcome). Negative
  /// timeout: no timeout.
  Result<GraphWait> wait_for_graph(std::string_view topic,
                                   const std::function<bool(std::span<const GraphEndpoint>)>& holds,
                                   std::chrono::nanoseconds timeout);
  /// wait_for_graph() until `topic` has at least `at_least` endpoints of
  /// `kind` (0: until it has none, e.g. "the publisher left").
  Result<GraphWait> wait_for_endpoints(std::string_view topic, GraphEndpointKind kind, std::size_t at_least,
                                       std::chrono::nanoseconds timeout);
  /// A subscription an executor runs: `callback` gets each event of `topic`
  /// (first: every endpoint present, as kAppeared). Add it to an executor.
  Result<std::shared_ptr<GraphSubscription>> on_graph_event(std::string_view topic,
                                                            GraphSubscription::Callback callback);

  // Services (axon/service.hpp, axon/client.hpp, docs/design/services.md):
  // request/response on topics; raw structs and FlatBuffers tables loaned
  // (built) and read in place, Protobuf messages serialized into loaned chunks.

  /// Serves `service`: `handler(request, reply)` fills each caller's reply
  /// in place (run it with an executor, or Server::handle_one()). Refused
  /// when the service already has a server (kLimitReached, naming its node)
  /// or its name is unusable.
  template <class Req, class Rep>
  Result<std::shared_ptr<Server<Req, Rep>>> serve(std::string_view service, typename Server<Req, Rep>::Handler handler,
                                                  const ServiceOptions& options = {}) {
    using ReplyMessage = typename detail::ServiceFormat<Rep>::Outgoing;
    if (auto ok = detail::check_service_name(service); !ok) {
      return ok.error();
    }
    if (!handler) {
      return Error(ErrorCode::kInvalidArgument, "serve(): the handler is empty");
    }
    const std::string requests_topic = detail::request_topic(service);
    if (auto taken = refuse_second_server(service, requests_topic); !taken) {
      return taken.error();
    }
    auto requests = make_subscriber<typename detail::ServiceFormat<Req>::Incoming>(
        requests_topic, SubscriberQos{.history = History::kKeepAll, .depth = options.request_depth});
    if (!requests) {
      return requests.error();
    }
    std::shared_ptr<Transport> transport = transport_;
    auto advertise = [transport](std::string_view topic) { return advertise_reply<ReplyMessage>(*transport, topic); };
    return std::make_shared<Server<Req, Rep>>(std::string(service), std::move(*requests), std::move(handler),
                                              std::move(advertise));
  }

  /// A client of `service` (its own reply topic). It may be created before
  /// the server; calls fail with kNoServer until one serves.
  template <class Req, class Rep>
  Result<std::shared_ptr<Client<Req, Rep>>> client(std::string_view service, const ServiceOptions& options = {}) {
    if (auto ok = detail::check_service_name(service); !ok) {
      return ok.error();
    }
    const std::uint64_t key = detail::new_client_key();
    auto replies = make_subscriber<typename detail::ServiceFormat<Rep>::Incoming>(
        detail::reply_topic(service, key), SubscriberQos{.depth = options.reply_depth});
    if (!replies) {
      return replies.error();
    }
    auto requests =
        make_publisher<typename detail::ServiceFormat<Req>::Outgoing>(detail::request_topic(service), PublisherQos{});
    if (!requests) {
      return requests.error();
    }
    auto servers = watch_graph(detail::request_topic(service));
    if (!servers) {
      return servers.error();
    }
    return std::make_shared<Client<Req, Rep>>(std::string(service), key, std::move(*requests), std::move(*replies),
                                              std::move(*servers));
  }

  /// A bytes publisher (<axon/bytes.hpp>) of `topic` that carries messages
  /// of the type `carries` identifies (type_identity_of<T>(), or an
  /// identity a bridge got from a recording or a peer): it joins the topic
  /// as that type, so it is refused like advertise<T>() would be when the
  /// topic carries another type, and its loans must have a size that type
  /// allows. QoS as advertise().
  Result<std::shared_ptr<Publisher<Bytes>>> advertise_bytes(std::string_view topic, const TypeIdentity& carries) {
    return make_publisher<Bytes>(topic, std::nullopt, carries);
  }
  Result<std::shared_ptr<Publisher<Bytes>>> advertise_bytes(std::string_view topic, const TypeIdentity& carries,
                                                            const PublisherQos& qos) {
    return make_publisher<Bytes>(topic, qos, carries);
  }
  /// A bytes subscriber of `topic` that joins it as the type `carries`
  /// identifies (refused like subscribe<T>() on a topic of another type).
  /// Its samples are the payloads as published, unchecked (a span of
  /// bytes). For an executor, wrap it in a CallbackSubscription<Bytes>.
  Result<std::shared_ptr<Subscriber<Bytes>>> subscribe_bytes(std::string_view topic, const TypeIdentity& carries) {
    return make_subscriber<Bytes>(topic, std::nullopt, carries);
  }
  Result<std::shared_ptr<Subscriber<Bytes>>> subscribe_bytes(std::string_view topic, const TypeIdentity& carries,
                                                             const SubscriberQos& qos) {
    return make_subscriber<Bytes>(topic, qos, carries);
  }

  /// A subscriber of `topic` for a program that does not know its type
  /// (axon/any_subscription.hpp): it joins the topic as the type the domain
  /// records for it (never a type mismatch), takes each message's bytes in
  /// place, and comes with the topic's record (type and schema, as
  /// Transport::find_topic() reads them). Waits for a publisher as
  /// `options.wait_for_publisher` says; without a wait, a topic no endpoint
  /// has yet is refused (kNotFound). Slow path: allocates, takes the domain
  /// lock, reads the schema file.
  Result<AnySubscription> subscribe_any(std::string_view topic, const AnySubscriptionOptions& options = {});

  /// A publisher of `topic` for a program that does not know its type
  /// (axon/any_publication.hpp): a bytes publisher that joins the topic as
  /// the type the domain records for it (never a type mismatch: typed
  /// subscribers take its messages as a typed publisher's, after their usual
  /// verification), with the topic's record (type and schema, as
  /// Transport::find_topic() reads them) to encode messages from. A topic no
  /// endpoint has yet is refused (kNotFound: there is no type to adopt)
  /// unless `options.declared` names the type: then it is created as that
  /// type with its schema (a replay into an empty domain), and a topic of
  /// another hash refuses it (kTypeMismatch naming both types). QoS
  /// and limits as advertise(); loans as advertise_bytes() (a raw struct's
  /// exactly its size). Slow path: allocates, takes the domain lock, reads
  /// the schema file.
  Result<AnyPublication> advertise_any(std::string_view topic, const AnyPublicationOptions& options = {});
  /// `topic` as the domain records it (Transport::find_topic()): its type
  /// identity as registered and the schema its first endpoint with one
  /// stored, for a program that checks a topic before it joins it.
  /// kNotFound when no endpoint of this host has it. Slow path, as above.
  Result<TopicRecord> find_topic(std::string_view topic) { return transport_->find_topic(topic); }

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::uint32_t domain_id() const noexcept { return domain_id_; }
  /// Free and total chunks per class of this node's pool.
  [[nodiscard]] std::vector<PoolClassStats> pool_stats() const { return transport_->pool_stats(); }

  /// The transport that carries `topic` beyond this host: kShm when the topic
  /// stays on this host (config `transport: shm`, or no other host), kRdma
  /// when every other host of the config is reached by RDMA (written into
  /// their pools by the RDMA device: `transport: rdma`, or `auto` between
  /// hosts that all name an rdma_device), else kUdp (some or all hosts by
  /// UDP; routes() says which).
  [[nodiscard]] TransportKind transport_for(std::string_view topic) const noexcept;
  /// Where this node's messages of `topic` go now: first this host (shared
  /// memory; always listed, its subscribers not counted), then, when
  /// transport_for(topic) is kUdp or kRdma, each remote host that announced
  /// a subscription to it, with the count it announced, and the transport
  /// that carries the topic to that host (`auto` is chosen per pair of hosts).
  /// Slow path (allocates).
  [[nodiscard]] std::vector<TopicRoute> routes(std::string_view topic) const;
  /// Counters of this node's UDP participant (zeros when it has none).
  [[nodiscard]] NetworkCounters network_counters() const noexcept;
  /// The host this node runs on by the deployment config ("" without one, or
  /// when the file lists no hosts).
  [[nodiscard]] const std::string& host() const noexcept { return host_; }
  /// The deployment config this node was created with (nullptr: none).
  [[nodiscard]] const std::shared_ptr<const DeploymentConfig>& deployment() const noexcept { return deployment_; }
  /// This node's executor thread settings from the deployment config (empty
  /// without one): hand them to MultiThreadedOptions::worker_thread or
  /// apply_thread_options(); executors are the application's.
  [[nodiscard]] ThreadOptions executor_thread_options() const;
  /// What the deployment config names that matched nothing, as logged
  /// (warning level): this node missing from a file that lists other nodes,
  /// a topic entry that looks like a misspelling of a topic this node uses
  /// (when the endpoint is created). Each "FILE[:LINE:COLUMN]: ...". Empty
  /// without a config. Slow path (copies).
  [[nodiscard]] std::vector<std::string> config_warnings() const;

  Node(std::string name, std::uint32_t domain_id, std::shared_ptr<Transport> transport,
       std::shared_ptr<const DeploymentConfig> deployment = nullptr, std::string host = {},
       std::shared_ptr<detail::NetworkView> network = nullptr) noexcept
      : name_(std::move(name)),
        domain_id_(domain_id),
        transport_(std::move(transport)),
        deployment_(std::move(deployment)),
        host_(std::move(host)),
        network_(std::move(network)) {}

 private:
  static TopicDescriptor describe(std::string_view topic, TypeIdentity type, bool allow_evolution,
                                  std::uint64_t max_payload_bytes) {
    return TopicDescriptor{.name = std::string(topic),
                           .type = std::move(type),
                           .max_payload_bytes = max_payload_bytes,
                           .allow_compatible_evolution = allow_evolution,
                           .schema = {},
                           .carried_by = {}};
  }
  // "No QoS given" is std::nullopt, never a QoS that happens to equal the
  // defaults: a QoS written in code is used as it is. `carries`: the type a
  // bytes endpoint joins as (std::nullopt: T's own identity), and
  // `carried_schema` that type's schema when the caller knows it (a declared
  // type, advertise_any()).
  template <class T>
  Result<std::shared_ptr<Publisher<T>>> make_publisher(std::string_view topic, const std::optional<PublisherQos>& code,
                                                       const std::optional<TypeIdentity>& carries = std::nullopt,
                                                       std::vector<std::byte> carried_schema = {}) {
    PublisherQos qos = publisher_qos_for(topic, code);
    static_assert(detail::HasSerializer<T>, "no axon serializer for T (see axon/serializer.hpp)");
    if (auto ok = check_data_path(topic, Serializer<T>::kDataPath, qos.require_zero_copy, "publisher"); !ok) {
      return ok.error();
    }
    TypeIdentity type = carries ? *carries : Serializer<T>::identity();
    if (qos.max_payload_bytes == 0 && type.serializer == "raw") {
      qos.max_payload_bytes = type.size;
    }
    TopicDescriptor descriptor = describe(topic, type, qos.allow_compatible_evolution, qos.max_payload_bytes);
    if (!carries) {
      descriptor.schema = detail::schema_of<T>();
    } else {
      descriptor.schema = std::move(carried_schema);  // empty unless the caller declared it
    }
    auto port = transport_->advertise(descriptor, qos);
    if (!port) {
      return port.error();
    }
    log_data_path(topic, Serializer<T>::kName, Serializer<T>::kDataPath, "publisher");
    if constexpr (detail::CarriesDeclaredType<T>) {
      return std::make_shared<Publisher<T>>(std::move(*port), std::string(topic), qos, type);
    } else {
      return std::make_shared<Publisher<T>>(std::move(*port), std::string(topic), qos);
    }
  }
  template <class T>
  Result<std::shared_ptr<Subscriber<T>>> make_subscriber(std::string_view topic,
                                                         const std::optional<SubscriberQos>& code,
                                                         const std::optional<TypeIdentity>& carries = std::nullopt) {
    const SubscriberQos qos = subscriber_qos_for(topic, code);
    static_assert(detail::HasSerializer<T>, "no axon serializer for T (see axon/serializer.hpp)");
    if (auto ok = check_data_path(topic, Serializer<T>::kDataPath, qos.require_zero_copy, "subscriber"); !ok) {
      return ok.error();
    }
    TopicDescriptor descriptor =
        describe(topic, carries ? *carries : Serializer<T>::identity(), qos.allow_compatible_evolution, 0);
    if (!carries) {
      // A typed subscriber stores its schema too when no publisher did yet, so that a tool can publish to
      // it (`axon topic pub`) before any publisher runs.
      descriptor.schema = detail::schema_of<T>();
    }
    auto port = transport_->subscribe(descriptor, qos);
    if (!port) {
      return port.error();
    }
    log_data_path(topic, Serializer<T>::kName, Serializer<T>::kDataPath, "subscriber");
    return std::make_shared<Subscriber<T>>(std::move(*port), std::string(topic), qos);
  }
  template <class T>
  Result<std::shared_ptr<CallbackSubscription<T>>> make_callback_subscription(
      std::string_view topic, const std::optional<SubscriberQos>& code,
      std::function<void(const Sample<T>&)> callback) {
    if (!callback) {
      return Error(ErrorCode::kInvalidArgument, "subscribe(): the callback is empty");
    }
    auto subscriber = make_subscriber<T>(topic, code);
    if (!subscriber) {
      return subscriber.error();
    }
    return std::make_shared<CallbackSubscription<T>>(std::move(*subscriber), std::move(callback));
  }
  /// A reply publisher with the default QoS, on `transport` (what a server's
  /// reply topics are advertised with, after its node may be gone). A raw
  /// reply's largest payload is its size; other formats have none.
  template <class T>
  static Result<std::shared_ptr<Publisher<T>>> advertise_reply(Transport& transport, std::string_view topic) {
    PublisherQos qos;
    if constexpr (detail::LoansValue<T>) {
      qos.max_payload_bytes = sizeof(T);
    }
    auto port = transport.advertise(describe(topic, Serializer<T>::identity(), false, qos.max_payload_bytes), qos);
    if (!port) {
      return port.error();
    }
    return std::make_shared<Publisher<T>>(std::move(*port), std::string(topic), qos);
  }
  /// advertise_any() with a declared type (src/node_any.cpp).
  Result<AnyPublication> advertise_declared(std::string_view topic, const AnyPublicationOptions& options);
  /// kLimitReached naming the server when `requests_topic` has a subscriber already.
  Result<void> refuse_second_server(std::string_view service, std::string_view requests_topic);
  /// `code` when given; else the deployment config's QoS for the topic, if
  /// it lists the topic; else the defaults.
  [[nodiscard]] PublisherQos publisher_qos_for(std::string_view topic, const std::optional<PublisherQos>& code) const;
  [[nodiscard]] SubscriberQos subscriber_qos_for(std::string_view topic,
                                                 const std::optional<SubscriberQos>& code) const;
  static Result<void> check_data_path(std::string_view topic, DataPath path, bool require_zero_copy,
                                      std::string_view role);
  static void log_data_path(std::string_view topic, std::string_view serializer, DataPath path, std::string_view role);

  std::string name_;
  std::uint32_t domain_id_;
  std::shared_ptr<Transport> transport_;
  std::shared_ptr<const DeploymentConfig> deployment_;
  std::string host_;
  std::shared_ptr<detail::NetworkView> network_;
  /// Set by create() when there is a config; at the node's end it logs the
  /// topic entries no endpoint matched (docs/configuration.md).
  std::shared_ptr<detail::ConfigUsage> config_usage_;
};

}  // namespace axon
