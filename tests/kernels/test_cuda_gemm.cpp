// cuBLAS gemm (kernels/cuda_gemm.h) against the CPU gemm of rl/gemm.h: the same row-major
// semantics for all four transpose combinations, odd sizes, alpha/beta, k == 0, and beta == 0
// ignoring a C full of NaN.
//
// Tolerance: |cuda - cpu| <= 1e-5 * scale, scale = |alpha| sum_p |op(A)_ip op(B)_pj| + |beta C_ij|,
// i.e. 1e-5 relative to the magnitude of the terms summed. Relative to |C_ij| itself would fail
// wherever terms cancel; the two sides sum in different orders (cuBLAS tiles, Eigen's blocks and
// our k-chunks), each with an error of about sqrt(k) * 6e-8 of the scale (2e-6 at k = 1031).
// TF32 is off except in the one test that turns it on (10-bit mantissa: 1e-2 of the scale).
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
  ASSERT_FALSE(exec.tf32());
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

TEST(CudaGemm, Tf32FlagTakesEffectAndTurnsOff) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  const GemmCase s{256, 192, 512};
  exec.set_tf32(true);
  EXPECT_TRUE(exec.tf32());
  // TF32 rounds the inputs to 10 mantissa bits (relative 2^-11 per factor): within 1e-2 of the scale.
  check_gemm(exec, cpu, false, true, s, 1.0f, 0.0f, std::vector<float>(static_cast<size_t>(s.m * s.n), 0.0f), 1e-2);
  // Off again: back to full fp32 agreement, so the math mode is reset, not sticky.
  exec.set_tf32(false);
  check_gemm(exec, cpu, false, true, s, 1.0f, 0.0f, std::vector<float>(static_cast<size_t>(s.m * s.n), 0.0f), 1e-5);
}

}  // namespace
}  // namespace rlt
