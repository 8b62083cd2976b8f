// Reduced-precision GEMMs on the CPU (issue 18): the rounding of sim/precision.h bit for bit, the
// CPU twin of cuBLAS's reduced compute types (rl/gemm.h) against fp32 within the formats' error
// bound (tests/rl/gemm_error_bound.h), and what bf16 GEMMs do to one PPO iteration of CartPole and
// of the Ant against fp32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "apps/runtime.h"
#include "envs/registry.h"
#include "rl/actor_critic.h"
#include "rl/config.h"
#include "rl/gemm.h"
#include "sim/precision.h"
#include "tests/rl/gemm_error_bound.h"

#ifndef RLT_SOURCE_DIR
#error "RLT_SOURCE_DIR (the project root, for configs/) must be defined by the build"
#endif

namespace rlt {
namespace {

float from_bits(u32 u) { return float_from_bits(u); }
u32 bits_of(float x) { return float_bits(x); }

// Rounding to `p` of the float with bits `in` gives the float with bits `out` (compared as bits, so
// the sign of zero counts).
#define EXPECT_ROUNDS(p, in, out)                                                                                     \
  EXPECT_EQ(bits_of(round_to(from_bits(in), p)), static_cast<u32>(out))                                               \
      << gemm_precision_name(p) << ": 0x" << std::hex << (in) << " (" << from_bits(in) << ") should give 0x" << (out) \
      << " (" << from_bits(out) << ")"

TEST(Precision, NamesAndUnitRoundoff) {
  for (GemmPrecision p : {GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kBf16, GemmPrecision::kFp16}) {
    GemmPrecision back = GemmPrecision::kFp32;
    EXPECT_TRUE(parse_gemm_precision(gemm_precision_name(p), &back));
    EXPECT_EQ(back, p);
  }
  GemmPrecision untouched = GemmPrecision::kBf16;
  EXPECT_FALSE(parse_gemm_precision("fp8", &untouched));
  EXPECT_FALSE(parse_gemm_precision("BF16", &untouched));
  EXPECT_EQ(untouched, GemmPrecision::kBf16);
  EXPECT_EQ(gemm_unit_roundoff(GemmPrecision::kBf16), std::ldexp(1.0, -8));
  EXPECT_EQ(gemm_unit_roundoff(GemmPrecision::kTf32), std::ldexp(1.0, -11));
  EXPECT_EQ(gemm_unit_roundoff(GemmPrecision::kFp16), std::ldexp(1.0, -11));
  EXPECT_EQ(gemm_unit_roundoff(GemmPrecision::kFp32), std::ldexp(1.0, -24));
}

// bfloat16 keeps the top 16 bits: 7 mantissa bits, fp32's exponents.
TEST(Precision, Bf16KnownBitPatterns) {
  const GemmPrecision p = GemmPrecision::kBf16;
  EXPECT_ROUNDS(p, 0x3f800000u, 0x3f800000u);  // 1 is exact
  EXPECT_ROUNDS(p, 0x3f808000u, 0x3f800000u);  // 1 + 2^-8: a tie, to the even 1
  EXPECT_ROUNDS(p, 0x3f818000u, 0x3f820000u);  // 1 + 3 2^-8: a tie, to the even 1 + 2^-6
  EXPECT_ROUNDS(p, 0x3f808001u, 0x3f810000u);  // just above the tie: up
  EXPECT_ROUNDS(p, 0x3f807fffu, 0x3f800000u);  // just below it: down
  EXPECT_ROUNDS(p, 0xbf808001u, 0xbf810000u);  // the sign is kept, magnitudes round the same
  EXPECT_ROUNDS(p, 0x3fffffffu, 0x40000000u);  // the carry raises the exponent: 2 - 2^-23 -> 2
  EXPECT_ROUNDS(p, 0x3eaaaaabu, 0x3eab0000u);  // 1/3 -> 0.333984375
  EXPECT_ROUNDS(p, 0x7f7fffffu, 0x7f800000u);  // FLT_MAX is above the top bf16 + half an ulp: inf
  EXPECT_ROUNDS(p, 0x7f7f7fffu, 0x7f7f0000u);  // below that half ulp: the largest bf16
  EXPECT_ROUNDS(p, 0x7f7f8000u, 0x7f800000u);  // the tie at the top: to even, which is inf
  EXPECT_ROUNDS(p, 0x00008000u, 0x00000000u);  // fp32 subnormals round on the same grid: tie to 0
  EXPECT_ROUNDS(p, 0x00018000u, 0x00020000u);  // tie to even 2 (x 2^-133)
  EXPECT_ROUNDS(p, 0x007fffffu, 0x00800000u);  // the largest subnormal up to the smallest normal
  EXPECT_ROUNDS(p, 0x80000000u, 0x80000000u);  // -0 stays -0
  EXPECT_ROUNDS(p, 0x7f800000u, 0x7f800000u);  // inf
  EXPECT_ROUNDS(p, 0xff800000u, 0xff800000u);  // -inf
  EXPECT_ROUNDS(p, 0x7fc00001u, 0x7fc00001u);  // NaN passes through untouched
  EXPECT_ROUNDS(p, 0x7f800001u, 0x7f800001u);  // a NaN that truncation would turn into inf
}

// TF32: 10 mantissa bits, fp32's exponents.
TEST(Precision, Tf32KnownBitPatterns) {
  const GemmPrecision p = GemmPrecision::kTf32;
  EXPECT_ROUNDS(p, 0x3f801000u, 0x3f800000u);  // 1 + 2^-11: a tie, to the even 1
  EXPECT_ROUNDS(p, 0x3f803000u, 0x3f804000u);  // 1 + 3 2^-11: a tie, to the even 1 + 2^-9
  EXPECT_ROUNDS(p, 0x3f801001u, 0x3f802000u);
  EXPECT_ROUNDS(p, 0x3f800fffu, 0x3f800000u);
  EXPECT_ROUNDS(p, 0x3eaaaaabu, 0x3eaaa000u);  // 1/3 -> 0.333251953125 (as fp16, other exponents)
  EXPECT_ROUNDS(p, 0xc0490fdbu, 0xc0490000u);  // -pi -> -3.140625
  EXPECT_ROUNDS(p, 0x7f7fffffu, 0x7f800000u);  // FLT_MAX: inf
  EXPECT_ROUNDS(p, 0x7f7fefffu, 0x7f7fe000u);  // the largest TF32
  EXPECT_ROUNDS(p, 0x00001000u, 0x00000000u);  // subnormal tie to 0
  EXPECT_ROUNDS(p, 0x00003000u, 0x00004000u);  // subnormal tie to even
  EXPECT_ROUNDS(p, 0x80000000u, 0x80000000u);
  EXPECT_ROUNDS(p, 0xff800000u, 0xff800000u);
}

// IEEE binary16: 10 mantissa bits, normal 2^-14..65504, subnormal steps of 2^-24.
TEST(Precision, Fp16KnownBitPatternsOverflowAndSubnormals) {
  const GemmPrecision p = GemmPrecision::kFp16;
  EXPECT_ROUNDS(p, 0x3f801000u, 0x3f800000u);  // 1 + 2^-11: tie to even 1
  EXPECT_ROUNDS(p, 0x3f803000u, 0x3f804000u);  // tie to even 1 + 2^-9
  EXPECT_ROUNDS(p, 0x3eaaaaabu, 0x3eaaa000u);  // 1/3 -> fp16 0x3555 = 0.333251953125
  EXPECT_ROUNDS(p, 0x477fe000u, 0x477fe000u);  // 65504, the largest fp16
  EXPECT_ROUNDS(p, 0x477fefffu, 0x477fe000u);  // just below 65520: down to 65504
  EXPECT_ROUNDS(p, 0x477ff000u, 0x7f800000u);  // 65520: a tie between 65504 (odd) and 2^16: inf
  EXPECT_ROUNDS(p, 0xc77ff000u, 0xff800000u);  // -65520: -inf
  EXPECT_ROUNDS(p, 0x47c35000u, 0x7f800000u);  // 1e5: inf
  EXPECT_ROUNDS(p, 0x7f7fffffu, 0x7f800000u);  // FLT_MAX: inf
  EXPECT_ROUNDS(p, 0x38800000u, 0x38800000u);  // 2^-14, the smallest normal
  EXPECT_ROUNDS(p, 0x387fc000u, 0x387fc000u);  // 2^-14 - 2^-24, the largest subnormal
  EXPECT_ROUNDS(p, 0x387fe000u, 0x38800000u);  // 2^-14 - 2^-25: a tie between 1023 (odd) and 1024 steps: up
  EXPECT_ROUNDS(p, 0x33800000u, 0x33800000u);  // 2^-24, the smallest subnormal
  EXPECT_ROUNDS(p, 0x33000000u, 0x00000000u);  // 2^-25: a tie between 0 and 2^-24: to 0
  EXPECT_ROUNDS(p, 0xb3000000u, 0x80000000u);  // -2^-25: -0
  EXPECT_ROUNDS(p, 0x33000001u, 0x33800000u);  // just above: 2^-24
  EXPECT_ROUNDS(p, 0x32ffffffu, 0x00000000u);  // just below: 0
  EXPECT_ROUNDS(p, 0x33c00000u, 0x34000000u);  // 1.5 steps: a tie, to the even 2 steps (2^-23)
  EXPECT_ROUNDS(p, 0x34200000u, 0x34000000u);  // 2.5 steps: a tie, to the even 2 steps
  EXPECT_ROUNDS(p, 0x34600000u, 0x34800000u);  // 3.5 steps: a tie, to the even 4 steps (2^-22)
  EXPECT_ROUNDS(p, 0x34a00000u, 0x34a00000u);  // 5 steps: exact
  EXPECT_ROUNDS(p, 0x35a00000u, 0x35a00000u);  // 20 steps (1.25 2^-20): exact
  EXPECT_ROUNDS(p, 0x35a10000u, 0x35a00000u);  // 20.125 steps: down
  EXPECT_ROUNDS(p, 0x35a30000u, 0x35a00000u);  // 20.375 steps: down
  EXPECT_ROUNDS(p, 0x35a50000u, 0x35a80000u);  // 20.625 steps: up to 21
  EXPECT_ROUNDS(p, 0x00000001u, 0x00000000u);  // fp32 subnormals: 0
  EXPECT_ROUNDS(p, 0x80000001u, 0x80000000u);
  EXPECT_ROUNDS(p, 0x7f800000u, 0x7f800000u);
  EXPECT_ROUNDS(p, 0x7fc00000u, 0x7fc00000u);
}

// x rounded to `bits` significant bits (implicit bit included), to nearest even, through double
// arithmetic: an independent reference for normal results within the exponent range.
double round_significant(double x, int bits) {
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m 2^e, 0.5 <= |m| < 1
  return std::ldexp(std::nearbyint(std::ldexp(m, bits)), e - bits);
}

// Every 251st fp32 bit pattern (17 million values, every exponent) against the double reference
// (normal results of bf16 and TF32), and against the compiler's _Float16 conversion where it has one.
TEST(Precision, SweepAgainstIndependentReferences) {
  i64 checked = 0, checked_fp16 = 0;
  for (u64 u = 0; u <= 0xffffffffull; u += 251) {
    const float x = from_bits(static_cast<u32>(u));
    if (!std::isfinite(x)) continue;
    const double ax = std::abs(static_cast<double>(x));
    // bf16 and TF32 results are normal above 2^-126; below, they are on the subnormal grid (tested above).
    if (ax >= std::ldexp(1.0, -126)) {
      const double want_bf16 = round_significant(x, 8), want_tf32 = round_significant(x, 11);
      const float got_bf16 = round_to_bf16(x), got_tf32 = round_to_tf32(x);
      if (std::abs(want_bf16) < std::ldexp(1.0, 128)) ASSERT_EQ(static_cast<double>(got_bf16), want_bf16) << x;
      else ASSERT_TRUE(std::isinf(got_bf16)) << x;
      if (std::abs(want_tf32) < std::ldexp(1.0, 128)) ASSERT_EQ(static_cast<double>(got_tf32), want_tf32) << x;
      else ASSERT_TRUE(std::isinf(got_tf32)) << x;
      ++checked;
    }
#if defined(__FLT16_MAX__)
    const _Float16 h = static_cast<_Float16>(x);
    ASSERT_EQ(bits_of(round_to_fp16(x)), bits_of(static_cast<float>(h))) << std::hexfloat << x;
    ++checked_fp16;
#endif
  }
  EXPECT_GT(checked, 10000000);
#if defined(__FLT16_MAX__)
  EXPECT_GT(checked_fp16, 16000000);
#else
  std::printf("no _Float16 in this compiler: fp16 checked by the bit patterns only\n");
#endif
}

// ---- the CPU twin's gemm ------------------------------------------------------------------------

std::vector<float> random_matrix(i64 count, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<float> rounded(const std::vector<float>& x, GemmPrecision p) {
  std::vector<float> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = round_to(x[i], p);
  return r;
}

struct Shape {
  i64 m, n, k;
};
// Odd sizes; a long k with a small C (the split-k path: m < 512, k > 1024); many rows (row blocks, m > 256).
const Shape kShapes[] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {64, 1, 129}, {300, 7, 1031}, {513, 129, 31}};
const GemmPrecision kReduced[] = {GemmPrecision::kTf32, GemmPrecision::kBf16, GemmPrecision::kFp16};

// At a reduced precision the gemm is exactly the fp32 gemm of the rounded inputs, whatever the
// transposes, alpha and beta, and the thread count.
TEST(GemmTwin, IsTheFp32GemmOfTheRoundedInputs) {
  CpuExecutor fp32(2);
  for (GemmPrecision p : kReduced)
    for (int threads : {1, 3})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (const Shape& s : kShapes) {
            CpuExecutor exec(threads);
            exec.set_gemm_precision(p);
            const auto a = random_matrix(s.m * s.k, 1), b = random_matrix(s.k * s.n, 2);
            const auto c0 = random_matrix(s.m * s.n, 3);
            std::vector<float> got = c0, want = c0;
            gemm(exec, ta, tb, s.m, s.n, s.k, 0.75f, a.data(), b.data(), -1.25f, got.data());
            const auto ra = rounded(a, p), rb = rounded(b, p);
            gemm(fp32, ta, tb, s.m, s.n, s.k, 0.75f, ra.data(), rb.data(), -1.25f, want.data());
            ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
                << gemm_precision_name(p) << " " << s.m << "x" << s.n << "x" << s.k << " ta " << ta << " tb " << tb
                << " threads " << threads;
            // and the inputs are left as they were (the rounding goes to scratch)
            ASSERT_EQ(a, random_matrix(s.m * s.k, 1));
          }
}

// Back at fp32 the gemm is bit for bit a fresh executor's; copies share the setting.
TEST(GemmTwin, Fp32AfterReducedIsUntouchedAndCopiesShareTheSetting) {
  CpuExecutor fresh(2), exec(2);
  const Shape s{300, 7, 1031};
  const auto a = random_matrix(s.m * s.k, 4), b = random_matrix(s.k * s.n, 5);
  std::vector<float> want(static_cast<size_t>(s.m * s.n)), got = want, bf16 = want;
  CpuExecutor copy = exec;
  copy.set_gemm_precision(GemmPrecision::kBf16);
  EXPECT_EQ(exec.gemm_precision(), GemmPrecision::kBf16) << "a copy shares the setting (as the CUDA executor's)";
  gemm(exec, false, false, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, bf16.data());
  exec.set_gemm_precision(GemmPrecision::kFp32);
  gemm(fresh, false, false, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, want.data());
  gemm(exec, false, false, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, got.data());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
  EXPECT_NE(0, std::memcmp(bf16.data(), want.data(), got.size() * sizeof(float))) << "bf16 changed nothing";
  EXPECT_EQ(CpuExecutor(1).gemm_precision(), GemmPrecision::kFp32) << "fp32 by default";
}

// Against fp32 within the bound of tests/rl/gemm_error_bound.h: |C_p - C_fp32| <= bound_p + bound_fp32,
// each against the exact product, with the fp32 sums' eps = 2^-24. The bound is not loose: on one
// product per element (k = 1) the error reaches most of it, and the reduced error is far above fp32's.
TEST(GemmTwin, WithinTheFormatsErrorBoundOfFp32AndNotTriviallySo) {
  const double eps = std::ldexp(1.0, -24);
  const Shape shapes[] = {{64, 64, 1}, {33, 17, 64}, {64, 48, 512}, {300, 7, 1031}};
  CpuExecutor fp32(2);
  for (GemmPrecision p : kReduced) {
    double worst_ratio_k1 = 0.0, worst_err_p = 0.0, worst_err_fp32 = 0.0;
    for (bool ta : {false, true})
      for (const Shape& s : shapes) {
        const auto a = random_matrix(s.m * s.k, 11 + static_cast<unsigned>(s.k)),
                   b = random_matrix(s.k * s.n, 12 + static_cast<unsigned>(s.k));
        CpuExecutor exec(2);
        exec.set_gemm_precision(p);
        std::vector<float> c_p(static_cast<size_t>(s.m * s.n)), c_32 = c_p;
        gemm(exec, ta, !ta, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, c_p.data());
        gemm(fp32, ta, !ta, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, c_32.data());
        const test::GemmReference rp = test::gemm_reference(ta, !ta, s.m, s.n, s.k, a.data(), b.data(), p, eps);
        const test::GemmReference r32 =
            test::gemm_reference(ta, !ta, s.m, s.n, s.k, a.data(), b.data(), GemmPrecision::kFp32, eps);
        for (size_t i = 0; i < c_p.size(); ++i) {
          const double err = std::abs(static_cast<double>(c_p[i]) - c_32[i]);
          const double bound = rp.bound[i] + r32.bound[i];
          ASSERT_LE(err, bound) << gemm_precision_name(p) << " " << s.m << "x" << s.n << "x" << s.k << " [" << i << "]";
          ASSERT_LE(std::abs(c_p[i] - rp.exact[i]), rp.bound[i]);
          ASSERT_LE(std::abs(c_32[i] - r32.exact[i]), r32.bound[i]);
          worst_err_p = std::max(worst_err_p, std::abs(c_p[i] - rp.exact[i]) / rp.bound[i]);
          worst_err_fp32 = std::max(worst_err_fp32, std::abs(c_32[i] - r32.exact[i]) / rp.bound[i]);
          if (s.k == 1) worst_ratio_k1 = std::max(worst_ratio_k1, std::abs(c_p[i] - rp.exact[i]) / rp.bound[i]);
        }
      }
    std::printf("%s: worst |C - exact| / bound %.3f (k = 1: %.3f); fp32's worst error / the same bound %.2e\n",
                gemm_precision_name(p), worst_err_p, worst_ratio_k1, worst_err_fp32);
    // One product per element: |d_a + d_b| of 4096 random pairs comes near its bound 2u.
    EXPECT_GT(worst_ratio_k1, 0.5) << gemm_precision_name(p) << ": the bound is loose";
    // And the reduced inputs really are reduced: fp32 errs at least 30 times less.
    EXPECT_GT(worst_err_p, 30 * worst_err_fp32) << gemm_precision_name(p);
  }
}

// fp16's narrow range reaches the gemm: an input above 65504 becomes inf, inputs below 2^-25
// vanish; bf16 keeps both (fp32's exponents).
TEST(GemmTwin, Fp16RangeReachesTheProduct) {
  const std::vector<float> a = {70000.0f, 1e-8f};  // (2 x 1)
  const std::vector<float> b = {1.0f, 2.0f};       // (1 x 2)
  CpuExecutor exec(1);
  exec.set_gemm_precision(GemmPrecision::kFp16);
  std::vector<float> c(4);
  gemm(exec, false, false, 2, 2, 1, 1.0f, a.data(), b.data(), 0.0f, c.data());
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(c, (std::vector<float>{inf, inf, 0.0f, 0.0f}));
  exec.set_gemm_precision(GemmPrecision::kBf16);
  gemm(exec, false, false, 2, 2, 1, 1.0f, a.data(), b.data(), 0.0f, c.data());
  const float big = round_to_bf16(70000.0f), small = round_to_bf16(1e-8f);
  EXPECT_EQ(c, (std::vector<float>{big, 2 * big, small, 2 * small}));
  EXPECT_EQ(big, 70144.0f);  // 70000 = 1.068 2^16: the bf16 step there is 2^9
}

// |x - y| (2-norm).
double norm(const std::vector<float>& x, const std::vector<float>& y) {
  double s = 0.0;
  for (size_t i = 0; i < x.size(); ++i) s += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
  return std::sqrt(s);
}

// ---- the PPO loss gradient in bf16 against fp32, on one minibatch ------------------------------------

// The PPO loss gradient of `env_name`'s shipped policy at precision p on one minibatch of `rows`
// observations of the env (after a few random steps, normalized by their own moments as the
// learner's running normalizer would), from the initial weights moved by up to +-0.1 each (a policy
// some way into training: the initial actor output layer is nearly zero). Everything but p is
// fixed, so the two gradients differ only by the GEMMs' rounding.
std::vector<float> loss_gradient(const std::string& env_name, GemmPrecision p, i64 rows) {
  const Config cfg = load_config(std::string(RLT_SOURCE_DIR) + "/configs/" + env_name + ".toml");
  CpuExecutor exec(2);
  auto env = make_vec_env(env_name, rows, exec);
  env->reset(7);
  for (u32 t = 0; t < 20; ++t) env->step(env->sample_actions(7, t));
  const PolicySpec spec = policy_spec_for(env->spec(), cfg.policy);
  std::vector<float> obs(env->obs(), env->obs() + rows * spec.obs_dim);
  for (int j = 0; j < spec.obs_dim; ++j) {
    double mean = 0, sq = 0;
    for (i64 i = 0; i < rows; ++i)
      mean += obs[i * spec.obs_dim + j], sq += double(obs[i * spec.obs_dim + j]) * obs[i * spec.obs_dim + j];
    mean /= rows;
    const double sd = std::sqrt(std::max(sq / rows - mean * mean, 0.0) + 1e-8);
    for (i64 i = 0; i < rows; ++i)
      obs[i * spec.obs_dim + j] = static_cast<float>((obs[i * spec.obs_dim + j] - mean) / sd);
  }
  CpuExecutor fp32(2);
  ActorCritic<float, CpuExecutor> ref(spec, rows, fp32);
  std::vector<float> params = ref.initial_params(3, cfg.policy.init_log_std);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (float& w : params) w += 0.1f * uni(rng);
  // Actions, old log-probs and values near the fp32 policy's (some ratios clip, some do not).
  std::vector<float> action(static_cast<size_t>(rows * spec.act_dim)), old_logp(rows), adv(rows), ret(rows),
      old_value(rows);
  const float* head = ref.actor_forward(fp32, params.data(), obs.data(), rows);
  const std::vector<float> head_h(head, head + rows * spec.head_dim());
  const float* value = ref.critic_forward(fp32, params.data(), obs.data(), rows);
  for (i64 i = 0; i < rows; ++i) {
    float lp, ent;
    if (spec.discrete) {
      action[i] = static_cast<float>(i % spec.num_actions);
      categorical<float>(head_h.data() + i * spec.num_actions, spec.num_actions, static_cast<int>(action[i]), lp, ent,
                         nullptr, nullptr);
    } else {
      for (int k = 0; k < spec.act_dim; ++k)
        action[i * spec.act_dim + k] = head_h[i * spec.act_dim + k] + 0.5f * uni(rng);
      gaussian<float>(head_h.data() + i * spec.act_dim, params.data() + ref.log_std_offset(),
                      action.data() + i * spec.act_dim, spec.act_dim, lp, ent, nullptr, nullptr);
    }
    // Inside the clip ranges (ratio in [0.95, 1.05], the value within 0.1 of the old one, both
    // clip_coef 0.2 away): the loss is smooth there, so the two gradients differ by the GEMMs'
    // rounding alone, not by a sample that the rounding moves across a clip boundary (which
    // switches its gradient on or off: a real effect of any rounding, but not the one measured here).
    old_logp[i] = lp - 0.05f * uni(rng);
    old_value[i] = value[i] + 0.1f * uni(rng);
    adv[i] = 2.0f * uni(rng) + 0.2f;
    ret[i] = value[i] + uni(rng);
  }
  const MinibatchView<float> mb{obs.data(),       action.data(), old_logp.data(), adv.data(), ret.data(),
                                old_value.data(), rows};
  const PpoCoefs<float> coefs{static_cast<float>(cfg.ppo.clip_coef), static_cast<float>(cfg.ppo.vf_coef),
                              static_cast<float>(cfg.ppo.ent_coef), cfg.ppo.clip_value_loss,
                              cfg.ppo.normalize_advantages};
  CpuExecutor at_p(2);
  at_p.set_gemm_precision(p);
  ActorCritic<float, CpuExecutor> ac(spec, rows, at_p);
  std::vector<float> grads(static_cast<size_t>(ac.num_params()));
  std::vector<double> sums(kNumPpoStats);
  ac.loss_and_grad(at_p, params.data(), mb, coefs, grads.data(), sums.data());
  return grads;
}

// |g_p - g_fp32| / |g_fp32| (2-norms) on a minibatch of the shipped config's size. One GEMM's bf16
// error is at most 2u = 2^-7 (0.8%) of the sum of its terms' magnitudes, and mostly far less (the
// roundings are unbiased and add up like a random walk); the gradient goes through 2 (layers + 1)
// GEMMs each way. Measured: bf16 0.55% (cartpole), 0.63% (ant); tf32 and fp16 0.07-0.075%, the
// ratio of their unit roundoffs (8) as it should be. Tolerance: bf16 within 2% (3x the measured),
// tf32 and fp16 at least 3 times closer than bf16.
// (With samples near the clip boundaries the bf16 gradient of the Ant was 10% off and tf32's 0.07%:
// rounding moves some samples across a boundary, switching their terms on or off. That is what
// bf16 does to a PPO update beyond the GEMM error itself; the minibatch here keeps clear of it.)
TEST(PpoPrecision, LossGradientInReducedPrecisionNearFp32) {
  for (const char* env_name : {"cartpole", "ant"}) {
    const i64 rows = std::string(env_name) == "ant" ? 512 : 128;  // 128 envs x 32 steps / 8; 16 x 32 / 4
    const std::vector<float> g32 = loss_gradient(env_name, GemmPrecision::kFp32, rows);
    double rel[4] = {};
    for (GemmPrecision p : kReduced) {
      const std::vector<float> g = loss_gradient(env_name, p, rows);
      rel[static_cast<int>(p)] = norm(g, g32) / norm(g32, std::vector<float>(g32.size(), 0.0f));
    }
    const double bf16 = rel[static_cast<int>(GemmPrecision::kBf16)], tf32 = rel[static_cast<int>(GemmPrecision::kTf32)],
                 fp16 = rel[static_cast<int>(GemmPrecision::kFp16)];
    std::printf("%s (%lld rows): |g - g_fp32| / |g_fp32|: bf16 %.3g, tf32 %.3g, fp16 %.3g\n", env_name,
                static_cast<long long>(rows), bf16, tf32, fp16);
    EXPECT_LE(bf16, 0.02) << env_name;
    EXPECT_GT(bf16, 1e-4) << env_name << ": bf16 changed next to nothing";
    EXPECT_LT(tf32, bf16 / 3) << env_name;
    EXPECT_LT(fp16, bf16 / 3) << env_name;
  }
}

// ---- one PPO iteration in bf16 against fp32 ------------------------------------------------------

struct Iteration {
  std::vector<float> initial, after;  // the flat parameters before and after
  GemmPrecision exec_precision;       // what the runtime set on its executor
};

// nudge_ulps != 0: the initial weights moved by that many ulps each (an fp32-sized perturbation).
Iteration one_iteration(const std::string& env_name, const std::string& precision, int nudge_ulps = 0) {
  Config cfg = load_config(std::string(RLT_SOURCE_DIR) + "/configs/" + env_name + ".toml");
  cfg.train.seed = 1;
  apply_override(cfg, "ppo.gemm_precision=" + precision);
  validate(cfg);
  Runtime rt("cpu", 2);
  auto env = rt.make_env(cfg);
  env->reset(cfg.train.seed);
  auto learner = rt.make_learner(cfg, *env);
  learner->start(cfg.train.seed);
  auto params = [&] {
    for (NamedArray& a : learner->save())
      if (a.name == "params") return a.f32;
    ADD_FAILURE() << "no params";
    return std::vector<float>();
  };
  if (nudge_ulps != 0) {
    std::vector<NamedArray> state = learner->save();
    for (NamedArray& a : state)
      if (a.name == "params")
        for (float& w : a.f32)
          for (int i = 0; i < std::abs(nudge_ulps); ++i)
            w = std::nextafter(
                w, nudge_ulps > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity());
    learner->load(state, LearnerLoad::kAll);
  }
  Iteration it;
  it.initial = params();
  learner->iterate(1, 1000);
  it.after = params();
  it.exec_precision = rt.cpu().gemm_precision();
  return it;
}

// One iteration of the shipped config, seed 1 (rollout with the bf16 actor, then epochs x
// minibatches of Adam steps on bf16 gradients) against the same in fp32, from the same initial
// weights: the bf16 update (after - initial) must be the fp32 update up to `max_rel` of its norm.
// For scale, the same fp32 iteration from weights 1 ulp off: `max_rel_ulp` bounds how far that
// alone moves the result (how chaotic the rollout and the update are), when given.
void expect_bf16_update_near_fp32(const std::string& env_name, double max_rel, double max_rel_ulp) {
  const Iteration f = one_iteration(env_name, "fp32");
  const Iteration h = one_iteration(env_name, "bf16");
  const Iteration g = one_iteration(env_name, "fp32", 1);
  EXPECT_EQ(f.exec_precision, GemmPrecision::kFp32);
  EXPECT_EQ(h.exec_precision, GemmPrecision::kBf16) << "Runtime::make_learner sets ppo.gemm_precision";
  ASSERT_EQ(f.initial, h.initial) << "the initial weights do not depend on the GEMMs";
  const double update = norm(f.after, f.initial), diff = norm(h.after, f.after), diff_ulp = norm(g.after, f.after);
  std::printf(
      "%s: |update fp32| %.4g, |bf16 - fp32| %.4g (%.3f of the update); fp32 from weights 1 ulp off: %.3g "
      "(%.2g of the update)\n",
      env_name.c_str(), update, diff, diff / update, diff_ulp, diff_ulp / update);
  ASSERT_GT(update, 0.0);
  EXPECT_GT(diff, 0.0) << "bf16 GEMMs changed nothing";
  EXPECT_LE(diff, max_rel * update);
  if (max_rel_ulp > 0) {
    EXPECT_LE(diff_ulp, max_rel_ulp * update);
  }
}

// CartPole: discrete actions keep the rollout the same (a sampled action changes only if its
// probability moves across the uniform draw), and a 1-ulp change of the weights stays 1e-6 of the
// update: the difference is the bf16 GEMMs' in the 16 Adam steps. Measured over seeds 1-5: 0.5%,
// 3.0%, 0.9%, 1.4%, 2.7% of the update (seed 1: 0.5%); tolerance 10% (3x the worst seed).
TEST(PpoPrecision, CartPoleBf16IterationNearFp32) { expect_bf16_update_near_fp32("cartpole", 0.1, 1e-4); }

// The Ant: the rollout is chaotic (contacts; continuous actions move with the mean) and the 40 Adam
// steps follow the signs of small gradient components, so a 1-ulp change of the fp32 weights alone
// moves the result by 6-20% of the update (seeds 1-5), and bf16 by 51-57% (seed 1: 53%). Tolerance
// 80%: bf16 stays an update of the same kind (a broken rounding, an overflow or a NaN goes far past
// it: two unrelated updates differ by about 1.4 times their size); the gradient test above is the
// tight check of the GEMMs.
TEST(PpoPrecision, AntBf16IterationNearFp32) { expect_bf16_update_near_fp32("ant", 0.8, 0.0); }

}  // namespace
}  // namespace rlt
