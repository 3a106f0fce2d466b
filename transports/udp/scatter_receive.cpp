#include "transports/udp/scatter_receive.hpp"

#include <algorithm>
#include <cstring>

namespace axon::udp {
namespace {

// Whether `d` is exactly the fragment `p` predicted, its payload where `p` put it.
bool is_predicted(const ParsedDatagram& d, const PredictedFragment& p) noexcept {
  const DataFragment& f = d.data;
  return d.header.type == DatagramType::kData && d.header.sender_id == p.key.sender_id &&
         f.writer_id == p.key.writer_id && f.sequence == p.key.sequence && f.topic_id == p.topic_id &&
         f.total_bytes == p.total_bytes && f.fragment_count == p.fragment_count &&
         f.fragment_bytes == p.fragment_bytes && f.fragment_index == p.index &&
         f.payload.data() == p.destination.data() && f.payload.size() == p.destination.size();
}

}  // namespace

ScatterReceive::ScatterReceive(std::size_t batch, std::size_t datagram_bytes, std::size_t envelope_bytes)
    : batch_(std::clamp<std::size_t>(batch, 1, UdpSocket::kMaxBatch)),
      datagram_bytes_(datagram_bytes),
      envelope_bytes_(envelope_bytes),
      storage_(batch_ * datagram_bytes_),
      parsed_(batch_) {}

std::span<IncomingDatagram> ScatterReceive::prepare(const Reassembler* reassembler) noexcept {
  predicted_count_ = 0;
  received_ = 0;
  const std::size_t head = envelope_bytes_ + kDataHeaderBytes;  // envelope and DATA header: their own buffer
  if (reassembler != nullptr) {
    predicted_count_ = reassembler->predict_next(std::span(predictions_).first(batch_));
    // Predictions are used in order: the first one that does not fit a buffer ends them.
    const auto too_long = std::find_if(predictions_.begin(), predictions_.begin() + predicted_count_,
                                       [&](const auto& p) { return head + p.destination.size() > datagram_bytes_; });
    predicted_count_ = static_cast<std::size_t>(too_long - predictions_.begin());
  }
  for (std::size_t i = 0; i < batch_; ++i) {
    const std::span<std::byte> own = buffer(i);
    IncomingDatagram& d = incoming_[i];
    d = IncomingDatagram{};
    if (i < predicted_count_) {
      // Envelope and header, the fragment's place in its chunk, then the rest
      // of the buffer past where the payload would go: putting a datagram
      // that is not the predicted fragment back together is then one copy of its middle.
      const std::span<std::byte> place = predictions_[i].destination;
      d.pieces = {own.first(head), place, own.subspan(head + place.size())};
    } else {
      d.pieces[0] = own;
    }
    in_place_[i] = false;
    refused_[i] = false;
  }
  return std::span(incoming_).first(batch_);
}

void ScatterReceive::settle(std::size_t received, const WireLimits& limits, DatagramGuard* guard) noexcept {
  received_ = std::min(received, batch_);
  if (guard != nullptr && guard->active()) {
    // Every datagram of the batch, before any is parsed: a refused one never
    // reaches the parser, nor is a predicted fragment's place taken as filled.
    for (std::size_t i = 0; i < received_; ++i) {
      const IncomingDatagram& d = incoming_[i];
      if (d.size <= datagram_bytes_) {
        refused_[i] =
            !guard->admit(DatagramPieces{.pieces = {d.pieces[0], d.pieces[1], d.pieces[2]}, .size = d.size}, d.from);
      }
    }
  }
  const std::size_t head = envelope_bytes_ + kDataHeaderBytes;
  for (std::size_t i = 0; i < std::min(received_, predicted_count_); ++i) {
    const IncomingDatagram& d = incoming_[i];
    const std::span<std::byte> place = d.pieces[1];
    if (d.size > datagram_bytes_ || refused_[i]) {
      continue;  // cut or refused: arrival() says so
    }
    if (d.size == head + place.size() &&
        parse_split_datagram(d.pieces[0].subspan(envelope_bytes_), place, limits, parsed_[i]) == ParseError::kOk &&
        is_predicted(parsed_[i], predictions_[i])) {
      in_place_[i] = true;
      continue;
    }
    // Not the predicted fragment: its middle goes back between its header and
    // its tail. Every chunk a prediction points at is still held (nothing of
    // this batch has been handled yet), so these bytes are safe to read.
    if (d.size > head) {
      const std::size_t middle = std::min(place.size(), d.size - head);
      std::memcpy(buffer(i).data() + head, place.data(), middle);
    }
  }
}

Arrival ScatterReceive::arrival(std::size_t i, const Reassembler& reassembler) const noexcept {
  const IncomingDatagram& d = incoming_[i];
  Arrival arrival{.kind = Arrival::Kind::kTooLong, .bytes = {}, .parsed = nullptr, .from = d.from};
  if (i >= received_ || d.size > datagram_bytes_) {
    return arrival;
  }
  if (refused_[i]) {
    arrival.kind = Arrival::Kind::kRefused;
    return arrival;
  }
  if (!in_place_[i]) {
    // Without a guard a datagram shorter than the envelope is passed whole (envelope_bytes_ is then 0).
    arrival.kind = Arrival::Kind::kContiguous;
    arrival.bytes = buffer(i).first(d.size).subspan(std::min(envelope_bytes_, d.size));
    return arrival;
  }
  if (!reassembler.prediction_holds(predictions_[i])) {
    arrival.kind = Arrival::Kind::kStale;  // its chunk may be back in the pool: not read again
    return arrival;
  }
  arrival.kind = Arrival::Kind::kInPlace;
  arrival.parsed = &parsed_[i];
  return arrival;
}

}  // namespace axon::udp
