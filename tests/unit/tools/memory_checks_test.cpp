// axon doctor's memory checks against fake hosts: each verdict and its fix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/tools/axon/doctor/check.hpp"
#include "tests/unit/tools/fake_host.hpp"

namespace axon::tools::doctor {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr const char* kTmpfsMounts = "/dev/root / ext4 rw 0 0\ntmpfs /dev/shm tmpfs rw,size=1048576k 0 0\n";

TEST(ShmCheck, PassesOnATmpfsWithRoomForLargeRegistries) {
  FakeHost host;
  host.file("/proc/mounts", kTmpfsMounts);
  host.facts.shm_space = SpaceBytes{.total_bytes = 1024 * kMiB, .free_bytes = 1000 * kMiB};

  const CheckResult sut = check_shm(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found, HasSubstr("/dev/shm: tmpfs, 1 GiB, 1000 MiB free"));
  EXPECT_THAT(sut.fix, IsEmpty());
}

TEST(ShmCheck, FailsWhenTheDirectoryIsMissing) {
  FakeHost host;

  const CheckResult sut = check_shm(host.view());

  EXPECT_EQ(sut.status, Status::kFail);
  EXPECT_THAT(sut.found, HasSubstr("/dev/shm does not exist"));
  EXPECT_THAT(sut.fix, HasSubstr("sudo mount -t tmpfs -o size=256m,mode=1777 tmpfs /dev/shm"));
}

TEST(ShmCheck, FailsWithTooLittleRoomForADefaultRegistry) {
  FakeHost host;
  host.facts.shm_space = SpaceBytes{.total_bytes = 64 * kMiB, .free_bytes = 1 * kMiB};

  const CheckResult sut = check_shm(host.view());

  EXPECT_EQ(sut.status, Status::kFail);
  EXPECT_THAT(sut.found, HasSubstr("too little for one domain"));
  EXPECT_THAT(sut.fix, HasSubstr("docker run --shm-size=256m"));
}

TEST(ShmCheck, WarnsWithRoomForADefaultRegistryOnly) {
  FakeHost host;
  host.facts.shm_space = SpaceBytes{.total_bytes = 16 * kMiB, .free_bytes = 16 * kMiB};

  const CheckResult sut = check_shm(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.fix, HasSubstr("sudo mount -o remount,size=256m /dev/shm"));
}

TEST(ShmCheck, WarnsWhenTheDirectoryIsNotOnATmpfs) {
  FakeHost host;
  host.file("/proc/mounts", "/dev/root / ext4 rw 0 0\n");
  host.facts.shm_dir = "/var/axon";
  host.facts.shm_space = SpaceBytes{.total_bytes = 100 * 1024 * kMiB, .free_bytes = 50 * 1024 * kMiB};

  const CheckResult sut = check_shm(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("/var/axon: ext4"));
  EXPECT_THAT(sut.found, HasSubstr("not a tmpfs"));
  EXPECT_THAT(sut.fix, HasSubstr("tmpfs /var/axon"));
}

TEST(MemlockCheck, PassesWithCapIpcLockWhateverTheLimit) {
  FakeHost host;
  host.facts.cap_ipc_lock = true;
  host.facts.memlock = {.soft = 64 * 1024, .hard = 64 * 1024};

  const CheckResult sut = check_memlock(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found,
              HasSubstr("CAP_IPC_LOCK, so the limit (RLIMIT_MEMLOCK soft 64 KiB, hard 64 KiB) does not apply"));
}

TEST(MemlockCheck, PassesWithALimitAboveTheDefaultPool) {
  FakeHost host;
  host.facts.memlock = {.soft = Limit::kUnlimited, .hard = Limit::kUnlimited};

  const CheckResult sut = check_memlock(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found, HasSubstr("RLIMIT_MEMLOCK soft unlimited, hard unlimited"));
}

TEST(MemlockCheck, WarnsWithTheUsualEightMebibytesAndSaysHowToRaiseThem) {
  FakeHost host;
  host.facts.memlock = {.soft = 8 * kMiB, .hard = 8 * kMiB};

  const CheckResult sut = check_memlock(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("RLIMIT_MEMLOCK soft 8 MiB, hard 8 MiB, no CAP_IPC_LOCK"));
  EXPECT_THAT(sut.found, HasSubstr("only root can raise it"));
  EXPECT_THAT(sut.fix, HasSubstr("ulimit -l unlimited"));
  EXPECT_THAT(sut.fix, HasSubstr("LimitMEMLOCK=infinity"));
  EXPECT_THAT(sut.fix, HasSubstr("sudo setcap cap_ipc_lock+ep <program>"));
}

constexpr const char* kHugeDir = "/sys/kernel/mm/hugepages/hugepages-2048kB";

TEST(HugePagesCheck, PassesWithRoomForADefaultPool) {
  FakeHost host;
  host.file(std::string(kHugeDir) + "/nr_hugepages", "64\n");
  host.file(std::string(kHugeDir) + "/free_hugepages", "64\n");

  const CheckResult sut = check_huge_pages(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_THAT(sut.found, HasSubstr("64 reserved, 64 free: room for 2 node(s)"));
}

TEST(HugePagesCheck, WarnsWhenNoneAreReservedWithTheCommandThatReservesThem) {
  FakeHost host;
  host.file(std::string(kHugeDir) + "/nr_hugepages", "0\n");
  host.file(std::string(kHugeDir) + "/free_hugepages", "0\n");

  const CheckResult sut = check_huge_pages(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("0 reserved"));
  EXPECT_THAT(sut.fix, HasSubstr("echo 32 | sudo tee /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"));
}

TEST(HugePagesCheck, WarnsWhenTooFewAreFree) {
  FakeHost host;
  host.file(std::string(kHugeDir) + "/nr_hugepages", "64\n");
  host.file(std::string(kHugeDir) + "/free_hugepages", "10\n");

  const CheckResult sut = check_huge_pages(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("needs about 32"));
}

TEST(HugePagesCheck, SkipsAKernelWithoutTwoMebibytePages) {
  FakeHost host;

  EXPECT_EQ(check_huge_pages(host.view()).status, Status::kSkip);
}

constexpr const char* kThpDir = "/sys/kernel/mm/transparent_hugepage";

TEST(TransparentHugePagesCheck, PassesOnMadvise) {
  FakeHost host;
  host.file(std::string(kThpDir) + "/enabled", "always [madvise] never\n");
  host.file(std::string(kThpDir) + "/defrag", "always defer defer+madvise [madvise] never\n");

  const CheckResult sut = check_transparent_huge_pages(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_EQ(sut.found, "enabled [madvise], defrag [madvise]");
}

TEST(TransparentHugePagesCheck, WarnsOnAlways) {
  FakeHost host;
  host.file(std::string(kThpDir) + "/enabled", "[always] madvise never\n");
  host.file(std::string(kThpDir) + "/defrag", "always defer defer+madvise [madvise] never\n");

  const CheckResult sut = check_transparent_huge_pages(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("khugepaged"));
  EXPECT_EQ(sut.fix,
            "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled; for good: "
            "transparent_hugepage=madvise on the kernel command line");
}

TEST(TransparentHugePagesCheck, WarnsOnSynchronousDefrag) {
  FakeHost host;
  host.file(std::string(kThpDir) + "/enabled", "always madvise [never]\n");
  host.file(std::string(kThpDir) + "/defrag", "[always] defer defer+madvise madvise never\n");

  const CheckResult sut = check_transparent_huge_pages(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_EQ(sut.fix, "echo defer+madvise | sudo tee /sys/kernel/mm/transparent_hugepage/defrag");
}

TEST(TransparentHugePagesCheck, SkipsAKernelWithoutThem) {
  FakeHost host;

  EXPECT_EQ(check_transparent_huge_pages(host.view()).status, Status::kSkip);
}

constexpr const char* kSwapsHeader = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";

TEST(SwapCheck, PassesWithoutSwap) {
  FakeHost host;
  host.file("/proc/swaps", kSwapsHeader);

  const CheckResult sut = check_swap(host.view());

  EXPECT_EQ(sut.status, Status::kPass);
  EXPECT_EQ(sut.found, "no swap");
}

TEST(SwapCheck, WarnsWithSwapAndSaysHowToTurnItOff) {
  FakeHost host;
  host.file("/proc/swaps", std::string(kSwapsHeader) + "/swapfile file 2097148 0 -2\n");
  host.file("/proc/sys/vm/swappiness", "60\n");

  const CheckResult sut = check_swap(host.view());

  EXPECT_EQ(sut.status, Status::kWarn);
  EXPECT_THAT(sut.found, HasSubstr("1 swap area(s), 2.0 GiB (vm.swappiness 60)"));
  EXPECT_THAT(sut.fix, HasSubstr("sudo swapoff -a"));
  EXPECT_THAT(sut.fix, HasSubstr("sudo sysctl -w vm.swappiness=1"));
}

TEST(SwapCheck, SkipsWithoutProcSwaps) {
  FakeHost host;

  EXPECT_EQ(check_swap(host.view()).status, Status::kSkip);
}

TEST(FormatBytes, UsesBinaryUnitsWithADecimalWhenNotWhole) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(64 * 1024), "64 KiB");
  EXPECT_EQ(format_bytes(4 * kMiB), "4 MiB");
  EXPECT_EQ(format_bytes(kMiB * 3 / 2), "1.5 MiB");
  EXPECT_EQ(format_limit_bytes(Limit::kUnlimited), "unlimited");
  EXPECT_THAT(format_bytes(default_pool_bytes()), Not(IsEmpty()));
}

}  // namespace
}  // namespace axon::tools::doctor
