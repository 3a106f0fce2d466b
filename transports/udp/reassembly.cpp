#include "transports/udp/reassembly.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>

namespace axon::udp {
namespace {

constexpr std::size_t kBitsPerWord = 64;

constexpr std::size_t words_for(std::uint64_t bits) noexcept { return (bits + kBitsPerWord - 1) / kBitsPerWord; }

FeedResult outcome_only(FeedOutcome outcome) noexcept {
  FeedResult result;
  result.outcome = outcome;
  return result;
}

bool test_bit(const std::uint64_t* bitmap, std::uint32_t index) noexcept {
  return ((bitmap[index / kBitsPerWord] >> (index % kBitsPerWord)) & 1U) != 0;
}

}  // namespace

Result<Reassembler> Reassembler::create(const ReassemblyConfig& config, DestinationProvider& provider) {
  if (config.max_message_bytes == 0 || config.max_fragments_per_message == 0 || config.max_messages_in_flight == 0 ||
      config.max_messages_per_sender == 0 || config.completed_history == 0 || config.timeout_ns == 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "udp reassembly: max_message_bytes, max_fragments_per_message, max_messages_in_flight, "
                 "max_messages_per_sender, completed_history and timeout_ns must all be above 0");
  }
  if (config.max_messages_per_sender > config.max_messages_in_flight) {
    return Error(ErrorCode::kInvalidArgument, "udp reassembly: max_messages_per_sender (" +
                                                  std::to_string(config.max_messages_per_sender) +
                                                  ") must not exceed max_messages_in_flight (" +
                                                  std::to_string(config.max_messages_in_flight) + ")");
  }
  // Bounds what create() allocates: 4096 slots of 2^24 fragments would be 8 GiB of bitmaps.
  constexpr std::uint64_t kMaxBitmapBytes = 256ULL * 1024 * 1024;
  const std::uint64_t bitmap_bytes =
      words_for(config.max_fragments_per_message) * sizeof(std::uint64_t) * config.max_messages_in_flight;
  if (bitmap_bytes > kMaxBitmapBytes || config.completed_history > (1U << 20)) {
    return Error(ErrorCode::kInvalidArgument,
                 "udp reassembly: max_fragments_per_message x max_messages_in_flight needs " +
                     std::to_string(bitmap_bytes) +
                     " bytes of bitmaps (limit 256 MiB) or completed_history is above 2^20; lower them");
  }
  return Reassembler(config, provider);
}

Reassembler::Reassembler(const ReassemblyConfig& config, DestinationProvider& provider)
    : config_(config),
      limits_{.max_message_bytes = config.max_message_bytes,
              .max_fragment_bytes = std::numeric_limits<std::uint32_t>::max(),
              .require_checksum = false},
      provider_(&provider),
      slots_(config.max_messages_in_flight),
      bitmap_words_(words_for(config.max_fragments_per_message) * config.max_messages_in_flight),
      completed_(config.completed_history),
      words_per_slot_(words_for(config.max_fragments_per_message)) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].bitmap = bitmap_words_.data() + i * words_per_slot_;
  }
}

Reassembler::Reassembler(Reassembler&& other) noexcept
    : config_(other.config_),
      limits_(other.limits_),
      provider_(other.provider_),
      slots_(std::move(other.slots_)),  // moves the buffers: slot bitmap pointers stay valid
      bitmap_words_(std::move(other.bitmap_words_)),
      completed_(std::move(other.completed_)),
      words_per_slot_(other.words_per_slot_),
      used_slots_(other.used_slots_),
      last_hit_(other.last_hit_),
      updates_(other.updates_),
      claims_(other.claims_),
      counters_(other.counters_) {
  other.slots_.clear();  // the moved-from object releases nothing
  other.used_slots_ = 0;
}

Reassembler::~Reassembler() {
  for (Slot& slot : slots_) {
    if (slot.used) {
      free_slot(slot, true);
    }
  }
}

FeedResult Reassembler::on_fragment(std::uint64_t sender_id, const DataFragment& fragment,
                                    std::uint64_t now_ns) noexcept {
  if (fragment.total_bytes > config_.max_message_bytes) {
    ++counters_.too_large;
    return outcome_only(FeedOutcome::kTooLarge);
  }
  if (fragment.fragment_count > config_.max_fragments_per_message) {
    ++counters_.too_many_fragments;
    return outcome_only(FeedOutcome::kTooManyFragments);
  }
  if (check_fragment(fragment, limits_) != ParseError::kOk) {
    ++counters_.malformed;
    return outcome_only(FeedOutcome::kMalformed);
  }
  const MessageKey key{.sender_id = sender_id, .sequence = fragment.sequence, .writer_id = fragment.writer_id};

  // 1. A message in flight: the previous fragment's slot first, then a scan.
  Slot* slot = nullptr;
  if (slots_[last_hit_].used && slots_[last_hit_].key == key) {
    slot = &slots_[last_hit_];
  } else {
    for (std::size_t i = 0; i < slots_.size() && slot == nullptr; ++i) {
      if (slots_[i].used && slots_[i].key == key) {
        slot = &slots_[i];
        last_hit_ = i;
      }
    }
  }
  if (slot != nullptr) {
    return store(*slot, fragment, now_ns);
  }

  // 2. A straggler of a message already delivered.
  if (completed_.contains(key)) {
    ++counters_.late_fragments;
    return outcome_only(FeedOutcome::kLate);
  }

  // 3. A new message. One that fits a single fragment needs no slot.
  if (fragment.fragment_count == 1) {
    const std::optional<Destination> destination = acquire(key, fragment);
    if (!destination) {
      return outcome_only(FeedOutcome::kNoDestination);
    }
    place(destination->bytes.data(), fragment.payload);
    ++counters_.messages_completed;
    completed_.remember(key);
    return {.outcome = FeedOutcome::kCompleted,
            .message = {.key = key,
                        .topic_id = fragment.topic_id,
                        .total_bytes = fragment.total_bytes,
                        .destination = *destination}};
  }
  // 4. Otherwise a slot, then a destination.
  slot = claim_slot(sender_id, now_ns);
  if (slot == nullptr) {
    ++counters_.refused_no_slot;
    return outcome_only(FeedOutcome::kNoSlot);
  }
  const std::optional<Destination> destination = acquire(key, fragment);
  if (!destination) {
    return outcome_only(FeedOutcome::kNoDestination);
  }
  slot->used = true;
  ++used_slots_;
  slot->key = key;
  slot->topic_id = fragment.topic_id;
  slot->total_bytes = fragment.total_bytes;
  slot->fragment_count = fragment.fragment_count;
  slot->fragment_bytes = fragment.fragment_bytes;
  slot->received = 0;
  slot->claim = ++claims_;
  slot->destination = *destination;
  std::fill_n(slot->bitmap, words_for(fragment.fragment_count), 0);
  last_hit_ = static_cast<std::size_t>(slot - slots_.data());
  return store(*slot, fragment, now_ns);
}

FeedResult Reassembler::store(Slot& slot, const DataFragment& fragment, std::uint64_t now_ns) noexcept {
  if (fragment.topic_id != slot.topic_id || fragment.total_bytes != slot.total_bytes ||
      fragment.fragment_count != slot.fragment_count || fragment.fragment_bytes != slot.fragment_bytes) {
    ++counters_.conflicts;
    return outcome_only(FeedOutcome::kConflict);
  }
  const std::uint32_t index = fragment.fragment_index;
  if (test_bit(slot.bitmap, index)) {
    ++counters_.duplicates;
    return outcome_only(FeedOutcome::kDuplicate);
  }
  // check_fragment() proved offset + size <= total_bytes <= destination size.
  const std::size_t offset = static_cast<std::size_t>(index) * slot.fragment_bytes;
  place(slot.destination.bytes.data() + offset, fragment.payload);
  slot.bitmap[index / kBitsPerWord] |= std::uint64_t{1} << (index % kBitsPerWord);
  ++slot.received;
  slot.last_index = index;
  slot.last_update_ns = now_ns;
  slot.update = ++updates_;
  if (slot.received < slot.fragment_count) {
    return outcome_only(FeedOutcome::kStored);
  }
  FeedResult result{.outcome = FeedOutcome::kCompleted,
                    .message = {.key = slot.key,
                                .topic_id = slot.topic_id,
                                .total_bytes = slot.total_bytes,
                                .destination = slot.destination}};
  ++counters_.messages_completed;
  completed_.remember(slot.key);
  free_slot(slot, false);  // the caller owns the destination now
  return result;
}

void Reassembler::place(std::byte* to, std::span<const std::byte> payload) noexcept {
  ++counters_.fragments_stored;
  if (!payload.empty() && payload.data() == to) {
    ++counters_.fragments_in_place;  // read from the socket straight into place (predict_next())
    return;
  }
  if (!payload.empty()) {
    // memmove: a payload received into this destination under a prediction it
    // did not match may overlap its place.
    std::memmove(to, payload.data(), payload.size());
  }
  ++counters_.fragments_copied;
}

const Reassembler::Slot* Reassembler::find(const MessageKey& key) const noexcept {
  if (slots_[last_hit_].used && slots_[last_hit_].key == key) {
    return &slots_[last_hit_];
  }
  const auto it = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.used && s.key == key; });
  return it != slots_.end() ? &*it : nullptr;
}

std::optional<Destination> Reassembler::acquire(const MessageKey& key, const DataFragment& fragment) noexcept {
  std::optional<Destination> destination = provider_->acquire(key, fragment.topic_id, fragment.total_bytes);
  if (destination && destination->bytes.size() < fragment.total_bytes) {
    provider_->release(key, *destination);  // a provider bug; never write past its buffer
    destination.reset();
  }
  if (!destination) {
    ++counters_.refused_no_destination;
  }
  return destination;
}

Reassembler::Slot* Reassembler::claim_slot(std::uint64_t sender_id, std::uint64_t now_ns) noexcept {
  // One pass: a free slot, the sender's slot count, its oldest and the oldest overall.
  Slot* free = nullptr;
  Slot* oldest = nullptr;
  Slot* oldest_of_sender = nullptr;
  std::uint32_t of_sender = 0;
  for (Slot& slot : slots_) {
    if (!slot.used) {
      free = free != nullptr ? free : &slot;
      continue;
    }
    if (oldest == nullptr || slot.last_update_ns < oldest->last_update_ns) {
      oldest = &slot;
    }
    if (slot.key.sender_id == sender_id) {
      ++of_sender;
      if (oldest_of_sender == nullptr || slot.last_update_ns < oldest_of_sender->last_update_ns) {
        oldest_of_sender = &slot;
      }
    }
  }
  Slot* victim = nullptr;
  if (of_sender >= config_.max_messages_per_sender) {
    victim = oldest_of_sender;  // a sender never takes more than its share
  } else if (free != nullptr) {
    return free;
  } else {
    victim = oldest;
  }
  if (victim == nullptr) {
    return nullptr;  // no slots at all (create() does not allow it)
  }
  // A victim that is past its timeout goes whatever the policy.
  const bool expired = now_ns >= victim->last_update_ns && now_ns - victim->last_update_ns >= config_.timeout_ns;
  if (!expired && config_.when_full == WhenFull::kRefuseNew) {
    return nullptr;
  }
  ++(expired ? counters_.messages_timed_out : counters_.messages_evicted);
  free_slot(*victim, true);
  return victim;
}

void Reassembler::free_slot(Slot& slot, bool release_destination) noexcept {
  if (release_destination) {
    provider_->release(slot.key, slot.destination);
  }
  slot.used = false;
  slot.destination = {};
  --used_slots_;
}

std::size_t Reassembler::expire(std::uint64_t now_ns) noexcept {
  std::size_t dropped = 0;
  for (Slot& slot : slots_) {
    if (slot.used && now_ns >= slot.last_update_ns && now_ns - slot.last_update_ns >= config_.timeout_ns) {
      free_slot(slot, true);
      ++counters_.messages_timed_out;
      ++dropped;
    }
  }
  return dropped;
}

std::optional<std::uint64_t> Reassembler::next_deadline_ns() const noexcept {
  std::optional<std::uint64_t> earliest;
  for (const Slot& slot : slots_) {
    if (slot.used) {
      const std::uint64_t deadline = slot.last_update_ns + config_.timeout_ns;
      earliest = earliest ? std::min(*earliest, deadline) : deadline;
    }
  }
  return earliest;
}

std::size_t Reassembler::drop_sender(std::uint64_t sender_id) noexcept {
  std::size_t dropped = 0;
  for (Slot& slot : slots_) {
    if (slot.used && slot.key.sender_id == sender_id) {
      free_slot(slot, true);
      ++counters_.messages_dropped_sender;
      ++dropped;
    }
  }
  return dropped;
}

std::size_t Reassembler::predict_next(std::span<PredictedFragment> out) const noexcept {
  const Slot* latest = nullptr;
  for (const Slot& slot : slots_) {
    if (slot.used && slot.received > 0 && (latest == nullptr || slot.update > latest->update)) {
      latest = &slot;
    }
  }
  if (latest == nullptr) {
    return 0;
  }
  const Slot& slot = *latest;
  std::size_t written = 0;
  for (std::uint32_t index = slot.last_index + 1; index < slot.fragment_count && written < out.size();) {
    if (test_bit(slot.bitmap, index)) {
      // Skip received fragments a word at a time.
      const std::uint64_t rest = ~slot.bitmap[index / kBitsPerWord] >> (index % kBitsPerWord);
      index += rest == 0 ? static_cast<std::uint32_t>(kBitsPerWord - index % kBitsPerWord)
                         : static_cast<std::uint32_t>(std::countr_zero(rest));
      continue;
    }
    const std::size_t offset = static_cast<std::size_t>(index) * slot.fragment_bytes;
    const std::size_t bytes = std::min<std::size_t>(slot.fragment_bytes, slot.total_bytes - offset);
    out[written++] = PredictedFragment{.key = slot.key,
                                       .topic_id = slot.topic_id,
                                       .total_bytes = slot.total_bytes,
                                       .fragment_count = slot.fragment_count,
                                       .fragment_bytes = slot.fragment_bytes,
                                       .index = index,
                                       .destination = slot.destination.bytes.subspan(offset, bytes),
                                       .claim = slot.claim};
    ++index;
  }
  return written;
}

bool Reassembler::prediction_holds(const PredictedFragment& predicted) const noexcept {
  const Slot* slot = find(predicted.key);
  return slot != nullptr && slot->claim == predicted.claim && predicted.index < slot->fragment_count &&
         !test_bit(slot->bitmap, predicted.index);
}

std::size_t Reassembler::missing_fragments(const MessageKey& key, std::span<FragmentRange> out) const noexcept {
  const Slot* found = find(key);
  if (found == nullptr) {
    return 0;
  }
  const Slot& slot = *found;
  std::size_t written = 0;
  std::uint32_t index = 0;
  while (index < slot.fragment_count && written < out.size()) {
    // Skip received fragments a word at a time, then measure the hole.
    while (index < slot.fragment_count && test_bit(slot.bitmap, index)) {
      const std::uint64_t rest = ~slot.bitmap[index / kBitsPerWord] >> (index % kBitsPerWord);
      index += rest == 0 ? static_cast<std::uint32_t>(kBitsPerWord - index % kBitsPerWord)
                         : static_cast<std::uint32_t>(std::countr_zero(rest));
    }
    if (index >= slot.fragment_count) {
      break;
    }
    const std::uint32_t first = index;
    while (index < slot.fragment_count && !test_bit(slot.bitmap, index)) {
      const std::uint64_t rest = slot.bitmap[index / kBitsPerWord] >> (index % kBitsPerWord);
      index += rest == 0 ? static_cast<std::uint32_t>(kBitsPerWord - index % kBitsPerWord)
                         : static_cast<std::uint32_t>(std::countr_zero(rest));
    }
    out[written++] = FragmentRange{.first = first, .end = std::min(index, slot.fragment_count)};
  }
  return written;
}

std::size_t Reassembler::in_flight(std::span<InFlightMessage> out) const noexcept {
  std::size_t written = 0;
  for (const Slot& slot : slots_) {
    if (slot.used && written < out.size()) {
      out[written++] = InFlightMessage{.key = slot.key,
                                       .topic_id = slot.topic_id,
                                       .received_fragments = slot.received,
                                       .fragment_count = slot.fragment_count,
                                       .last_update_ns = slot.last_update_ns};
    }
  }
  return written;
}

}  // namespace axon::udp
