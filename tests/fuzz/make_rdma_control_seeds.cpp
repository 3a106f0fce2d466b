// Writes the seed corpus of rdma_control_fuzz into a directory:
//   make_rdma_control_seeds DIR
// Each seed is one valid control message (every kind; GRANTs of one, a few
// classes, and the most that fit a slot) that the fuzzer mutates, and one
// that is a byte longer than a slot. The grants
// lie in the fuzzer's region (rdma_control_fuzz.cpp).
#include <array>
#include <cstdio>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "transports/rdma/control_message.hpp"

namespace {

namespace rdma = axon::rdma;

constexpr rdma::PeerRegion kRegion{.base = 0x7F0000000000ULL, .length = 64ULL << 20};

bool write(const std::string& path, std::span<const std::byte> bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes.size() > 0 && static_cast<bool>(file);
}

std::vector<rdma::GrantEntry> grants(std::size_t count, std::uint32_t capacity, std::uint8_t size_class) {
  std::vector<rdma::GrantEntry> out;
  for (std::uint32_t i = 0; i < count; ++i) {
    out.push_back({.address = kRegion.base + static_cast<std::uint64_t>(capacity) * i,
                   .capacity_bytes = capacity,
                   .slot = i,
                   .size_class = size_class});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_rdma_control_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::array<std::byte, rdma::kControlSlotBytes> out{};
  bool ok = true;
  const rdma::OpenFields open{.topic_id = 0x1234,
                              .type_hash = 0xABCDEF,
                              .writer_id = 3,
                              .largest_message_bytes = 65536,
                              .reliability = rdma::WireReliability::kReliable,
                              .overflow = rdma::WireOverflow::kBlockPublisher,
                              .block_timeout_ns = 100'000'000};
  ok &= write(dir + "/open", std::span(out).first(rdma::encode_open(out, 1, open)));
  const rdma::OpenFields best_effort{.topic_id = 7, .type_hash = 9, .writer_id = 1, .largest_message_bytes = 256};
  ok &= write(dir + "/open_best_effort", std::span(out).first(rdma::encode_open(out, 2, best_effort)));
  ok &= write(dir + "/close", std::span(out).first(rdma::encode_close(out, 1)));
  ok &= write(dir + "/want", std::span(out).first(rdma::encode_want(out, 1, 5)));
  ok &= write(dir + "/want_none", std::span(out).first(rdma::encode_want(out, 1, 0)));
  ok &= write(dir + "/grant_one", std::span(out).first(rdma::encode_grant(out, 1, grants(1, 256, 0), kRegion)));
  ok &= write(dir + "/grant_16mib", std::span(out).first(rdma::encode_grant(out, 1, grants(2, 16U << 20, 5), kRegion)));
  ok &= write(dir + "/grant_most",
              std::span(out).first(rdma::encode_grant(out, 9, grants(rdma::kMaxGrantsPerMessage, 4096, 1), kRegion)));
  // One byte past a slot: refused as longer than a slot, and it lets the
  // fuzzer's length limit grow past 4096 from the start.
  std::vector<std::byte> past_slot(rdma::kControlSlotBytes + 1);
  const std::size_t most = rdma::encode_grant(past_slot, 9, grants(rdma::kMaxGrantsPerMessage, 256, 0), kRegion);
  ok &= most > 0 && write(dir + "/past_slot", past_slot);
  if (!ok) {
    std::fprintf(stderr, "make_rdma_control_seeds: could not write the seeds into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
