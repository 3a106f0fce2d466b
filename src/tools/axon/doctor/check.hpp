// One line of axon doctor's checklist and the checks that make them (one function per check, each reading the
// host through a HostView only, so that tests run them against fake hosts).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/tools/axon/doctor/host_view.hpp"

namespace axon::tools::doctor {

enum class Status : std::uint8_t {
  kPass,  ///< As a real-time host should be.
  kWarn,  ///< Works, but costs latency or limits what axon can do (lock_memory, huge_pages, SCHED_FIFO ...).
  kFail,  ///< Something axon needs will not work on this host as it is.
  kSkip,  ///< Does not apply here (no cpufreq in a VM, no RDMA device).
};

/// "pass", "warn", "fail", "skip" (the JSON values); upper case in text output.
[[nodiscard]] std::string_view to_string(Status status) noexcept;

struct CheckResult {
  std::string name;  ///< Stable identifier ("memlock"), the JSON "name"; run_checks() sets it.
  Status status = Status::kSkip;
  std::string found;  ///< What the check saw, and for a WARN or FAIL why it matters.
  std::string fix;    ///< The command(s) that fix it; empty on PASS and SKIP.
};

/// A CheckResult of each status (the name is run_checks()' to set).
[[nodiscard]] CheckResult pass(std::string found);
[[nodiscard]] CheckResult skip(std::string found);
[[nodiscard]] CheckResult warn(std::string found, std::string fix);
[[nodiscard]] CheckResult fail(std::string found, std::string fix);

// The checks, grouped by what they look at (memory_checks.cpp, cpu_checks.cpp, network_checks.cpp).
[[nodiscard]] CheckResult check_shm(const HostView& host);
[[nodiscard]] CheckResult check_memlock(const HostView& host);
[[nodiscard]] CheckResult check_huge_pages(const HostView& host);
[[nodiscard]] CheckResult check_transparent_huge_pages(const HostView& host);
[[nodiscard]] CheckResult check_swap(const HostView& host);
[[nodiscard]] CheckResult check_rtprio(const HostView& host);
[[nodiscard]] CheckResult check_cpu_governor(const HostView& host);
[[nodiscard]] CheckResult check_isolated_cpus(const HostView& host);
[[nodiscard]] CheckResult check_irqbalance(const HostView& host);
[[nodiscard]] CheckResult check_clock_source(const HostView& host);
[[nodiscard]] CheckResult check_socket_buffers(const HostView& host);
[[nodiscard]] CheckResult check_rdma_devices(const HostView& host);
[[nodiscard]] CheckResult check_rdma_memlock(const HostView& host);

/// The names of every check, in the order run_checks() runs them.
[[nodiscard]] std::vector<std::string_view> check_names();
/// Every check against `host`, in check_names() order, each named.
[[nodiscard]] std::vector<CheckResult> run_checks(const HostView& host);

// Shared by the checks.

/// "512 B", "64 KiB", "61.3 MiB", "7.8 GiB" (binary units, one decimal past KiB when not whole).
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);
/// format_bytes(), or "unlimited" for Limit::kUnlimited.
[[nodiscard]] std::string format_limit_bytes(std::uint64_t bytes);
/// The payload bytes of a node's pool with default_chunk_classes() (NodeOptions::chunk_classes left empty).
[[nodiscard]] std::uint64_t default_pool_bytes();
/// Whether this process may lock (mlock) or pin (RDMA registration) `bytes`: CAP_IPC_LOCK, or RLIMIT_MEMLOCK's
/// soft limit at least that.
[[nodiscard]] bool may_lock(const ProcessFacts& facts, std::uint64_t bytes) noexcept;
/// "RLIMIT_MEMLOCK soft 8 MiB, hard 8 MiB" (the memlock and RDMA memlock checks' finding).
[[nodiscard]] std::string memlock_limits(const ProcessFacts& facts);
/// The fix for a low RLIMIT_MEMLOCK: the ways to raise it or grant CAP_IPC_LOCK.
[[nodiscard]] std::string memlock_fix();

}  // namespace axon::tools::doctor
