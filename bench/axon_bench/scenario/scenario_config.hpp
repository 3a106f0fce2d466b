// A scenario file (YAML): topics with their size and rate, and components
// (one process each) publishing and subscribing them. The format is in
// docs/performance.md and bench/scenarios/urban.yaml.
//
// load_scenario() rejects a malformed file with ScenarioError, whose message
// starts with "FILE:LINE:COLUMN:" and says what is wrong: YAML syntax,
// unknown keys, wrong types, non-positive rates, sizes out of range, unknown
// or unpublished topics, a topic published twice, duplicate names.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/wait.hpp"

namespace axon_bench {

/// A malformed scenario file; what() names the file and line.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Payload sizes of scenario topics are rounded up to a power of two from
/// 64 B to 16 MiB: each is a message type of its own (Payload<N>).
inline constexpr std::uint64_t kScenarioMinPayloadBytes = 64;
inline constexpr std::uint64_t kScenarioMaxPayloadBytes = 16ULL << 20;

struct ScenarioTopic {
  std::string name;
  std::uint64_t configured_bytes = 0;  ///< As written in the file.
  std::uint64_t payload_bytes = 0;     ///< Rounded up to its message type's size.
  double rate_hz = 0;
  std::uint32_t depth = 4;       ///< Each subscriber's queue.
  bool block_publisher = false;  ///< overflow: block_publisher (default reject_newest).
  double phase_ms = 0;           ///< First message this long after the start.
  bool touch = false;            ///< The publisher writes every byte, subscribers read every byte.
  /// `reliable: true`: subscribers ask for Reliability::kReliable (a full queue holds the publisher, at most
  /// its block timeout, and a message that still finds no room is counted, never dropped silently).
  bool reliable = false;
  int line = 0;  ///< Where it is defined (1-based).
  // Derived from the components:
  int publisher = -1;            ///< Index of the publishing component.
  std::vector<int> subscribers;  ///< Indices of the subscribing components.
};

struct ScenarioComponent {
  std::string name;
  std::vector<int> publishes;   ///< Topic indices.
  std::vector<int> subscribes;  ///< Topic indices.
  int cpu = -1;                 ///< Pinned CPU, -1 = not pinned.
  /// `host:` (chaos runs): index into Scenario::hosts of the virtual host it runs on, -1 = none (one machine).
  int host = -1;
  int line = 0;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  double duration_s = 60;  ///< Measured time (--duration overrides).
  double warmup_s = 1;     ///< Run before the measured time, not counted.
  /// `wait: blocking` (the default): each component's subscribers are
  /// callbacks of an axon::SingleThreadedExecutor with
  /// WaitStrategy::blocking(), asleep on their futex words until a message
  /// arrives or the component's next publication is due. Else the component
  /// polls its subscribers and idles with `wait` (busy-poll, yield, sleep).
  BenchWait wait{.strategy = axon::WaitStrategy::blocking(), .executor = true, .sleep_us = 100};

  /// "blocking", else the polling wait's name ("sleep-100us", ...).
  [[nodiscard]] std::string wait_name() const { return wait.name(); }
  std::vector<ScenarioTopic> topics;
  std::vector<ScenarioComponent> components;
  /// The virtual hosts the components name (`host:`), in order of first use; empty when none does. `axon-bench
  /// chaos` runs each on a network namespace of its own (UDP between them); `scenario` ignores them.
  std::vector<std::string> hosts;
};

/// Virtual hosts a scenario may name (tests/support/common/netns.hpp: 2..8 hosts).
inline constexpr std::size_t kScenarioMinHosts = 2;
inline constexpr std::size_t kScenarioMaxHosts = 8;

/// Reads and checks `path`. Throws ScenarioError.
Scenario load_scenario(const std::string& path);

/// A scenario's `wait`: blocking (an executor), busy-poll, yield or sleep
/// (polling, sleeping `sleep_us`). Throws std::invalid_argument.
BenchWait parse_scenario_wait(const std::string& text, std::uint32_t sleep_us);

/// The power of two from 64 B up that holds `bytes`.
std::uint64_t round_up_payload(std::uint64_t bytes);

}  // namespace axon_bench
