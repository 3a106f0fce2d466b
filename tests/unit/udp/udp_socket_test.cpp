// UdpSocket::send_batch() over loopback: runs of datagrams sent segmented
// (UDP_SEGMENT) arrive as the same datagrams as when sent one by one.
#include "transports/udp/udp_socket.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <thread>
#include <vector>

namespace axon::udp {
namespace {

constexpr std::size_t kHeaderBytes = 64;
constexpr std::size_t kPayloadBytes = 1408;

UdpSocket open_on_loopback(bool segmentation) {
  auto socket = UdpSocket::open(SocketOptions{.bind = Endpoint{.ipv4 = 0x7F000001, .port = 0},
                                              .send_buffer_bytes = 4U << 20U,
                                              .receive_buffer_bytes = 4U << 20U,
                                              .segmentation = segmentation});
  EXPECT_TRUE(socket.ok()) << socket.error().message();
  return std::move(*socket);
}

/// `count` datagrams: header i (its index in the first byte), payload slice i
/// of `message`; the last payload shorter.
struct Outgoing {
  std::vector<std::array<std::byte, kHeaderBytes>> headers;
  std::vector<std::byte> message;
  std::vector<OutgoingDatagram> datagrams;
  Outgoing(std::size_t count, Endpoint to) : headers(count), message(count * kPayloadBytes - 100) {
    for (std::size_t i = 0; i < message.size(); ++i) {
      message[i] = static_cast<std::byte>(i * 7 + i / 251);
    }
    for (std::size_t i = 0; i < count; ++i) {
      headers[i].fill(static_cast<std::byte>(i));
      const std::size_t offset = i * kPayloadBytes;
      datagrams.push_back(OutgoingDatagram{.header = headers[i],
                                           .payload = std::span<const std::byte>(message).subspan(
                                               offset, std::min(kPayloadBytes, message.size() - offset)),
                                           .to = to});
    }
  }
};

/// Receives `count` datagrams (waiting up to 2 s) and checks each against `sent`.
void expect_received(UdpSocket& receiver, const Outgoing& sent) {
  std::vector<std::byte> buffer(sent.datagrams.size() * 2048);
  std::size_t received = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (received < sent.datagrams.size() && std::chrono::steady_clock::now() < deadline) {
    std::array<IncomingDatagram, UdpSocket::kMaxBatch> batch{};
    for (std::size_t i = 0; i < batch.size(); ++i) {
      batch[i].pieces[0] = std::span(buffer).subspan(((received + i) % sent.datagrams.size()) * 2048, 2048);
    }
    const std::size_t n =
        receiver.receive_batch(std::span(batch).first(std::min(batch.size(), sent.datagrams.size() - received)));
    for (std::size_t i = 0; i < n; ++i, ++received) {
      const OutgoingDatagram& d = sent.datagrams[received];
      ASSERT_EQ(batch[i].size, d.header.size() + d.payload.size()) << "datagram " << received;
      const std::span<const std::byte> bytes = batch[i].pieces[0];
      EXPECT_TRUE(std::equal(d.header.begin(), d.header.end(), bytes.begin())) << "datagram " << received;
      EXPECT_TRUE(std::equal(d.payload.begin(), d.payload.end(), bytes.begin() + kHeaderBytes))
          << "datagram " << received;
    }
    if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  EXPECT_EQ(received, sent.datagrams.size());
}

TEST(UdpSocket, ARunSentSegmentedArrivesAsTheSameDatagramsInOrder) {
  UdpSocket receiver = open_on_loopback(true);
  UdpSocket sut = open_on_loopback(true);
  if (!sut.segments()) {
    GTEST_SKIP() << "this kernel has no UDP_SEGMENT";
  }
  const Outgoing sent(300, receiver.local());

  EXPECT_EQ(sut.send_batch(sent.datagrams), 300U);

  EXPECT_GT(sut.segmented_messages(), 0U);
  EXPECT_LE(sut.segmented_messages(), 10U);  // 300 datagrams of 1472 B: 44 per message at most
  expect_received(receiver, sent);
}

TEST(UdpSocket, WithoutSegmentationTheSameDatagramsArriveOneMessageEach) {
  UdpSocket receiver = open_on_loopback(true);
  UdpSocket sut = open_on_loopback(false);
  const Outgoing sent(300, receiver.local());

  EXPECT_EQ(sut.send_batch(sent.datagrams), 300U);

  EXPECT_FALSE(sut.segments());
  EXPECT_EQ(sut.segmented_messages(), 0U);
  expect_received(receiver, sent);
}

TEST(UdpSocket, ASegmentedSendTheKernelRefusesIsSentPlainAndSegmentationStops) {
  UdpSocket receiver = open_on_loopback(true);
  UdpSocket sut = open_on_loopback(true);
  if (!sut.segments()) {
    GTEST_SKIP() << "this kernel has no UDP_SEGMENT";
  }
  // Without UDP checksums the kernel refuses to segment (EINVAL), as it does
  // (EIO) on a device that cannot checksum what it would segment.
  const int on = 1;
  ASSERT_EQ(::setsockopt(sut.fd(), SOL_SOCKET, SO_NO_CHECK, &on, sizeof(on)), 0);
  const Outgoing sent(100, receiver.local());

  EXPECT_EQ(sut.send_batch(sent.datagrams), 100U);

  EXPECT_FALSE(sut.segments());
  EXPECT_EQ(sut.segmented_messages(), 0U);
  expect_received(receiver, sent);
}

TEST(UdpSocket, DatagramsToSeveralDestinationsAreSegmentedPerDestination) {
  UdpSocket first = open_on_loopback(true);
  UdpSocket second = open_on_loopback(true);
  UdpSocket sut = open_on_loopback(true);
  if (!sut.segments()) {
    GTEST_SKIP() << "this kernel has no UDP_SEGMENT";
  }
  const Outgoing to_first(50, first.local());
  const Outgoing to_second(50, second.local());
  std::vector<OutgoingDatagram> both = to_first.datagrams;
  both.insert(both.end(), to_second.datagrams.begin(), to_second.datagrams.end());

  EXPECT_EQ(sut.send_batch(both), 100U);

  expect_received(first, to_first);
  expect_received(second, to_second);
}

}  // namespace
}  // namespace axon::udp
