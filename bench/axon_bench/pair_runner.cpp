#include "pair_runner.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>

namespace axon_bench {
namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(200);
constexpr auto kQuietProgressPeriod = std::chrono::seconds(10);

[[noreturn]] void run_worker(const PairJob& job, PairControl& control, int side) noexcept {
  int status = 1;
  const std::string pin_error = pin_to_cpu(job.cpus[static_cast<std::size_t>(side)]);
  if (!pin_error.empty()) {
    fail(control, side, pin_error);
  } else {
    try {
      status = job.worker[side](control);
    } catch (const std::exception& e) {
      fail(control, side, e.what());
    }
  }
  std::fflush(nullptr);
  ::_exit(status);  // no atexit handlers or static destructors of the parent's copy
}

std::string describe_exit(int side, int status, const PairControl& control) {
  const SideReport& report = control.side[side];
  std::string what = "worker " + std::to_string(side) + ": ";
  if (report.error[0] != '\0') {
    return what + report.error;
  }
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return what + "killed by signal " + std::to_string(WTERMSIG(status)) + " (SIG" + (name != nullptr ? name : "?") +
           ")";
  }
  return what + "exited with status " + std::to_string(WEXITSTATUS(status));
}

class ProgressLine {
 public:
  explicit ProgressLine(const PairJob& job) : job_(job), tty_(::isatty(STDERR_FILENO) != 0) {}
  ~ProgressLine() {
    if (tty_ && shown_) {
      std::fprintf(stderr, "\r\033[K");
    }
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(std::uint64_t done, std::chrono::steady_clock::time_point now) {
    if (job_.progress_total == 0) {
      return;
    }
    if (!tty_ && now - last_ < kQuietProgressPeriod) {
      return;
    }
    last_ = now;
    shown_ = true;
    const double percent =
        100.0 * static_cast<double>(std::min(done, job_.progress_total)) / static_cast<double>(job_.progress_total);
    std::fprintf(stderr, tty_ ? "\r\033[K  %s: %llu/%llu (%.0f%%)" : "  %s: %llu/%llu (%.0f%%)\n", job_.label.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(job_.progress_total), percent);
    std::fflush(stderr);
  }

 private:
  const PairJob& job_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

SharedMapping::SharedMapping(std::size_t bytes) : bytes_(bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw std::system_error(errno, std::generic_category(),
                            "mmap of " + std::to_string(bytes) + " shared bytes for the benchmark");
  }
  data_ = static_cast<std::byte*>(p);
}

SharedMapping::~SharedMapping() {
  if (data_ != nullptr) {
    ::munmap(data_, bytes_);
  }
}

void arrive_and_wait(PairControl& control) noexcept {
  // acq_rel/acquire: what each worker did before arriving (connecting, first
  // writes) happens before the other leaves the barrier.
  control.arrived.fetch_add(1, std::memory_order_acq_rel);
  for (std::uint64_t spins = 0; control.arrived.load(std::memory_order_acquire) < 2; ++spins) {
    if (spins < 100'000) {
      cpu_relax();
    } else {
      ::sched_yield();  // both workers may share a CPU when not pinned
    }
  }
}

int fail(PairControl& control, int side, std::string_view message) noexcept {
  char* out = control.side[side].error;
  const std::size_t n = std::min(message.size(), sizeof(SideReport::error) - 1);
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
  return 1;
}

std::string run_pair(const PairJob& job, PairControl& control) {
  std::fflush(nullptr);  // the children must not print the parent's buffered output again
  pid_t pids[2] = {-1, -1};
  for (int side = 0; side < 2; ++side) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::string error = std::string("fork: ") + error_text(errno);
      if (side == 1) {
        ::kill(pids[0], SIGKILL);
        ::waitpid(pids[0], nullptr, 0);
      }
      return error;
    }
    if (pid == 0) {
      run_worker(job, control, side);
    }
    pids[side] = pid;
  }

  ProgressLine progress(job);
  const auto deadline = std::chrono::steady_clock::now() + job.timeout;
  bool running[2] = {true, true};
  std::string error;
  while (running[0] || running[1]) {
    for (int side = 0; side < 2; ++side) {
      int status = 0;
      if (!running[side] || ::waitpid(pids[side], &status, WNOHANG) != pids[side]) {
        continue;
      }
      running[side] = false;
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && error.empty()) {
        error = describe_exit(side, status, control);
        const int other = 1 - side;
        if (running[other]) {
          ::kill(pids[other], SIGKILL);  // it would wait for its peer forever
        }
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline && (running[0] || running[1])) {
      error = "timed out after " + std::to_string(job.timeout.count()) + " s (" + job.label + ")";
      for (int side = 0; side < 2; ++side) {
        if (running[side]) {
          ::kill(pids[side], SIGKILL);
        }
      }
    }
    if (running[0] || running[1]) {
      progress.update(control.progress.load(std::memory_order_relaxed), now);
      std::this_thread::sleep_for(kPollPeriod);
    }
  }
  return error;
}

}  // namespace axon_bench
