// What `axon-bench chaos` (chaos/net_delayer.cpp) and its delayer program
// (net_delay/nfqueue_delayer.cpp) agree on: the program's name, the NFQUEUE
// queue it binds, and the lines it prints.
#pragma once

namespace axon_bench {

/// Built next to axon-bench, in the same directory.
inline constexpr const char* kDelayerProgram = "axon-net-delay";

/// The NFQUEUE queue a delayer binds. Queues belong to a network namespace, each virtual host has its own, and a
/// host has at most one network fault at a time (the fault schedule refuses more): one number serves every host.
inline constexpr int kDelayerQueue = 19;

/// The first line the delayer prints, once it has bound its queue: the iptables rule may go in.
inline constexpr const char* kDelayerReady = "READY";

/// The start of the last line it prints at exit, with its counts.
inline constexpr const char* kDelayerCounts = "delayer:";

/// The most packets the kernel queues for the delayer before it drops them (its default is 1024): 5 s of delay at
/// 13000 packets/s.
inline constexpr unsigned kDelayerMaxQueued = 65536;

}  // namespace axon_bench
