// The error bound of a gemm whose inputs are rounded to a reduced precision (sim/precision.h) and
// whose products are summed in fp32, element by element, against the exact product. Shared by the
// CPU twin's test (tests/rl/test_precision.cpp) and the cuBLAS test (tests/kernels/test_cuda_gemm.cpp).
//
// A factor x rounds to x + e with |e| <= u |x| + eta (u the unit roundoff, eta half the smallest
// subnormal step: it matters only for fp16, 2^-25). One product of rounded factors then errs by
//   |ra rb - a b| <= (2u + u^2) |a b| + eta (1 + u) (|a| + |b|) + eta^2,
// so the k products of C_ij together by R_ij = (2u + u^2) S_ij + eta (1 + u) (sum_p |a_ip| + sum_p |b_pj|)
// + k eta^2, with S_ij = sum_p |a_ip b_pj|. Summing k terms in floating point, in any order and with
// or without FMA, errs by at most gamma_k = k eps / (1 - k eps) times the sum of their magnitudes
// (Higham, Accuracy and Stability of Numerical Algorithms, 3.1), and those magnitudes sum to at most
// S + R. So |C_ij - exact_ij| <= R_ij + gamma_k (S_ij + R_ij). At fp32 (u = eta = 0) that is the
// plain gamma_k S_ij. The leading term is 2u S: the "k u sum |a||b|" of the issue with k = 2.
// (alpha = 1 and beta = 0: a gemm with others rounds once or twice more.)
#pragma once

#include <cmath>
#include <vector>

#include "sim/common.h"
#include "sim/precision.h"

namespace rlt {
namespace test {

// Half the smallest subnormal step of p's format: the absolute part of its rounding error.
inline double gemm_eta(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFp16:
      return std::ldexp(1.0, -25);
    case GemmPrecision::kBf16:
      return std::ldexp(1.0, -134);
    case GemmPrecision::kTf32:
      return std::ldexp(1.0, -137);
    default:
      return 0.0;  // not rounded at all
  }
}

// op(A)_ip and op(B)_pj from row-major storage, as rl/gemm.h defines them.
inline float op_a_at(const float* a, bool t, i64 m, i64 k, i64 i, i64 p) { return t ? a[p * m + i] : a[i * k + p]; }
inline float op_b_at(const float* b, bool t, i64 k, i64 n, i64 p, i64 j) { return t ? b[j * k + p] : b[p * n + j]; }

struct GemmReference {
  std::vector<double> exact;  // (m x n) sum_p a_ip b_pj, in double (its own error ~k 2^-53 S: nothing here)
  std::vector<double> bound;  // (m x n) the bound above on |C - exact|
};

// The exact product of op(A) op(B) and the bound on |C - exact| of a gemm that rounds its inputs to
// p and sums in floating point with unit roundoff `sum_eps` (2^-24 for fp32 round to nearest).
inline GemmReference gemm_reference(bool ta, bool tb, i64 m, i64 n, i64 k, const float* a, const float* b,
                                    GemmPrecision p, double sum_eps) {
  const double u = p == GemmPrecision::kFp32 ? 0.0 : gemm_unit_roundoff(p);
  const double eta = gemm_eta(p);
  const double gamma = static_cast<double>(k) * sum_eps / (1.0 - static_cast<double>(k) * sum_eps);
  GemmReference r;
  r.exact.assign(static_cast<size_t>(m * n), 0.0);
  r.bound.assign(static_cast<size_t>(m * n), 0.0);
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < n; ++j) {
      double c = 0.0, s = 0.0, sum_a = 0.0, sum_b = 0.0;
      for (i64 q = 0; q < k; ++q) {
        const double x = op_a_at(a, ta, m, k, i, q), y = op_b_at(b, tb, k, n, q, j);
        c += x * y;
        s += std::abs(x * y);
        sum_a += std::abs(x);
        sum_b += std::abs(y);
      }
      const double rounding =
          (2 * u + u * u) * s + eta * (1 + u) * (sum_a + sum_b) + static_cast<double>(k) * eta * eta;
      r.exact[static_cast<size_t>(i * n + j)] = c;
      r.bound[static_cast<size_t>(i * n + j)] = rounding + gamma * (s + rounding);
    }
  return r;
}

}  // namespace test
}  // namespace rlt
