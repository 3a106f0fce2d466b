// The scheduling and CPU checks: real-time priority, frequency governor, isolated CPUs, irqbalance and the
// clock source.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "src/tools/axon/doctor/check.hpp"
#include "src/tools/axon/doctor/cpu_list.hpp"

namespace axon::tools::doctor {
namespace {

constexpr std::string_view kCpuDir = "/sys/devices/system/cpu";

/// The numbers of the cpuN entries of /sys/devices/system/cpu, sorted.
std::vector<unsigned> cpu_entries(const HostView& host) {
  std::vector<unsigned> cpus;
  for (const auto& name : host.list(kCpuDir)) {
    const std::string_view digits = std::string_view(name).substr(std::min<std::size_t>(3, name.size()));
    if (name.starts_with("cpu") && !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos) {
      if (auto one = parse_cpu_list(digits)) {
        cpus.insert(cpus.end(), one->begin(), one->end());
      }
    }
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

/// The value of `name=` on the kernel command line, if it is there.
std::optional<std::string> kernel_parameter(const std::optional<std::string>& cmdline, std::string_view name) {
  if (!cmdline) {
    return std::nullopt;
  }
  std::istringstream words(*cmdline);
  std::string word;
  const std::string prefix = std::string(name) + "=";
  std::optional<std::string> value;
  while (words >> word && word != "--") {  // past "--": init's arguments
    if (word.starts_with(prefix)) {
      value = word.substr(prefix.size());  // the last one wins, as in the kernel
    }
  }
  return value;
}

/// A CPU list from sysfs, where "(null)" or nothing means none; empty when unreadable.
std::vector<unsigned> sysfs_cpus(const HostView& host, std::string_view file) {
  const auto text = host.read_trimmed(std::string(kCpuDir) + "/" + std::string(file));
  if (!text || *text == "(null)") {
    return {};
  }
  return parse_cpu_list(*text).value_or(std::vector<unsigned>{});
}

/// The CPUs to suggest isolating: the upper half of the online ones, never CPU 0 (the kernel's housekeeping).
std::vector<unsigned> suggested_isolation(const std::vector<unsigned>& online) {
  std::vector<unsigned> candidates;
  std::copy_if(online.begin(), online.end(), std::back_inserter(candidates), [](unsigned cpu) { return cpu != 0; });
  const std::size_t keep = std::max<std::size_t>(1, online.size() / 2);
  if (candidates.size() > keep) {
    candidates.erase(candidates.begin(), candidates.end() - static_cast<std::ptrdiff_t>(keep));
  }
  return candidates;
}

std::string isolation_fix(const std::string& cpus, bool with_isolcpus) {
  return fmt::format(
      "add {}nohz_full={} rcu_nocbs={} to GRUB_CMDLINE_LINUX in /etc/default/grub, then sudo update-grub and "
      "reboot; run axon's real-time threads there (ThreadOptions::cpu_affinity)",
      with_isolcpus ? fmt::format("isolcpus={} ", cpus) : std::string(), cpus, cpus);
}

}  // namespace

CheckResult check_rtprio(const HostView& host) {
  const ProcessFacts& facts = host.facts();
  auto text = [](std::uint64_t value) {
    return value == Limit::kUnlimited ? std::string("unlimited") : std::to_string(value);
  };
  const std::string limits =
      fmt::format("RLIMIT_RTPRIO soft {}, hard {}", text(facts.rtprio.soft), text(facts.rtprio.hard));
  if (facts.cap_sys_nice) {
    return pass(
        fmt::format("CAP_SYS_NICE, so RLIMIT_RTPRIO (soft {}, hard {}) does not apply: SCHED_FIFO at any priority",
                    text(facts.rtprio.soft), text(facts.rtprio.hard)));
  }
  if (facts.rtprio.soft > 0) {
    return pass(fmt::format("{}, no CAP_SYS_NICE: ThreadOptions::sched_fifo_priority up to {}", limits,
                            text(facts.rtprio.soft)));
  }
  return warn(fmt::format("{}, no CAP_SYS_NICE: ThreadOptions::sched_fifo_priority is refused, so axon's threads "
                          "run SCHED_OTHER and wait their turn behind every other task on their core",
                          limits),
              "ulimit -r 99 (in the shell that starts the program, up to the hard limit); for good: a line "
              "'<user> - rtprio 99' in /etc/security/limits.conf or LimitRTPRIO=99 in the systemd unit; or grant "
              "CAP_SYS_NICE: sudo setcap cap_sys_nice+ep <program>, docker run --cap-add=SYS_NICE");
}

CheckResult check_cpu_governor(const HostView& host) {
  std::map<std::string, std::vector<unsigned>> by_governor;
  for (const unsigned cpu : cpu_entries(host)) {
    if (auto governor = host.read_trimmed(fmt::format("{}/cpu{}/cpufreq/scaling_governor", kCpuDir, cpu))) {
      by_governor[*governor].push_back(cpu);
    }
  }
  if (by_governor.empty()) {
    return skip("no cpufreq: the hypervisor or the firmware sets the CPU frequency here");
  }
  std::string found;
  for (const auto& [governor, cpus] : by_governor) {
    found += fmt::format("{}{} on CPU {}", found.empty() ? "" : ", ", governor, format_cpu_list(cpus));
  }
  if (by_governor.size() == 1 && by_governor.begin()->first == "performance") {
    return pass(std::move(found));
  }
  return warn(found +
                  ": an idle core clocks down, so the first messages after a pause are handled slowly and wait "
                  "for the clock to rise",
              "sudo cpupower frequency-set -g performance, or: echo performance | sudo tee "
              "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor");
}

CheckResult check_isolated_cpus(const HostView& host) {
  const auto cmdline = host.read_trimmed("/proc/cmdline");
  const auto online_text = host.read_trimmed(std::string(kCpuDir) + "/online");
  const auto online = online_text ? parse_cpu_list(*online_text) : std::nullopt;
  const std::vector<unsigned> isolated = sysfs_cpus(host, "isolated");
  std::vector<unsigned> nohz = sysfs_cpus(host, "nohz_full");
  if (nohz.empty()) {
    // Kernels without the nohz_full file: the command line says what was asked for.
    if (auto param = kernel_parameter(cmdline, "nohz_full")) {
      nohz = parse_cpu_list(*param).value_or(std::vector<unsigned>{});
    }
  }
  const auto isolcpus = kernel_parameter(cmdline, "isolcpus");
  std::string found = fmt::format("isolated: {}, nohz_full: {}", isolated.empty() ? "none" : format_cpu_list(isolated),
                                  nohz.empty() ? "none" : format_cpu_list(nohz));
  if (isolcpus) {
    found += fmt::format(" (isolcpus={})", *isolcpus);
  }
  if (online) {
    found += fmt::format(", online: {}", format_cpu_list(*online));
  }
  if (isolated.empty() && nohz.empty()) {
    if (online && online->size() < 2) {
      return skip(found + ": one CPU, nothing to isolate");
    }
    const std::string suggest = online ? format_cpu_list(suggested_isolation(*online)) : std::string("<cpus>");
    return warn(found +
                    ": the scheduler and the timer tick share every core between axon's threads and everything "
                    "else",
                isolation_fix(suggest, true));
  }
  const bool covered = std::all_of(isolated.begin(), isolated.end(),
                                   [&nohz](unsigned cpu) { return std::binary_search(nohz.begin(), nohz.end(), cpu); });
  if (isolated.empty() || !covered) {
    const std::vector<unsigned>& cpus = isolated.empty() ? nohz : isolated;
    return warn(found + (isolated.empty() ? ": nohz_full without isolcpus: other tasks still run there"
                                          : ": the timer tick still interrupts isolated CPUs without nohz_full (up "
                                            "to 1000 times a second)"),
                isolation_fix(format_cpu_list(cpus), isolated.empty()));
  }
  return pass(std::move(found));
}

CheckResult check_irqbalance(const HostView& host) {
  const auto names = host.process_names();
  if (names.empty()) {
    return skip("cannot list the processes (/proc)");
  }
  if (!std::binary_search(names.begin(), names.end(), std::string("irqbalance"))) {
    return pass(
        "irqbalance is not running: interrupts stay on the CPUs they were given "
        "(/proc/irq/*/smp_affinity_list)");
  }
  return warn(
      "irqbalance is running: it moves device interrupts between cores as the load changes, and may move "
      "one onto a core that runs a real-time thread",
      "sudo systemctl disable --now irqbalance, then set /proc/irq/<n>/smp_affinity_list yourself; or keep "
      "it away from the real-time cores: IRQBALANCE_BANNED_CPULIST=<cpus> in /etc/default/irqbalance "
      "(older versions: IRQBALANCE_BANNED_CPUS, a hex mask), then sudo systemctl restart irqbalance");
}

CheckResult check_clock_source(const HostView& host) {
  constexpr std::string_view kDir = "/sys/devices/system/clocksource/clocksource0";
  const auto current = host.read_trimmed(std::string(kDir) + "/current_clocksource");
  if (!current) {
    return skip(fmt::format("{}/current_clocksource is missing", kDir));
  }
  const std::string available = host.read_trimmed(std::string(kDir) + "/available_clocksource").value_or("");
  const std::string found = fmt::format("{} (available: {})", *current, available.empty() ? "?" : available);
  if (*current == "tsc") {
    return pass(found + ": clock reads stay in user space (vDSO), some 20 ns");
  }
  // Clocks the vDSO reads without entering the kernel: a guest's paravirtual clocks and ARM's counter.
  if (*current == "kvm-clock" || *current == "hyperv_clocksource_tsc_page" || *current == "arch_sys_counter") {
    return pass(found + ": read in user space (vDSO) while the hypervisor keeps the TSC stable");
  }
  const bool tsc_available = (" " + available + " ").find(" tsc ") != std::string::npos;
  return warn(found +
                  ": every clock read is a system call (about 1 us instead of 20 ns), and axon reads the "
                  "clock for every message's timestamp and in its waits",
              tsc_available ? fmt::format("echo tsc | sudo tee {}/current_clocksource; for good: clocksource=tsc on "
                                          "the kernel command line",
                                          kDir)
                            : std::string("the kernel found no usable TSC (sudo dmesg | grep -i clocksource says "
                                          "why); on a VM, give the guest the host's invariant TSC (qemu: -cpu "
                                          "host,+invtsc)"));
}

}  // namespace axon::tools::doctor
