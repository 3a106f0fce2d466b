// Runs both parsers on the same datagram and expects them to agree:
// parse_datagram() on the bytes whole, parse_split_datagram() on copies of
// its first kDataHeaderBytes and of the rest in separate buffers (as a
// scatter receive leaves them, header in one buffer and payload in a chunk).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "transports/udp/wire_format.hpp"

namespace axon::udp::test {

inline void expect_same_fields(const ParsedDatagram& whole, const ParsedDatagram& split) {
  EXPECT_EQ(whole.header.type, split.header.type);
  EXPECT_EQ(whole.header.flags, split.header.flags);
  EXPECT_EQ(whole.header.sender_id, split.header.sender_id);
  EXPECT_EQ(whole.header.checksum, split.header.checksum);
  EXPECT_EQ(whole.header.datagram_bytes, split.header.datagram_bytes);
  switch (whole.header.type) {
    case DatagramType::kData: {
      const DataFragment& a = whole.data;
      const DataFragment& b = split.data;
      EXPECT_EQ(a.topic_id, b.topic_id);
      EXPECT_EQ(a.sequence, b.sequence);
      EXPECT_EQ(a.writer_id, b.writer_id);
      EXPECT_EQ(a.total_bytes, b.total_bytes);
      EXPECT_EQ(a.fragment_index, b.fragment_index);
      EXPECT_EQ(a.fragment_count, b.fragment_count);
      EXPECT_EQ(a.fragment_bytes, b.fragment_bytes);
      EXPECT_TRUE(std::ranges::equal(a.payload, b.payload));
      break;
    }
    case DatagramType::kHeartbeat:
      EXPECT_EQ(whole.heartbeat.topic_id, split.heartbeat.topic_id);
      EXPECT_EQ(whole.heartbeat.first_sequence, split.heartbeat.first_sequence);
      EXPECT_EQ(whole.heartbeat.last_sequence, split.heartbeat.last_sequence);
      EXPECT_EQ(whole.heartbeat.writer_id, split.heartbeat.writer_id);
      break;
    case DatagramType::kGap:
      EXPECT_EQ(whole.gap.topic_id, split.gap.topic_id);
      EXPECT_EQ(whole.gap.first_sequence, split.gap.first_sequence);
      EXPECT_EQ(whole.gap.end_sequence, split.gap.end_sequence);
      EXPECT_EQ(whole.gap.writer_id, split.gap.writer_id);
      break;
    case DatagramType::kAck:
      EXPECT_EQ(whole.ack.target_sender_id, split.ack.target_sender_id);
      EXPECT_EQ(whole.ack.topic_id, split.ack.topic_id);
      EXPECT_EQ(whole.ack.next_sequence, split.ack.next_sequence);
      EXPECT_EQ(whole.ack.writer_id, split.ack.writer_id);
      break;
    case DatagramType::kNack:
      EXPECT_EQ(whole.nack.target_sender_id, split.nack.target_sender_id);
      EXPECT_EQ(whole.nack.topic_id, split.nack.topic_id);
      EXPECT_EQ(whole.nack.writer_id, split.nack.writer_id);
      ASSERT_EQ(whole.nack.range_count, split.nack.range_count);
      for (std::size_t i = 0; i < whole.nack.range_count; ++i) {
        EXPECT_EQ(whole.nack.range(i).sequence, split.nack.range(i).sequence) << "range " << i;
        EXPECT_EQ(whole.nack.range(i).first_fragment, split.nack.range(i).first_fragment) << "range " << i;
        EXPECT_EQ(whole.nack.range(i).end_fragment, split.nack.range(i).end_fragment) << "range " << i;
      }
      break;
    case DatagramType::kAnnounce: {
      const Announce& a = whole.announce;
      const Announce& b = split.announce;
      EXPECT_EQ(a.domain_id, b.domain_id);
      EXPECT_EQ(a.ipv4, b.ipv4);
      EXPECT_EQ(a.port, b.port);
      EXPECT_EQ(a.page, b.page);
      EXPECT_EQ(a.page_count, b.page_count);
      EXPECT_EQ(a.period_ms, b.period_ms);
      EXPECT_EQ(a.host, b.host);
      EXPECT_EQ(a.rdma, b.rdma);
      ASSERT_EQ(a.entry_count, b.entry_count);
      for (std::size_t i = 0; i < a.entry_count; ++i) {
        EXPECT_EQ(a.entry(i).topic_id, b.entry(i).topic_id) << "entry " << i;
        EXPECT_EQ(a.entry(i).type_hash, b.entry(i).type_hash) << "entry " << i;
        EXPECT_EQ(a.entry(i).type_name_hash, b.entry(i).type_name_hash) << "entry " << i;
        EXPECT_EQ(a.entry(i).flags, b.entry(i).flags) << "entry " << i;
        EXPECT_EQ(a.entry(i).subscribers, b.entry(i).subscribers) << "entry " << i;
      }
      break;
    }
  }
}

/// parse_datagram() on `bytes`, after checking that parse_split_datagram()
/// gives the same outcome (and, when kOk, the same fields, a DATA payload
/// pointing into the second buffer).
inline ParseError parse_both(std::span<const std::byte> bytes, const WireLimits& limits, ParsedDatagram& whole) {
  const ParseError error = parse_datagram(bytes, limits, whole);
  const std::size_t split_at = std::min(bytes.size(), kDataHeaderBytes);
  const std::vector<std::byte> header(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(split_at));
  const std::vector<std::byte> payload(bytes.begin() + static_cast<std::ptrdiff_t>(split_at), bytes.end());
  ParsedDatagram split;
  const ParseError split_error = parse_split_datagram(header, payload, limits, split);
  EXPECT_EQ(split_error, error) << "the split parser disagrees: " << to_string(split_error) << " vs "
                                << to_string(error);
  if (error == ParseError::kOk && split_error == ParseError::kOk) {
    expect_same_fields(whole, split);
    if (whole.header.type == DatagramType::kData && !payload.empty()) {
      EXPECT_EQ(split.data.payload.data(), payload.data()) << "a view of the second piece, not a copy";
    }
  }
  return error;
}

}  // namespace axon::udp::test
