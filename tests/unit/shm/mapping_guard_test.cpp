#include "transports/shm/mapping_guard.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <string>

namespace axon::shm {
namespace {

constexpr std::size_t kBytes = 4 * 4096;

/// A shared mapping of a fresh tmpfs file, as the registry is.
class SharedFile {
 public:
  SharedFile() : path_("/dev/shm/axon_guard_test_" + std::to_string(::getpid()) + "_" + std::to_string(next_++)) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    EXPECT_GE(fd_, 0);
    // Unlinked at once: the descriptor and the mapping keep the file, and a
    // death test's child (which never runs destructors) leaves nothing behind.
    ::unlink(path_.c_str());
    EXPECT_EQ(::posix_fallocate(fd_, 0, kBytes), 0);
    void* base = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    EXPECT_NE(base, MAP_FAILED);
    base_ = static_cast<std::byte*>(base);
  }
  ~SharedFile() {
    ::munmap(base_, kBytes);
    ::close(fd_);
  }
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;
  [[nodiscard]] std::byte* base() const { return base_; }
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] off_t size() const {
    struct stat st {};
    ::fstat(fd_, &st);
    return st.st_size;
  }
  /// Touches the last page (volatile: the compiler must not drop the access).
  void touch_last_page() const { *reinterpret_cast<volatile std::uint32_t*>(base_ + kBytes - 64) = 7; }

 private:
  static inline std::atomic<int> next_{0};
  std::string path_;
  int fd_ = -1;
  std::byte* base_ = nullptr;
};

TEST(GuardedMapping, SurvivesATruncationAndGrowsTheFileBack) {
  SharedFile file;
  auto sut = GuardedMapping::guard(file.base(), kBytes, file.fd());
  ASSERT_TRUE(sut.ok()) << sut.error().message();
  ASSERT_EQ(::ftruncate(file.fd(), 0), 0);

  file.touch_last_page();

  EXPECT_EQ(sut->repairs(), 1U);
  EXPECT_EQ(file.size(), static_cast<off_t>(kBytes));
  EXPECT_EQ(*reinterpret_cast<volatile std::uint32_t*>(file.base() + kBytes - 64), 7U);
}

TEST(GuardedMapping, CountsNoRepairWhileTheFileIsIntact) {
  SharedFile file;
  auto sut = GuardedMapping::guard(file.base(), kBytes, file.fd());
  ASSERT_TRUE(sut.ok());
  file.touch_last_page();
  EXPECT_EQ(sut->repairs(), 0U);
}

TEST(GuardedMappingDeathTest, LeavesAFaultOutsideItsMappingsToTheDefaultAction) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SharedFile guarded;
  auto sut = GuardedMapping::guard(guarded.base(), kBytes, guarded.fd());
  ASSERT_TRUE(sut.ok());
  SharedFile unguarded;
  ASSERT_EQ(::ftruncate(unguarded.fd(), 0), 0);
  EXPECT_DEATH(unguarded.touch_last_page(), "");
  ASSERT_EQ(::ftruncate(unguarded.fd(), kBytes), 0);  // for the destructor's sake
}

TEST(GuardedMappingDeathTest, StopsGuardingWhenDestroyed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SharedFile file;
  {
    auto sut = GuardedMapping::guard(file.base(), kBytes, file.fd());
    ASSERT_TRUE(sut.ok());
  }
  ASSERT_EQ(::ftruncate(file.fd(), 0), 0);
  EXPECT_DEATH(file.touch_last_page(), "");
  ASSERT_EQ(::ftruncate(file.fd(), kBytes), 0);
}

}  // namespace
}  // namespace axon::shm
