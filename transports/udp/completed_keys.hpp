// The keys of the messages completed last, to tell a late fragment of a
// delivered message from the first fragment of a new one. A lookup runs for
// every new message, so it is a hash probe, not a scan of the history.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transports/udp/message_key.hpp"

namespace axon::udp {

/// The last `capacity` keys remembered, oldest forgotten first.
///
/// A ring of keys in the order they were remembered, indexed by an
/// open-addressed table (linear probing, at most half full) of ring positions;
/// forgetting a key deletes its table entry by shifting later entries back,
/// so lookups never meet tombstones. Memory: allocated by the constructor,
/// nothing after. Thread safety: none (the reassembler's thread owns it).
class CompletedKeys {
 public:
  /// `capacity` >= 1.
  explicit CompletedKeys(std::size_t capacity);

  /// Whether `key` is one of the last capacity() keys remembered.
  [[nodiscard]] bool contains(const MessageKey& key) const noexcept;
  /// Remembers `key`, forgetting the oldest key when full.
  void remember(const MessageKey& key) noexcept;

  [[nodiscard]] std::size_t capacity() const noexcept { return ring_.size(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  static constexpr std::uint32_t kEmpty = 0;  ///< Table entries hold ring position + 1.

  [[nodiscard]] std::size_t home(const MessageKey& key) const noexcept;
  void erase_entry_of(std::size_t ring_position) noexcept;

  std::vector<MessageKey> ring_;
  std::vector<std::uint32_t> table_;  ///< Power-of-two size >= 2 x capacity.
  std::size_t mask_ = 0;
  std::size_t next_ = 0;  ///< Ring position written next (the oldest key once full).
  std::size_t size_ = 0;
};

}  // namespace axon::udp
