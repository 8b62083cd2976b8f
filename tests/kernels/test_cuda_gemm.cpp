// cuBLAS gemm (kernels/cuda_gemm.h) against the CPU gemm of rl/gemm.h: the same row-major
// semantics for all four transpose combinations, odd sizes, alpha/beta, k == 0, and beta == 0
// ignoring a C full of NaN.
//
// Tolerance: |cuda - cpu| <= 1e-5 * scale, scale = |alpha| sum_p |op(A)_ip op(B)_pj| + |beta C_ij|,
// i.e. 1e-5 relative to the magnitude of the terms summed. Relative to |C_ij| itself would fail
// wherever terms cancel; the two sides sum in different orders (cuBLAS tiles, Eigen's blocks and
// our k-chunks), each with an error of about sqrt(k) * 6e-8 of the scale (2e-6 at k = 1031).
// The reduced precisions (exec.set_gemm_precision: tf32, bf16, fp16) are compared with the CPU twin
// at the same precision within the error bound of tests/rl/gemm_error_bound.h, each side's own
// bound against the exact product added up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cuda_gemm.h"
#include "rl/gemm.h"
#include "sim/philox.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/rl/gemm_error_bound.h"

namespace rlt {
namespace {

using gpu_test::all_close;

std::vector<float> random_matrix(i64 count, u32 tag) {
  std::vector<float> v(static_cast<size_t>(count));
  for (i64 i = 0; i < count; i += 4) {
    Philox rng(99, RngStream::kBench, tag, static_cast<u32>(i / 4));
    float u[4];
    uniform4(rng, -1.0f, 1.0f, u, 4);
    for (i64 j = i; j < std::min(count, i + 4); ++j) v[static_cast<size_t>(j)] = u[j - i];
  }
  return v;
}

struct GemmCase {
  i64 m, n, k;
};

// op(A)_ip and op(B)_pj from row-major storage, as rl/gemm.h defines them.
float op_a(const std::vector<float>& a, bool t, i64 m, i64 k, i64 i, i64 p) {
  return t ? a[static_cast<size_t>(p * m + i)] : a[static_cast<size_t>(i * k + p)];
}
float op_b(const std::vector<float>& b, bool t, i64 k, i64 n, i64 p, i64 j) {
  return t ? b[static_cast<size_t>(j * k + p)] : b[static_cast<size_t>(p * n + j)];
}

// Runs both gemms on the same inputs and compares; C starts as `c0` on both sides.
void check_gemm(const CudaExecutor& exec, const CpuExecutor& cpu, bool ta, bool tb, GemmCase s, float alpha, float beta,
                const std::vector<float>& c0, double rtol) {
  const i64 m = s.m, n = s.n, k = s.k;
  const auto a = random_matrix(m * k, 1 + 4 * static_cast<u32>(m));
  const auto b = random_matrix(k * n, 2 + 4 * static_cast<u32>(n));
  std::vector<float> ref = c0;
  gemm(cpu, ta, tb, m, n, k, alpha, a.data(), b.data(), beta, ref.data());

  DeviceBuffer<float> da(m * k), db(k * n), dc(m * n);
  exec.copy_from_host(da.data(), a.data(), m * k);
  exec.copy_from_host(db.data(), b.data(), k * n);
  exec.copy_from_host(dc.data(), c0.data(), m * n);
  gemm(exec, ta, tb, m, n, k, alpha, da.data(), db.data(), beta, dc.data());
  std::vector<float> got(static_cast<size_t>(m * n));
  exec.copy_to_host(got.data(), dc.data(), m * n);

  std::vector<double> scale(static_cast<size_t>(m * n));
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < n; ++j) {
      double s_ij = 0.0;
      for (i64 p = 0; p < k; ++p)
        s_ij += std::abs(static_cast<double>(op_a(a, ta, m, k, i, p)) * op_b(b, tb, k, n, p, j));
      s_ij *= std::abs(alpha);
      if (beta != 0.0f) s_ij += std::abs(static_cast<double>(beta) * c0[static_cast<size_t>(i * n + j)]);
      scale[static_cast<size_t>(i * n + j)] = s_ij;
    }
  const std::string what = "C (" + std::to_string(m) + "x" + std::to_string(n) + ", k " + std::to_string(k) +
                           ", trans_a " + std::to_string(ta) + ", trans_b " + std::to_string(tb) + ", alpha " +
                           std::to_string(alpha) + ", beta " + std::to_string(beta) + ")";
  EXPECT_TRUE(all_close(what, got.data(), ref.data(), got.size(), 0.0, rtol, [&](size_t idx) { return scale[idx]; }));
}

// Sizes: degenerate, odd, one above and below powers of two, a long k with a small C (the CPU's
// k-chunked path: m < 512, k > 1024), many rows (the CPU's row-block path, m > 256), and k == 0.
const GemmCase kCases[] = {{1, 1, 1},      {3, 5, 7},      {17, 33, 9},    {64, 1, 129}, {1, 65, 300},
                           {127, 255, 63}, {300, 7, 1031}, {513, 129, 31}, {5, 4, 0}};

TEST(CudaGemm, MatchesCpuGemmForAllTransposesAndOddSizes) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  ASSERT_EQ(exec.gemm_precision(), GemmPrecision::kFp32);
  CpuExecutor cpu(2);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const GemmCase& s : kCases) {
        const i64 mn = s.m * s.n;
        // beta == 0 must ignore C entirely, even NaN (BLAS semantics, and rl/gemm.h's).
        check_gemm(exec, cpu, ta, tb, s, 1.0f, 0.0f,
                   std::vector<float>(static_cast<size_t>(mn), std::numeric_limits<float>::quiet_NaN()), 1e-5);
        // alpha and beta both in play.
        check_gemm(exec, cpu, ta, tb, s, 0.75f, -1.25f, random_matrix(mn, 3), 1e-5);
      }
}

// Runs cuBLAS at exec's precision on random a, b (beta 0) and returns C.
std::vector<float> cuda_product(const CudaExecutor& exec, bool ta, bool tb, GemmCase s, const std::vector<float>& a,
                                const std::vector<float>& b) {
  DeviceBuffer<float> da(s.m * s.k), db(s.k * s.n), dc(s.m * s.n);
  exec.copy_from_host(da.data(), a.data(), s.m * s.k);
  exec.copy_from_host(db.data(), b.data(), s.k * s.n);
  gemm(exec, ta, tb, s.m, s.n, s.k, 1.0f, da.data(), db.data(), 0.0f, dc.data());
  std::vector<float> got(static_cast<size_t>(s.m * s.n));
  exec.copy_to_host(got.data(), dc.data(), s.m * s.n);
  return got;
}

// Each precision against the CPU twin at the same precision: |C_cuda - C_twin| <= bound_cuda +
// bound_twin, each the bound on |C - exact| of tests/rl/gemm_error_bound.h, the twin's with fp32
// sums (eps 2^-24), cuBLAS's with eps 2^-23 (tensor cores may truncate in their sums). cuBLAS may
// round to TF32 where bf16 or fp16 is allowed (cublas_api.h: FAST_16BF "allows down-converting
// inputs to bfloat16 or TF32"): a finer rounding, inside the same bound. On the largest case the
// rounding must show (error at least 10x fp32's): the compute type takes effect. Then back to fp32.
TEST(CudaGemm, ReducedPrecisionsMatchTheCpuTwinWithinTheFormatBound) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  ASSERT_EQ(exec.gemm_precision(), GemmPrecision::kFp32);
  const GemmCase cases[] = {{3, 5, 7}, {17, 33, 9}, {127, 255, 63}, {300, 7, 1031}, {256, 192, 512}};
  const GemmCase big = cases[4];
  const auto a_big = random_matrix(big.m * big.k, 21), b_big = random_matrix(big.k * big.n, 22);
  const test::GemmReference ref32 =
      test::gemm_reference(false, true, big.m, big.n, big.k, a_big.data(), b_big.data(), GemmPrecision::kFp32, 0x1p-23);
  auto worst_error = [&](const std::vector<float>& c) {
    double worst = 0.0;
    for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::abs(c[i] - ref32.exact[i]));
    return worst;
  };
  const double fp32_error = worst_error(cuda_product(exec, false, true, big, a_big, b_big));
  for (GemmPrecision p : {GemmPrecision::kTf32, GemmPrecision::kBf16, GemmPrecision::kFp16}) {
    exec.set_gemm_precision(p);
    ASSERT_EQ(exec.gemm_precision(), p);
    CpuExecutor cpu(2);
    cpu.set_gemm_precision(p);
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const GemmCase& s : cases) {
          const auto a = random_matrix(s.m * s.k, 1 + 4 * static_cast<u32>(s.m));
          const auto b = random_matrix(s.k * s.n, 2 + 4 * static_cast<u32>(s.n));
          const std::vector<float> got = cuda_product(exec, ta, tb, s, a, b);
          std::vector<float> twin(static_cast<size_t>(s.m * s.n));
          gemm(cpu, ta, tb, s.m, s.n, s.k, 1.0f, a.data(), b.data(), 0.0f, twin.data());
          const test::GemmReference rc = test::gemm_reference(ta, tb, s.m, s.n, s.k, a.data(), b.data(), p, 0x1p-23);
          const test::GemmReference rt = test::gemm_reference(ta, tb, s.m, s.n, s.k, a.data(), b.data(), p, 0x1p-24);
          const std::string what = std::string(gemm_precision_name(p)) + " C (" + std::to_string(s.m) + "x" +
                                   std::to_string(s.n) + ", k " + std::to_string(s.k) + ", trans_a " +
                                   std::to_string(ta) + ", trans_b " + std::to_string(tb) + ")";
          EXPECT_TRUE(all_close(what, got.data(), twin.data(), got.size(), 0.0, 1.0,
                                [&](size_t i) { return rc.bound[i] + rt.bound[i]; }));
        }
    const double error = worst_error(cuda_product(exec, false, true, big, a_big, b_big));
    std::printf("%s: worst |C - exact| %.3g (fp32 %.3g)\n", gemm_precision_name(p), error, fp32_error);
    EXPECT_GT(error, 10 * fp32_error) << gemm_precision_name(p) << ": cuBLAS did not round the inputs";
  }
  // Back to fp32: full fp32 agreement again, the compute type is not sticky.
  exec.set_gemm_precision(GemmPrecision::kFp32);
  CpuExecutor cpu(2);
  check_gemm(exec, cpu, false, true, big, 1.0f, 0.0f, std::vector<float>(static_cast<size_t>(big.m * big.n), 0.0f),
             1e-5);
}

}  // namespace
}  // namespace rlt
