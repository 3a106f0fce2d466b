#include "transports/udp/completed_keys.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>

namespace axon::udp {
namespace {

MessageKey key(std::uint64_t sequence, std::uint32_t writer = 1, std::uint64_t sender = 7) {
  return {.sender_id = sender, .sequence = sequence, .writer_id = writer};
}

TEST(CompletedKeys, KnowsWhatItRememberedAndNothingElse) {
  CompletedKeys keys(4);
  EXPECT_FALSE(keys.contains(key(1)));
  keys.remember(key(1));
  keys.remember(key(2, 3));
  EXPECT_TRUE(keys.contains(key(1)));
  EXPECT_TRUE(keys.contains(key(2, 3)));
  EXPECT_FALSE(keys.contains(key(2)));        // another writer
  EXPECT_FALSE(keys.contains(key(1, 1, 8)));  // another sender
  EXPECT_FALSE(keys.contains(MessageKey{}));  // an unused place is no key
  EXPECT_EQ(keys.size(), 2U);
}

TEST(CompletedKeys, ForgetsTheOldestKeyWhenFull) {
  CompletedKeys keys(3);
  for (std::uint64_t s = 1; s <= 5; ++s) {
    keys.remember(key(s));
  }
  EXPECT_FALSE(keys.contains(key(1)));
  EXPECT_FALSE(keys.contains(key(2)));
  EXPECT_TRUE(keys.contains(key(3)));
  EXPECT_TRUE(keys.contains(key(4)));
  EXPECT_TRUE(keys.contains(key(5)));
  EXPECT_EQ(keys.size(), 3U);
}

TEST(CompletedKeys, AKeyRememberedTwiceStaysUntilItsLastCopyIsForgotten) {
  CompletedKeys keys(3);
  keys.remember(key(1));
  keys.remember(key(2));
  keys.remember(key(1));
  keys.remember(key(3));  // forgets the first copy of 1
  EXPECT_TRUE(keys.contains(key(1)));
  keys.remember(key(4));  // forgets 2
  keys.remember(key(5));  // forgets the second copy of 1
  EXPECT_FALSE(keys.contains(key(1)));
  EXPECT_FALSE(keys.contains(key(2)));
}

// Against a model (a deque of the last N keys) over long random runs: keys
// from few senders, writers and sequences so that they repeat and their
// probe runs collide and wrap around the table, which is where deletion by
// backward shift can go wrong.
TEST(CompletedKeys, AgreesWithAModelOverLongRandomRuns) {
  for (const std::size_t capacity : {1U, 2U, 3U, 7U, 64U, 256U}) {
    CompletedKeys keys(capacity);
    std::deque<MessageKey> model;
    std::mt19937_64 random(capacity);
    std::uniform_int_distribution<std::uint64_t> sequence(0, 3 * capacity);
    std::uniform_int_distribution<std::uint32_t> small(0, 2);
    for (int step = 0; step < 20000; ++step) {
      const MessageKey k = key(sequence(random), small(random), small(random));
      if (step % 2 == 0) {
        keys.remember(k);
        model.push_back(k);
        if (model.size() > capacity) {
          model.pop_front();
        }
      }
      const bool expected = std::find(model.begin(), model.end(), k) != model.end();
      ASSERT_EQ(keys.contains(k), expected) << "capacity " << capacity << ", step " << step;
    }
    for (const MessageKey& k : model) {
      ASSERT_TRUE(keys.contains(k)) << "capacity " << capacity;
    }
  }
}

}  // namespace
}  // namespace axon::udp
