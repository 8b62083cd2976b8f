// The learner's building blocks against plain references: GAE, Adam, normalizer merging, the
// minibatch permutation, GEMM, the fast activations, action sampling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "rl/gemm.h"
#include "rl/ppo_impl.h"

namespace rlt {
namespace {

float uniform(Philox& rng, float lo, float hi) { return lo + (hi - lo) * u32_to_unit_float(rng.next4().v[0]); }

TEST(Gae, FastVersionEqualsThePlainLoopExactly) {
  const int T = 37;
  const i64 N = 9;
  Philox rng(1, RngStream::kBench, 0, 0);
  std::vector<float> reward(T * N), value(T * N), next_value(N), adv(T * N), ret(T * N);
  std::vector<std::uint8_t> done(T * N);
  for (auto& r : reward) r = uniform(rng, -1, 1);
  for (auto& v : value) v = uniform(rng, -2, 2);
  for (auto& v : next_value) v = uniform(rng, -2, 2);
  for (auto& d : done) d = uniform(rng, 0, 1) < 0.1f;
  const float gamma = 0.99f, lambda = 0.95f;
  CpuExecutor exec(3);
  parallel_for(exec, N,
               GaeOneEnv<float>{reward.data(), value.data(), done.data(), next_value.data(), adv.data(), ret.data(), T,
                                N, gamma, lambda});
  // CleanRL's loop, over all envs at once, in the same float arithmetic.
  std::vector<float> ref(T * N), lastgaelam(N, 0.0f);
  for (int t = T - 1; t >= 0; --t)
    for (i64 e = 0; e < N; ++e) {
      const float nextv = t == T - 1 ? next_value[e] : value[(t + 1) * N + e];
      const float nonterminal = done[t * N + e] ? 0.0f : 1.0f;
      const float delta = reward[t * N + e] + gamma * nextv * nonterminal - value[t * N + e];
      lastgaelam[e] = delta + gamma * lambda * nonterminal * lastgaelam[e];
      ref[t * N + e] = lastgaelam[e];
    }
  for (i64 k = 0; k < T * N; ++k) {
    ASSERT_EQ(adv[k], ref[k]) << k;
    ASSERT_EQ(ret[k], ref[k] + value[k]) << k;
  }
}

TEST(Adam, MatchesHandComputationWithGradientClipping) {
  std::vector<double> p = {0.5, -1.0, 2.0}, m(3, 0.0), v(3, 0.0);
  const std::vector<std::vector<double>> grads = {{3.0, -4.0, 0.0}, {0.1, 0.2, -0.3}, {1.0, 1.0, 1.0}};
  std::vector<double> hp = p, hm = m, hv = v;
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, max_norm = 1.0;
  CpuExecutor exec(1);
  for (int t = 1; t <= 3; ++t) {
    const auto& g = grads[t - 1];
    double sq = 0;
    for (double x : g) sq += x * x;
    parallel_for(exec, 3,
                 AdamStep<double>{p.data(), g.data(), m.data(), v.data(), &sq, &lr, b1, b2, eps, max_norm,
                                  1 - std::pow(b1, t), 1 - std::pow(b2, t)});
    const double norm = std::sqrt(sq), scale = norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
    for (int i = 0; i < 3; ++i) {
      const double gi = g[i] * scale;
      hm[i] = b1 * hm[i] + (1 - b1) * gi;
      hv[i] = b2 * hv[i] + (1 - b2) * gi * gi;
      const double mhat = hm[i] / (1 - std::pow(b1, t)), vhat = hv[i] / (1 - std::pow(b2, t));
      hp[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(p[i], hp[i], 1e-15) << "step " << t << " param " << i;
  }
}

// The clamp range of AdamStep (policy.min_log_std / max_log_std on the log-std slice): parameters
// inside [clamp_begin, clamp_end) end in [clamp_lo, clamp_hi], both bounds binding; the neighbours
// take the plain step, however far it goes.
TEST(Adam, ClampRangeProjectsOnlyItsParameters) {
  const double lr = 0.5, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::vector<double> p = {0.0, 0.0, 0.0, 0.0, 0.0}, m(5, 0.0), v(5, 0.0), plain = p, pm = m, pv = v;
  const std::vector<double> g = {1.0, 1.0, -1.0, 0.0, -1.0};  // steps of -lr, -lr, +lr, 0, +lr
  double sq = 4.0;
  CpuExecutor exec(1);
  AdamStep<double> step{p.data(), g.data(), m.data(), v.data(), &sq, &lr, b1, b2, eps, 0.0, 1 - b1, 1 - b2};
  step.clamp_begin = 1, step.clamp_end = 4, step.clamp_lo = -0.25, step.clamp_hi = 0.125;
  parallel_for(exec, 5, step);
  parallel_for(exec, 5, AdamStep<double>{plain.data(), g.data(), pm.data(), pv.data(), &sq, &lr, b1, b2, eps, 0.0,
                                         1 - b1, 1 - b2});
  EXPECT_NEAR(plain[0], -0.5, 1e-6);
  EXPECT_EQ(p[0], plain[0]);  // before the range
  EXPECT_EQ(p[1], -0.25);     // the lower bound
  EXPECT_EQ(p[2], 0.125);     // the upper bound
  EXPECT_EQ(p[3], 0.0);       // inside: untouched
  EXPECT_EQ(p[4], plain[4]);  // after the range
  EXPECT_EQ(m, pm);           // the moments are the plain step's
  EXPECT_EQ(v, pv);
}

TEST(Normalizer, MergingBatchesEqualsTheWholeBatch) {
  CpuExecutor exec(2);
  const int dim = 3;
  const i64 n = 5000;
  Philox rng(2, RngStream::kBench, 0, 0);
  std::vector<float> x(n * dim);
  for (i64 i = 0; i < n; ++i)
    for (int k = 0; k < dim; ++k) x[i * dim + k] = uniform(rng, -1, 1) * (k + 1) + 10.0f * k;
  RunningMoments<CpuExecutor> m;
  m.init(exec, dim);
  const i64 cuts[] = {0, 1, 700, 2500, 5000};
  for (int c = 0; c < 4; ++c) update_moments(exec, m, x.data() + cuts[c] * dim, cuts[c + 1] - cuts[c]);
  EXPECT_EQ(m.count, static_cast<double>(n));
  for (int k = 0; k < dim; ++k) {
    double s = 0, s2 = 0;
    for (i64 i = 0; i < n; ++i) s += x[i * dim + k];
    const double mean = s / n;
    for (i64 i = 0; i < n; ++i) s2 += (x[i * dim + k] - mean) * (x[i * dim + k] - mean);
    // float storage of mean/var: relative 1e-6.
    EXPECT_NEAR(m.mean.data()[k], mean, 1e-5 * (1 + std::abs(mean))) << k;
    EXPECT_NEAR(m.var.data()[k], s2 / n, 1e-5 * s2 / n) << k;
  }
}

TEST(IndexPermutation, IsABijectionAndDependsOnTheKey) {
  for (u64 n : {1ull, 2ull, 5ull, 64ull, 1000ull, 4096ull, 4097ull}) {
    IndexPermutation p(n, 7, 1, 0);
    std::vector<int> seen(n, 0);
    for (u64 i = 0; i < n; ++i) {
      const u64 j = p(i);
      ASSERT_LT(j, n);
      seen[j]++;
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; })) << n;
  }
  IndexPermutation a(1000, 7, 1, 0), b(1000, 7, 1, 1);
  int same = 0;
  for (u64 i = 0; i < 1000; ++i) same += a(i) == b(i);
  EXPECT_LT(same, 20);
}

// Ppo's epoch order: one pass of the network over the domain, then the walks through the table
// (PermutationTable, PermutationWalk), is IndexPermutation's map index by index, on any thread count;
// sizes at, just above and between the network's domains (4^k), where walks are longest.
TEST(IndexPermutation, TheTableWalkIsTheSameMap) {
  for (u64 n : {1ull, 2ull, 3ull, 4ull, 5ull, 17ull, 64ull, 65ull, 1000ull, 4096ull, 4097ull, 131072ull, 262145ull}) {
    for (int threads : {1, 2, 3}) {
      const IndexPermutation perm(n, 5, 9, static_cast<u32>(threads));
      ASSERT_EQ(perm.domain(), IndexPermutation::domain_of(n));
      ASSERT_GE(perm.domain(), n);
      ASSERT_LT(perm.domain(), std::max<u64>(4 * n, 5));
      std::vector<u32> table(perm.domain(), 0xFFFFFFFFu);
      CpuExecutor exec(threads);
      parallel_for(exec, static_cast<i64>(perm.domain()), PermutationTable{perm, table.data()});
      for (u64 y = 0; y < perm.domain(); ++y) ASSERT_EQ(table[y], perm.feistel(y)) << "n " << n << " y " << y;
      parallel_for(exec, static_cast<i64>(n), PermutationWalk{table.data(), static_cast<u32>(n)});
      for (u64 i = 0; i < n; ++i) ASSERT_EQ(table[i], perm(i)) << "n " << n << " i " << i << ", " << threads << " threads";
    }
  }
}

// The update's gathers normalize with ObsInvStd's scale computed once; the rollout with
// normalize_obs_value per element: the same bits (the first epoch's ratio is exactly 1).
TEST(Normalizer, TheHoistedScaleGivesTheSameBits) {
  Philox rng(4, RngStream::kBench, 0, 0);
  const int dim = 64;
  std::vector<float> mean(dim), var(dim), inv_std(dim);
  for (int k = 0; k < dim; ++k) {
    mean[k] = uniform(rng, -5, 5);
    var[k] = k < 4 ? (k == 0 ? 0.0f : std::pow(10.0f, -9.0f + k)) : std::exp(uniform(rng, -12, 12));
  }
  parallel_for(CpuExecutor(1), dim, ObsInvStd{var.data(), inv_std.data()});
  for (int i = 0; i < 20000; ++i) {
    const int k = i % dim;
    const float x = uniform(rng, -100, 100) * (i % 7 == 0 ? 1e4f : 1.0f);
    for (bool enabled : {true, false}) {
      const float a = normalize_obs_value(x, mean[k], var[k], 10.0f, enabled);
      const float b = normalize_obs_scaled(x, mean[k], inv_std[k], 10.0f, enabled);
      ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << x << " " << mean[k] << " " << var[k];
    }
  }
}

TEST(Gemm, MatchesNaiveProductAndIsThreadCountInvariant) {
  struct Shape {
    i64 m, n, k;
  };
  for (Shape s : {Shape{3, 5, 7}, Shape{300, 64, 33}, Shape{64, 64, 3000}, Shape{1, 4, 2500}}) {
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        Philox rng(3, RngStream::kBench, static_cast<u32>(s.m), static_cast<u32>(ta * 2 + tb));
        std::vector<float> a(s.m * s.k), b(s.k * s.n), c0(s.m * s.n), ref(s.m * s.n);
        for (auto& x : a) x = uniform(rng, -1, 1);
        for (auto& x : b) x = uniform(rng, -1, 1);
        for (auto& x : c0) x = uniform(rng, -1, 1);
        for (i64 i = 0; i < s.m; ++i)
          for (i64 j = 0; j < s.n; ++j) {
            double acc = 0;
            for (i64 q = 0; q < s.k; ++q)
              acc += static_cast<double>(ta ? a[q * s.m + i] : a[i * s.k + q]) * (tb ? b[j * s.k + q] : b[q * s.n + j]);
            ref[i * s.n + j] = static_cast<float>(0.5 * acc + 0.25 * c0[i * s.n + j]);
          }
        std::vector<float> c1 = c0, c2 = c0;
        gemm(CpuExecutor(1), ta, tb, s.m, s.n, s.k, 0.5f, a.data(), b.data(), 0.25f, c1.data());
        gemm(CpuExecutor(3), ta, tb, s.m, s.n, s.k, 0.5f, a.data(), b.data(), 0.25f, c2.data());
        EXPECT_EQ(c1, c2) << "thread count changed the result";
        for (i64 i = 0; i < s.m * s.n; ++i)  // fp32 accumulation over k terms of size <= 1
          ASSERT_NEAR(c1[i], ref[i], 1e-6 * s.k + 1e-5)
              << s.m << "x" << s.n << "x" << s.k << " ta" << ta << " tb" << tb;
      }
  }
}

TEST(FastMath, TanhAndExpAreAccurate) {
  double worst_tanh = 0, worst_exp = 0;
  for (int i = -200000; i <= 200000; ++i) {
    const float x = static_cast<float>(i) * 1e-4f;  // [-20, 20]
    worst_tanh = std::max(worst_tanh, std::abs(static_cast<double>(fast_tanh(x)) - std::tanh(static_cast<double>(x))));
    if (x <= 0) {
      const double e = std::exp(static_cast<double>(x));
      worst_exp = std::max(worst_exp, std::abs(fast_exp_neg(x) - e) / e);
    }
  }
  EXPECT_LT(worst_tanh, 5e-7);
  EXPECT_LT(worst_exp, 5e-7);
  EXPECT_EQ(fast_tanh(0.0f), 0.0f);
  EXPECT_EQ(fast_tanh(100.0f), 1.0f);
  EXPECT_EQ(fast_tanh(-100.0f), -1.0f);
}

TEST(SampleAction, FrequenciesFollowTheDistribution) {
  CpuExecutor exec(2);
  const i64 n = 200000;
  // Categorical over 3 logits, the same row for every env.
  std::vector<float> logits(n * 3), actions(n), logp(n);
  for (i64 i = 0; i < n; ++i) logits[i * 3] = 0.0f, logits[i * 3 + 1] = 1.0f, logits[i * 3 + 2] = -1.0f;
  parallel_for(exec, n, SampleAction{logits.data(), nullptr, actions.data(), logp.data(), 3, 1, true, false, 5, 0});
  std::map<int, int> count;
  for (float a : actions) count[static_cast<int>(a)]++;
  const double z = 1 + std::exp(1.0) + std::exp(-1.0);
  EXPECT_NEAR(count[0] / double(n), 1 / z, 0.005);
  EXPECT_NEAR(count[1] / double(n), std::exp(1.0) / z, 0.005);
  EXPECT_NEAR(count[2] / double(n), std::exp(-1.0) / z, 0.005);
  EXPECT_NEAR(logp[0], actions[0] == 1 ? 1 - std::log(z) : (actions[0] == 0 ? -std::log(z) : -1 - std::log(z)), 1e-5);
  // Gaussian with mean 0.5, std exp(-1).
  std::vector<float> mean(n, 0.5f), x(n);
  const float log_std = -1.0f;
  parallel_for(exec, n, SampleAction{mean.data(), &log_std, x.data(), nullptr, 1, 1, false, false, 5, 0});
  double s = 0, s2 = 0;
  for (float v : x) s += v, s2 += static_cast<double>(v) * v;
  EXPECT_NEAR(s / n, 0.5, 0.003);
  EXPECT_NEAR(std::sqrt(s2 / n - (s / n) * (s / n)), std::exp(-1.0), 0.003);
  // Deterministic: the mode.
  parallel_for(exec, n, SampleAction{logits.data(), nullptr, actions.data(), nullptr, 3, 1, true, true, 5, 0});
  EXPECT_TRUE(std::all_of(actions.begin(), actions.end(), [](float a) { return a == 1.0f; }));
}

// A tanh-squashed policy: the env gets center + scale * tanh(u), inside the box however far the
// sample u goes, and u itself (the PPO ratio's) is the plain Gaussian's draw, same stream.
TEST(SampleAction, SquashedActionsStayInTheBox) {
  CpuExecutor exec(1);
  const i64 n = 4096;
  const int d = 2;
  std::vector<float> mean(n * d), u(n * d), plain(n * d), y(n * d), logp(n), plain_logp(n);
  for (i64 i = 0; i < n; ++i) mean[i * d] = 6.0f * static_cast<float>(i % 7 - 3), mean[i * d + 1] = 0.3f;
  const float log_std[2] = {0.5f, -1.0f}, center[2] = {0.0f, 1.0f}, scale[2] = {1.0f, 0.5f};
  parallel_for(exec, n, SampleAction{mean.data(), log_std, u.data(), logp.data(), d, d, false, false, 5, 2, 0,
                                     center, scale, y.data()});
  parallel_for(exec, n, SampleAction{mean.data(), log_std, plain.data(), plain_logp.data(), d, d, false, false, 5, 2});
  EXPECT_EQ(u, plain);
  EXPECT_EQ(logp, plain_logp);
  for (i64 i = 0; i < n; ++i)
    for (int k = 0; k < d; ++k) {
      const float v = y[i * d + k];
      ASSERT_GE(v, center[k] - scale[k]) << i;
      ASSERT_LE(v, center[k] + scale[k]) << i;
      ASSERT_EQ(v, center[k] + scale[k] * tanhf(u[i * d + k])) << i;
    }
  // Deterministic: the squashed mean.
  parallel_for(exec, n, SampleAction{mean.data(), log_std, u.data(), nullptr, d, d, false, true, 5, 2, 0, center, scale,
                                     y.data()});
  for (i64 i = 0; i < n; ++i) ASSERT_EQ(y[i * d + 1], 1.0f + 0.5f * tanhf(0.3f)) << i;
}

}  // namespace
}  // namespace rlt
