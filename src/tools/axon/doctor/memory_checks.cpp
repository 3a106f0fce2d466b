// The memory checks: the registry's directory, locking memory, huge pages, transparent huge pages and swap.
#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "src/tools/axon/doctor/check.hpp"

namespace axon::tools::doctor {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1024} * 1024;
// docs/configuration.md, "limits": a domain's registry takes 1.46 MiB with the default limits and 35.4 MiB at
// the largest; the lock file, sockets and topics' schema files (at most 256 KiB each) beside it are not counted.
constexpr std::uint64_t kRegistryDefaultBytes = 2 * kMiB;
constexpr std::uint64_t kRegistryLargestBytes = 36 * kMiB;
constexpr std::uint64_t kHugePageBytes = 2 * kMiB;  // the pool's MFD_HUGE_2MB pages

std::optional<std::uint64_t> parse_number(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

/// The filesystem type of the mount that holds `dir`, from /proc/mounts (the longest mount point above it).
std::optional<std::string> filesystem_of(const HostView& host, const std::string& dir) {
  const auto mounts = host.read("/proc/mounts");
  if (!mounts) {
    return std::nullopt;
  }
  std::istringstream lines(*mounts);
  std::string device;
  std::string mount_point;
  std::string type;
  std::string rest;
  std::optional<std::string> best_type;
  std::size_t best_length = 0;
  while (lines >> device >> mount_point >> type && std::getline(lines, rest)) {
    const bool above =
        dir == mount_point || mount_point == "/" ||
        (dir.starts_with(mount_point) && dir.size() > mount_point.size() && dir[mount_point.size()] == '/');
    if (above && mount_point.size() >= best_length) {
      best_length = mount_point.size();
      best_type = type;
    }
  }
  return best_type;
}

/// The value in brackets of a sysfs choice ("always [madvise] never" is "madvise").
std::optional<std::string> selected_choice(const std::optional<std::string>& text) {
  if (!text) {
    return std::nullopt;
  }
  const auto open = text->find('[');
  const auto close = text->find(']', open);
  if (open == std::string::npos || close == std::string::npos) {
    return std::nullopt;
  }
  return text->substr(open + 1, close - open - 1);
}

}  // namespace

CheckResult check_shm(const HostView& host) {
  const ProcessFacts& facts = host.facts();
  const std::string& dir = facts.shm_dir;
  const std::string grow_fix = fmt::format(
      "in a container: docker run --shm-size=256m ...; on a host: sudo mount -o remount,size=256m {}; or set "
      "AXON_SHM_DIR to a directory on a larger tmpfs",
      dir);
  if (!facts.shm_space) {
    return fail(fmt::format("{} does not exist: axon keeps each domain's registry, lock file and sockets there", dir),
                fmt::format("sudo mkdir -p {0} && sudo mount -t tmpfs -o size=256m,mode=1777 tmpfs {0}; or set "
                            "AXON_SHM_DIR to a tmpfs directory",
                            dir));
  }
  const SpaceBytes space = *facts.shm_space;
  const auto type = filesystem_of(host, dir);
  std::string found = fmt::format(
      "{}: {}{}, {} free (a domain's registry takes 1.5 MiB with the default limits, "
      "35.4 MiB at the largest)",
      dir, type ? *type + ", " : std::string(), format_bytes(space.total_bytes), format_bytes(space.free_bytes));
  if (space.free_bytes < kRegistryDefaultBytes) {
    return fail(found + ": too little for one domain with the default limits", grow_fix);
  }
  if (space.free_bytes < kRegistryLargestBytes) {
    return warn(found + ": too little for a domain with large limits (docs/configuration.md, \"limits\")", grow_fix);
  }
  if (type && *type != "tmpfs") {
    return warn(found + ": not a tmpfs, so the registry's pages may be written back to a disk",
                fmt::format("sudo mount -t tmpfs -o size=256m,mode=1777 tmpfs {}; or set AXON_SHM_DIR to a tmpfs "
                            "directory",
                            dir));
  }
  return pass(std::move(found));
}

CheckResult check_memlock(const HostView& host) {
  const ProcessFacts& facts = host.facts();
  const std::uint64_t pool = default_pool_bytes();
  const std::string limits = memlock_limits(facts);
  if (facts.cap_ipc_lock) {
    return pass(fmt::format(
        "CAP_IPC_LOCK, so the limit ({}) does not apply: NodeOptions::lock_memory may lock any pool", limits));
  }
  if (may_lock(facts, pool)) {
    return pass(fmt::format("{}, no CAP_IPC_LOCK: room to lock the default pool ({})", limits, format_bytes(pool)));
  }
  std::string found = fmt::format(
      "{}, no CAP_IPC_LOCK: NodeOptions::lock_memory (pools never paged out) fails for pools past {} (the default "
      "pool is {})",
      limits, format_limit_bytes(facts.memlock.soft), format_bytes(pool));
  if (facts.memlock.hard != Limit::kUnlimited && facts.memlock.hard < pool) {
    found += "; the hard limit is too low as well, so only root can raise it";
  }
  return warn(std::move(found), memlock_fix());
}

CheckResult check_huge_pages(const HostView& host) {
  constexpr std::string_view kDir = "/sys/kernel/mm/hugepages/hugepages-2048kB";
  const auto reserved_text = host.read_trimmed(std::string(kDir) + "/nr_hugepages");
  const auto free_text = host.read_trimmed(std::string(kDir) + "/free_hugepages");
  const auto reserved = reserved_text ? parse_number(*reserved_text) : std::nullopt;
  const auto free = free_text ? parse_number(*free_text) : std::nullopt;
  if (!reserved || !free) {
    return skip(
        fmt::format("no 2 MiB huge pages on this kernel ({} is missing): NodeOptions::huge_pages is "
                    "not available",
                    kDir));
  }
  // The pool's payload in whole pages, plus one for its headers and queues.
  const std::uint64_t per_node = (default_pool_bytes() + kHugePageBytes - 1) / kHugePageBytes + 1;
  const std::string fix = fmt::format(
      "echo {0} | sudo tee {1}/nr_hugepages ({0} pages per node with the default pool); for good: "
      "vm.nr_hugepages = {0} in /etc/sysctl.d/90-axon.conf (where 2 MiB is the default huge page size) or "
      "hugepages={0} on the kernel command line",
      per_node, kDir);
  const std::string counts = fmt::format("2 MiB huge pages: {} reserved, {} free", *reserved, *free);
  if (*reserved == 0) {
    return warn(counts + ": NodeOptions::huge_pages (the pool on huge pages, fewer TLB misses) cannot be used", fix);
  }
  if (*free < per_node) {
    return warn(fmt::format("{}: a node with huge_pages and the default pool needs about {}", counts, per_node), fix);
  }
  return pass(fmt::format("{}: room for {} node(s) with huge_pages and the default pool ({} pages each)", counts,
                          *free / per_node, per_node));
}

CheckResult check_transparent_huge_pages(const HostView& host) {
  constexpr std::string_view kDir = "/sys/kernel/mm/transparent_hugepage";
  const auto enabled = selected_choice(host.read_trimmed(std::string(kDir) + "/enabled"));
  if (!enabled) {
    return skip("this kernel has no transparent huge pages");
  }
  const auto defrag = selected_choice(host.read_trimmed(std::string(kDir) + "/defrag"));
  std::string found = fmt::format("enabled [{}], defrag [{}]", *enabled, defrag.value_or("?"));
  std::string fix;
  if (*enabled == "always") {
    found +=
        ": khugepaged rewrites any process's memory into huge pages behind its back, and page faults may "
        "wait for compaction: stalls of milliseconds";
    fix = fmt::format(
        "echo madvise | sudo tee {}/enabled; for good: transparent_hugepage=madvise on the kernel "
        "command line",
        kDir);
  }
  if (defrag == "always") {
    found += *enabled == "always" ? "; and" : ":";
    found += " defrag [always] makes a page fault in a huge-page region compact memory synchronously";
    fix += fix.empty() ? "" : "; ";
    fix += fmt::format("echo defer+madvise | sudo tee {}/defrag", kDir);
  }
  if (!fix.empty()) {
    return warn(std::move(found), std::move(fix));
  }
  return pass(std::move(found));
}

CheckResult check_swap(const HostView& host) {
  const auto swaps = host.read("/proc/swaps");
  if (!swaps) {
    return skip("/proc/swaps is missing");
  }
  std::istringstream lines(*swaps);
  std::string line;
  std::getline(lines, line);  // the header
  std::uint64_t areas = 0;
  std::uint64_t total_kib = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string file;
    std::string type;
    std::uint64_t size_kib = 0;
    if (fields >> file >> type >> size_kib) {
      ++areas;
      total_kib += size_kib;
    }
  }
  if (areas == 0) {
    return pass("no swap");
  }
  const auto swappiness = host.read_trimmed("/proc/sys/vm/swappiness");
  return warn(fmt::format("{} swap area(s), {} (vm.swappiness {}): memory a real-time process has not locked may be "
                          "paged out, and the fault that brings it back costs milliseconds",
                          areas, format_bytes(total_kib * 1024), swappiness.value_or("?")),
              "sudo swapoff -a, and remove the swap lines of /etc/fstab; or keep swap, lock the pools "
              "(NodeOptions::lock_memory) and lower vm.swappiness: sudo sysctl -w vm.swappiness=1");
}

}  // namespace axon::tools::doctor
