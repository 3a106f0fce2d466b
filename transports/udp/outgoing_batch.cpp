#include "transports/udp/outgoing_batch.hpp"

#include <netinet/udp.h>

#include <algorithm>
#include <cstring>

namespace axon::udp {
namespace {

std::size_t size_of(const OutgoingDatagram& d) noexcept { return d.header.size() + d.payload.size(); }

}  // namespace

std::size_t OutgoingBatch::run_length(std::span<const OutgoingDatagram> datagrams, std::size_t limit,
                                      std::size_t envelope_bytes) noexcept {
  const OutgoingDatagram& first = datagrams.front();
  const std::size_t segment_bytes = size_of(first) + envelope_bytes;
  if (segment_bytes == 0) {
    return 1;
  }
  const std::size_t longest = std::min({limit, kMaxSegments, kMaxSegmentedBytes / segment_bytes});
  std::size_t length = 1;
  while (length < longest && length < datagrams.size()) {
    const OutgoingDatagram& next = datagrams[length];
    const std::size_t bytes = size_of(next) + envelope_bytes;
    if (!(next.to == first.to) || bytes > segment_bytes || size_of(next) == 0) {
      break;
    }
    ++length;
    if (bytes < segment_bytes) {
      break;  // only the last segment may be shorter
    }
  }
  return length;
}

std::size_t OutgoingBatch::fitting_the_arena(std::span<const OutgoingDatagram> datagrams,
                                             std::size_t run) const noexcept {
  std::size_t room = arena_.size() - arena_used_;
  std::size_t fitting = 0;
  while (fitting < run && size_of(datagrams[fitting]) <= room) {
    room -= size_of(datagrams[fitting]);
    ++fitting;
  }
  return fitting;
}

void OutgoingBatch::add_message(std::span<const OutgoingDatagram> run) noexcept {
  const std::size_t m = message_count_++;
  iovec* const first_vector = &vectors_[vector_count_];
  for (const OutgoingDatagram& d : run) {
    if (sealer_ != nullptr) {
      // Sealed as it is added: the envelope lives in this batch until sendmmsg.
      EnvelopeBytes& envelope = envelopes_[sealed_++];
      std::span<std::byte> ciphertext;
      if (sealer_->encrypts()) {
        ciphertext = arena_.subspan(arena_used_, size_of(d));  // build() made sure it fits
        arena_used_ += ciphertext.size();
      }
      if (!sealer_->seal(envelope, d.header, d.payload, ciphertext)) {
        // OpenSSL or getrandom() failed (a thread's first datagram): the zeroed
        // envelope makes receivers drop it, as a lost datagram.
        envelope.fill(std::byte{0});
        std::fill(ciphertext.begin(), ciphertext.end(), std::byte{0});
      }
      vectors_[vector_count_++] = iovec{envelope.data(), envelope.size()};
      if (sealer_->encrypts()) {
        // The ciphertext of header and payload goes instead of them: nothing in clear.
        if (!ciphertext.empty()) {
          vectors_[vector_count_++] = iovec{ciphertext.data(), ciphertext.size()};
        }
        continue;
      }
    }
    // iovec wants non-const pointers; sendmmsg only reads them.
    vectors_[vector_count_++] = iovec{const_cast<std::byte*>(d.header.data()), d.header.size()};
    if (!d.payload.empty()) {
      vectors_[vector_count_++] = iovec{const_cast<std::byte*>(d.payload.data()), d.payload.size()};
    }
  }
  addresses_[m] = run.front().to.to_sockaddr();
  datagrams_per_message_[m] = static_cast<std::uint16_t>(run.size());
  mmsghdr& message = messages_[m];
  message = mmsghdr{};
  message.msg_hdr.msg_name = &addresses_[m];
  message.msg_hdr.msg_namelen = sizeof(sockaddr_in);
  message.msg_hdr.msg_iov = first_vector;
  message.msg_hdr.msg_iovlen = static_cast<std::size_t>(&vectors_[vector_count_] - first_vector);
  if (run.size() > 1) {
    // The kernel cuts the message every `segment` bytes: each piece is one
    // datagram of the run, envelope, header and payload.
    const auto segment = static_cast<std::uint16_t>(size_of(run.front()) + (sealer_ != nullptr ? kEnvelopeBytes : 0));
    message.msg_hdr.msg_control = controls_[m].bytes.data();
    message.msg_hdr.msg_controllen = controls_[m].bytes.size();
    cmsghdr* const control = CMSG_FIRSTHDR(&message.msg_hdr);
    control->cmsg_level = SOL_UDP;
    control->cmsg_type = UDP_SEGMENT;
    control->cmsg_len = CMSG_LEN(sizeof(segment));
    std::memcpy(CMSG_DATA(control), &segment, sizeof(segment));
  }
}

std::size_t OutgoingBatch::build(std::span<const OutgoingDatagram> datagrams, bool segment,
                                 const EnvelopeSealer* sealer, std::span<std::byte> cipher_arena) noexcept {
  message_count_ = 0;
  vector_count_ = 0;
  std::size_t taken = 0;
  const std::size_t budget = std::min(datagrams.size(), kMaxDatagrams);
  sealer_ = sealer;
  sealed_ = 0;
  arena_ = cipher_arena;
  arena_used_ = 0;
  const bool encrypting = sealer != nullptr && sealer->encrypts();
  const std::size_t envelope_bytes = sealer != nullptr ? kEnvelopeBytes : 0;
  while (taken < budget) {
    const std::span<const OutgoingDatagram> rest = datagrams.subspan(taken, budget - taken);
    std::size_t run = segment ? run_length(rest, rest.size(), envelope_bytes) : 1;
    if (encrypting) {
      run = fitting_the_arena(rest, run);  // a shorter run may now go one datagram per message
      if (run == 0) {
        break;  // the arena is full: the rest goes with the next build()
      }
    }
    if (run < kMinSegments) {
      for (std::size_t i = 0; i < run; ++i) {
        add_message(rest.subspan(i, 1));
      }
    } else {
      add_message(rest.first(run));
    }
    taken += run;
  }
  return taken;
}

std::size_t OutgoingBatch::datagrams_in_first(std::size_t messages) const noexcept {
  std::size_t datagrams = 0;
  for (std::size_t i = 0; i < std::min(messages, message_count_); ++i) {
    datagrams += datagrams_per_message_[i];
  }
  return datagrams;
}

}  // namespace axon::udp
