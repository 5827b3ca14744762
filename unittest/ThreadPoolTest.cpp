//===- ThreadPoolTest.cpp - The grid thread pool --------------------------===//
#include "tessel/Runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

using tessel::runtime::ThreadPool;

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
  ThreadPool pool(4);
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 12345}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallelFor(n, [&](int64_t begin, int64_t end) {
      ASSERT_LE(0, begin);
      ASSERT_LE(begin, end);
      ASSERT_LE(end, n);
      for (int64_t i = begin; i < end; ++i)
        hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPool, EmptyRangeRunsNothing) {
  ThreadPool pool(2);
  bool ran = false;
  pool.parallelFor(0, [&](int64_t, int64_t) { ran = true; });
  EXPECT_FALSE(ran);
}

TEST(ThreadPool, ManyConsecutiveCalls) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  for (int call = 0; call < 2000; ++call)
    pool.parallelFor(17, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        sum += i;
    });
  EXPECT_EQ(sum.load(), 2000 * (16 * 17 / 2));
}

TEST(ThreadPool, SingleThreadPoolRunsOnCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.size(), 1u);
  int64_t covered = 0;
  pool.parallelFor(10, [&](int64_t begin, int64_t end) { covered += end - begin; });
  EXPECT_EQ(covered, 10);
}
