// Real-time memory options of the pool (NodeOptions::prefault_memory,
// lock_memory, huge_pages): what the kernel reports for the pool's mapping
// (/proc/self/smaps, VmLck), and the errors when a privilege, a limit or the
// huge page reserve is missing.
//
// Checks that must run without CAP_IPC_LOCK, or in a second process, re-run
// this binary with one of the DISABLED_ tests below (--gtest_also_run_disabled_tests),
// so no helper program and no fork of a threaded process is needed.
#include "transports/shm/memory_options.hpp"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"

namespace axon {
namespace {

using namespace std::chrono_literals;

struct Small {
  std::uint64_t value = 0;
};

/// About 4 MiB of chunks in 1 MiB chunks (the pool segment adds its blocks and
/// connections): large enough that formatting leaves most pages untouched.
NodeOptions options_for(std::uint32_t domain) {
  NodeOptions options;
  options.domain_id = domain;
  options.chunk_classes = {{.payload_bytes = 256, .count = 16}, {.payload_bytes = 1 << 20, .count = 4}};
  return options;
}

/// What /proc/self/smaps says about the mapping(s) of one node's pool.
struct PoolMapping {
  std::size_t size_kb = 0;
  std::size_t rss_kb = 0;
  std::size_t locked_kb = 0;  ///< The proportional share (Pss) of locked pages.
  bool vm_locked = false;     ///< VmFlags has "lo" (VM_LOCKED).
  std::size_t kernel_page_kb = 0;
  std::size_t hugetlb_kb = 0;  ///< Shared_Hugetlb + Private_Hugetlb.
};

/// The mappings of the memfd "axon_pool_d<domain>_<node>", in address order.
std::vector<PoolMapping> pool_mappings(std::uint32_t domain, const std::string& node) {
  const std::string name = "axon_pool_d" + std::to_string(domain) + "_" + node + " ";
  std::vector<PoolMapping> found;
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_pool = false;
  while (std::getline(smaps, line)) {
    const auto colon = line.find(':');
    const bool is_field = colon != std::string::npos && line.find(' ') > colon && line.find('-') > colon;
    if (!is_field) {  // "start-end perms offset dev inode [path]": a new mapping
      in_pool = line.find("/memfd:" + name) != std::string::npos;
      if (in_pool) {
        found.emplace_back();
      }
      continue;
    }
    if (!in_pool) {
      continue;
    }
    const std::string key = line.substr(0, colon);
    if (key == "VmFlags") {
      found.back().vm_locked = (line + " ").find(" lo ") != std::string::npos;
      continue;
    }
    std::size_t kb = 0;
    std::istringstream(line.substr(colon + 1)) >> kb;
    if (key == "Size") {
      found.back().size_kb = kb;
    } else if (key == "Rss") {
      found.back().rss_kb = kb;
    } else if (key == "Locked") {
      found.back().locked_kb = kb;
    } else if (key == "KernelPageSize") {
      found.back().kernel_page_kb = kb;
    } else if (key == "Shared_Hugetlb" || key == "Private_Hugetlb") {
      found.back().hugetlb_kb += kb;
    }
  }
  return found;
}

std::size_t vm_locked_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmLck:", 0) == 0) {
      return std::stoul(line.substr(6));
    }
  }
  return 0;
}

/// `--axon-<name>=value` from this process's command line (gtest leaves
/// flags it does not know alone).
std::optional<std::string> child_arg(const std::string& name) {
  std::ifstream cmdline("/proc/self/cmdline");
  std::string arg;
  const std::string prefix = "--axon-" + name + "=";
  while (std::getline(cmdline, arg, '\0')) {
    if (arg.rfind(prefix, 0) == 0) {
      return arg.substr(prefix.size());
    }
  }
  return std::nullopt;
}

std::string self_exe() {
  char path[4096];
  const auto n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

/// Runs DISABLED test `test` of this binary in a child process with `args`;
/// returns the rest of its first line starting with `prefix` (or "" on timeout)
/// and expects a clean exit.
std::string run_child(const std::string& test, const std::vector<std::string>& args, const std::string& prefix) {
  std::vector<std::string> argv = {self_exe(), "--gtest_also_run_disabled_tests", "--gtest_filter=" + test};
  argv.insert(argv.end(), args.begin(), args.end());
  auto child = test::ChildProcess::spawn(argv);
  const auto line = child.wait_for_line(prefix, 60s);
  EXPECT_EQ(child.wait(60s), 0) << child.output();
  EXPECT_TRUE(line.has_value()) << "the child printed no '" << prefix << "' line:\n" << child.output();
  return line ? line->substr(prefix.size()) : std::string();
}

class MemoryOptionsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    nodes.clear();
    EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
  }
  std::uint32_t domain = test::unique_domain();
  std::vector<std::shared_ptr<Node>> nodes;
};

TEST(MemoryOptions, RoundsPoolsUpToWholeHugePages) {
  EXPECT_EQ(shm::round_up_to_huge_pages(1), shm::kHugePageBytes);
  EXPECT_EQ(shm::round_up_to_huge_pages(shm::kHugePageBytes), shm::kHugePageBytes);
  EXPECT_EQ(shm::round_up_to_huge_pages(shm::kHugePageBytes + 1), 2 * shm::kHugePageBytes);
}

TEST_F(MemoryOptionsTest, PrefaultedPoolIsResidentBeforeItsFirstUse) {
  NodeOptions lazy = options_for(domain);
  NodeOptions eager = options_for(domain);
  eager.prefault_memory = true;

  auto lazy_node = Node::create("mem_lazy", lazy);
  auto sut = Node::create("mem_eager", eager);

  ASSERT_TRUE(lazy_node.ok()) << lazy_node.error().message();
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  nodes = {*lazy_node, *sut};
  const auto eager_maps = pool_mappings(domain, "mem_eager");
  const auto lazy_maps = pool_mappings(domain, "mem_lazy");
  ASSERT_EQ(eager_maps.size(), 1U);
  ASSERT_EQ(lazy_maps.size(), 1U);
  EXPECT_EQ(eager_maps[0].rss_kb, eager_maps[0].size_kb) << "every page of a prefaulted pool is mapped";
  // The control: formatting alone leaves the 1 MiB chunks unmapped.
  EXPECT_LT(lazy_maps[0].rss_kb + 3 * 1024, lazy_maps[0].size_kb);
  // And the prefaulted pool works.
  auto pub = (*sut)->advertise<Small>("mem/prefault");
  auto sub = (*sut)->subscribe<Small>("mem/prefault");
  ASSERT_TRUE(pub.ok() && sub.ok());
  ASSERT_TRUE(pub->publish(Small{42}).ok());
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->value, 42U);
}

TEST_F(MemoryOptionsTest, LockedPoolIsCountedInVmLck) {
  NodeOptions options = options_for(domain);
  options.lock_memory = true;
  rlimit limit{};
  ::getrlimit(RLIMIT_MEMLOCK, &limit);
  if (!shm::has_ipc_lock_capability() && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (64U << 20)) {
    GTEST_SKIP() << "needs CAP_IPC_LOCK or RLIMIT_MEMLOCK >= 64 MiB (run as root)";
  }
  const std::size_t locked_before = vm_locked_kb();

  auto sut = Node::create("mem_locked", options);

  ASSERT_TRUE(sut.ok()) << sut.error().message();
  nodes = {std::move(*sut)};
  const auto maps = pool_mappings(domain, "mem_locked");
  ASSERT_EQ(maps.size(), 1U);
  EXPECT_TRUE(maps[0].vm_locked);
  EXPECT_EQ(maps[0].locked_kb, maps[0].size_kb);  // nobody else maps it: Pss is Rss
  EXPECT_EQ(maps[0].rss_kb, maps[0].size_kb) << "mlock faults every page in";
  EXPECT_GE(vm_locked_kb(), locked_before + maps[0].size_kb);
  nodes.clear();
  EXPECT_LE(vm_locked_kb(), locked_before) << "unmapping the pool unlocks it";
}

// Child of the test below: the process lacks CAP_IPC_LOCK and RLIMIT_MEMLOCK
// is --axon-memlock bytes; prints the error of a node with lock_memory.
TEST(MemoryOptionsChild, DISABLED_CreateLockedNodeWithoutPrivilege) {
  const auto memlock = child_arg("memlock");
  ASSERT_TRUE(memlock.has_value());
  const rlim_t bytes = std::stoul(*memlock);
  const rlimit limit{bytes, bytes};
  ASSERT_EQ(::setrlimit(RLIMIT_MEMLOCK, &limit), 0);
  // Drop CAP_IPC_LOCK from the effective set (root keeps it otherwise, and it
  // overrides the limit). Raw capget/capset: libcap is no dependency.
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = {};
  ASSERT_EQ(::syscall(SYS_capget, &header, caps), 0);
  caps[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
  ASSERT_EQ(::syscall(SYS_capset, &header, caps), 0);
  ASSERT_FALSE(shm::has_ipc_lock_capability());
  const std::uint32_t domain = test::unique_domain();
  NodeOptions options = options_for(domain);
  options.lock_memory = true;

  auto sut = Node::create("mem_unprivileged", options);

  ASSERT_FALSE(sut.ok());
  EXPECT_TRUE(test::domain_files(domain).empty()) << "a node that failed to start left files in /dev/shm";
  std::cout << "AXON_CHILD_ERROR " << sut.error().message() << std::endl;
}

TEST(MemoryOptions, LockWithoutPrivilegeNamesTheLimitTheCapabilityAndTheFix) {
  for (const char* memlock : {"65536", "0"}) {  // ENOMEM, then EPERM from mlock
    SCOPED_TRACE(std::string("RLIMIT_MEMLOCK ") + memlock);

    const std::string message = run_child("MemoryOptionsChild.DISABLED_CreateLockedNodeWithoutPrivilege",
                                          {std::string("--axon-memlock=") + memlock}, "AXON_CHILD_ERROR ");

    EXPECT_NE(message.find("RLIMIT_MEMLOCK"), std::string::npos) << message;
    EXPECT_NE(message.find("CAP_IPC_LOCK"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("soft limit ") + std::to_string(std::stoul(memlock) / 1024) + " KiB"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("ulimit -l"), std::string::npos) << message;
    EXPECT_NE(message.find("limits.conf"), std::string::npos) << message;
    EXPECT_NE(message.find("LimitMEMLOCK="), std::string::npos) << message;
    EXPECT_NE(message.find("bytes ("), std::string::npos) << "names the bytes needed: " << message;
  }
}

TEST(MemoryOptions, HugePageShortageSaysHowManyAreNeededAndHowToReserveThem) {
  const std::size_t bytes = std::size_t{1} << 40;  // 1 TiB: more than any test machine reserves

  auto sut = shm::check_huge_pages_available(bytes);

  ASSERT_FALSE(sut.ok());
  EXPECT_EQ(sut.error().code(), ErrorCode::kNoSpace);
  const std::string message(sut.error().message());
  EXPECT_NE(message.find("needs 524288 huge pages of 2 MiB"), std::string::npos) << message;
  EXPECT_NE(message.find("but " + std::to_string(shm::read_huge_page_counts().available()) + " are free"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("/proc/sys/vm/nr_hugepages"), std::string::npos) << message;
}

TEST(MemoryOptions, FailedHugePageReservationIsNotANormalPageFallback) {
  const std::size_t bytes = 5 * shm::kHugePageBytes;

  const Error sut = shm::huge_pages_error(ENOSPC, "fallocate", bytes);

  EXPECT_EQ(sut.code(), ErrorCode::kNoSpace);
  const std::string message(sut.message());
  EXPECT_NE(message.find("fallocate"), std::string::npos) << message;
  EXPECT_NE(message.find("needs 5 huge pages of 2 MiB"), std::string::npos) << message;
  EXPECT_NE(message.find("> /proc/sys/vm/nr_hugepages"), std::string::npos) << message;
}

TEST_F(MemoryOptionsTest, HugePagePoolWorksOrSaysHowToReserveThePages) {
  NodeOptions options = options_for(domain);
  options.huge_pages = true;
  const auto counts = shm::read_huge_page_counts();

  auto sut = Node::create("mem_huge", options);

  // About 4 MiB of chunks plus 2-4 MiB of blocks and connections: a few pages.
  if (!sut.ok()) {
    const std::string message(sut.error().message());
    EXPECT_EQ(sut.error().code(), ErrorCode::kNoSpace) << message;
    EXPECT_NE(message.find("nr_hugepages"), std::string::npos) << message;
    EXPECT_NE(message.find(" huge pages of 2 MiB"), std::string::npos) << message;
    EXPECT_LT(counts.available(), 8U) << "failed with enough free huge pages: " << message;
    return;
  }
  nodes = {*sut};
  const auto maps = pool_mappings(domain, "mem_huge");
  ASSERT_EQ(maps.size(), 1U);
  EXPECT_EQ(maps[0].kernel_page_kb, 2048U);
  EXPECT_EQ(maps[0].size_kb % 2048, 0U);
  auto pub = (*sut)->advertise<Small>("mem/huge");
  auto sub = (*sut)->subscribe<Small>("mem/huge");
  ASSERT_TRUE(pub.ok() && sub.ok());
  ASSERT_TRUE(pub->publish(Small{7}).ok());
  auto sample = sub->take();
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->value, 7U);
}

// Child of the test below: a node with lock_memory subscribes to the
// parent's topic and reports its mapping of the parent's pool.
TEST(MemoryOptionsChild, DISABLED_MapPeerPoolLocked) {
  const auto domain_arg = child_arg("domain");
  ASSERT_TRUE(domain_arg.has_value());
  const auto domain = static_cast<std::uint32_t>(std::stoul(*domain_arg));
  NodeOptions options = options_for(domain);
  options.lock_memory = true;
  auto node = Node::create("mem_peer_child", options);
  ASSERT_TRUE(node.ok()) << node.error().message();
  auto sub = (*node)->subscribe<Small>("mem/peer");
  ASSERT_TRUE(sub.ok()) << sub.error().message();

  std::vector<PoolMapping> maps;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((maps = pool_mappings(domain, "mem_peer_owner")).empty() && std::chrono::steady_clock::now() < deadline) {
    (void)sub->take();  // rescans the registry and maps the publisher's pool
    std::this_thread::sleep_for(5ms);
  }

  ASSERT_EQ(maps.size(), 1U);
  std::cout << "AXON_CHILD_PEER " << maps[0].vm_locked << " " << maps[0].rss_kb << " " << maps[0].size_kb << std::endl;
}

TEST_F(MemoryOptionsTest, PeerPoolsAreLockedWhenTheMappingNodeAsks) {
  auto owner = Node::create("mem_peer_owner", options_for(domain));  // does not lock its own pool
  ASSERT_TRUE(owner.ok()) << owner.error().message();
  nodes = {*owner};
  auto pub = (*owner)->advertise<Small>("mem/peer");
  ASSERT_TRUE(pub.ok());
  rlimit limit{};
  ::getrlimit(RLIMIT_MEMLOCK, &limit);
  if (!shm::has_ipc_lock_capability() && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (64U << 20)) {
    GTEST_SKIP() << "needs CAP_IPC_LOCK or RLIMIT_MEMLOCK >= 64 MiB (run as root)";
  }

  const std::string report = run_child("MemoryOptionsChild.DISABLED_MapPeerPoolLocked",
                                       {"--axon-domain=" + std::to_string(domain)}, "AXON_CHILD_PEER ");

  int vm_locked = 0;
  std::size_t rss_kb = 0;
  std::size_t size_kb = 0;
  std::istringstream(report) >> vm_locked >> rss_kb >> size_kb;
  EXPECT_GT(size_kb, 0U) << report;
  EXPECT_EQ(vm_locked, 1) << "the child's mapping of our pool is locked";
  EXPECT_EQ(rss_kb, size_kb) << "and every page of it is mapped";
  const auto ours = pool_mappings(domain, "mem_peer_owner");
  ASSERT_EQ(ours.size(), 1U);
  EXPECT_FALSE(ours[0].vm_locked) << "the owner did not ask to lock";
}

}  // namespace
}  // namespace axon
