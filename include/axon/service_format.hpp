// How a service carries its requests and replies in one format: the message
// types its endpoints publish and take, where the header and the body are in
// them, and how a server writes its reply. Server<Req, Rep> and
// Client<Req, Rep> are written once over this trait (docs/design/services.md,
// "Formats"); raw structs are served here, FlatBuffers tables and Protobuf
// messages by their serializers (<axon/serializers/flatbuffers.hpp>,
// <axon/serializers/protobuf.hpp>).
#pragma once

#include <functional>
#include <utility>

#include "axon/outcome.hpp"
#include "axon/publisher.hpp"
#include "axon/serializer.hpp"
#include "axon/service_message.hpp"

namespace axon::detail {

/// One specialization per format. Members:
///   Incoming            the type a subscriber of the format's topic takes
///   Outgoing            the type a publisher of it sends (the same type, or a
///                       view that encodes without a copy)
///   header(incoming)    the ServiceHeader of a taken message
///   body(incoming)      the request or reply as user code reads it
///   Handler<Req>        what a server's handler is, for this reply format
///   ServerScratch       what a server keeps from reply to reply
///   reply(...)          writes a reply through the handler and publishes it
/// The primary template serves no type: its assertion names the formats.
template <class T, class Enable = void>
struct ServiceFormat {
  static_assert(sizeof(T) == 0,
                "axon services carry trivially copyable structs, FlatBuffers tables (#include "
                "<axon/serializers/flatbuffers.hpp>) and Protobuf messages (#include <axon/serializers/protobuf.hpp>)");
};

/// Raw structs: the header and the struct in one trivially copyable message,
/// loaned and read in place (zero copy both ways).
template <RawMessage T>
struct ServiceFormat<T> {
  using Incoming = ServiceMessage<T>;
  using Outgoing = ServiceMessage<T>;
  template <class Req>
  using Handler = std::function<void(const Req& request, T& reply)>;
  struct ServerScratch {};

  static ServiceHeader header(const Incoming& message) noexcept { return message.header; }
  static const T& body(const Incoming& message) noexcept { return message.body; }

  /// Loans the reply, lets the handler write it in place, publishes it.
  template <class Req>
  static PublishResult reply(Publisher<Outgoing>& out, const ServiceHeader& header, const Req& request,
                             const Handler<Req>& handler, ServerScratch& /*scratch*/) noexcept {
    auto loan = out.loan();
    if (!loan) {
      return loan.exhausted() ? PublishResult(kPoolExhausted) : PublishResult(loan.error());
    }
    (*loan)->header = header;
    handler(request, (*loan)->body);
    return out.publish(std::move(*loan));
  }
};

/// A format whose requests are loaned values (raw structs).
template <class T>
concept ServiceLoansValue = LoansValue<typename ServiceFormat<T>::Outgoing>;
/// A format whose requests are built in a loaned builder (FlatBuffers).
template <class T>
concept ServiceBuildsInPlace = BuildsInPlace<typename ServiceFormat<T>::Outgoing>;
/// A format whose requests are encoded from a value the caller keeps
/// (Protobuf): ServiceFormat<T>::outgoing(header, value) is what is published.
template <class T>
concept ServiceEncodesValue = requires {
  requires ServiceFormat<T>::kEncodesFromValue;
};

}  // namespace axon::detail
