// Everything that comes in on the participant's sockets: reading batches
// (fragments straight into their chunks), parsing, reassembly, the mirrors
// that hand complete messages to this host's subscribers, and the NACK rounds
// of RELIABLE streams. Whoever receives holds the receive lock: the
// participant thread for its turns, or a subscriber's waiting thread that
// reads the data socket itself (through wait_source(), the WaitingReceiver
// block below).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>

#include "axon/transport.hpp"
#include "transports/shm/shm_transport.hpp"
#include "transports/udp/datagram_guard.hpp"
#include "transports/udp/local_topics.hpp"
#include "transports/udp/mirrors.hpp"
#include "transports/udp/nack_planner.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/remote_hosts.hpp"
#include "transports/udp/scatter_receive.hpp"
#include "transports/udp/udp_counters.hpp"
#include "transports/udp/udp_socket.hpp"
#include "transports/udp/udp_wait_source.hpp"
#include "transports/udp/wire_format.hpp"
#include "transports/udp/writer_table.hpp"

namespace axon::udp {

/// Proof that the caller holds the receive lock: functions that need it take
/// one (ReceivePath::turn() makes it).
class ReceiveTurn {
 public:
  explicit ReceiveTurn(std::unique_lock<std::mutex> lock) noexcept : lock_(std::move(lock)) {}

 private:
  std::unique_lock<std::mutex> lock_;
};

/// Where ANNOUNCEs go (the participant's discovery), called with the turn held.
class AnnounceHandler {
 public:
  AnnounceHandler() = default;
  AnnounceHandler(const AnnounceHandler&) = delete;
  AnnounceHandler& operator=(const AnnounceHandler&) = delete;
  virtual ~AnnounceHandler() = default;
  virtual void on_announce(const ReceiveTurn& turn, const ParsedDatagram& datagram, std::span<const std::byte> bytes,
                           bool discovery) noexcept = 0;
};

struct ReceiveSetup {
  std::uint64_t sender_id = 0;  ///< Ours: NACKs for other ids are refused.
  WireLimits limits;
  std::size_t nack_ranges = 0;            ///< Ranges per NACK that fit one MTU.
  std::size_t datagram_buffer_bytes = 0;  ///< Receive buffer per datagram: the MTU's payload and a margin.
  ReassemblyConfig reassembly;
};

/// Lock order, structural: the receive lock is the only lock of the
/// participant held while calling another class (RemoteHosts, LocalTopics,
/// WriterTable, UdpWriter, Discovery through AnnounceHandler); those hold
/// their own mutex only inside their methods and call nothing back.
class ReceivePath final : private WaitingReceiver {
 public:
  struct Parts {
    UdpSocket& data_socket;
    NetworkCounterCells& counters;
    RemoteHosts& hosts;
    const LocalTopics& topics;
    const WriterTable& writers;
    AnnounceHandler& announces;
    std::shared_ptr<shm::ShmTransport> shm;
    /// The envelope's check (null: datagrams come without one) and the sources allowed.
    std::unique_ptr<EnvelopeOpener> opener;
    AllowList allow;
  };
  static Result<std::unique_ptr<ReceivePath>> create(const ReceiveSetup& setup, Parts parts);
  ~ReceivePath();
  ReceivePath(const ReceivePath&) = delete;
  ReceivePath& operator=(const ReceivePath&) = delete;

  [[nodiscard]] ReceiveTurn turn() { return ReceiveTurn(std::unique_lock(receive_mutex_)); }

  /// Reads what `socket` holds (a few batches at most) and handles it.
  void drain(const ReceiveTurn& turn, UdpSocket& socket, bool discovery) noexcept;
  /// Timers: reassembly timeouts, NACK rounds, the incomplete-messages counter.
  void tick(const ReceiveTurn& turn, std::int64_t now_ns) noexcept;
  /// How long the participant thread may sleep before tick() has work.
  [[nodiscard]] std::int64_t wait_ns(const ReceiveTurn& turn, std::int64_t now_ns,
                                     std::int64_t until_ns) const noexcept;
  /// A remote participant is gone: its messages in flight and its mirrors.
  void drop_sender(const ReceiveTurn& turn, std::uint64_t sender_id) noexcept;
  /// Mirrors of remote publishers silent for longer than `timeout_ns`.
  void drop_silent_writers(const ReceiveTurn& turn, std::int64_t now_ns, std::int64_t timeout_ns) noexcept;
  /// Whether waiting threads read the data socket now (the participant thread leaves it to them).
  [[nodiscard]] bool leased(std::int64_t now_ns) const noexcept { return wait_source_.socket_is_leased(now_ns); }
  /// What threads waiting for a subscriber of this process sleep on: the
  /// data socket, which they then read themselves (WaitingReceiver below).
  [[nodiscard]] WaitSource* wait_source() noexcept { return &wait_source_; }

 private:
  // ---- WaitingReceiver: what a thread waiting on wait_source_ woke for. ----
  void receive_ready() noexcept override;
  void receive_datagrams(std::span<const ReceivedDatagram> datagrams, bool all_read) noexcept override;
  // ---- end of WaitingReceiver ----

  ReceivePath(const ReceiveSetup& setup, Parts parts);

  void store_reassembly_counters() noexcept;
  /// Logs what is wrong when the guard refused a key holder's datagram for the other `encrypt` setting.
  void report_protection_mismatch() noexcept;
  void on_datagram(const ReceiveTurn& turn, std::span<const std::byte> bytes, Endpoint from, bool discovery) noexcept;
  /// A parsed datagram; `bytes` is the whole of it, or empty for a fragment
  /// received in place (never an ANNOUNCE).
  void on_parsed(const ReceiveTurn& turn, const ParsedDatagram& datagram, std::span<const std::byte> bytes,
                 Endpoint from, bool discovery) noexcept;
  void on_data(const ParsedDatagram& datagram) noexcept;
  void on_heartbeat(const ParsedDatagram& datagram) noexcept;
  void on_gap(const ParsedDatagram& datagram) noexcept;
  void on_nack(const ParsedDatagram& datagram, Endpoint from) noexcept;
  void on_ack(const ParsedDatagram& datagram) noexcept;
  /// NACK rounds and ACKs of the RELIABLE streams.
  void send_nacks(std::int64_t now_ns) noexcept;
  void nack(RemoteWriter& writer, const NackRound& round) noexcept;
  void ack(RemoteWriter& writer, std::int64_t now_ns) noexcept;

  const std::uint64_t sender_id_;
  const WireLimits limits_;
  const std::size_t nack_ranges_;
  UdpSocket& data_socket_;
  NetworkCounterCells& counters_;
  RemoteHosts& hosts_;
  const WriterTable& writers_;
  AnnounceHandler& announces_;

  UdpWaitSource wait_source_;  ///< The data socket, for waiting threads.

  /// Held by whichever thread receives. Everything below is guarded by it.
  std::mutex receive_mutex_;
  DatagramGuard guard_;  ///< Sources and envelopes: asked before anything is parsed.
  Mirrors mirrors_;      ///< Before the reassembler: it gives loans back on destruction.
  std::optional<Reassembler> reassembler_;
  std::optional<ScatterReceive> receive_;  ///< Receive buffers; fragments go straight into their chunk.
  bool ack_pending_ = false;               ///< A stream owed its writer an ACK after the last round.
};

}  // namespace axon::udp
