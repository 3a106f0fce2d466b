#include "transports/udp/datagram_wait.hpp"

#include <arpa/inet.h>

#include <algorithm>

namespace axon::udp {

DatagramWait::Received DatagramWait::wait_and_receive(futex::WordsAndFdWait& wait, std::span<WakeWord* const> words,
                                                      std::span<const std::uint32_t> seen, int fd, std::size_t count,
                                                      std::size_t datagram_bytes, std::int64_t timeout_ns) noexcept {
  if (datagram_bytes == 0) {
    return {};
  }
  count = std::clamp<std::size_t>(count, 1, kMaxReceives);
  prepare(count, datagram_bytes);
  const auto got = wait.wait_and_receive(words, seen, fd, std::span<msghdr>(messages_.data(), count), timeout_ns);
  std::size_t n = 0;
  for (const futex::WordsAndFdWait::Completion& c : got.completed) {
    const sockaddr_in& from = from_[c.index];
    received_[n++] = ReceivedDatagram{.bytes = std::span<std::byte>(static_cast<std::byte*>(vectors_[c.index].iov_base),
                                                                    std::min(c.size, vectors_[c.index].iov_len)),
                                      .size = c.size,
                                      .from_ipv4 = ntohl(from.sin_addr.s_addr),
                                      .from_port = ntohs(from.sin_port)};
  }
  return {.woken = got.woken,
          .datagrams = std::span<const ReceivedDatagram>(received_.data(), n),
          .all_read = got.all_completed};
}

void DatagramWait::prepare(std::size_t count, std::size_t datagram_bytes) noexcept {
  if (buffer_bytes_ < datagram_bytes) {
    storage_.assign(kMaxReceives * datagram_bytes, std::byte{0});  // once per larger size
    buffer_bytes_ = datagram_bytes;
  }
  for (std::size_t i = 0; i < count; ++i) {
    vectors_[i] = iovec{storage_.data() + i * buffer_bytes_, buffer_bytes_};
    messages_[i] = msghdr{};
    messages_[i].msg_name = &from_[i];
    messages_[i].msg_namelen = sizeof(from_[i]);
    messages_[i].msg_iov = &vectors_[i];
    messages_[i].msg_iovlen = 1;
  }
}

}  // namespace axon::udp
