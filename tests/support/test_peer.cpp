// axon_test_peer: the other process of multi-process tests.
//   axon_test_peer <command> key=value...
// Commands: publish, subscribe, wait, hold, loan, spam, node, other-type,
// fb-publish, pb-publish, fb-garbage, pb-garbage, hold-lock.
// Prints "READY" once its endpoints exist, then command-specific lines.
//
// Subscriber QoS (subscribe, wait): depth=N, overflow=default|drop-oldest|
// reject-newest|latest-only|block, history=keep-last|keep-all, reliable=1,
// block_timeout_ms=N, quarantine_ms=N; block=1 is overflow=block with a 10 s
// timeout.
// Publisher QoS (publish): durability=N (transient-local, last N messages).
// Every command: domain=N, liveness_ms=N (NodeOptions::liveness_period_ms).
// This file reads the command line; the commands are in test_peer_<family>.cpp,
// one file a family (test_peer.hpp lists them).
#include "tests/support/test_peer.hpp"

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

int main(int argc, char** argv) {
  using namespace axon::test::peer;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <publish|subscribe|wait|hold|loan|spam|node|other-type|...> key=value...\n",
                 argv[0]);
    return 2;
  }
  Args args;
  for (int i = 2; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    if (eq != std::string::npos) {
      args.values[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  using Run = int (*)(const Args&);
  // A table, three commands a line.
  // clang-format off
  const std::pair<std::string_view, Run> commands[] = {
      {"publish", publish}, {"subscribe", subscribe}, {"wait", wait_on_word},
      {"hold", hold}, {"loan", loan}, {"spam", spam},
      {"node", node_only}, {"other-type", other_type}, {"fb-publish", fb_publish},
      {"pb-publish", pb_publish}, {"fb-garbage", fb_garbage},
      {"pb-garbage", pb_garbage}, {"hold-lock", hold_lock}};
  // clang-format on
  const std::string command = argv[1];
  for (const auto& [name, run] : commands) {
    if (command == name) {
      return run(args);
    }
  }
  std::fprintf(stderr, "unknown command %s\n", command.c_str());
  return 2;
}
