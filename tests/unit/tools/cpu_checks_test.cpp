// axon doctor's scheduling and CPU checks against fake hosts: each verdict and its fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/tools/axon/doctor/check.hpp"
#include "tests/unit/tools/fake_host.hpp"

namespace axon::tools::doctor {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

TEST(RtprioCheck, PassesWithCapSysNice) {
  FakeHost host;
  host.facts.cap_sys_nice = true;

  const CheckResult sut = check_rtprio(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found, HasSubstr("CAP_SYS_NICE, so RLIMIT_RTPRIO (soft 0, hard 0) does not apply"));
}

TEST(RtprioCheck, PassesWithARealTimePriorityLimit) {
  FakeHost host;
  host.facts.rtprio = {.soft = 50, .hard = 99};

  const CheckResult sut = check_rtprio(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found, HasSubstr("sched_fifo_priority up to 50"));
}

TEST(RtprioCheck, WarnsWhenSchedFifoIsRefusedAndSaysHowToAllowIt) {
  FakeHost host;
  host.facts.rtprio = {.soft = 0, .hard = 0};

  const CheckResult sut = check_rtprio(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("RLIMIT_RTPRIO soft 0, hard 0, no CAP_SYS_NICE"));
  EXPECT_THAT(sut.fix, HasSubstr("ulimit -r 99"));
  EXPECT_THAT(sut.fix, HasSubstr("'<user> - rtprio 99' in /etc/security/limits.conf"));
  EXPECT_THAT(sut.fix, HasSubstr("docker run --cap-add=SYS_NICE"));
}

void governors(const FakeHost& host, const char* cpu0, const char* cpu1) {
  host.file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", std::string(cpu0) + "\n");
  host.file("/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", std::string(cpu1) + "\n");
  host.file("/sys/devices/system/cpu/cpuidle/current_driver", "none\n");  // not a CPU
}

TEST(CpuGovernorCheck, PassesWhenEveryCpuRunsPerformance) {
  FakeHost host;
  governors(host, "performance", "performance");

  const CheckResult sut = check_cpu_governor(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_EQ(sut.found, "performance on CPU 0-1");
}

TEST(CpuGovernorCheck, WarnsOnPowersaveNamingTheCpus) {
  FakeHost host;
  governors(host, "powersave", "performance");

  const CheckResult sut = check_cpu_governor(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("performance on CPU 1, powersave on CPU 0"));
  EXPECT_THAT(sut.fix, HasSubstr("sudo cpupower frequency-set -g performance"));
}

TEST(CpuGovernorCheck, SkipsWithoutCpufreq) {
  FakeHost host;
  host.file("/sys/devices/system/cpu/cpu0/online", "1\n");

  EXPECT_EQ(check_cpu_governor(host.view()).status, Status::kSkip);
}

constexpr const char* kCpuDir = "/sys/devices/system/cpu";

TEST(IsolatedCpusCheck, PassesWithIsolatedTicklessCpus) {
  FakeHost host;
  host.file("/proc/cmdline", "root=/dev/sda1 isolcpus=2-3 nohz_full=2-3 quiet\n");
  host.file(std::string(kCpuDir) + "/online", "0-3\n");
  host.file(std::string(kCpuDir) + "/isolated", "2-3\n");
  host.file(std::string(kCpuDir) + "/nohz_full", "2-3\n");

  const CheckResult sut = check_isolated_cpus(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_EQ(sut.found, "isolated: 2-3, nohz_full: 2-3 (isolcpus=2-3), online: 0-3");
}

TEST(IsolatedCpusCheck, ReadsNohzFullFromTheCommandLineWithoutItsSysfsFile) {
  FakeHost host;
  host.file("/proc/cmdline", "isolcpus=3 nohz_full=3\n");
  host.file(std::string(kCpuDir) + "/isolated", "3\n");

  EXPECT_EQ(check_isolated_cpus(host.view()).status, Status::kPass);
}

TEST(IsolatedCpusCheck, WarnsWithoutIsolationSuggestingTheUpperHalf) {
  FakeHost host;
  host.file("/proc/cmdline", "root=/dev/sda1 quiet -- isolcpus=1\n");  // past "--": init's, not the kernel's
  host.file(std::string(kCpuDir) + "/online", "0-3\n");
  host.file(std::string(kCpuDir) + "/isolated", "\n");
  host.file(std::string(kCpuDir) + "/nohz_full", "(null)\n");

  const CheckResult sut = check_isolated_cpus(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("isolated: none, nohz_full: none, online: 0-3"));
  EXPECT_THAT(sut.fix, HasSubstr("add isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3 to GRUB_CMDLINE_LINUX"));
  EXPECT_THAT(sut.fix, HasSubstr("sudo update-grub"));
}

TEST(IsolatedCpusCheck, WarnsWhenIsolatedCpusStillTick) {
  FakeHost host;
  host.file("/proc/cmdline", "isolcpus=2-3\n");
  host.file(std::string(kCpuDir) + "/online", "0-3\n");
  host.file(std::string(kCpuDir) + "/isolated", "2-3\n");

  const CheckResult sut = check_isolated_cpus(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("timer tick"));
  EXPECT_THAT(sut.fix, HasSubstr("add nohz_full=2-3 rcu_nocbs=2-3"));
  EXPECT_THAT(sut.fix, Not(HasSubstr("isolcpus")));
}

TEST(IsolatedCpusCheck, SkipsAOneCpuHost) {
  FakeHost host;
  host.file(std::string(kCpuDir) + "/online", "0\n");

  EXPECT_EQ(check_isolated_cpus(host.view()).status, Status::kSkip);
}

TEST(IrqbalanceCheck, PassesWhenItIsNotRunning) {
  FakeHost host;
  host.file("/proc/1/comm", "systemd\n");
  host.file("/proc/77/comm", "sshd\n");

  EXPECT_EQ(check_irqbalance(host.view()).status, Status::kPass);
}

TEST(IrqbalanceCheck, WarnsWhenItRunsAndSaysHowToStopOrFenceIt) {
  FakeHost host;
  host.file("/proc/1/comm", "systemd\n");
  host.file("/proc/412/comm", "irqbalance\n");
  host.file("/proc/self/comm", "irqbalance\n");  // not a pid: not counted, but harmless here

  const CheckResult sut = check_irqbalance(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.fix, HasSubstr("sudo systemctl disable --now irqbalance"));
  EXPECT_THAT(sut.fix, HasSubstr("IRQBALANCE_BANNED_CPULIST"));
}

TEST(IrqbalanceCheck, SkipsWhenNoProcessCanBeListed) {
  FakeHost host;

  EXPECT_EQ(check_irqbalance(host.view()).status, Status::kSkip);
}

constexpr const char* kClockDir = "/sys/devices/system/clocksource/clocksource0";

void clock(const FakeHost& host, const char* current, const char* available) {
  host.file(std::string(kClockDir) + "/current_clocksource", std::string(current) + "\n");
  host.file(std::string(kClockDir) + "/available_clocksource", std::string(available) + "\n");
}

TEST(ClockSourceCheck, PassesOnTsc) {
  FakeHost host;
  clock(host, "tsc", "tsc hpet acpi_pm");

  const CheckResult sut = check_clock_source(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found, HasSubstr("tsc (available: tsc hpet acpi_pm)"));
  EXPECT_THAT(sut.fix, IsEmpty());
}

TEST(ClockSourceCheck, PassesOnAGuestClockTheVdsoReads) {
  FakeHost host;
  clock(host, "kvm-clock", "kvm-clock tsc acpi_pm");

  EXPECT_EQ(check_clock_source(host.view()).status, Status::kPass);
}

TEST(ClockSourceCheck, WarnsOnHpetBecauseEveryReadIsASystemCall) {
  FakeHost host;
  clock(host, "hpet", "tsc hpet acpi_pm");

  const CheckResult sut = check_clock_source(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("every clock read is a system call"));
  EXPECT_THAT(sut.fix,
              HasSubstr("echo tsc | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource"));
}

TEST(ClockSourceCheck, WarnsOnAcpiPmWithoutATscToSwitchTo) {
  FakeHost host;
  clock(host, "acpi_pm", "hpet acpi_pm");

  const CheckResult sut = check_clock_source(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.fix, HasSubstr("no usable TSC"));
  EXPECT_THAT(sut.fix, Not(HasSubstr("echo tsc")));
}

TEST(ClockSourceCheck, SkipsWithoutClockSourceFiles) {
  FakeHost host;

  EXPECT_EQ(check_clock_source(host.view()).status, Status::kSkip);
}

}  // namespace
}  // namespace axon::tools::doctor
