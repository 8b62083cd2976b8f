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
  }
  return s.blas.get();
}

void gemm(const CudaExecutor& exec, bool trans_a, bool trans_b, i64 m, i64 n, i64 k, float alpha, const float* a,
          const float* b, float beta, float* c) {
  if (m < 0 || n < 0 || k < 0) throw std::invalid_argument("gemm: negative dimension");
  if (m == 0 || n == 0) return;  // as rl/gemm.h; k == 0 leaves C = beta * C (BLAS semantics)
  cublasHandle_t h = exec.cublas();
  // Cheap host-side calls; doing them every time keeps set_tf32() effective immediately.
  RLT_CUBLAS_CHECK(cublasSetMathMode(h, exec.tf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  // Leading dimensions of the row-major storage; BLAS wants at least 1 even for an empty matrix.
  const i64 lda = std::max<i64>(1, trans_a ? m : k);  // A stored (k x m) or (m x k)
  const i64 ldb = std::max<i64>(1, trans_b ? k : n);  // B stored (n x k) or (k x n)
  const i64 ldc = n;
  RLT_CUBLAS_CHECK(cublasSgemm_64(h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                                  &alpha, b, ldb, a, lda, &beta, c, ldc));
}

}  // namespace rlt
