// cuBLAS behind gemm(const CudaExecutor&, ...) (kernels/cuda_gemm.h).
//
// cuBLAS is column-major. A row-major (r x s) matrix read as column-major is its transpose
// (s x r, leading dimension s), so the row-major product C = op(A) op(B) is computed as the
// column-major product C^T = op(B)^T op(A)^T (n x m, ld n): B comes first, A second, and each
// keeps its own transpose flag.
#include "kernels/cuda_gemm.h"

#include <cublas_v2.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>

#include "kernels/cuda_check.h"

namespace rlt {

cublasContext* CudaExecutor::cublas() const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.blas_mutex);
  if (!s.blas) {
    RLT_CUDA_CHECK(cudaSetDevice(s.device));
    cublasHandle_t h = nullptr;
    RLT_CUBLAS_CHECK(cublasCreate(&h));
    s.blas = std::shared_ptr<cublasContext>(h, [](cublasHandle_t p) { cublasDestroy(p); });
    RLT_CUBLAS_CHECK(cublasSetStream(h, s.stream));
    // Default math: cublasSgemm in full fp32; reduced inputs only where gemm asks for them through
    // the compute type.
    RLT_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  }
  return s.blas.get();
}

namespace {

// The cuBLAS compute type of a reduced precision, fp32 storage (cuBLAS header: "_FAST types allow
// for some loss of precision"). FAST_16F may use fp16 or TF32 and FAST_16BF bf16 or TF32: both
// have at least the reduced format's precision, so the CPU twin's rounding bounds them either way.
cublasComputeType_t compute_type(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kTf32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GemmPrecision::kBf16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    case GemmPrecision::kFp16:
      return CUBLAS_COMPUTE_32F_FAST_16F;
    default:
      return CUBLAS_COMPUTE_32F;
  }
}

}  // namespace

void gemm(const CudaExecutor& exec, bool trans_a, bool trans_b, i64 m, i64 n, i64 k, float alpha, const float* a,
          const float* b, float beta, float* c) {
  if (m < 0 || n < 0 || k < 0) throw std::invalid_argument("gemm: negative dimension");
  if (m == 0 || n == 0) return;  // as rl/gemm.h; k == 0 leaves C = beta * C (BLAS semantics)
  cublasHandle_t h = exec.cublas();
  const GemmPrecision precision = exec.gemm_precision();  // read once: a set_gemm_precision() takes effect next call
  // Leading dimensions of the row-major storage; BLAS wants at least 1 even for an empty matrix.
  const i64 lda = std::max<i64>(1, trans_a ? m : k);  // A stored (k x m) or (m x k)
  const i64 ldb = std::max<i64>(1, trans_b ? k : n);  // B stored (n x k) or (k x n)
  const i64 ldc = n;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (precision == GemmPrecision::kFp32) {
    RLT_CUBLAS_CHECK(cublasSgemm_64(h, op_b, op_a, n, m, k, &alpha, b, ldb, a, lda, &beta, c, ldc));
    return;
  }
  // fp32 A, B, C and alpha/beta (compute types of 32F take float scalars); cuBLAS rounds A and B.
  RLT_CUBLAS_CHECK(cublasGemmEx_64(h, op_b, op_a, n, m, k, &alpha, b, CUDA_R_32F, ldb, a, CUDA_R_32F, lda, &beta, c,
                                   CUDA_R_32F, ldc, compute_type(precision), CUBLAS_GEMM_DEFAULT));
}

}  // namespace rlt
