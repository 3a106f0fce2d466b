#include "harness/process_group.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "harness/progress.hpp"
#include "harness/system.hpp"

namespace axon_bench {
namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(50);

[[noreturn]] void run_child(const ProcessGroupJob& job, std::size_t index) noexcept {
  int status = 1;
  try {
    status = job.body(index);
  } catch (const std::exception& e) {
    job.error_of(index).set(e.what());
  } catch (...) {
    job.error_of(index).set("unknown exception");
  }
  std::fflush(nullptr);
  ::_exit(status);  // no atexit handlers or static destructors of the parent's copy
}

std::string describe_exit(const ProcessGroupJob& job, std::size_t index, int status) {
  const std::string what = job.name_of(index) + ": ";
  if (std::string own = job.error_of(index).str(); !own.empty()) {
    return what + own;
  }
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return what + "killed by signal " + std::to_string(WTERMSIG(status)) + " (SIG" + (name != nullptr ? name : "?") +
           ")";
  }
  return what + "exited with status " + std::to_string(WEXITSTATUS(status));
}

void kill_running(const std::vector<pid_t>& pids, const std::vector<bool>& running) {
  for (std::size_t i = 0; i < pids.size(); ++i) {
    if (running[i]) {
      ::kill(pids[i], SIGKILL);
    }
  }
}

}  // namespace

std::string run_process_group(const ProcessGroupJob& job) {
  std::fflush(nullptr);  // the children must not print the parent's buffered output again
  std::vector<pid_t> pids;
  std::vector<bool> running;
  for (std::size_t i = 0; i < job.workers; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::string error = "fork: " + error_text(errno);
      kill_running(pids, running);
      for (const pid_t p : pids) {
        ::waitpid(p, nullptr, 0);
      }
      return error;
    }
    if (pid == 0) {
      run_child(job, i);
    }
    pids.push_back(pid);
    running.push_back(true);
    if (job.started) {
      job.started(i, pid);
    }
  }

  ProgressLine progress(job.label, job.progress_total, job.progress_unit);
  const auto deadline = std::chrono::steady_clock::now() + job.timeout;
  std::size_t left = job.workers;
  std::string error;
  while (left > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (!running[i] || ::waitpid(pids[i], &status, WNOHANG) != pids[i]) {
        continue;
      }
      running[i] = false;
      --left;
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && error.empty()) {
        error = describe_exit(job, i, status);
        kill_running(pids, running);  // they would wait for their peer forever
      }
    }
    if (left == 0) {
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline && error.empty()) {
      error = "timed out after " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(job.timeout).count()) + " s (" +
              job.label + ")";
      kill_running(pids, running);
    }
    if (job.tick) {
      job.tick();
    }
    if (job.progress) {
      progress.update(job.progress());
    }
    std::this_thread::sleep_for(kPollPeriod);
  }
  return error;
}

}  // namespace axon_bench
