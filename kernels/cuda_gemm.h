// GEMM on the CUDA executor (DESIGN.md D6), the twin of gemm() in rl/gemm.h, with its exact
// row-major semantics:
//   C (m x n) = alpha * op(A) * op(B) + beta * C
// op(A) is (m x k): A is stored (m x k), or (k x m) when trans_a; likewise op(B) is (k x n).
// a, b, c are device pointers; beta == 0 ignores C's contents (NaN included). Queued on the
// executor's stream through its cuBLAS handle; inputs rounded (by cuBLAS, on the fly) to
// exec.gemm_precision(): fp32 storage in and out at every precision.
// Plain C++: callable from host-only code.
#pragma once

#include "kernels/cuda_executor.h"

namespace rlt {

void gemm(const CudaExecutor& exec, bool trans_a, bool trans_b, i64 m, i64 n, i64 k, float alpha, const float* a,
          const float* b, float beta, float* c);

}  // namespace rlt
