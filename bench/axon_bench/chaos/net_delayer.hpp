// The delayer process of a delay or reorder fault (axon-net-delay,
// net_delay/nfqueue_delayer.cpp) as axon-bench chaos runs it: started inside
// a virtual host's namespace before the fault's NFQUEUE rule goes in, told to
// stop (SIGTERM: it lets every held packet go) after the rule is gone, and
// waited for, keeping the counts it prints at exit for the run's report.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace axon_bench {

/// A delayer that runs. Owned by the fault that started it; not thread-safe.
struct DelayerProcess {
  pid_t pid = -1;      ///< -1: none.
  int output_fd = -1;  ///< Read end of its stdout and stderr.
};

/// axon-net-delay's path: in the directory of this program (/proc/self/exe). "" when it is not there.
std::string delayer_program_path();

/// Starts `argv` (`ip netns exec NS .../axon-net-delay ...`) and waits at most `timeout_ms` for its READY line.
/// Returns "" with `out` set, or what went wrong (with what it printed); nothing is left running then.
std::string start_delayer(const std::vector<std::string>& argv, int timeout_ms, DelayerProcess& out);

/// What a delayer said when it stopped.
struct DelayerExit {
  std::string counts;  ///< Its last line ("delayer: queue 19: 812 packets, ...") or "".
  std::string error;   ///< "" when it exited 0 with its counts.
};

/// SIGTERM to `d`, then waits at most `timeout_ms` for it to exit (SIGKILL after that) and reaps it. `d` is none
/// afterwards. Does nothing for none.
DelayerExit stop_delayer(DelayerProcess& d, int timeout_ms);

}  // namespace axon_bench
