// The learner's pieces on the CUDA executor against their CPU twins (STYLE.md 5), same functors,
// same inputs (tests/kernels/learner_twins.h runs them): GAE, Adam with the gradient-norm clip, the
// observation normalizer's moment merge, select_last_flagged, SampleAction, NormalizeObs; then one
// whole PPO minibatch update (loss_and_grad and an Adam step) through ActorCritic on both, for a
// discrete and a continuous head. Each comparison is |cuda - cpu| <= atol + rtol * |cpu| with the
// tolerances named next to it. Every test skips itself, with the reason, where no GPU answers.
//
// Where the two sides differ at all, it is for these reasons:
//   * nvcc contracts a*b + c into one FMA (one rounding instead of two); the CPU build does not
//     (-ffp-contract=off, and the host code here is built like the product's).
//   * CUDA's expf/logf are within 2 ulp, glibc's within 1.
//   * reductions sum in another order (CUB's tree against the CPU's fixed 4096-chunks), and so do
//     the GEMMs (cuBLAS tiles against Eigen's blocks and our 512-deep k-chunks). GEMMs in fp32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "rl/gemm.h"
#include "sim/philox.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/learner_twins.h"

namespace rlt {
namespace {

using gpu_test::all_close;

// Seeded uniforms and normals for test inputs (Philox, so the inputs are the same everywhere).
class TestRng {
 public:
  explicit TestRng(u32 tag) : m_rng(20240611u, RngStream::kBench, tag, 0u) {}
  float uniform(float lo, float hi) { return lo + (hi - lo) * u32_to_unit_float(next()); }
  float normal() {
    float z0, z1;
    const u32 a = next(), b = next();
    box_muller(a, b, z0, z1);
    return z0;
  }
  bool bernoulli(float p) { return uniform(0.0f, 1.0f) < p; }

 private:
  u32 next() {
    if (m_left == 0) {
      m_block = m_rng.next4();
      m_left = 4;
    }
    return m_block.v[--m_left];
  }
  Philox m_rng;
  U32x4 m_block{};
  int m_left = 0;
};

double max_abs(const std::vector<float>& x) {
  double m = 0.0;
  for (float v : x) m = std::max(m, static_cast<double>(std::abs(v)));
  return m;
}

// ---- GAE ------------------------------------------------------------------------------------------

// Tolerances: each step of the backward recursion rounds twice (delta, then last); with FMA the
// device rounds once where the CPU rounds twice, so each step may differ by ~1 ulp of |last|
// (advantages here reach ~15: 1 ulp <= 1e-6). Earlier differences decay by gamma*lambda = 0.94 per
// step, so the total stays below ~17 such terms: atol 5e-5 bounds that for |adv| < 40 (emulated on
// the CPU with and without FMA: 3.7e-6 at most); rtol 1e-6 covers the final add (ret = adv + value).
constexpr double kGaeAtol = 5e-5;
constexpr double kGaeRtol = 1e-6;

TEST(CudaLearnerTwins, GaeMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  struct Shape {
    int steps;
    i64 envs;
  };
  for (Shape s : {Shape{1, 1}, Shape{64, 1000}, Shape{256, 257}}) {
    SCOPED_TRACE(std::to_string(s.steps) + " steps x " + std::to_string(s.envs) + " envs");
    twins::GaeCase c;
    c.num_steps = s.steps;
    c.num_envs = s.envs;
    const i64 n = s.steps * s.envs;
    TestRng rng(1 + static_cast<u32>(n));
    for (i64 k = 0; k < n; ++k) {
      const bool done = rng.bernoulli(0.05f);
      // A truncated step has its bootstrap folded into the reward: occasionally a large one.
      c.reward.push_back(done && rng.bernoulli(0.5f) ? rng.uniform(-1.0f, 10.0f) : rng.uniform(-1.0f, 1.0f));
      c.value.push_back(rng.uniform(-5.0f, 5.0f));
      c.done.push_back(done ? 1 : 0);
    }
    for (i64 e = 0; e < s.envs; ++e) c.next_value.push_back(rng.uniform(-5.0f, 5.0f));
    const twins::GaeResult ref = twins::run_gae(cpu, c);
    const twins::GaeResult got = twins::run_gae(exec, c);
    EXPECT_TRUE(all_close("advantage", got.adv.data(), ref.adv.data(), ref.adv.size(), kGaeAtol, kGaeRtol));
    EXPECT_TRUE(all_close("return", got.ret.data(), ref.ret.data(), ref.ret.size(), kGaeAtol, kGaeRtol));
  }
}

// ---- Adam -------------------------------------------------------------------------------------------

TEST(CudaLearnerTwins, AdamStepWithClippingMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  const i64 p = 10007;  // 40 blocks, the last one partial
  TestRng rng(2);
  twins::AdamState start;
  std::vector<float> grads;
  for (i64 i = 0; i < p; ++i) {
    start.params.push_back(rng.normal());
    start.m.push_back(0.01f * rng.normal());
    start.v.push_back(rng.uniform(1e-6f, 1e-4f));
    grads.push_back(0.02f * rng.normal());
  }
  // The gradient norm is ~2: clip at 0.5 is active, at 100 it is not, and 0 disables it.
  for (float max_norm : {0.5f, 100.0f, 0.0f}) {
    for (std::int64_t step : {std::int64_t{1}, std::int64_t{10}}) {
      SCOPED_TRACE("max_grad_norm " + std::to_string(max_norm) + ", step " + std::to_string(step));
      twins::AdamHyper h;
      h.max_grad_norm = max_norm;
      h.step = step;
      // A log-std slice projected into [-0.5, 0.5]: about 60% of its normal(0, 1) parameters bind.
      h.clamp_begin = 1000, h.clamp_end = 3000, h.clamp_lo = -0.5f, h.clamp_hi = 0.5f;
      twins::AdamState ref = start, got = start;
      if (step == 1) {  // Adam's first step starts from zero moments
        std::fill(ref.m.begin(), ref.m.end(), 0.0f), std::fill(ref.v.begin(), ref.v.end(), 0.0f);
        got.m = ref.m, got.v = ref.v;
      }
      const double ref_sq = twins::run_adam(cpu, grads, h, ref);
      const double got_sq = twins::run_adam(exec, grads, h, got);
      // Squared norm: double sums of 1e4 float squares in two orders: ~1e-16 * sqrt(n) relative.
      EXPECT_NEAR(got_sq, ref_sq, 1e-12 * ref_sq);
      // m, v: beta*m + (1-beta)*g rounds once with FMA, twice without, and the clipped g may
      // differ by an ulp (the clip factor rounds from a norm that differs in the 16th digit): a
      // few ulp of the terms (|beta1 m| + |(1-beta1) g|, the scale below), 1e-6 is 8 ulp; v has no
      // cancellation (all terms >= 0), so 1e-6 of itself.
      EXPECT_TRUE(all_close("m", got.m.data(), ref.m.data(), ref.m.size(), 0.0, 1e-6, [&](size_t i) {
        const double g =
            grads[i] * (max_norm > 0 && ref_sq > double(max_norm) * max_norm ? max_norm / std::sqrt(ref_sq) : 1.0);
        return std::abs(0.9 * (step == 1 ? 0.0 : start.m[i])) + std::abs(0.1 * g);
      }));
      EXPECT_TRUE(all_close("v", got.v.data(), ref.v.data(), ref.v.size(), 0.0, 1e-6));
      // params: the update lr * mhat / (sqrt(vhat) + eps) is <= ~1e-3 here and agrees to a few
      // ulp of itself (~1e-9); the subtraction from |p| ~ 1 then rounds to 1 ulp of p on each side:
      // 2 ulp of p (2.4e-7) plus 1e-9 absolute for parameters near zero.
      EXPECT_TRUE(all_close("params", got.params.data(), ref.params.data(), ref.params.size(), 1e-9, 2.5e-7));
      for (i64 i = h.clamp_begin; i < h.clamp_end; ++i) {
        ASSERT_GE(got.params[static_cast<size_t>(i)], h.clamp_lo) << i;
        ASSERT_LE(got.params[static_cast<size_t>(i)], h.clamp_hi) << i;
      }
    }
  }
}

// ---- running moments ----------------------------------------------------------------------------

TEST(CudaLearnerTwins, UpdateMomentsMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  const int dim = 5;
  // Columns with different centres and spreads, one far from zero relative to its spread.
  const float centre[dim] = {0.0f, 3.0f, -200.0f, 1000.0f, 0.5f};
  const float spread[dim] = {1.0f, 0.1f, 20.0f, 0.5f, 1e-3f};
  std::vector<std::vector<float>> batches;
  TestRng rng(3);
  for (i64 rows : {i64{3000}, i64{1}, i64{100003}, i64{17}}) {
    std::vector<float> b;
    for (i64 r = 0; r < rows; ++r)
      for (int k = 0; k < dim; ++k) b.push_back(centre[k] + spread[k] * rng.normal());
    batches.push_back(std::move(b));
  }
  for (size_t upto = 1; upto <= batches.size(); ++upto) {
    SCOPED_TRACE("after " + std::to_string(upto) + " batches");
    const std::vector<std::vector<float>> some(batches.begin(), batches.begin() + static_cast<long>(upto));
    const twins::MomentsResult ref = twins::run_moments(cpu, dim, some);
    const twins::MomentsResult got = twins::run_moments(exec, dim, some);
    EXPECT_EQ(got.count, ref.count);
    // The sums and the merge are in double and agree to ~1e-15; each merge's float result can
    // still round to a neighbouring float, and the next merge starts from it: a few ulp, 5e-7.
    EXPECT_TRUE(all_close("mean", got.mean.data(), ref.mean.data(), dim, 1e-30, 5e-7));
    EXPECT_TRUE(all_close("var", got.var.data(), ref.var.data(), dim, 1e-30, 5e-7));
  }
}

// ---- select_last_flagged ----------------------------------------------------------------------------

TEST(CudaLearnerTwins, SelectLastFlaggedMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  const double sentinel = -12345.0;  // slots past min(count, k) must stay untouched on both sides
  for (i64 n : {i64{0}, i64{1}, i64{256}, i64{257}, i64{100003}}) {
    for (float density : {0.0f, 0.03f, 0.5f, 1.0f}) {
      TestRng rng(4 + static_cast<u32>(n) * 7 + static_cast<u32>(density * 100));
      std::vector<std::uint8_t> flags;
      std::vector<float> a;
      std::vector<std::int32_t> b;
      i64 count = 0;
      for (i64 i = 0; i < n; ++i) {
        const bool f = rng.bernoulli(density);
        count += f;
        flags.push_back(f ? static_cast<std::uint8_t>(1 + (i % 3)) : 0);  // any nonzero byte is a flag
        a.push_back(rng.uniform(-500.0f, 500.0f));
        b.push_back(static_cast<std::int32_t>(i));
      }
      for (i64 k : {i64{0}, i64{1}, i64{7}, count, count + 5, n + 10}) {
        SCOPED_TRACE("n " + std::to_string(n) + ", density " + std::to_string(density) + ", count " +
                     std::to_string(count) + ", k " + std::to_string(k));
        const twins::SelectResult ref = twins::run_select_last_flagged(cpu, flags, a, b, k, sentinel);
        const twins::SelectResult got = twins::run_select_last_flagged(exec, flags, a, b, k, sentinel);
        EXPECT_EQ(ref.count, static_cast<double>(count));
        // Integer work and exact float -> double conversions: bit for bit.
        EXPECT_EQ(got.count, ref.count);
        EXPECT_EQ(got.a, ref.a);
        EXPECT_EQ(got.b, ref.b);
      }
    }
  }
}

// ---- SampleAction -----------------------------------------------------------------------------------

// logp tolerance: logp = logit[a] - logsumexp (categorical) or a sum of -log_std - 0.92 terms
// (Gaussian at its mode); expf/logf differ by <= 2 ulp and FMA removes roundings, on values of
// magnitude <= ~8 here: a few ulp of 8 is ~3e-6; atol 1e-5, rtol 1e-6.
constexpr double kLogpAtol = 1e-5;
constexpr double kLogpRtol = 1e-6;

TEST(CudaLearnerTwins, SampleActionDeterministicMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  const i64 rows = 1001;
  for (bool discrete : {true, false}) {
    for (int dim : {1, 2, 3, 6, 16}) {
      if (discrete && dim == 1) continue;
      twins::SampleCase c;
      c.rows = rows;
      c.discrete = discrete;
      c.head_dim = dim;
      c.act_dim = discrete ? 1 : dim;
      c.deterministic = true;
      c.seed = 77;
      c.step = 5;
      TestRng rng(5 + static_cast<u32>(dim) + (discrete ? 100u : 0u));
      for (i64 r = 0; r < rows; ++r)
        for (int j = 0; j < dim; ++j)
          c.head.push_back(r % 10 == 0 ? 0.25f : rng.uniform(-3.0f, 3.0f));  // every 10th row: all tied
      for (int k = 0; k < std::max(1, c.act_dim); ++k) c.log_std.push_back(rng.uniform(-1.5f, 0.5f));
      SCOPED_TRACE(std::string(discrete ? "discrete, " : "continuous, ") + std::to_string(dim));
      const twins::SampleResult ref = twins::run_sample_action(cpu, c);
      const twins::SampleResult got = twins::run_sample_action(exec, c);
      // The mode: an argmax (first of equals) over the same floats, or the mean itself: exact.
      EXPECT_EQ(got.action, ref.action);
      EXPECT_TRUE(all_close("logp", got.logp.data(), ref.logp.data(), ref.logp.size(), kLogpAtol, kLogpRtol));
    }
  }
}

// Sampled continuous actions, mean + exp(log_std) * z, z from Box-Muller on the same Philox bits:
// sqrtf/logf/sinf/cosf and expf within 2 ulp on each side; |action| < ~10 here: atol 1e-5, rtol 1e-5.
// (Sampled discrete actions are not compared: Gumbel-max on logits that differ by an ulp may pick
// the other action where two perturbed logits tie to within that ulp.)
TEST(CudaLearnerTwins, SampleActionGaussianMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  for (int dim : {1, 3, 6}) {
    twins::SampleCase c;
    c.rows = 2049;
    c.discrete = false;
    c.head_dim = c.act_dim = dim;
    c.deterministic = false;
    c.seed = 1234;
    c.step = 99;
    TestRng rng(6 + static_cast<u32>(dim));
    for (i64 r = 0; r < c.rows * dim; ++r) c.head.push_back(rng.uniform(-2.0f, 2.0f));
    for (int k = 0; k < dim; ++k) c.log_std.push_back(rng.uniform(-1.5f, 0.5f));
    SCOPED_TRACE("act_dim " + std::to_string(dim));
    const twins::SampleResult ref = twins::run_sample_action(cpu, c);
    const twins::SampleResult got = twins::run_sample_action(exec, c);
    EXPECT_TRUE(all_close("action", got.action.data(), ref.action.data(), ref.action.size(), 1e-5, 1e-5));
    // logp of a sample: -0.5 z^2 terms of the (slightly different) samples: atol 1e-4.
    EXPECT_TRUE(all_close("logp", got.logp.data(), ref.logp.data(), ref.logp.size(), 1e-4, 1e-5));
  }
}

// ---- NormalizeObs -----------------------------------------------------------------------------------

TEST(CudaLearnerTwins, NormalizeObsMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  const int dim = 7;
  const i64 rows = 3001;
  TestRng rng(7);
  std::vector<float> mean, var, x;
  for (int k = 0; k < dim; ++k) {
    mean.push_back(rng.uniform(-3.0f, 3.0f));
    var.push_back(k == 0 ? 0.0f : rng.uniform(1e-4f, 10.0f));  // a constant feature: var 0
  }
  for (i64 i = 0; i < rows * dim; ++i) x.push_back(30.0f * rng.normal());  // many values past the clip
  for (bool enabled : {true, false}) {
    SCOPED_TRACE(enabled ? "enabled" : "disabled");
    const std::vector<float> ref = twins::run_normalize_obs(cpu, x, mean, var, 5.0f, enabled);
    const std::vector<float> got = twins::run_normalize_obs(exec, x, mean, var, 5.0f, enabled);
    // One subtraction, a correctly rounded sqrtf and division on both sides, nothing to fuse: the
    // same bits are expected; 2 ulp (2.4e-7) allowed in case nvcc forms a reciprocal square root.
    EXPECT_TRUE(all_close("normalized obs", got.data(), ref.data(), ref.size(), 0.0, 2.4e-7));
  }
}

// ---- one PPO minibatch update through ActorCritic --------------------------------------------------------

struct UpdateCase {
  PolicySpec spec;
  twins::MinibatchHost mb;
  PpoCoefs<float> coefs{0.2f, 0.5f, 0.01f, true, true};
  twins::AdamHyper hyper;
  twins::AdamState state;
};

// A minibatch as PPO sees it in mid-training: weights from the initial scheme plus noise, actions
// and their log-probs sampled from the policy on the CPU, old log-probs and old values offset from
// the current ones so that some ratios and value deltas are clipped. Samples that sit within
// 2e-3 of a branch point of the loss (a ratio at 1 +- clip, a clipped value loss equal to the
// unclipped one) are redrawn: there the two sides may take different branches of a piecewise
// gradient, and a 1e-7 difference would turn into a whole sample's contribution.
UpdateCase make_update_case(bool discrete, i64 rows) {
  UpdateCase c;
  PolicySpec& s = c.spec;
  s.obs_dim = discrete ? 4 : 3;
  s.discrete = discrete;
  s.act_dim = discrete ? 1 : 3;
  s.num_actions = discrete ? 5 : 0;
  s.hidden = discrete ? std::vector<int>{64, 64} : std::vector<int>{32, 16};
  s.act = discrete ? Activation::kTanh : Activation::kElu;
  CpuExecutor cpu(2);
  ActorCritic<float, CpuExecutor> ac(s, rows, cpu);
  TestRng rng(discrete ? 11 : 12);
  c.state.params = ac.initial_params(3, -0.5);
  for (float& p : c.state.params) p += 0.05f * rng.normal();
  const i64 np = ac.num_params();
  for (i64 i = 0; i < np; ++i) {
    c.state.m.push_back(1e-3f * rng.normal());
    c.state.v.push_back(rng.uniform(1e-6f, 1e-4f));
  }
  c.hyper.step = 10;
  twins::MinibatchHost& mb = c.mb;
  mb.rows = rows;
  for (i64 i = 0; i < rows * s.obs_dim; ++i) mb.obs.push_back(rng.normal());
  const float* head = ac.actor_forward(cpu, c.state.params.data(), mb.obs.data(), rows);
  const std::vector<float> head_h(head, head + rows * s.head_dim());
  const float* value = ac.critic_forward(cpu, c.state.params.data(), mb.obs.data(), rows);
  const std::vector<float> value_h(value, value + rows);
  mb.action.assign(static_cast<size_t>(rows * s.act_dim), 0.0f);
  std::vector<float> logp(static_cast<size_t>(rows));
  parallel_for(cpu, rows,
               SampleAction{head_h.data(), c.state.params.data() + ac.log_std_offset(), mb.action.data(), logp.data(),
                            s.head_dim(), s.act_dim, s.discrete, false, 42, 0});
  const float clip = c.coefs.clip_coef;
  for (i64 i = 0; i < rows; ++i) {
    float log_ratio;  // logp - old_logp
    do {
      log_ratio = 0.15f * rng.normal();
    } while (std::abs(std::exp(log_ratio) - (1.0f + clip)) < 2e-3f ||
             std::abs(std::exp(log_ratio) - (1.0f - clip)) < 2e-3f);
    mb.old_logp.push_back(logp[static_cast<size_t>(i)] - log_ratio);
    mb.advantage.push_back(2.0f * rng.normal() + 0.3f);
    const float v = value_h[static_cast<size_t>(i)];
    float old_v, r;
    for (;;) {
      const float off =
          i % 2 ? rng.uniform(-0.15f, 0.15f) : (rng.bernoulli(0.5f) ? 1.0f : -1.0f) * rng.uniform(0.3f, 1.0f);
      old_v = v - off;  // v - old_v = off
      r = v + rng.normal();
      // Inside the clip range both value losses are the same function; outside, the larger one
      // is taken, so it must not be a near tie.
      const float vc = old_v + std::clamp(v - old_v, -clip, clip);
      const bool inside = std::abs(v - old_v) < clip - 2e-3f;
      const bool outside = std::abs(v - old_v) > clip + 2e-3f;
      if (inside || (outside && std::abs(std::abs(vc - r) - std::abs(v - r)) > 2e-3f)) break;
    }
    mb.old_value.push_back(old_v);
    mb.ret.push_back(r);
  }
  return c;
}

// Tolerances of the update (fp32 GEMMs):
//   gradients  rtol 1e-4, atol 1e-5 * max|g|: each entry is a sum over 512 rows (a GEMM over the
//              batch) of products that both sides round differently (FMA, expf, the order of the
//              sum): ~1e-6 of the summed magnitudes. An entry whose terms cancel keeps that absolute
//              error, bounded by the largest entries of the gradient, hence the atol.
//   stat sums  rtol 1e-5 of the sum of |terms| (approximated by rows * the mean magnitude), no
//              sample near a branch point (see make_update_case), so clip counts are exact.
//   params     rtol 1e-4 after one Adam step; the step is ~1e-4 of |p| and agrees to ~1e-4 of
//              itself, so the params agree to ~1e-8.
// An emulation on the CPU (this code built without and with FMA contraction and AVX2 GEMM kernels)
// used at most 2% of each of these tolerances.
void check_update(bool discrete) {
  CudaExecutor exec;
  ASSERT_EQ(exec.gemm_precision(), GemmPrecision::kFp32) << "fp32 GEMMs: reduced precision must be off by default";
  CpuExecutor cpu(2);
  const i64 rows = 512;
  const UpdateCase c = make_update_case(discrete, rows);
  const twins::UpdateResult ref = twins::run_update(cpu, c.spec, c.mb, c.coefs, c.hyper, c.state);
  const twins::UpdateResult got = twins::run_update(exec, c.spec, c.mb, c.coefs, c.hyper, c.state);
  ASSERT_EQ(got.grads.size(), ref.grads.size());
  const double gmax = max_abs(ref.grads);
  ASSERT_GT(gmax, 0.0);
  EXPECT_TRUE(all_close("gradient", got.grads.data(), ref.grads.data(), ref.grads.size(), 1e-5 * gmax, 1e-4));
  EXPECT_NEAR(got.grad_sq, ref.grad_sq, 2e-4 * ref.grad_sq);  // 2 x the gradients' relative tolerance
  const char* names[kNumPpoStats] = {"policy loss", "value loss", "entropy", "approx kl", "clip fraction"};
  for (int s = 0; s < kNumPpoStats; ++s) {
    SCOPED_TRACE(names[s]);
    if (s == kStatClipFrac) {
      EXPECT_EQ(got.stat_sums[s], ref.stat_sums[s]) << "a count of clipped samples, none near the edge";
      EXPECT_GT(ref.stat_sums[s], 0.0) << "the case should clip some ratios";
      continue;
    }
    // Sum of |terms| ~ rows * typical |term|; the terms are O(0.01 .. 5).
    EXPECT_NEAR(got.stat_sums[s], ref.stat_sums[s], 1e-5 * (std::abs(ref.stat_sums[s]) + static_cast<double>(rows)));
  }
  EXPECT_TRUE(all_close("params after Adam", got.after.params.data(), ref.after.params.data(), ref.after.params.size(),
                        1e-9, 1e-4));
  EXPECT_TRUE(all_close("Adam m", got.after.m.data(), ref.after.m.data(), ref.after.m.size(), 1e-5 * 0.1 * gmax, 1e-4));
  // v = beta2 v + (1 - beta2) g^2: g's absolute tolerance enters as (1 - beta2) * 2|g| * atol_g.
  EXPECT_TRUE(
      all_close("Adam v", got.after.v.data(), ref.after.v.data(), ref.after.v.size(), 2e-8 * gmax * gmax, 2e-4));
}

TEST(CudaLearnerTwins, OnePpoUpdateDiscreteHeadMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  check_update(true);
}

TEST(CudaLearnerTwins, OnePpoUpdateContinuousHeadMatchesTheCpu) {
  RLT_REQUIRE_GPU();
  check_update(false);
}

}  // namespace
}  // namespace rlt
