// Micro benchmarks of transports/udp/envelope: what sealing and opening one
// datagram of a full fragment costs (64-byte header + 1368-byte payload, MTU
// 1500 behind the envelope), authenticated (a tag over the bytes) and
// encrypted (`encrypt: true`: the ciphertext written to a buffer of the
// sender's, decrypted in place by the receiver).
#include <benchmark/benchmark.h>

#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "transports/udp/envelope.hpp"

namespace {

using axon::udp::DatagramPieces;
using axon::udp::EnvelopeBytes;
using axon::udp::EnvelopeOpener;
using axon::udp::EnvelopeSealer;
using axon::udp::kEnvelopeBytes;
using axon::udp::OpenOutcome;
using axon::udp::Protection;

constexpr std::size_t kHeaderBytes = 64;
constexpr std::size_t kPayloadBytes = 1368;

axon::udp::DatagramKey bench_key() {
  std::array<std::byte, axon::udp::kKeyBytes> bytes{};
  bytes.fill(std::byte{0x3C});
  return *axon::udp::make_datagram_key(bytes);
}

Protection protection_of(const benchmark::State& state) {
  return state.range(0) != 0 ? Protection::kEncrypted : Protection::kAuthenticated;
}

/// seal() of one datagram: the calling thread's session, its next counter.
void BM_Envelope_Seal(benchmark::State& state) {
  const EnvelopeSealer sut(bench_key(), protection_of(state));
  std::vector<std::byte> header(kHeaderBytes, std::byte{1});
  std::vector<std::byte> payload(kPayloadBytes, std::byte{2});
  std::vector<std::byte> ciphertext(sut.encrypts() ? kHeaderBytes + kPayloadBytes : 0);
  EnvelopeBytes envelope{};
  for (auto _ : state) {
    benchmark::DoNotOptimize(sut.seal(envelope, header, payload, ciphertext));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (kHeaderBytes + kPayloadBytes)));
}
BENCHMARK(BM_Envelope_Seal)->ArgName("encrypted")->Arg(0)->Arg(1);

/// open() of one datagram in one piece, each with a new counter; includes
/// copying the sealed datagram into the receive buffer (as the kernel does;
/// about 1.4 KiB memcpy), since an encrypted one is decrypted in place.
void BM_Envelope_Open(benchmark::State& state) {
  constexpr std::size_t kDatagrams = 4096;
  const Protection protection = protection_of(state);
  const EnvelopeSealer sealer(bench_key(), protection);
  std::vector<std::byte> header(kHeaderBytes, std::byte{1});
  std::vector<std::byte> payload(kPayloadBytes, std::byte{2});
  const std::size_t size = kEnvelopeBytes + kHeaderBytes + kPayloadBytes;
  std::vector<std::byte> sealed(kDatagrams * size);
  for (std::size_t i = 0; i < kDatagrams; ++i) {
    std::byte* const at = sealed.data() + i * size;
    EnvelopeBytes envelope{};
    const std::span<std::byte> after(at + kEnvelopeBytes, kHeaderBytes + kPayloadBytes);
    (void)sealer.seal_as(envelope, 7, i + 1, header, payload,
                         protection == Protection::kEncrypted ? after : std::span<std::byte>{});
    std::memcpy(at, envelope.data(), envelope.size());
    if (protection != Protection::kEncrypted) {
      std::memcpy(after.data(), header.data(), kHeaderBytes);
      std::memcpy(after.data() + kHeaderBytes, payload.data(), kPayloadBytes);
    }
  }
  std::vector<std::byte> buffer(size);
  std::unique_ptr<EnvelopeOpener> sut;
  std::size_t next = kDatagrams;
  std::size_t refused = 0;
  for (auto _ : state) {
    if (next == kDatagrams) {
      sut = std::move(*EnvelopeOpener::create(bench_key(), nullptr, 4, protection));  // counters from 1 again
      next = 0;
    }
    std::memcpy(buffer.data(), sealed.data() + next * size, size);
    ++next;
    refused += sut->open(DatagramPieces{.pieces = {buffer, {}, {}}, .size = size}) == OpenOutcome::kOk ? 0 : 1;
  }
  if (refused != 0) {
    state.SkipWithError("a datagram was refused");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (kHeaderBytes + kPayloadBytes)));
}
BENCHMARK(BM_Envelope_Open)->ArgName("encrypted")->Arg(0)->Arg(1);

}  // namespace
