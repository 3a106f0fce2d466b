// Runs a system tool (ip, iptables) to completion and keeps what it printed,
// so a failure can be reported with the command line and its output.
#pragma once

#include <string>
#include <vector>

namespace axon::test {

struct CommandOutput {
  int exit_code = -1;  ///< The tool's exit status; 128+signal when killed; -1 when it could not start.
  std::string output;  ///< stdout and stderr, interleaved as printed.
};

/// `name` as an executable path: as it is when it holds a '/', else the
/// first match in PATH, then /usr/sbin and /sbin (not in every user's PATH);
/// "" when there is none.
std::string find_program(const std::string& name);

/// Runs `argv` (argv[0] is searched in PATH, then /usr/sbin and /sbin) and
/// waits for it. Never throws; a tool that cannot start gives exit_code -1
/// and the reason in `output`.
CommandOutput run_command(const std::vector<std::string>& argv);

/// Runs `argv`; "" when it exited with 0, else "`ip link ...` exited with 2: <output>".
std::string run_checked(const std::vector<std::string>& argv);

/// "ip -n ns link set up" (arguments joined by spaces, for messages).
std::string command_text(const std::vector<std::string>& argv);

}  // namespace axon::test
