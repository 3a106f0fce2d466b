// Real-time thread options: CPU affinity and SCHED_FIFO, with errors that say
// what is missing.
#include "axon/realtime.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <string>

#include "src/base/errors.hpp"

namespace axon {
namespace {

/// "0-3,6" for the CPUs in `set`.
std::string describe(const cpu_set_t& set) {
  std::string text;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) {
      continue;
    }
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) {
      ++last;
    }
    if (!text.empty()) {
      text += ',';
    }
    text += std::to_string(cpu);
    if (last > cpu) {
      text += '-' + std::to_string(last);
    }
    cpu = last;
  }
  return text.empty() ? "none" : text;
}

std::string rlimit_text(rlim_t value) { return value == RLIM_INFINITY ? "unlimited" : std::to_string(value); }

Result<void> apply_affinity(const std::vector<int>& cpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return system_error(errno, "sched_getaffinity");
  }
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
      return Error(ErrorCode::kInvalidArgument,
                   "ThreadOptions::cpu_affinity: CPU " + std::to_string(cpu) +
                       " is not available to this thread; allowed CPUs: " + describe(allowed) +
                       " (limited by the machine, taskset or the cgroup cpuset)");
    }
    CPU_SET(cpu, &wanted);
  }
  if (const int rc = ::pthread_setaffinity_np(::pthread_self(), sizeof(wanted), &wanted); rc != 0) {
    return system_error(rc, "pthread_setaffinity_np");
  }
  return {};
}

Result<void> apply_fifo(int priority) {
  const int lowest = ::sched_get_priority_min(SCHED_FIFO);
  const int highest = ::sched_get_priority_max(SCHED_FIFO);
  if (priority < lowest || priority > highest) {
    return Error(ErrorCode::kInvalidArgument, "ThreadOptions::sched_fifo_priority " + std::to_string(priority) +
                                                  " is outside SCHED_FIFO's range " + std::to_string(lowest) + ".." +
                                                  std::to_string(highest) + " (0 keeps normal scheduling)");
  }
  sched_param param{};
  param.sched_priority = priority;
  const int rc = ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &param);
  if (rc == EPERM) {
    rlimit limit{};
    ::getrlimit(RLIMIT_RTPRIO, &limit);
    return Error(ErrorCode::kSystem,
                 "SCHED_FIFO priority " + std::to_string(priority) +
                     " refused: the process needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least " +
                     std::to_string(priority) + " (RLIMIT_RTPRIO is " + rlimit_text(limit.rlim_cur) + ", hard limit " +
                     rlimit_text(limit.rlim_max) + "). Raise it with `ulimit -r " + std::to_string(priority) +
                     "` (up to the hard limit) or a line `<user> - rtprio " + std::to_string(priority) +
                     "` in /etc/security/limits.conf, or grant CAP_SYS_NICE (setcap cap_sys_nice+ep <program>; "
                     "docker run --cap-add=SYS_NICE)");
  }
  if (rc != 0) {
    return system_error(rc, "pthread_setschedparam(SCHED_FIFO)");
  }
  return {};
}

}  // namespace

Result<void> apply_thread_options(const ThreadOptions& options) {
  if (!options.cpu_affinity.empty()) {
    if (auto ok = apply_affinity(options.cpu_affinity); !ok) {
      return ok;
    }
  }
  if (options.sched_fifo_priority != 0) {
    return apply_fifo(options.sched_fifo_priority);
  }
  return {};
}

}  // namespace axon
