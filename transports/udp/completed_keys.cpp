#include "transports/udp/completed_keys.hpp"

#include <bit>

namespace axon::udp {

namespace {

/// splitmix64's finalizer: every input bit moves every output bit, so
/// consecutive sequence numbers spread over the table.
std::uint64_t mix(std::uint64_t x) noexcept {
  x ^= x >> 30U;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27U;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31U;
  return x;
}

}  // namespace

CompletedKeys::CompletedKeys(std::size_t capacity)
    : ring_(capacity), table_(std::bit_ceil(2 * capacity), kEmpty), mask_(table_.size() - 1) {}

std::size_t CompletedKeys::home(const MessageKey& key) const noexcept {
  const std::uint64_t h = mix(key.sender_id ^ mix(key.sequence ^ (std::uint64_t{key.writer_id} << 32U)));
  return static_cast<std::size_t>(h) & mask_;
}

bool CompletedKeys::contains(const MessageKey& key) const noexcept {
  if (size_ == 0) {
    return false;  // also a moved-from object, whose table is gone
  }
  // The table is at most half full, so an empty entry ends every probe soon.
  for (std::size_t i = home(key);; i = (i + 1) & mask_) {
    const std::uint32_t entry = table_[i];
    if (entry == kEmpty) {
      return false;
    }
    if (ring_[entry - 1] == key) {
      return true;
    }
  }
}

void CompletedKeys::remember(const MessageKey& key) noexcept {
  if (ring_.empty()) {
    return;  // moved from
  }
  if (size_ == ring_.size()) {
    erase_entry_of(next_);  // forget the oldest, whose place the new key takes
  } else {
    ++size_;
  }
  ring_[next_] = key;
  std::size_t i = home(key);
  while (table_[i] != kEmpty) {
    i = (i + 1) & mask_;
  }
  table_[i] = static_cast<std::uint32_t>(next_ + 1);
  next_ = (next_ + 1) % ring_.size();
}

void CompletedKeys::erase_entry_of(std::size_t ring_position) noexcept {
  const auto wanted = static_cast<std::uint32_t>(ring_position + 1);
  std::size_t hole = home(ring_[ring_position]);
  while (table_[hole] != wanted) {
    hole = (hole + 1) & mask_;
  }
  // Backward-shift deletion: move each later entry of the probe run into the
  // hole unless its home lies cyclically in (hole, entry], where a lookup
  // starting at its home would no longer reach it across the hole.
  for (std::size_t next = (hole + 1) & mask_; table_[next] != kEmpty; next = (next + 1) & mask_) {
    const std::size_t its_home = home(ring_[table_[next] - 1]);
    const bool stays = hole <= next ? (hole < its_home && its_home <= next) : (hole < its_home || its_home <= next);
    if (!stays) {
      table_[hole] = table_[next];
      hole = next;
    }
  }
  table_[hole] = kEmpty;
}

}  // namespace axon::udp
