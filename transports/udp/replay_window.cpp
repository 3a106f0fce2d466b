#include "transports/udp/replay_window.hpp"

#include <algorithm>

namespace axon::udp {

bool ReplayWindow::fresh(std::uint64_t counter) const noexcept {
  if (!started_ || counter > top_) {
    return true;
  }
  if (top_ - counter >= kBits) {
    return false;  // too old to tell: refused, as a replay may be
  }
  return !seen(counter);
}

void ReplayWindow::accept(std::uint64_t counter) noexcept {
  if (!started_) {
    top_ = counter;
    started_ = true;
  } else if (counter > top_) {
    if (counter - top_ >= kBits) {
      bits_.fill(0);  // the window slides past all it held
    } else {
      // Clear the counters the window slides over, (top_, counter]: they are new.
      for (std::uint64_t c = top_ + 1; c <= counter;) {
        if (c % 64 == 0 && counter - c >= 63) {
          bits_[(c / 64) % kWords] = 0;
          c += 64;
        } else {
          bits_[(c / 64) % kWords] &= ~(std::uint64_t{1} << (c % 64));
          ++c;
        }
      }
    }
    top_ = counter;
  }
  if (top_ - counter < kBits) {
    bits_[(counter / 64) % kWords] |= std::uint64_t{1} << (counter % 64);
  }
}

namespace {

std::size_t power_of_two_at_least(std::size_t n) {
  std::size_t p = 1;
  while (p < n) {
    p *= 2;
  }
  return p;
}

}  // namespace

ReplayWindows::ReplayWindows(std::size_t max_sessions)
    : mask_(power_of_two_at_least(2 * std::max<std::size_t>(max_sessions, 1)) - 1),
      index_(mask_ + 1, kEmpty),
      entries_(std::max<std::size_t>(max_sessions, 1)) {}

std::size_t ReplayWindows::probe(std::uint64_t session) const noexcept {
  // At most half the slots are used: the run ends at an empty slot.
  std::size_t i = home(session);
  while (index_[i] != kEmpty && entries_[index_[i]].session != session) {
    i = (i + 1) & mask_;
  }
  return i;
}

bool ReplayWindows::fresh(std::uint64_t session, std::uint64_t counter) const noexcept {
  const std::uint32_t at = index_[probe(session)];
  return at == kEmpty || entries_[at].window.fresh(counter);
}

void ReplayWindows::accept(std::uint64_t session, std::uint64_t counter) noexcept {
  std::size_t i = probe(session);
  if (index_[i] == kEmpty) {
    std::uint32_t entry = 0;
    if (used_ < entries_.size()) {
      entry = static_cast<std::uint32_t>(used_++);
    } else {
      // Full: the least recently heard session goes (a scan, only when a new session comes).
      const auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                           [](const Entry& a, const Entry& b) { return a.last_used < b.last_used; });
      entry = static_cast<std::uint32_t>(oldest - entries_.begin());
      erase(probe(oldest->session));
      i = probe(session);
    }
    entries_[entry] = Entry{.session = session, .last_used = 0, .window = ReplayWindow{}};
    index_[i] = entry;
  }
  Entry& e = entries_[index_[i]];
  e.last_used = ++use_clock_;
  e.window.accept(counter);
}

void ReplayWindows::erase(std::size_t i) noexcept {
  index_[i] = kEmpty;
  // Backward shift: a slot after the hole whose home is not between the hole and itself moves into the hole.
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask_; index_[j] != kEmpty; j = (j + 1) & mask_) {
    const std::size_t h = home(entries_[index_[j]].session);
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (!stays) {
      index_[hole] = index_[j];
      index_[j] = kEmpty;
      hole = j;
    }
  }
}

}  // namespace axon::udp
