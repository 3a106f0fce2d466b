// Writes the seed corpus of udp_datagram_fuzz into a directory:
//   make_udp_seeds DIR
// Each seed is a few valid records (see udp_fuzz_input.hpp) the fuzzer mutates.
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tests/fuzz/udp_fuzz_input.hpp"
#include "transports/udp/envelope.hpp"
#include "transports/udp/wire_format.hpp"

namespace {

using axon::udp::fuzz::append_record;
namespace udp = axon::udp;

constexpr std::uint64_t kSender = 0x5EED5EED5EEDULL;

std::vector<std::byte> message_of(std::size_t size) {
  std::vector<std::byte> m(size);
  for (std::size_t i = 0; i < size; ++i) {
    m[i] = static_cast<std::byte>(i & 0xFF);
  }
  return m;
}

// All fragments of a message, in the given order of indices (empty: in order).
std::vector<std::uint8_t> message_records(std::size_t size, std::uint32_t fragment_bytes, std::uint64_t sequence,
                                          bool reverse, bool checksum, std::uint8_t control = 0) {
  const auto message = message_of(size);
  const auto count = static_cast<std::uint32_t>(udp::fragment_count_for(size, fragment_bytes));
  std::vector<std::uint8_t> input;
  std::array<std::byte, udp::kMaxDatagramBytes> out{};
  for (std::uint32_t n = 0; n < count; ++n) {
    const std::uint32_t index = reverse ? count - 1 - n : n;
    const std::size_t bytes =
        udp::encode_data(out, kSender, udp::make_fragment(7, 1, sequence, message, fragment_bytes, index), checksum);
    append_record(input, control, std::span(out).first(bytes));
  }
  return input;
}

// Prepends the configuration byte.
bool write(const std::string& path, const std::vector<std::uint8_t>& records, std::uint8_t config = 0) {
  std::vector<std::uint8_t> bytes{config};
  bytes.insert(bytes.end(), records.begin(), records.end());
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(file);
}

std::uint8_t batch(std::uint8_t size) { return static_cast<std::uint8_t>(size << axon::udp::fuzz::kConfigBatchShift); }

/// The configuration bits of encrypted mode (it implies authenticated).
constexpr std::uint8_t kEncrypted = axon::udp::fuzz::kConfigAuthenticated | axon::udp::fuzz::kConfigEncrypted;

// The records of `plain` (see udp_fuzz_input.hpp), each datagram behind an envelope sealed with the fuzzer's key
// (a session of its own; encrypted with `protection` kEncrypted); then the second record again (a replay) and once
// with a byte of its tag flipped.
std::vector<std::uint8_t> presealed(const std::vector<std::uint8_t>& plain,
                                    udp::Protection protection = udp::Protection::kAuthenticated) {
  std::array<std::byte, udp::kKeyBytes> key_bytes{};
  key_bytes.fill(std::byte{axon::udp::fuzz::kFuzzKeyByte});
  const udp::EnvelopeSealer sealer(*udp::make_datagram_key(key_bytes), protection);
  std::uint64_t counter = 1;
  std::vector<std::uint8_t> out;
  std::vector<std::vector<std::byte>> sealed;
  for (std::size_t at = 0; at + 3 <= plain.size();) {
    const std::size_t length = plain[at + 1] | (static_cast<std::size_t>(plain[at + 2]) << 8);
    const auto bytes = std::as_bytes(std::span(plain).subspan(at + 3, length));
    udp::EnvelopeBytes envelope{};
    std::vector<std::byte> ciphertext(sealer.encrypts() ? bytes.size() : 0);
    (void)sealer.seal_as(envelope, 0x5EA1, counter++, bytes, {}, ciphertext);
    std::vector<std::byte> datagram(envelope.begin(), envelope.end());
    if (sealer.encrypts()) {
      datagram.insert(datagram.end(), ciphertext.begin(), ciphertext.end());
    } else {
      datagram.insert(datagram.end(), bytes.begin(), bytes.end());
    }
    append_record(out, plain[at], datagram);
    sealed.push_back(std::move(datagram));
    at += 3 + length;
  }
  if (sealed.size() > 1) {
    append_record(out, 0, sealed[1]);
    sealed[1][udp::kEnvelopeTagOffset] ^= std::byte{1};
    append_record(out, 0, sealed[1]);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_udp_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::array<std::byte, 2048> out{};
  std::vector<std::uint8_t> control_msgs;
  append_record(control_msgs, 0,
                std::span(out).first(udp::encode_heartbeat(
                    out, kSender, {.topic_id = 7, .first_sequence = 1, .last_sequence = 5, .writer_id = 1}, true)));
  append_record(control_msgs, 0,
                std::span(out).first(udp::encode_gap(
                    out, kSender, {.topic_id = 7, .first_sequence = 2, .end_sequence = 4, .writer_id = 1})));
  const std::array<udp::NackRange, 2> ranges{udp::NackRange{.sequence = 3, .first_fragment = 0, .end_fragment = 2},
                                             udp::NackRange{.sequence = 4}};
  append_record(control_msgs, 0, std::span(out).first(udp::encode_nack(out, kSender, 9, 7, 1, ranges)));
  append_record(control_msgs, 0,
                std::span(out).first(udp::encode_ack(
                    out, kSender, {.target_sender_id = 9, .topic_id = 7, .next_sequence = 3, .writer_id = 1})));

  // ANNOUNCEs: not reachable by RDMA, then reachable (wire version 3's
  // rdma_cm port and flag at offset 76), relayed and checksummed, with entries.
  std::vector<std::uint8_t> announces;
  udp::Announce announce{.domain_id = 3, .ipv4 = 0x0A000001U, .port = 7400, .period_ms = 100};
  std::memcpy(announce.host.data(), "alpha", 5);
  const std::array<udp::AnnounceEntry, 2> entries{
      udp::AnnounceEntry{
          .topic_id = 7, .type_hash = 11, .type_name_hash = 13, .flags = udp::kEntryReceiver, .subscribers = 1},
      udp::AnnounceEntry{
          .topic_id = 8, .type_hash = 17, .type_name_hash = 19, .flags = udp::kEntryPublishers, .subscribers = 2}};
  append_record(announces, 0, std::span(out).first(udp::encode_announce(out, kSender, announce, entries)));
  announce.rdma = udp::RdmaReachability{.cm_port = 7471, .reachable = true};
  append_record(announces, 0, std::span(out).first(udp::encode_announce(out, kSender, announce, entries)));
  append_record(announces, 0,
                std::span(out).first(udp::encode_announce(out, kSender, announce, {}, udp::kFlagRelayed, true)));

  auto interleaved = message_records(300, 64, 1, false, false);
  const auto second = message_records(200, 64, 2, true, false, 0x20 | axon::udp::fuzz::kListMissing);
  interleaved.insert(interleaved.end(), second.begin(), second.end());

  const bool ok =
      write(dir + "/single_fragment", message_records(100, 1024, 1, false, false)) &&
      write(dir + "/three_fragments_checksummed", message_records(2500, 1000, 1, false, true)) &&
      write(dir + "/reversed_with_expire", message_records(700, 100, 1, true, false, 0x21)) &&
      write(dir + "/interleaved", interleaved) &&
      write(dir + "/interleaved_refuse_new", interleaved, axon::udp::fuzz::kConfigRefuseNew) &&
      write(dir + "/control", control_msgs) && write(dir + "/announces", announces) &&
      // Received in batches: after the first batch of a message,
      // its fragments are predicted and read into place.
      write(dir + "/batches_of_two", message_records(700, 100, 1, false, true), batch(2)) &&
      write(dir + "/batches_of_seven", message_records(2900, 100, 1, false, false), batch(7)) &&
      write(dir + "/batches_reversed", message_records(700, 100, 1, true, false), batch(3)) &&
      write(dir + "/batches_interleaved", interleaved, batch(4)) &&
      // Authenticated: the harness seals these records (mutations still reach the parser)...
      write(dir + "/authenticated_batches", message_records(700, 100, 1, false, false),
            static_cast<std::uint8_t>(axon::udp::fuzz::kConfigAuthenticated | batch(3))) &&
      write(dir + "/authenticated_control", control_msgs, axon::udp::fuzz::kConfigAuthenticated) &&
      // ... and these carry envelopes of their own, validly sealed, one replayed, one forged.
      write(dir + "/authenticated_presealed", presealed(message_records(700, 100, 1, true, false)),
            axon::udp::fuzz::kConfigAuthenticated) &&
      write(dir + "/authenticated_presealed_batches", presealed(interleaved),
            static_cast<std::uint8_t>(axon::udp::fuzz::kConfigAuthenticated | batch(4))) &&
      // Encrypted: sealed by the harness, presealed (one replayed, one forged), and each protection
      // presealed for a receiver of the other (refused, the tag right).
      write(dir + "/encrypted_batches", message_records(700, 100, 1, false, false),
            static_cast<std::uint8_t>(kEncrypted | batch(3))) &&
      write(dir + "/encrypted_control", control_msgs, kEncrypted) &&
      write(dir + "/encrypted_presealed",
            presealed(message_records(700, 100, 1, true, false), udp::Protection::kEncrypted), kEncrypted) &&
      write(dir + "/encrypted_presealed_batches", presealed(interleaved, udp::Protection::kEncrypted),
            static_cast<std::uint8_t>(kEncrypted | batch(4))) &&
      write(dir + "/encrypted_receiver_authenticated_datagrams", presealed(interleaved),
            static_cast<std::uint8_t>(kEncrypted | batch(2))) &&
      write(dir + "/authenticated_receiver_encrypted_datagrams", presealed(interleaved, udp::Protection::kEncrypted),
            axon::udp::fuzz::kConfigAuthenticated);
  if (!ok) {
    std::fprintf(stderr, "make_udp_seeds: cannot write into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
