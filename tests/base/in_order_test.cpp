#include "base/in_order.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace devshim {
namespace {

// Items made out of order on several threads (later ones faster) are used in order, each once.
TEST(InOrder, ItemsMadeOnWorkersAreUsedInOrder) {
  for (unsigned workers : {0U, 1U, 3U}) {
    std::vector<int> used;
    make_in_parallel_use_in_order<int>(
        200, workers, 8,
        [](std::size_t i) {
          std::this_thread::sleep_for(std::chrono::microseconds((200 - i) % 7 * 50));
          return static_cast<int>(i) * 2;
        },
        [&](int v) { used.push_back(v); });
    ASSERT_EQ(used.size(), 200U) << workers << " workers";
    for (int i = 0; i < 200; ++i) EXPECT_EQ(used[i], i * 2) << workers << " workers";
  }
}

// The workers never get more than `window` items ahead of the one being used (index used_count:
// the items before it are used).
TEST(InOrder, WorkersStayWithinTheWindow) {
  std::atomic<std::size_t> made_max{0};
  std::atomic<std::size_t> used_count{0};
  make_in_parallel_use_in_order<std::size_t>(
      300, 4, 5,
      [&](std::size_t i) {
        std::size_t seen = made_max.load();
        while (i > seen && !made_max.compare_exchange_weak(seen, i)) {
        }
        EXPECT_LE(i, used_count.load() + 5);
        return i;
      },
      [&](std::size_t i) {
        if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        used_count = i + 1;
      });
  EXPECT_EQ(used_count.load(), 300U);
  EXPECT_EQ(made_max.load(), 299U);
}

// make's exception comes out where its item would have been used, after every earlier item.
TEST(InOrder, AMakeErrorIsThrownInItsPlace) {
  std::vector<std::size_t> used;
  try {
    make_in_parallel_use_in_order<std::size_t>(
        100, 2, 4,
        [](std::size_t i) {
          if (i == 37) throw std::runtime_error("bad item 37");
          return i;
        },
        [&](std::size_t i) { used.push_back(i); });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "bad item 37");
  }
  ASSERT_EQ(used.size(), 37U);
  EXPECT_EQ(used.back(), 36U);
}

// use's exception stops the workers: it leaves at once, without making the rest.
TEST(InOrder, AUseErrorStopsTheWorkers) {
  std::atomic<std::size_t> made{0};
  EXPECT_THROW(make_in_parallel_use_in_order<std::size_t>(
                   100000, 2, 4,
                   [&](std::size_t i) {
                     ++made;
                     return i;
                   },
                   [](std::size_t i) {
                     if (i == 10) throw std::runtime_error("disk full");
                   }),
               std::runtime_error);
  EXPECT_LT(made.load(), 100U);
}

}  // namespace
}  // namespace devshim
