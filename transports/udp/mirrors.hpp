// The remote writers whose topics this participant receives for its host:
// each one's RemoteWriter with its local mirror publisher, made on its first
// datagram, and the chunks lent to the reassembler for their messages.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "transports/shm/shm_transport.hpp"
#include "transports/udp/local_topics.hpp"
#include "transports/udp/reassembly.hpp"
#include "transports/udp/remote_writer.hpp"

namespace axon::udp {

/// Thread safety: none; the thread holding the receive lock (ReceivePath)
/// owns it. It calls LocalTopics (a leaf lock) and the shared-memory transport.
class Mirrors final : public DestinationProvider {
 public:
  Mirrors(std::shared_ptr<shm::ShmTransport> shm, const LocalTopics& topics, NetworkCounterCells& counters,
          std::size_t max_loans);
  ~Mirrors() override;
  Mirrors(const Mirrors&) = delete;
  Mirrors& operator=(const Mirrors&) = delete;

  /// The writer's entry, made (with its mirror) on its first datagram; null
  /// when the topic is not received here or the id is another topic's.
  const std::shared_ptr<RemoteWriter>* find_or_add(std::uint64_t sender_id, std::uint32_t writer_id,
                                                   std::uint64_t topic_id) noexcept;
  /// The entry, if it exists and is of `topic_id`.
  [[nodiscard]] RemoteWriter* find(std::uint64_t sender_id, std::uint32_t writer_id, std::uint64_t topic_id) noexcept;

  /// The writer whose fragment the reassembler is placing: acquire() lends
  /// from its mirror. The entry outlives the call: nothing removes writers meanwhile.
  void set_feeding(const std::shared_ptr<RemoteWriter>* writer) noexcept { feeding_ = writer; }
  /// A completed message: its loan goes to its writer (delivered or held).
  void complete(const CompletedMessage& message) noexcept;

  /// Destroying mirrors tells local subscribers their publishers left.
  void drop_sender(std::uint64_t sender_id) noexcept;
  void drop_silent(std::int64_t now_ns, std::int64_t timeout_ns) noexcept;
  void clear() noexcept { writers_.clear(); }
  [[nodiscard]] bool empty() const noexcept { return writers_.empty(); }
  template <class F>
  void for_each(F&& f) {
    for (auto& [key, writer] : writers_) {
      f(*writer);
    }
  }

  // DestinationProvider: loans a chunk of the remote writer's mirror.
  std::optional<Destination> acquire(const MessageKey& key, std::uint64_t topic_id,
                                     std::uint32_t total_bytes) noexcept override;
  void release(const MessageKey& key, const Destination& destination) noexcept override;

 private:
  struct Loan {
    std::shared_ptr<RemoteWriter> writer;
    LoanedChunk chunk;
  };
  using WriterKey = std::pair<std::uint64_t, std::uint32_t>;  ///< (sender id, writer id)

  std::optional<Loan> take_loan(std::uint64_t token) noexcept;

  std::shared_ptr<shm::ShmTransport> shm_;
  const LocalTopics& topics_;
  NetworkCounterCells& counters_;
  std::map<WriterKey, std::shared_ptr<RemoteWriter>> writers_;
  const std::shared_ptr<RemoteWriter>* feeding_ = nullptr;
  std::vector<Loan> loans_;
  std::vector<std::uint64_t> free_loans_;
};

}  // namespace axon::udp
