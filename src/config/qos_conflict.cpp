// A topic's contradicting QoS explained in the words of the file
// (`reliability: reliable`, `overflow: block_publisher`,
// `quarantine_after_ms`), not those of the API that effective_queue() uses
// for callers of subscribe() (Reliability::kReliable,
// Overflow::kBlockPublisher, quarantine_after_ns). effective_queue() still
// decides what is refused; this only says why, rule by rule in its order.
#include <fmt/format.h>

#include "src/config/config_sections.hpp"

namespace axon::detail {
namespace {

/// The value of `key` as the file wrote it ("" when absent).
std::string written(const YAML::Node& item, const char* key) {
  const YAML::Node value = item[key];
  return value.IsDefined() && value.IsScalar() ? value.Scalar() : std::string();
}

}  // namespace

std::string qos_conflict_in_file_words(const YAML::Node& item, const SubscriberQos& qos, std::string_view api_message) {
  const bool reliable = qos.reliability == Reliability::kReliable;
  const bool keep_all = qos.history == History::kKeepAll;
  const std::string given = written(item, "overflow");
  // What the queue does when the file leaves overflow out: effective_queue()'s
  // choice for kDefault.
  std::string overflow = given;
  std::string overflow_is = "overflow is " + given;
  if (given.empty() || given == "default") {
    overflow = reliable ? "block_publisher" : keep_all ? "reject_newest" : "drop_oldest";
    overflow_is =
        fmt::format("overflow is {} (so {}, the default with {})", given.empty() ? "not given" : "default", overflow,
                    reliable   ? "reliability: reliable"
                    : keep_all ? "history: keep_all"
                               : "history: keep_last");
  }
  if (reliable && overflow != "block_publisher") {
    return fmt::format(
        "reliability: reliable never drops a message, but overflow: {} does; use overflow: "
        "block_publisher (or leave overflow out), or reliability: best_effort",
        overflow);
  }
  if (keep_all && (overflow == "drop_oldest" || overflow == "latest_only")) {
    return fmt::format(
        "history: keep_all keeps every message, but overflow: {} drops the oldest; use history: "
        "keep_last, or overflow: reject_newest or block_publisher",
        overflow);
  }
  if (reliable && qos.quarantine_after_ns > 0) {
    return fmt::format(
        "quarantine_after_ms: {} drops the oldest messages of a subscriber that stays full, which "
        "reliability: reliable never does; remove quarantine_after_ms, or use reliability: "
        "best_effort with overflow: block_publisher",
        written(item, "quarantine_after_ms"));
  }
  if (qos.quarantine_after_ns > 0 && overflow != "block_publisher") {
    return fmt::format(
        "quarantine_after_ms applies to overflow: block_publisher only, and {}; set overflow: "
        "block_publisher or remove quarantine_after_ms",
        overflow_is);
  }
  return std::string(api_message);  // a rule this file does not know yet: the API's words beat none
}

}  // namespace axon::detail
