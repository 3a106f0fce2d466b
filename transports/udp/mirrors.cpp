#include "transports/udp/mirrors.hpp"

#include <algorithm>

#include "src/base/log.hpp"

namespace axon::udp {

Mirrors::Mirrors(std::shared_ptr<shm::ShmTransport> shm, const LocalTopics& topics, NetworkCounterCells& counters,
                 std::size_t max_loans)
    : shm_(std::move(shm)), topics_(topics), counters_(counters), loans_(max_loans) {
  free_loans_.reserve(max_loans);
  for (std::uint64_t i = loans_.size(); i > 0; --i) {
    free_loans_.push_back(i - 1);
  }
}

Mirrors::~Mirrors() = default;

const std::shared_ptr<RemoteWriter>* Mirrors::find_or_add(std::uint64_t sender_id, std::uint32_t writer_id,
                                                          std::uint64_t topic_id) noexcept {
  const WriterKey key{sender_id, writer_id};
  if (const auto found = writers_.find(key); found != writers_.end()) {
    return found->second->topic_id() == topic_id ? &found->second : nullptr;
  }
  const std::optional<TopicDescriptor> descriptor = topics_.received_here(topic_id);
  if (!descriptor) {
    return nullptr;  // not ours to receive (another participant of this host does)
  }
  // The mirror: a local publisher standing for the remote one, so every
  // subscriber of this host gets its messages through shared memory.
  auto port = shm_->advertise(*descriptor, PublisherQos{});
  if (!port) {
    logger().error("udp: cannot mirror a remote publisher of topic '{}' on this host: {}", descriptor->name,
                   port.error().message());
    return nullptr;
  }
  auto mirror = std::static_pointer_cast<shm::ShmPublisherPort>(std::move(*port));
  auto writer = std::make_shared<RemoteWriter>(std::move(mirror), sender_id, writer_id, topic_id, counters_);
  return &writers_.emplace(key, std::move(writer)).first->second;
}

RemoteWriter* Mirrors::find(std::uint64_t sender_id, std::uint32_t writer_id, std::uint64_t topic_id) noexcept {
  const auto found = writers_.find({sender_id, writer_id});
  return found != writers_.end() && found->second->topic_id() == topic_id ? found->second.get() : nullptr;
}

void Mirrors::complete(const CompletedMessage& message) noexcept {
  if (auto loan = take_loan(message.destination.token)) {
    loan->writer->complete(message.key.sequence, loan->chunk, message.total_bytes);
  }
}

void Mirrors::drop_sender(std::uint64_t sender_id) noexcept {
  std::erase_if(writers_, [&](const auto& entry) { return entry.first.first == sender_id; });
}

void Mirrors::drop_silent(std::int64_t now_ns, std::int64_t timeout_ns) noexcept {
  // A remote publisher that went away (its host lives on): drop its mirror,
  // so local subscribers see the publisher leave.
  std::erase_if(writers_, [&](const auto& entry) { return now_ns - entry.second->last_heard_ns() > timeout_ns; });
}

std::optional<Destination> Mirrors::acquire(const MessageKey& key, std::uint64_t /*topic_id*/,
                                            std::uint32_t total_bytes) noexcept {
  if (feeding_ == nullptr || !(*feeding_)->wants(key.sequence) || free_loans_.empty()) {
    return std::nullopt;
  }
  auto chunk = (*feeding_)->loan(std::max<std::uint32_t>(total_bytes, 1));
  if (!chunk) {
    NetworkCounterCells::add(counters_.pool_exhausted);
    return std::nullopt;
  }
  const std::uint64_t token = free_loans_.back();
  free_loans_.pop_back();
  loans_[token] = Loan{.writer = *feeding_, .chunk = *chunk};
  return Destination{.bytes = std::span<std::byte>(chunk->payload, chunk->capacity_bytes), .token = token};
}

void Mirrors::release(const MessageKey& /*key*/, const Destination& destination) noexcept {
  if (auto loan = take_loan(destination.token)) {
    loan->writer->discard(loan->chunk);
  }
}

std::optional<Mirrors::Loan> Mirrors::take_loan(std::uint64_t token) noexcept {
  if (token >= loans_.size() || !loans_[token].writer) {
    return std::nullopt;
  }
  Loan loan = std::move(loans_[token]);
  loans_[token] = Loan{};
  free_loans_.push_back(token);
  return loan;
}

}  // namespace axon::udp
