// Pins google-benchmark threads to distinct CPUs, so a two-thread benchmark
// measures two cores talking (not one core time-slicing).
#pragma once

#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

namespace axon::bench {

/// The CPUs the program was started on, read once before any thread pins
/// itself (threads inherit the affinity of the main thread, which runs
/// benchmark thread 0).
inline const cpu_set_t& allowed_cpus() noexcept {
  static const cpu_set_t kAllowed = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    ::sched_getaffinity(0, sizeof(set), &set);
    return set;
  }();
  return kAllowed;
}

/// Pins benchmark thread i to the i-th allowed CPU; does nothing when fewer
/// CPUs than threads are allowed.
inline void pin_thread(const benchmark::State& state) noexcept {
  const cpu_set_t& allowed = allowed_cpus();
  if (CPU_COUNT(&allowed) < state.threads()) {
    return;
  }
  int wanted = state.thread_index();
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed) && wanted-- == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      ::pthread_setaffinity_np(::pthread_self(), sizeof(one), &one);
      return;
    }
  }
}

/// Reads the initial affinity during static initialization, before main().
inline const bool kAllowedCpusRead = (allowed_cpus(), true);

}  // namespace axon::bench
