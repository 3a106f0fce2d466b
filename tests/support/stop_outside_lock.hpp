// Stopping a peer process (SIGSTOP, as a debugger would) at a moment it does
// not hold the domain lock: a stopped lock holder delays everyone's
// advertise() and subscribe() (a known limit), which a test of something
// else must not trip over by chance.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "transports/shm/domain_lock.hpp"

namespace axon::test {

/// Whether every thread of `pid` is stopped (state T in /proc).
inline bool all_threads_stopped(pid_t pid) {
  std::error_code error;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');  // the name may hold spaces and parentheses
    if (paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'T') {
      return false;
    }
    any = true;
  }
  return !error && any;
}

/// SIGSTOPs `pid` while this process holds the domain lock at `lock_path`,
/// and lets go only once all its threads are stopped: none of them holds
/// the lock then, nor can take it. False (the test failed) on timeout.
inline bool stop_outside_domain_lock(pid_t pid, const std::string& lock_path, std::chrono::milliseconds timeout) {
  shm::DomainLock lock(lock_path, 0600);
  auto held = lock.lock();
  if (!held) {
    ADD_FAILURE() << held.error().message();
    return false;
  }
  ::kill(pid, SIGSTOP);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!all_threads_stopped(pid)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "process " << pid << " did not stop within " << timeout.count() << " ms";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace axon::test
