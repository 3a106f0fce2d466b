// Runs a command line through the shell (popen) and keeps its stdout and exit status: for tests that run a
// program with redirections or a script interpreter (`node check.js ...`, `axon record ... 2>&1`).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace axon::test {

struct ShellRun {
  int status = -1;  ///< The command's exit status; -1 when it did not run or was killed.
  std::string out;  ///< Its stdout (stderr too when the command line redirects it).
};

inline ShellRun run_shell(const std::string& command) {
  ShellRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return run;
  }
  char buffer[65536];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    run.out.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace axon::test
