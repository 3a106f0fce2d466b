// libFuzzer target: parse_control(), the RDMA control messages' parser
// (transports/rdma/control_message.hpp). The input is one received control
// message (its byte_len), copied into a buffer of exactly its size so that
// ASan sees any read past it. Checks, beyond "no crash, no out-of-bounds
// read, no undefined behaviour" (ASan, UBSan):
//   - an accepted message re-encodes to the same bytes, and is the one thing
//     parse_control() wrote (a refused one leaves the output untouched);
//   - nothing shorter is accepted: the message without its last byte is
//     refused (the length field must be the bytes received);
//   - every accepted grant lies inside the region, and its slot and capacity
//     make an immediate that decodes back to the same class, slot and length;
//   - every refusal is a known error with its own words.
//   bash scripts/run-fuzz.sh 120
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "transports/rdma/control_message.hpp"
#include "transports/rdma/immediate.hpp"

namespace axon::rdma::fuzz {
namespace {

// The seeds (make_rdma_control_seeds) grant chunks of this region.
constexpr PeerRegion kRegion{.base = 0x7F0000000000ULL, .length = 64ULL << 20};

void check(bool condition) {
  if (!condition) {
    __builtin_trap();
  }
}

ControlMessage sentinel() {
  ControlMessage m;
  m.kind = ControlKind::kWant;
  m.stream_id = 0xDEADBEEFU;
  m.messages_waiting = 0x5EED;
  return m;
}

std::size_t encode_again(const ControlMessage& m, std::span<std::byte> out) {
  switch (m.kind) {
    case ControlKind::kOpen: return encode_open(out, m.stream_id, m.open);
    case ControlKind::kClose: return encode_close(out, m.stream_id);
    case ControlKind::kWant: return encode_want(out, m.stream_id, m.messages_waiting);
    case ControlKind::kGrant: {
      std::array<GrantEntry, kMaxGrantsPerMessage> grants{};
      check(m.grant.count >= 1 && m.grant.count <= grants.size());
      for (std::size_t i = 0; i < m.grant.count; ++i) {
        grants[i] = m.grant.entry(i);
      }
      return encode_grant(out, m.stream_id, std::span(grants).first(m.grant.count), kRegion);
    }
  }
  check(false);
  return 0;
}

void check_grants(const GrantList& grants) {
  for (std::size_t i = 0; i < grants.count; ++i) {
    const GrantEntry g = grants.entry(i);
    check(g.address >= kRegion.base && g.capacity_bytes > 0);
    check(g.address - kRegion.base + g.capacity_bytes <= kRegion.length);
    const ImmediateFields fields{.size_class = g.size_class, .slot = g.slot, .length = g.capacity_bytes};
    const auto immediate = encode_immediate(fields, g.capacity_bytes);
    check(immediate.has_value());
    std::array<std::uint32_t, 16> capacities{};
    capacities.fill(g.capacity_bytes);
    const auto decoded = decode_immediate(*immediate, capacities);
    check(decoded.has_value() && *decoded == fields);
  }
}

void run(std::span<const std::uint8_t> input) {
  const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(input.data()),
                                     reinterpret_cast<const std::byte*>(input.data()) + input.size());
  ControlMessage parsed = sentinel();
  const ControlError error = parse_control(bytes, kRegion, parsed);
  check(static_cast<std::uint8_t>(error) < static_cast<std::uint8_t>(ControlError::kCount));
  check(to_string(error) != "rdma control: unknown parse error");
  if (error != ControlError::kOk) {
    const ControlMessage untouched = sentinel();
    check(parsed.kind == untouched.kind && parsed.stream_id == untouched.stream_id &&
          parsed.messages_waiting == untouched.messages_waiting);
    return;
  }
  check(parsed.stream_id != 0);
  static std::array<std::byte, kControlSlotBytes> out;
  const std::size_t size = encode_again(parsed, out);
  check(size == bytes.size());
  check(std::memcmp(out.data(), bytes.data(), size) == 0);
  if (parsed.kind == ControlKind::kGrant) {
    check(parsed.grant.encoded_entries.data() == bytes.data() + kGrantHeaderBytes);
    check_grants(parsed.grant);
  }
  // Nothing shorter is accepted (in an exact-size copy, again for ASan).
  const std::vector<std::byte> shorter(bytes.begin(), bytes.end() - 1);
  ControlMessage ignored;
  check(parse_control(shorter, kRegion, ignored) != ControlError::kOk);
}

}  // namespace
}  // namespace axon::rdma::fuzz

// The name is libFuzzer's.
// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  axon::rdma::fuzz::run(std::span(data, size));
  return 0;
}
