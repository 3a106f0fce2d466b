// The wide holder ledger (issue 15): connections 61..188 of a publisher hold
// a chunk through two more words of its header and a holder count. Whatever
// order the holders let go in, the chunk is freed exactly once, by the last;
// a dropped bit dropped again (a reclaimer racing its dead holder) frees
// nothing; a late joiner added while the history holds the chunk counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "tests/support/heap_pool.hpp"
#include "transports/shm/chunk_pool.hpp"
#include "transports/shm/holder_bits.hpp"

namespace axon::shm {
namespace {

using test::PoolFixture;

/// One holder of a chunk: a bit of word 0 (loan, history, connection 0..60)
/// or a wide connection's bit.
struct Holder {
  bool wide = false;
  std::uint64_t word0 = 0;  ///< !wide
  std::uint32_t bit = 0;    ///< wide
  void drop(ChunkPool& pool, ChunkHeader* chunk, bool& freed) const {
    const bool now = wide ? pool.drop_holder(chunk, holder_bit(bit)) : pool.drop_holders(chunk, word0);
    EXPECT_FALSE(now && freed) << "freed twice";
    freed = freed || now;
  }
};

ConnectionSet connections(std::initializer_list<std::uint32_t> bits) {
  ConnectionSet set;
  for (const std::uint32_t b : bits) {
    set.add(holder_bit(b));
  }
  return set;
}

std::uint32_t free_chunks(const ChunkPool& pool) { return pool.free_chunks(0); }

TEST(WideLedger, MapsConnectionsToTheirWordAndBit) {
  EXPECT_EQ(holder_bit(0).word, 0U);
  EXPECT_EQ(holder_bit(60).word, 0U);
  EXPECT_EQ(holder_bit(60).mask, std::uint64_t{1} << 60);
  EXPECT_EQ(holder_bit(61).word, 1U);
  EXPECT_EQ(holder_bit(61).mask, 1U);
  EXPECT_EQ(holder_bit(124).word, 1U);
  EXPECT_EQ(holder_bit(125).word, 2U);
  EXPECT_EQ(holder_bit(188).mask, std::uint64_t{1} << 63);
  std::vector<std::uint32_t> seen;
  connections({0, 60, 61, 124, 125, 188}).for_each([&](std::uint32_t b) { seen.push_back(b); });
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{0, 60, 61, 124, 125, 188}));
}

TEST(WideLedger, FreesTheChunkOnlyWhenTheLastHolderLetsGoWhateverTheOrder) {
  PoolFixture f({{.payload_bytes = 64, .count = 1}});
  // The loan, the history, a narrow connection, one in each wide word.
  std::vector<Holder> holders{{.wide = false, .word0 = kLoanBit},
                              {.wide = false, .word0 = kHistoryBit},
                              {.wide = false, .word0 = std::uint64_t{1} << 5},
                              {.wide = true, .bit = 61},
                              {.wide = true, .bit = 188}};
  std::vector<std::size_t> order{0, 1, 2, 3, 4};
  int orders = 0;
  do {
    ChunkHeader* sut = f.pool.allocate(64);
    ASSERT_NE(sut, nullptr) << "the previous order freed the chunk";
    ChunkPool::set_holders(sut, kLoanBit | kHistoryBit, connections({5, 61, 188}));
    bool freed = false;
    for (std::size_t k = 0; k < order.size(); ++k) {
      holders[order[k]].drop(f.pool, sut, freed);
      EXPECT_EQ(freed, k + 1 == order.size()) << "order " << orders << ", holder " << k;
    }
    EXPECT_EQ(free_chunks(f.pool), 1U);
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(orders, 120);
}

TEST(WideLedger, AWideBitDroppedTwiceCountsOnce) {
  PoolFixture f({{.payload_bytes = 64, .count = 1}});
  ChunkHeader* sut = f.pool.allocate(64);
  ChunkPool::set_holders(sut, kLoanBit, connections({70, 71}));

  EXPECT_FALSE(f.pool.drop_holder(sut, holder_bit(70)));  // the holder
  EXPECT_FALSE(f.pool.drop_holder(sut, holder_bit(70)));  // its reclaimer, after it
  EXPECT_FALSE(f.pool.drop_holders(sut, kLoanBit));

  EXPECT_EQ(free_chunks(f.pool), 0U) << "connection 71 still holds it";
  EXPECT_TRUE(f.pool.drop_holder(sut, holder_bit(71)));
  EXPECT_FALSE(f.pool.drop_holder(sut, holder_bit(71))) << "a crash-recovery retry must not free twice";
  EXPECT_EQ(free_chunks(f.pool), 1U);
}

TEST(WideLedger, AChunkIsNotReusedWhileAWideHolderHasItThoughWordZeroSaysOnlyTheLoan) {
  PoolFixture f({{.payload_bytes = 64, .count = 1}});
  ChunkHeader* sut = f.pool.allocate(64);
  ChunkPool::set_holders(sut, kLoanBit, connections({3, 100}));
  f.pool.drop_holders(sut, std::uint64_t{1} << 3);

  EXPECT_EQ(sut->holders.load(), kLoanBit);
  EXPECT_FALSE(ChunkPool::only_loan_left(sut));
  f.pool.drop_holder(sut, holder_bit(100));
  EXPECT_TRUE(ChunkPool::only_loan_left(sut));

  // Reused: published narrow this time, the count left by the wide life goes.
  ChunkPool::set_holders(sut, kLoanBit, connections({1}));
  EXPECT_EQ(sut->wide_holders.load(), 0U);
  f.pool.drop_holders(sut, 2);
  EXPECT_TRUE(f.pool.drop_holders(sut, kLoanBit));
}

TEST(WideLedger, ALateJoinerAddedWhileTheHistoryHoldsTheChunkKeepsItUntilItLetsGo) {
  PoolFixture f({{.payload_bytes = 64, .count = 2}});
  // Published narrow (no wide holder), and published wide.
  ChunkHeader* narrow = f.pool.allocate(64);
  ChunkHeader* wide = f.pool.allocate(64);
  ChunkPool::set_holders(narrow, kLoanBit | kHistoryBit, connections({0}));
  ChunkPool::set_holders(wide, kLoanBit | kHistoryBit, connections({0, 90}));
  for (ChunkHeader* sut : {narrow, wide}) {
    f.pool.drop_holders(sut, kLoanBit);  // published: only the history and subscribers hold it
    f.pool.drop_holders(sut, 1);
  }
  f.pool.drop_holder(wide, holder_bit(90));

  for (ChunkHeader* sut : {narrow, wide}) {
    ChunkPool::add_holder(sut, holder_bit(150));  // a joiner on a wide bit
    ChunkPool::add_holder(sut, holder_bit(7));    // and one on a narrow bit
    EXPECT_FALSE(f.pool.drop_holders(sut, kHistoryBit)) << "the joiners hold it";
    EXPECT_FALSE(f.pool.drop_holder(sut, holder_bit(7)));
    EXPECT_TRUE(f.pool.drop_holder(sut, holder_bit(150)));
  }
  EXPECT_EQ(free_chunks(f.pool), 2U);
}

// Every holder on its own thread (run under TSan): each chunk freed once.
TEST(WideLedger, HoldersOnManyThreadsFreeEachChunkExactlyOnce) {
  constexpr std::uint32_t kChunks = 256;
  constexpr std::array<std::uint32_t, 4> kBits = {2, 60, 64, 187};
  PoolFixture f({{.payload_bytes = 64, .count = kChunks}});
  std::vector<ChunkHeader*> chunks;
  for (std::uint32_t i = 0; i < kChunks; ++i) {
    chunks.push_back(f.pool.allocate(64));
    ChunkPool::set_holders(chunks.back(), kLoanBit, connections({kBits[0], kBits[1], kBits[2], kBits[3]}));
  }
  std::atomic<std::uint32_t> freed{0};
  std::vector<std::thread> threads;
  for (std::uint32_t t = 0; t <= kBits.size(); ++t) {
    threads.emplace_back([&, t] {
      for (std::uint32_t i = 0; i < kChunks; ++i) {
        ChunkHeader* c = chunks[(i + t * 37) % kChunks];  // each thread in another order
        const bool now =
            t == kBits.size() ? f.pool.drop_holders(c, kLoanBit) : f.pool.drop_holder(c, holder_bit(kBits[t]));
        freed.fetch_add(now ? 1 : 0, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(freed.load(), kChunks);
  EXPECT_EQ(free_chunks(f.pool), kChunks);
}

}  // namespace
}  // namespace axon::shm
