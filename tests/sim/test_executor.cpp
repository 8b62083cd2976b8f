#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "sim/cpu_executor.h"

namespace rlt {
namespace {

TEST(CpuExecutor, ParallelForVisitsEveryIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    CpuExecutor exec(threads);
    for (i64 n : {0, 1, 1023, 1024, 1025, 100000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(exec, n, [&](i64 i) { hits[static_cast<size_t>(i)]++; });
      for (i64 i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
    }
  }
}

TEST(CpuExecutor, ReduceIsIdenticalWhateverTheThreadCount) {
  const i64 n = 123457;
  auto f = [](i64 i) { return 1.0 / (1.0 + static_cast<double>(i % 977)) * (i % 3 ? 1.0 : -0.7); };
  double ref = 0;
  reduce_sum(CpuExecutor(1), n, f, &ref);
  for (int threads : {2, 3, 7}) {
    double got = 0;
    reduce_sum(CpuExecutor(threads), n, f, &got);
    EXPECT_EQ(got, ref) << threads << " threads";  // bit-identical, not just close
  }
  double plain = 0;
  for (i64 i = 0; i < n; ++i) plain += f(i);
  EXPECT_NEAR(ref, plain, 1e-9 * std::abs(plain) + 1e-9);
}

// The documented order, written out: each 4096-element chunk summed from 0.0 in index order, then the
// chunk sums in order. (reduce_sum runs several chunks side by side; each sum's order is this one.)
TEST(CpuExecutor, ReduceSumsChunksInIndexOrderExactly) {
  auto f = [](i64 i) { return 1.0 / (3.0 + static_cast<double>(i % 1013)) * (i % 5 ? 1.0 : -2.3) + 1e7 * (i % 2); };
  const i64 chunk = CpuExecutor::kReduceChunk;
  for (i64 n : {i64{0}, i64{1}, chunk - 1, chunk, 3 * chunk + 5, 4 * chunk, 4 * chunk + 1, 9 * chunk - 7, 17 * chunk}) {
    double ref = 0.0;
    for (i64 b = 0; b < n; b += chunk) {
      double s = 0.0;
      for (i64 i = b; i < std::min(n, b + chunk); ++i) s += f(i);
      ref += s;
    }
    for (int threads : {1, 2, 3}) {
      double got = -1.0;
      reduce_sum(CpuExecutor(threads), n, f, &got);
      EXPECT_EQ(got, ref) << "n " << n << ", " << threads << " threads";
    }
  }
}

TEST(ThreadPool, ManyShortJobs) {
  ThreadPool pool(4);
  std::atomic<long> total{0};
  for (int job = 0; job < 2000; ++job) pool.run(7, [&](int t) { total += t; });
  EXPECT_EQ(total.load(), 2000L * 21);
}

}  // namespace
}  // namespace rlt

namespace rlt {
namespace {

TEST(CpuExecutor, SelectLastFlaggedKeepsTheNewestInOrder) {
  CpuExecutor exec(2);
  const std::vector<std::uint8_t> flags = {0, 1, 1, 0, 0, 1, 0, 1, 1, 0};
  std::vector<float> a(flags.size());
  std::vector<int> b(flags.size());
  for (size_t i = 0; i < flags.size(); ++i) a[i] = 10.0f * static_cast<float>(i), b[i] = static_cast<int>(i);
  for (i64 k : {0, 1, 3, 5, 9}) {
    double count = -1;
    std::vector<double> oa(9, -1), ob(9, -1);
    select_last_flagged(exec, static_cast<i64>(flags.size()), flags.data(), a.data(), b.data(), k, &count, oa.data(),
                        ob.data());
    EXPECT_EQ(count, 5.0);
    const std::vector<int> flagged = {1, 2, 5, 7, 8};
    const i64 kept = std::min<i64>(k, 5);
    for (i64 j = 0; j < kept; ++j) {
      const int idx = flagged[static_cast<size_t>(5 - kept + j)];
      EXPECT_EQ(oa[j], 10.0 * idx) << "k=" << k << " j=" << j;
      EXPECT_EQ(ob[j], idx);
    }
    for (i64 j = kept; j < 9; ++j) EXPECT_EQ(oa[j], -1) << "wrote past the kept entries";
  }
  double count = -1;
  select_last_flagged(exec, 0, flags.data(), a.data(), b.data(), 3, &count, nullptr, nullptr);
  EXPECT_EQ(count, 0.0);
}

}  // namespace
}  // namespace rlt
