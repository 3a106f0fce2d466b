#include "tests/support/common/run_command.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tests/support/common/error_text.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace axon::test {

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return name;
  }
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): no one sets it meanwhile
  std::string dirs = path != nullptr ? path : "";
  dirs += ":/usr/sbin:/sbin";
  std::istringstream stream(dirs);
  for (std::string dir; std::getline(stream, dir, ':');) {
    if (dir.empty()) {
      continue;
    }
    std::string candidate = dir;
    candidate += "/";
    candidate += name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return {};
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& arg : argv) {
    text += text.empty() ? "" : " ";
    text += arg;
  }
  return text;
}

CommandOutput run_command(const std::vector<std::string>& argv) {
  CommandOutput result;
  if (argv.empty()) {
    result.output = "empty command";
    return result;
  }
  const std::string program = find_program(argv[0]);
  if (program.empty()) {
    result.output = argv[0] + ": not found in PATH, /usr/sbin or /sbin";
    return result;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.output = "pipe2: " + error_text(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  const int err = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    result.output = program + ": " + error_text(err);
    return result;
  }
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
    if (n > 0) {
      result.output.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string run_checked(const std::vector<std::string>& argv) {
  const CommandOutput out = run_command(argv);
  if (out.exit_code == 0) {
    return {};
  }
  std::string output = out.output;
  while (!output.empty() && output.back() == '\n') {
    output.pop_back();
  }
  std::string message = "command `" + command_text(argv) + "` ";
  message += out.exit_code < 0 ? "could not start" : "exited with " + std::to_string(out.exit_code);
  message += ": ";
  message += output.empty() ? "(no output)" : output;
  return message;
}

}  // namespace axon::test
