// Turns a subscriber's history/reliability/overflow choice into the one queue
// policy the transports implement, refusing combinations that contradict
// each other instead of guessing.
#include <fmt/format.h>

#include "axon/options.hpp"

namespace axon {
namespace {

std::string_view name_of(Overflow overflow) noexcept {
  switch (overflow) {
    case Overflow::kDefault: return "kDefault";
    case Overflow::kDropOldest: return "kDropOldest";
    case Overflow::kRejectNewest: return "kRejectNewest";
    case Overflow::kLatestOnly: return "kLatestOnly";
    case Overflow::kBlockPublisher: return "kBlockPublisher";
  }
  return "unknown";
}

}  // namespace

Result<EffectiveQueue> effective_queue(const SubscriberQos& qos) {
  constexpr std::uint32_t kMaxDepth = 256;
  if (qos.depth == 0 || qos.depth > kMaxDepth) {
    return Error(
        ErrorCode::kInvalidArgument,
        fmt::format("SubscriberQos::depth is {}; it must be 1..{} (queues are preallocated)", qos.depth, kMaxDepth));
  }
  if (qos.block_timeout_ns < 0 || qos.quarantine_after_ns < 0 || qos.deadline_ns < 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "SubscriberQos block_timeout_ns, quarantine_after_ns and deadline_ns must not be negative");
  }
  const bool reliable = qos.reliability == Reliability::kReliable;
  Overflow overflow = qos.overflow;
  if (overflow == Overflow::kDefault) {
    overflow = reliable                            ? Overflow::kBlockPublisher
               : qos.history == History::kKeepLast ? Overflow::kDropOldest
                                                   : Overflow::kRejectNewest;
  }
  if (reliable && overflow != Overflow::kBlockPublisher) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("SubscriberQos: Reliability::kReliable never drops, but overflow {} does; use "
                             "Overflow::kBlockPublisher (or kDefault) or Reliability::kBestEffort",
                             name_of(overflow)));
  }
  if (qos.history == History::kKeepAll && (overflow == Overflow::kDropOldest || overflow == Overflow::kLatestOnly)) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("SubscriberQos: History::kKeepAll keeps every message, but overflow {} drops the "
                             "oldest; use History::kKeepLast, or kRejectNewest/kBlockPublisher",
                             name_of(overflow)));
  }
  if (reliable && qos.quarantine_after_ns > 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "SubscriberQos: a quarantined queue drops its oldest messages, which Reliability::kReliable "
                 "never does; set quarantine_after_ns to 0, or use Reliability::kBestEffort with "
                 "Overflow::kBlockPublisher");
  }
  if (qos.quarantine_after_ns > 0 && overflow != Overflow::kBlockPublisher) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("SubscriberQos::quarantine_after_ns applies to Overflow::kBlockPublisher only (overflow "
                             "is {}); set it to 0",
                             name_of(overflow)));
  }
  if (overflow == Overflow::kLatestOnly) {
    return EffectiveQueue{.overflow = Overflow::kDropOldest, .depth = 1};
  }
  return EffectiveQueue{.overflow = overflow, .depth = qos.depth};
}

}  // namespace axon
