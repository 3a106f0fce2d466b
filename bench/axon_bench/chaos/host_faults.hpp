// The faults a chaos run does to the whole host rather than to one
// component: busy processes on every CPU, a process that fills memory, a
// file that fills the shared-memory directory. Each is bounded so that the
// machine itself never runs out (memory_pressure and shm_full stop at
// kMaxFillPercent of MemAvailable), and each is undone by its stop call.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace axon_bench {

/// /proc/meminfo MemAvailable in bytes (0 when it cannot be read).
std::uint64_t mem_available_bytes();

/// Where axon keeps its shared-memory files: AXON_SHM_DIR, else /dev/shm.
std::string shm_directory();

/// Bytes free in `dir` for an unprivileged writer (statvfs), 0 when unknown.
std::uint64_t free_bytes_in(const std::string& dir);

/// Forks `count` processes that spin until killed. Returns their pids.
std::vector<pid_t> start_cpu_hogs(int count);

/// Forks a process that touches memory until `fill_percent` of the
/// MemAvailable it finds is in use by it, 64 MiB at a time, and never
/// beyond kMaxFillPercent of it nor below 256 MiB left available, then waits
/// to be killed. It keeps the bytes it holds in `*filled` (shared memory the
/// parent reads after reaping it). Returns its pid (or -1 with `error` set).
pid_t start_memory_filler(double fill_percent, std::uint64_t* filled, std::string& error);

/// How many bytes shm_full must write to leave `leave_mib` free in `dir`
/// now; refuses (returns "" in `error` only when it fits) when that is more
/// than kMaxFillPercent of MemAvailable: the directory's pages are memory.
std::uint64_t shm_fill_bytes(const std::string& dir, std::uint64_t leave_mib, std::string& error);

/// Creates `path` and allocates `bytes` in it. Returns "" or what failed
/// (the file is removed then).
std::string fill_file(const std::string& path, std::uint64_t bytes);

/// SIGKILLs the processes and waits for each (at most `timeout_ms` in all).
void stop_processes(std::vector<pid_t>& pids, int timeout_ms = 5000);

}  // namespace axon_bench
