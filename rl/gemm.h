// The GEMM interface of the learner (DESIGN.md D6): row-major, contiguous matrices,
//   C (m x n) = alpha * op(A) * op(B) + beta * C,
// op(A) is (m x k): A is stored (m x k), or (k x m) when trans_a; likewise op(B) is (k x n).
// The CPU version uses Eigen on fixed-size chunks so the result is bit-identical whatever the
// thread count; the CUDA version (kernels/cuda_gemm.cu) calls cuBLAS.
//
// Precision (sim/precision.h, issue 18): with exec.gemm_precision() other than fp32, a float gemm
// first rounds every element of A and B to that format (round_to), into scratch the calling thread
// keeps, then runs the fp32 product on the rounded copies: what cuBLAS's CUBLAS_COMPUTE_32F_FAST_*
// compute types do (reduced inputs, fp32 products and sums). The precision is read once per call;
// the fp32 path is the plain product, untouched. Double gemms (the gradient checks) ignore it.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "sim/cpu_executor.h"
#include "sim/precision.h"

namespace rlt {

constexpr i64 kGemmRows = 256;   // rows of C per task: independent, so any split is deterministic
constexpr i64 kGemmDepth = 512;  // chunk of the k dimension when C is small and k is long

// Bytes of the chunk scratch gemm grows (once per calling thread, then keeps) for a C of m x n
// with depth k: 0 unless it takes the split-k path below.
inline i64 gemm_scratch_bytes(i64 m, i64 n, i64 k, i64 scalar_bytes) {
  if (m <= 0 || n <= 0 || !(m < 2 * kGemmRows && k > 2 * kGemmDepth)) return 0;
  return (k + kGemmDepth - 1) / kGemmDepth * m * n * scalar_bytes;
}

// Bytes of the rounded copies of A and B a gemm of this shape grows (once per calling thread, then
// keeps) at precision p: 0 at fp32.
inline i64 gemm_rounding_bytes(i64 m, i64 n, i64 k, GemmPrecision p) {
  if (p == GemmPrecision::kFp32 || m <= 0 || n <= 0 || k <= 0) return 0;
  return (m * k + k * n) * static_cast<i64>(sizeof(float));
}

namespace gemm_detail {

// C = alpha op(A) op(B) + beta C in the precision of T: the gemm contract above.
template <class T>
void gemm_full(const CpuExecutor& exec, bool trans_a, bool trans_b, i64 m, i64 n, i64 k, T alpha, const T* a,
               const T* b, T beta, T* c) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Map = Eigen::Map<Mat>;
  using CMap = Eigen::Map<const Mat>;
  if (m <= 0 || n <= 0) return;
  constexpr i64 kRows = kGemmRows, kDepth = kGemmDepth;
  // Weight gradients have a small C and a long k (the batch): split k into fixed chunks, sum the
  // partial products in chunk order.
  if (m < 2 * kRows && k > 2 * kDepth) {
    const i64 num_chunks = (k + kDepth - 1) / kDepth;
    // The partial products (num_chunks x m x n) in one buffer that only grows, reused by every call
    // (each layer's weight gradient has its own shape, so per-shape matrices would reallocate).
    // (A thread_local named inside the lambda would be each worker's own: bind the caller's here.)
    thread_local std::vector<T> scratch;
    std::vector<T>& partial = scratch;
    const size_t chunk_size = static_cast<size_t>(m * n);
    if (partial.size() < chunk_size * static_cast<size_t>(num_chunks))
      partial.resize(chunk_size * static_cast<size_t>(num_chunks));
    exec.for_ranges(num_chunks, 1, [&](i64 cb, i64 ce) {
      for (i64 ch = cb; ch < ce; ++ch) {
        const i64 k0 = ch * kDepth, kn = std::min(kDepth, k - k0);
        Map p(partial.data() + static_cast<size_t>(ch) * chunk_size, m, n);
        // Slice the k range out of op(A) and op(B).
        if (!trans_a && !trans_b) p.noalias() = CMap(a, m, k).middleCols(k0, kn) * CMap(b, k, n).middleRows(k0, kn);
        else if (trans_a && !trans_b)
          p.noalias() = CMap(a, k, m).middleRows(k0, kn).transpose() * CMap(b, k, n).middleRows(k0, kn);
        else if (!trans_a && trans_b)
          p.noalias() = CMap(a, m, k).middleCols(k0, kn) * CMap(b, n, k).middleCols(k0, kn).transpose();
        else p.noalias() = CMap(a, k, m).middleRows(k0, kn).transpose() * CMap(b, n, k).middleCols(k0, kn).transpose();
      }
    });
    Map cm(c, m, n);
    if (beta == T(0)) cm.setZero();
    else cm *= beta;
    for (i64 ch = 0; ch < num_chunks; ++ch)
      cm += alpha * Map(partial.data() + static_cast<size_t>(ch) * chunk_size, m, n);
    return;
  }
  exec.for_ranges((m + kRows - 1) / kRows, 1, [&](i64 tb, i64 te) {
    for (i64 t = tb; t < te; ++t) {
      const i64 r0 = t * kRows, rn = std::min(kRows, m - r0);
      auto cblock = Map(c, m, n).middleRows(r0, rn);
      if (beta == T(0)) cblock.setZero();
      else if (beta != T(1)) cblock *= beta;
      // C += alpha op(A) op(B), straight into C (no temporary).
      if (!trans_a && !trans_b) cblock.noalias() += alpha * CMap(a, m, k).middleRows(r0, rn) * CMap(b, k, n);
      else if (trans_a && !trans_b)
        cblock.noalias() += alpha * CMap(a, k, m).middleCols(r0, rn).transpose() * CMap(b, k, n);
      else if (!trans_a && trans_b)
        cblock.noalias() += alpha * CMap(a, m, k).middleRows(r0, rn) * CMap(b, n, k).transpose();
      else cblock.noalias() += alpha * CMap(a, k, m).middleCols(r0, rn).transpose() * CMap(b, n, k).transpose();
    }
  });
}

// out[i] = round(x[i]) for i < count, in parallel; `round` is one of sim/precision.h's functions,
// fixed for the whole loop.
template <class Round>
void round_all(const CpuExecutor& exec, const float* x, i64 count, float* out, Round round) {
  exec.for_ranges(count, 16 * CpuExecutor::kMinGrain, [&](i64 b, i64 e) {
    for (i64 i = b; i < e; ++i) out[i] = round(x[i]);
  });
}

inline void round_all(const CpuExecutor& exec, const float* x, i64 count, float* out, GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kTf32:
      return round_all(exec, x, count, out, [](float v) { return round_to_tf32(v); });
    case GemmPrecision::kBf16:
      return round_all(exec, x, count, out, [](float v) { return round_to_bf16(v); });
    case GemmPrecision::kFp16:
      return round_all(exec, x, count, out, [](float v) { return round_to_fp16(v); });
    default:
      exec.copy(out, x, count);
  }
}

}  // namespace gemm_detail

template <class T>
void gemm(const CpuExecutor& exec, bool trans_a, bool trans_b, i64 m, i64 n, i64 k, T alpha, const T* a, const T* b,
          T beta, T* c) {
  if constexpr (std::is_same<T, float>::value) {
    const GemmPrecision p = exec.gemm_precision();
    if (p != GemmPrecision::kFp32 && m > 0 && n > 0 && k > 0) {
      // The rounded A (m*k) and B (k*n) in one buffer that only grows (as the split-k scratch).
      thread_local std::vector<float> scratch;
      std::vector<float>& rounded = scratch;
      const size_t size_a = static_cast<size_t>(m * k), size_b = static_cast<size_t>(k * n);
      if (rounded.size() < size_a + size_b) rounded.resize(size_a + size_b);
      gemm_detail::round_all(exec, a, m * k, rounded.data(), p);
      gemm_detail::round_all(exec, b, k * n, rounded.data() + size_a, p);
      gemm_detail::gemm_full(exec, trans_a, trans_b, m, n, k, alpha, rounded.data(), rounded.data() + size_a, beta, c);
      return;
    }
  }
  gemm_detail::gemm_full(exec, trans_a, trans_b, m, n, k, alpha, a, b, beta, c);
}

// The host's one copy of each (rl/ppo_cpu.cpp): a file that calls gemm does not compile Eigen's
// products again (tests/CMakeLists.txt, RLTRAIN_TEST_OPT). nvcc's translation units keep their own.
#if !defined(__CUDACC__)
extern template void gemm<float>(const CpuExecutor&, bool, bool, i64, i64, i64, float, const float*, const float*,
                                 float, float*);
extern template void gemm<double>(const CpuExecutor&, bool, bool, i64, i64, i64, double, const double*,
                                  const double*, double, double*);
#endif

}  // namespace rlt
