// PeerWatch: a pidfd per peer process, readable when that process exits;
// /proc where no pidfd can be had. Real child processes.
#include "transports/shm/peer_watch.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/base/clock.hpp"
#include "tests/support/held_domain_lock.hpp"
#include "tests/support/registry_memory.hpp"

namespace axon::shm {
namespace {

/// A child that sleeps until killed; killed and reaped at the end.
class Sleeper {
 public:
  Sleeper() : pid_(::fork()) {
    if (pid_ == 0) {
      for (;;) {
        ::pause();
      }
    }
    // Its start time is readable once the fork returned.
    id_ = identity_of(pid_);
  }
  ~Sleeper() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      reap();
    }
  }
  Sleeper(const Sleeper&) = delete;
  Sleeper& operator=(const Sleeper&) = delete;
  void reap() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
  }
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] const ProcessIdentity& id() const { return id_; }

 private:
  pid_t pid_;
  ProcessIdentity id_{};
  bool reaped_ = false;
};

struct PeerWatchFixture : ::testing::Test {
  PeerWatchFixture() : registry(memory.registry()) {}
  /// The guard the registry's calls ask for: a real lock, held by the test.
  const DomainLockGuard& held() { return lock.held(); }
  void add(const ProcessIdentity& id, const char* name) {
    ASSERT_TRUE(registry.add_participant(held(), id, name, 0).ok());
  }
  /// Polls what `sut` watches for up to `timeout_ms`; true when one exited.
  static bool poll_watch(PeerWatch& sut, int timeout_ms) {
    std::vector<int> fds;
    sut.poll_fds(fds);
    std::vector<pollfd> polled;
    polled.reserve(fds.size());
    for (const int fd : fds) {
      polled.push_back({.fd = fd, .events = POLLIN, .revents = 0});
    }
    if (::poll(polled.data(), polled.size(), timeout_ms) <= 0) {
      return false;
    }
    return sut.note_polled(polled, 0);
  }
  test_support::HeldDomainLock lock{"axon-peer-watch"};
  test_support::RegistryMemory memory;
  Registry registry;
};

TEST_F(PeerWatchFixture, APeerKilledWithSigkillWakesThePollAtOnce) {
  Sleeper peer;
  add(peer.id(), "peer");
  PeerWatch sut(self_identity());
  sut.sync(held(), registry);
  ASSERT_EQ(sut.watched_processes(), 1U);
  EXPECT_FALSE(sut.polls_proc());
  EXPECT_FALSE(sut.is_dead(peer.id()));

  const std::int64_t killed_at = monotonic_now_ns();
  ::kill(peer.pid(), SIGKILL);
  ASSERT_TRUE(poll_watch(sut, 5000));
  const std::int64_t noticed_ns = monotonic_now_ns() - killed_at;
  EXPECT_TRUE(sut.exit_pending());
  EXPECT_TRUE(sut.is_dead(peer.id()));
  EXPECT_LT(noticed_ns, 50'000'000) << "the kernel signals the exit; no period to wait for";
  std::vector<int> fds;
  sut.poll_fds(fds);
  EXPECT_TRUE(fds.empty()) << "an exited pidfd stays readable: polling it again would spin";
}

TEST_F(PeerWatchFixture, AStoppedPeerIsNotDead) {
  Sleeper peer;
  add(peer.id(), "peer");
  PeerWatch sut(self_identity());
  sut.sync(held(), registry);
  ::kill(peer.pid(), SIGSTOP);
  EXPECT_FALSE(poll_watch(sut, 300));
  EXPECT_FALSE(sut.is_dead(peer.id()));
  EXPECT_FALSE(sut.exit_pending());
  ::kill(peer.pid(), SIGCONT);
}

TEST_F(PeerWatchFixture, ARecycledPidIsNotTakenForTheParticipant) {
  // The pid runs, but not the process the participant named (another start
  // time): the pidfd would watch the wrong process, so the participant is
  // dead from the start.
  Sleeper other;
  ProcessIdentity recycled = other.id();
  recycled.start_time += 1;
  add(recycled, "gone");
  PeerWatch sut(self_identity());
  sut.sync(held(), registry);
  EXPECT_TRUE(sut.exit_pending());
  EXPECT_TRUE(sut.is_dead(recycled));
  EXPECT_FALSE(sut.is_dead(other.id())) << "the process that has the pid now is alive";
}

TEST_F(PeerWatchFixture, AParticipantDeadBeforeTheWatchBeganIsDead) {
  auto peer = std::make_unique<Sleeper>();
  const ProcessIdentity id = peer->id();
  peer.reset();  // killed and reaped: its pid names nothing
  add(id, "gone");
  PeerWatch sut(self_identity());
  sut.sync(held(), registry);
  EXPECT_TRUE(sut.is_dead(id));
}

TEST_F(PeerWatchFixture, OwnProcessIsNotWatchedAndProcessesAreWatchedOnce) {
  Sleeper peer;
  add(self_identity(), "self");
  add(peer.id(), "one");
  add(peer.id(), "two");  // two nodes of one process: one pidfd
  PeerWatch sut(self_identity());
  sut.sync(held(), registry);
  EXPECT_EQ(sut.watched_processes(), 1U);
  EXPECT_FALSE(sut.polls_proc());
  EXPECT_FALSE(sut.is_dead(self_identity()));
}

TEST_F(PeerWatchFixture, AProcessNoParticipantNamesAnyMoreIsNoLongerWatched) {
  Sleeper peer;
  auto ref = registry.add_participant(held(), peer.id(), "peer", 0);
  ASSERT_TRUE(ref.ok());
  PeerWatch sut(self_identity());
  sut.sync(held(), registry);
  ASSERT_EQ(sut.watched_processes(), 1U);
  registry.remove_participant(held(), ref->slot);
  sut.sync(held(), registry);
  EXPECT_EQ(sut.watched_processes(), 0U);
}

int no_pidfd(pid_t /*pid*/) noexcept { return -ENOSYS; }

TEST_F(PeerWatchFixture, WithoutPidfdOpenPeersAreCheckedThroughProc) {
  Sleeper alive;
  auto gone = std::make_unique<Sleeper>();
  const ProcessIdentity gone_id = gone->id();
  gone.reset();
  add(alive.id(), "alive");
  add(gone_id, "gone");
  PeerWatch sut(self_identity(), &no_pidfd);
  sut.sync(held(), registry);
  EXPECT_EQ(sut.watched_processes(), 0U);
  EXPECT_TRUE(sut.polls_proc()) << "the service thread then runs a round every liveness period";
  EXPECT_FALSE(sut.is_dead(alive.id()));
  EXPECT_TRUE(sut.is_dead(gone_id));
}

}  // namespace
}  // namespace axon::shm
