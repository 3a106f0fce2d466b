// `axon-bench wakeup`: how fast a subscriber's executor callback runs after a
// publish, for each axon::WaitStrategy, next to busy-spin and to a raw futex
// ping-pong measured in the same run on the same CPUs; and what an idle
// subscriber costs in CPU with each strategy.
#pragma once

#include "harness/command.hpp"

namespace axon_bench {

/// Registers `axon-bench wakeup` and its options on `app`.
Command add_wakeup_command(CLI::App& app);

}  // namespace axon_bench
