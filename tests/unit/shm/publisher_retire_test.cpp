// A publisher destroyed while the domain lock cannot be taken (issue 13, item
// 5c) still retires its pool block: its node's liveness round removes the
// registry entry once the lock works again, and block and connections are
// reclaimed instead of leaking. The lock is made to fail by putting a
// directory where the lock file was (open(O_RDWR) fails even for root).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/peer_domain_test.hpp"

namespace axon {
namespace {

struct Tick {
  std::uint64_t n = 0;
};

NodeOptions small_pool(std::uint32_t domain) {
  NodeOptions options = test::pool_options(domain, {{.payload_bytes = 256, .count = 16}});
  options.liveness_period_ms = 5;
  return options;
}

/// Replaces the domain's lock file with a directory while it lives.
class BrokenLockFile {
 public:
  explicit BrokenLockFile(std::uint32_t domain) : path_("/dev/shm/axon_d" + std::to_string(domain) + ".lock") {
    ::unlink(path_.c_str());
    broken_ = ::mkdir(path_.c_str(), 0700) == 0;
  }
  BrokenLockFile(const BrokenLockFile&) = delete;
  BrokenLockFile& operator=(const BrokenLockFile&) = delete;
  ~BrokenLockFile() { repair(); }
  [[nodiscard]] bool broken() const noexcept { return broken_; }
  void repair() noexcept {
    if (broken_) {
      ::rmdir(path_.c_str());
      broken_ = false;
    }
  }

 private:
  std::string path_;
  bool broken_ = false;
};

TEST(PublisherRetire, APublisherDestroyedWithoutTheLockIsStillRetiredAndReclaimed) {
  const std::uint32_t domain = test::unique_domain();
  {
    auto writer = *Node::create("writer", small_pool(domain));
    auto reader = *Node::create("reader", small_pool(domain));
    // Every publisher block of the writer's pool but one in use, so a leaked
    // block shows up as a refused advertise().
    std::vector<std::shared_ptr<Publisher<Tick>>> others;
    for (int i = 0; i < 31; ++i) {
      auto pub = writer->advertise<Tick>("other" + std::to_string(i));
      ASSERT_TRUE(pub.ok()) << pub.error().message();
      others.push_back(std::move(*pub));
    }
    auto created = writer->advertise<Tick>("ticks");
    ASSERT_TRUE(created.ok());
    std::shared_ptr<Publisher<Tick>> pub = std::move(*created);
    auto sub = reader->subscribe<Tick>("ticks");
    ASSERT_TRUE(sub.ok());
    ASSERT_TRUE(pub->publish(Tick{.n = 1}).ok());
    ASSERT_EQ((*sub)->publisher_count(), 1U);
    ASSERT_FALSE(writer->advertise<Tick>("full").ok()) << "32 publishers per node";

    BrokenLockFile lock(domain);
    ASSERT_TRUE(lock.broken());
    pub.reset();  // the shared_ptr: the destructor cannot take the domain lock
    lock.repair();

    EXPECT_TRUE(test::eventually([&] { return (*sub)->publisher_count() == 0; }, std::chrono::seconds(10)))
        << "the liveness round removes the registry entry the destructor could not";
    {
      auto queued = (*sub)->take();
      ASSERT_TRUE(queued.ok()) << "what was queued is still delivered";
      EXPECT_EQ(queued->n, 1U);
    }
    EXPECT_FALSE((*sub)->take().ok());  // closes the drained link
    std::shared_ptr<Publisher<Tick>> again;
    EXPECT_TRUE(test::eventually(
        [&] {
          auto created = writer->advertise<Tick>("again");
          if (created.ok()) {
            again = std::move(*created);
          }
          return again != nullptr;
        },
        std::chrono::seconds(10)))
        << "the retired block was freed for a new publisher";
  }
  EXPECT_TRUE(test::domain_files(domain).empty()) << "files left in /dev/shm";
}

}  // namespace
}  // namespace axon
