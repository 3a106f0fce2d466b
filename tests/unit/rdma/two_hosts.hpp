// Two "hosts" in the Soft-RoCE guest for the node tests over RDMA: host a
// (10.0.2.15) and host b (10.0.2.16), both on rxe0, each with its own
// shared-memory directory, as two machines would be. The test process is a
// node of host a; peers are this binary exec'd again (subscriber_peer.cpp)
// as nodes of host b. Shared by node_*_test.cpp in tests/unit/rdma/.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "axon/axon.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/common/temp_dir.hpp"
#include "tests/support/peer_summary.hpp"

namespace axon::rdma_test {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

inline constexpr milliseconds kWait{15000};
inline constexpr std::uint32_t kDomain = 44;

inline std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr ? std::string() : std::string(value);
}

/// A 2 KiB raw message: its sequence number, and every byte after it derived from it.
struct Block {
  std::uint64_t sequence = 0;
  std::array<std::uint8_t, 2040> bytes{};
};
constexpr std::uint8_t byte_of(std::uint64_t sequence, std::size_t i) noexcept {
  return static_cast<std::uint8_t>((sequence * 131 + i) % 251);
}
inline void fill(Block& b, std::uint64_t sequence) noexcept {
  b.sequence = sequence;
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    b.bytes[i] = byte_of(sequence, i);
  }
}
inline bool intact(const Block& b) noexcept {
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    if (b.bytes[i] != byte_of(b.sequence, i)) {
      return false;
    }
  }
  return true;
}
inline Block block(std::uint64_t sequence) noexcept {
  Block b;
  fill(b, sequence);
  return b;
}

inline constexpr std::size_t kLarge = std::size_t{16} * 1024 * 1024;  // the default pool's largest class

/// Host a with node 'na', host b with `b_nodes`, topic rdma/blocks
/// `transport: rdma` (rdma/frames: not listed, so auto). A host is lost
/// after `liveliness_ms` without heartbeats: 20 s by default, not 1 s, as the
/// guest is slow (qemu TCG on a loaded machine) and a test may stop a peer.
inline std::string deployment(const std::vector<std::string>& b_nodes = {"nb"}, std::uint32_t liveliness_ms = 20000) {
  const std::string device = env("AXON_RDMA_EXPECT_DEVICE");
  std::string yaml = "hosts:\n  - {name: a, address: 10.0.2.15, rdma_device: " + device +
                     "}\n  - {name: b, address: 10.0.2.16, rdma_device: " + device +
                     "}\nnodes:\n  - {name: na, host: a}\n";
  for (const std::string& node : b_nodes) {
    yaml += "  - {name: " + node + ", host: b}\n";
  }
  return yaml +
         "topics:\n  - {name: rdma/blocks, transport: rdma}\n"
         "udp:\n  discovery: {static_peers: [a, b], port: 27420}\n  liveliness_timeout_ms: " +
         std::to_string(liveliness_ms) + "\n";
}

inline NodeOptions options_for(const std::string& config, const std::string& shm_dir) {
  NodeOptions options;
  options.domain_id = kDomain;
  options.shm_dir = shm_dir;
  options.config_path = config;
  return options;
}

/// Polls `done` every 5 ms until it holds (true) or `timeout` passed (false).
template <class Done>
bool eventually(milliseconds timeout, Done done) {
  const auto until = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

/// What a subscriber peer (subscriber_peer.cpp) is asked to do; passed in
/// AXON_RDMA_DATA_* variables.
struct SubscriberPeer {
  std::string node = "nb";
  std::string topic = "rdma/blocks";
  std::uint64_t count = 0;  ///< Taken and dropped messages to wait for, then "GOT ..."; 0: "AT ..." on each change.
  std::uint64_t slow = 0;   ///< Sleep 1 ms after each of the first `slow` messages taken.
  std::string qos = "reliable";  ///< reliable | reject_newest (BEST_EFFORT keep-all) | keep_last.
  std::uint32_t depth = 16;
  bool wait_publisher = false;  ///< Say READY only once connected to a publisher of the topic (the mirror).
  bool busy_spin = false;       ///< Wait in a busy-spinning WaitSet between takes (it polls the CQ itself).
};

/// A peer's "GOT"/"AT" line: got, full, oldest (its queue's counters), bad
/// (content wrong), gaps (sequences skipped), back (not newer than the one
/// before), last (sequence), rdma (its node's rdma_messages_received), spun
/// (its node's rdma_completions_on_waiting_threads).
inline std::uint64_t accounted(const test::PeerSummary& s) {
  return s.number("got") + s.number("full") + s.number("oldest");
}

/// Reads the peer's "AT" lines until one accounts for `total` messages.
inline std::optional<test::PeerSummary> wait_for_accounted(test::ChildProcess& peer, std::uint64_t total,
                                                           milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    const auto line =
        peer.wait_for_line("AT ", std::chrono::duration_cast<milliseconds>(until - Clock::now()) + milliseconds(1));
    if (!line) {
      return std::nullopt;
    }
    test::PeerSummary summary(*line);
    if (accounted(summary) >= total) {
      return summary;
    }
  }
  return std::nullopt;
}

/// Whether `node` has opened an RDMA stream of `topic` towards host b with a
/// subscriber there (the receiver's answer and grants may still be on the way).
inline bool routed_by_rdma(const Node& node, const std::string& topic) {
  const auto routes = node.routes(topic);
  const bool remote = std::any_of(routes.begin(), routes.end(), [](const TopicRoute& r) {
    return r.host == "b" && r.transport == TransportKind::kRdma && r.subscribers > 0;
  });
  return remote && node.network_counters().rdma_streams_sent >= 1;
}

/// Waits until routed_by_rdma(); prints why not when it times out.
inline bool wait_for_stream(const Node& node, const std::string& topic) {
  if (eventually(kWait, [&] { return routed_by_rdma(node, topic); })) {
    return true;
  }
  const NetworkCounters c = node.network_counters();
  std::printf("no RDMA stream of %s: links up %llu, streams sent %llu, hosts discovered %llu; routes:", topic.c_str(),
              static_cast<unsigned long long>(c.rdma_links_up), static_cast<unsigned long long>(c.rdma_streams_sent),
              static_cast<unsigned long long>(c.hosts_discovered));
  for (const TopicRoute& r : node.routes(topic)) {
    std::printf(" [%s %s %u]", r.host.c_str(), std::string(to_string(r.transport)).c_str(), r.subscribers);
  }
  std::printf("\n");
  return false;
}

/// Publish statuses added up.
struct SentTally {
  std::uint64_t published = 0;
  std::uint64_t delivered = 0;
  std::uint64_t dropped = 0;
  std::uint64_t evicted = 0;
  std::uint64_t timed_out = 0;
  void add(const PublishStatus& s) noexcept {
    ++published;
    delivered += s.delivered;
    dropped += s.dropped;
    evicted += s.evicted;
    timed_out += s.timed_out;
  }
};

/// How publish_until_written() numbers a message it publishes again.
enum class Retry : std::uint8_t {
  kSameSequence,  ///< RELIABLE: what was dropped was not written; the subscriber sees no gap.
  kNextSequence,  ///< Best effort, keep-last: a pending one may still be written; sequences only grow.
};

/// Free chunks of every class of `node`'s pool.
inline std::uint64_t free_chunks(const Node& node) {
  std::uint64_t free = 0;
  for (const PoolClassStats& s : node.pool_stats()) {
    free += s.free_chunks;
  }
  return free;
}

/// Publishes blocks `from`..`to`, each loaned and published once; the sum of
/// what their statuses say was dropped. A loan or publish that fails is a
/// test failure, and ends the run.
inline std::uint64_t publish_blocks(Publisher<Block>& pub, std::uint64_t from, std::uint64_t to) {
  std::uint64_t dropped = 0;
  for (std::uint64_t seq = from; seq <= to; ++seq) {
    auto loan = pub.loan();
    if (!loan.ok()) {
      ADD_FAILURE() << "no loan for sequence " << seq;
      return dropped;
    }
    fill(**loan, seq);
    const PublishResult published = pub.publish(std::move(*loan));
    if (!published.ok()) {
      ADD_FAILURE() << "sequence " << seq << ": " << published.error().message();
      return dropped;
    }
    dropped += published.status().dropped;
  }
  return dropped;
}

/// Publishes message `next` (then `next` + 1 ... with kNextSequence) until a
/// publish reports it written to a remote host: a host whose link or answer
/// takes longer than kOpenAnswerWaitNs gets nothing (counted), and a
/// destination without credit may drop or keep the message pending. Every status goes into `tally`; `next`
/// ends after the message written. False: not written within kWait.
inline bool publish_until_written(Publisher<Block>& pub, std::uint64_t& next, Retry retry, SentTally& tally) {
  const auto until = Clock::now() + kWait;
  while (Clock::now() < until) {
    const PublishResult published = pub.publish(block(next));
    if (!published.ok()) {
      return false;
    }
    tally.add(published.status());
    if (published.status().delivered > 0 || retry == Retry::kNextSequence) {
      ++next;
    }
    if (published.status().delivered > 0) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  return false;
}

/// The test's hosts: the config and a shared-memory directory each; spawns
/// subscriber peers on host b. Skips off the guest.
class TwoHostsOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (env("AXON_RDMA_EXPECT_DEVICE").empty()) {
      GTEST_SKIP() << "AXON_RDMA_EXPECT_DEVICE is not set (ctest rdma.softroce_devices sets it in the guest)";
    }
    config = dir.write("deployment.yaml", yaml());
    host_a = dir.path() + "/a";
    host_b = dir.path() + "/b";
    ASSERT_EQ(::mkdir(host_a.c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(host_b.c_str(), 0700), 0);
  }

  /// The deployment file's text.
  [[nodiscard]] virtual std::string yaml() const { return deployment(); }

  test::ChildProcess spawn(const SubscriberPeer& peer) const {
    const std::vector<std::pair<std::string, std::string>> vars{
        {"AXON_RDMA_DATA_CONFIG", config},
        {"AXON_RDMA_DATA_SHM", host_b},
        {"AXON_RDMA_DATA_NODE", peer.node},
        {"AXON_RDMA_DATA_TOPIC", peer.topic},
        {"AXON_RDMA_DATA_COUNT", std::to_string(peer.count)},
        {"AXON_RDMA_DATA_SLOW", std::to_string(peer.slow)},
        {"AXON_RDMA_DATA_QOS", peer.qos},
        {"AXON_RDMA_DATA_DEPTH", std::to_string(peer.depth)},
        {"AXON_RDMA_DATA_WAIT_PUBLISHER", peer.wait_publisher ? "1" : "0"},
        {"AXON_RDMA_DATA_BUSY_SPIN", peer.busy_spin ? "1" : "0"}};
    return test::ChildProcess::spawn({"/proc/self/exe", "--gtest_filter=RdmaNodeDataPeer.Subscribes"},
                                     [vars]() -> std::string {
                                       for (const auto& [name, value] : vars) {
                                         // NOLINTNEXTLINE(concurrency-mt-unsafe): in the forked child, before exec
                                         if (setenv(name.c_str(), value.c_str(), 1) != 0) {
                                           return "setenv " + name + " failed";
                                         }
                                       }
                                       return "";
                                     });
  }

  test::TempDir dir{"axon-rdma-data"};
  std::string config;
  std::string host_a;
  std::string host_b;
};

}  // namespace axon::rdma_test
