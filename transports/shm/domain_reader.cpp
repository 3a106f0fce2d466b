// read_domain_view(): the registry copied whole (under the domain lock when
// it is free soon), then every entry checked before it is used: another
// process wrote all of it.
#include <fmt/format.h>

#include <cstring>

#include "axon/domain_view.hpp"
#include "transports/shm/abi_hash.hpp"
#include "transports/shm/domain_files.hpp"
#include "transports/shm/process_identity.hpp"
#include "transports/shm/registry_layout.hpp"
#include "transports/shm/segment.hpp"

namespace axon {

const ParticipantView* DomainView::participant(std::uint32_t slot) const noexcept {
  for (const ParticipantView& p : participants) {
    if (p.slot == slot) {
      return &p;
    }
  }
  return nullptr;
}

const TopicView* DomainView::topic(std::uint32_t slot) const noexcept {
  for (const TopicView& t : topics) {
    if (t.slot == slot) {
      return &t;
    }
  }
  return nullptr;
}

namespace {

using shm::EndpointEntry;
using shm::EntryState;
using shm::ParticipantEntry;
using shm::RegistryLayout;
using shm::RegistryLimits;
using shm::RegistrySegment;
using shm::TopicEntry;

/// How long a read waits for the domain lock before it reads without it.
constexpr std::chrono::milliseconds kLockPatience{100};

template <std::size_t N>
std::string bounded(const char (&text)[N]) {
  return {text, ::strnlen(text, N)};  // another process may have left it without its NUL
}

std::string overflow_word(std::uint32_t stored) {
  switch (static_cast<Overflow>(stored)) {
    case Overflow::kDefault: return "default";
    case Overflow::kDropOldest: return "drop_oldest";
    case Overflow::kRejectNewest: return "reject_newest";
    case Overflow::kLatestOnly: return "latest_only";
    case Overflow::kBlockPublisher: return "block_publisher";
  }
  return fmt::format("unknown ({})", stored);
}

/// The tables of a registry copy whose head was checked.
class Tables {
 public:
  Tables(const std::byte* base, const RegistryLayout& layout) : base_(base), layout_(layout) {}

  [[nodiscard]] const ParticipantEntry& participant(std::uint32_t i) const noexcept {
    return at<ParticipantEntry>(layout_.participants_offset, i);
  }
  [[nodiscard]] const TopicEntry& topic(std::uint32_t i) const noexcept {
    return at<TopicEntry>(layout_.topics_offset, i);
  }
  [[nodiscard]] const EndpointEntry& publisher(std::uint32_t i) const noexcept {
    return at<EndpointEntry>(layout_.publishers_offset, i);
  }
  [[nodiscard]] const EndpointEntry& subscriber(std::uint32_t i) const noexcept {
    return at<EndpointEntry>(layout_.subscribers_offset, i);
  }
  [[nodiscard]] const RegistryLimits& limits() const noexcept { return layout_.limits; }

 private:
  template <class T>
  [[nodiscard]] const T& at(std::size_t offset, std::uint32_t i) const noexcept {
    // The layout came from limits checked against the copy's size.
    return *reinterpret_cast<const T*>(base_ + offset + std::size_t{i} * sizeof(T));  // NOLINT
  }
  const std::byte* base_;
  RegistryLayout layout_;
};

void read_participants(const Tables& tables, DomainView& view) {
  for (std::uint32_t i = 0; i < tables.limits().participants; ++i) {
    const ParticipantEntry& p = tables.participant(i);
    if (p.state != EntryState::kActive) {
      continue;
    }
    view.participants.push_back(ParticipantView{
        .slot = i,
        .generation = p.generation,
        .name = bounded(p.name),
        .pid = p.pid,
        .alive = p.pid > 0 && shm::is_alive(shm::ProcessIdentity{.pid = p.pid, .start_time = p.start_time}),
        .pool_bytes = p.pool_bytes,
        .connections = p.connections,
        .queue_slots = p.queue_slots,
    });
  }
}

void read_topics(const Tables& tables, DomainView& view) {
  for (std::uint32_t i = 0; i < tables.limits().topics; ++i) {
    const TopicEntry& t = tables.topic(i);
    if (t.state != EntryState::kActive) {
      continue;
    }
    view.topics.push_back(TopicView{
        .slot = i,
        .name = bounded(t.name),
        .type_name = bounded(t.type_name),
        .serializer = bounded(t.serializer),
        .type_hash = t.type_hash,
        .type_size = t.type_size,
        .type_align = t.type_align,
        .max_payload_bytes = t.max_payload_bytes,
    });
  }
}

/// The active entries of one endpoint table whose topic and participant are
/// active entries too (others are a removal in progress, or torn).
void read_endpoints(const Tables& tables, GraphEndpointKind kind, std::vector<EndpointView>& out) {
  const bool publishers = kind == GraphEndpointKind::kPublisher;
  const std::uint32_t count = publishers ? tables.limits().publishers : tables.limits().subscribers;
  for (std::uint32_t i = 0; i < count; ++i) {
    const EndpointEntry& e = publishers ? tables.publisher(i) : tables.subscriber(i);
    if (e.state != EntryState::kActive || e.topic >= tables.limits().topics ||
        e.participant >= tables.limits().participants) {
      continue;
    }
    const ParticipantEntry& p = tables.participant(e.participant);
    if (tables.topic(e.topic).state != EntryState::kActive || p.state != EntryState::kActive ||
        p.generation != e.participant_generation) {
      continue;
    }
    EndpointView v;
    v.kind = kind;
    v.endpoint_id = (std::uint64_t{i} << 32U) | e.generation;
    v.topic_slot = e.topic;
    v.participant_slot = e.participant;
    v.transport = bounded(e.transport);
    if (!publishers) {
      v.depth = e.depth;
      v.overflow = overflow_word(e.overflow);
      v.reliable = e.reliable != 0;
      v.block_timeout_ns = e.block_timeout_ns;
      v.quarantine_after_ns = e.quarantine_after_ns;
    }
    out.push_back(std::move(v));
  }
}

/// The checked layout of a registry copy, or what is wrong with it.
Result<RegistryLayout> checked_layout(const shm::RegistryCopy& copy, const std::string& path) {
  if (copy.size() < sizeof(RegistrySegment)) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} has {} bytes, less than a registry's head: it is damaged; when no axon process of "
                             "the domain runs, axon clean removes it",
                             path, copy.size()));
  }
  const auto* head = reinterpret_cast<const RegistrySegment*>(copy.data());  // NOLINT: aligned copy
  if (auto ok = shm::check_header(head->header, shm::SegmentKind::kRegistry, shm::layout_abi_hash(), copy.size(), path);
      !ok) {
    return ok.error();
  }
  // Relaxed is enough: the copy is ours; read under the lock (or torn anyway).
  if (head->header.ready.load(std::memory_order_relaxed) != 1) {
    return Error(ErrorCode::kIncompatible,
                 fmt::format("{} is not ready: a node is creating it, or died while it did (then the next node "
                             "replaces it); run the command again",
                             path));
  }
  const RegistryLimits limits = head->limits;
  if (!limits.in_range() || RegistryLayout::of(limits).total_bytes != copy.size()) {
    return Error(
        ErrorCode::kIncompatible,
        fmt::format("{}: its limits (nodes {}, topics {}, publishers {}, subscribers {}) do not match its "
                    "size of {} bytes: it is damaged",
                    path, limits.participants, limits.topics, limits.publishers, limits.subscribers, copy.size()));
  }
  return RegistryLayout::of(limits);
}

/// The registry's bytes, read under the domain lock when it is free within
/// kLockPatience (`consistent`); the lock is released before this returns.
Result<shm::RegistryCopy> copy_registry(const shm::DomainFiles& files, bool& found, bool& consistent) {
  auto lock = shm::OutsideLock::take(files.lock_path(), shm::OutsideLock::Kind::kShared, kLockPatience, false);
  if (!lock) {
    return lock.error();
  }
  consistent = lock->held();
  return shm::RegistryCopy::read(files.registry_path(), found);
}

}  // namespace

Result<DomainView> read_domain_view(const DomainAddress& address) {
  const shm::DomainFiles files(address);
  DomainView view;
  view.address = files.address;
  bool found = false;
  auto copy = copy_registry(files, found, view.consistent);
  if (!copy) {
    return copy.error();
  }
  if (!found) {
    return view;
  }
  view.exists = true;
  auto layout = checked_layout(*copy, files.registry_path());
  if (!layout) {
    return layout.error();
  }
  const auto* head = reinterpret_cast<const RegistrySegment*>(copy->data());  // NOLINT: checked above
  view.incarnation = head->incarnation;
  view.limits = DomainViewLimits{.participants = layout->limits.participants,
                                 .topics = layout->limits.topics,
                                 .publishers = layout->limits.publishers,
                                 .subscribers = layout->limits.subscribers};
  const Tables tables(copy->data(), *layout);
  read_participants(tables, view);
  read_topics(tables, view);
  read_endpoints(tables, GraphEndpointKind::kPublisher, view.publishers);
  read_endpoints(tables, GraphEndpointKind::kSubscriber, view.subscribers);
  return view;
}

}  // namespace axon
