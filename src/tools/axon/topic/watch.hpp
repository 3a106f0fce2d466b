// What `axon topic echo`, `hz` and `bw` share: the topic and when to stop (--duration, --count, --wait, Ctrl-C),
// joining the domain as `axon-cli-<pid>`, the type-erased subscription (Node::subscribe_any) and the loop that
// hands each message to the command.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "axon/node.hpp"
#include "axon/result.hpp"
#include "src/tools/axon/global_options.hpp"

namespace axon::tools {

struct WatchOptions {
  std::string topic;
  double duration_s = 0;    ///< > 0: stop this long after subscribing.
  std::uint64_t count = 0;  ///< > 0: stop after this many messages.
  double wait_s = -1;       ///< How long to wait for a publisher; negative: without end.
};

/// Adds TOPIC, --duration, --count and --wait to `command`, bound to `options`.
void add_watch_options(CLI::App& command, WatchOptions& options);

/// While it lives, SIGINT (Ctrl-C) and SIGTERM ask the watch loop to stop instead of ending the process, so
/// that the node leaves the domain as usual. One at a time per process.
class StopOnSignals {
 public:
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  StopOnSignals(StopOnSignals&&) = delete;
  StopOnSignals& operator=(StopOnSignals&&) = delete;
  /// A signal came (async-signal-safe to set, any thread to read).
  [[nodiscard]] static bool requested() noexcept;
};

/// The domain joined and the topic subscribed to.
struct Watch {
  std::shared_ptr<Node> node;
  AnySubscription subscription;
};

/// Joins `globals.domain_id` as node `axon-cli-<pid>` (a small pool: it only subscribes) and subscribes to the
/// topic, waiting for its first publisher as `options.wait_s` says; a signal ends the wait. The error says why
/// (kTimeout: no publisher in time; kNotFound; a failure to join).
Result<Watch> open_watch(const GlobalOptions& globals, const WatchOptions& options);

/// Takes the topic's messages and hands each to `on_message` until a signal, `options.duration_s` or
/// `options.count` messages; `on_second` (when set) runs once a second of wall time. Returns the messages
/// handed over.
std::uint64_t run_watch(Watch& watch, const WatchOptions& options,
                        const std::function<void(const Sample<Bytes>&)>& on_message,
                        const std::function<void()>& on_second = {});

/// Prints "axon: <error>" to stderr and returns the exit status for it (kExitFailed).
int report_failure(const Error& error);

}  // namespace axon::tools
