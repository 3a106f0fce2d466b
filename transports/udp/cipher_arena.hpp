// Where a sending thread puts the ciphertext of the datagrams of one
// sendmmsg call when they are encrypted (`udp: security: encrypt: true`).
// A DATA datagram's payload lies in a shared-memory chunk that this host's
// subscribers read too, and its header in the sender's own buffer: neither is
// encrypted in place. The ciphertext must stay put until sendmmsg returns, and
// UdpSocket::send_batch() runs on any thread at once, so each thread has an
// arena of its own (a lock per socket would serialise publishers).
#pragma once

#include <cstddef>
#include <span>

namespace axon::udp {

/// Bytes of a thread's arena: a full batch (OutgoingBatch::kMaxDatagrams) of
/// datagrams at MTU 1500 (1432 bytes after the envelope, 179 KiB), and always
/// at least the largest datagram (65507 bytes). A batch of larger datagrams
/// (jumbo frames) takes fewer per sendmmsg call.
inline constexpr std::size_t kCipherArenaBytes = std::size_t{256} * 1024;

/// The calling thread's arena. Allocates once per thread (its first call),
/// freed when the thread ends; empty when that allocation failed.
[[nodiscard]] std::span<std::byte> thread_cipher_arena() noexcept;

}  // namespace axon::udp
