// Error checks for every CUDA and cuBLAS call (STYLE.md 4): a failure throws std::runtime_error
// naming the file, the line, the expression and the library's own description of the error.
//   RLT_CUDA_CHECK(cudaMemcpyAsync(...));
//   RLT_CUBLAS_CHECK(cublasSgemm(...));
//   my_kernel<<<grid, block, 0, stream>>>(...); RLT_CUDA_CHECK_LAUNCH("my_kernel");
// Plain C++: usable from host-only translation units (g++) as well as from nvcc.
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace rlt {
namespace detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  throw std::runtime_error(std::string("CUDA error at ") + file + ":" + std::to_string(line) + ": " + expr +
                           " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* expr, const char* file, int line) {
  throw std::runtime_error(std::string("cuBLAS error at ") + file + ":" + std::to_string(line) + ": " + expr +
                           " failed: " + cublasGetStatusName(status) + ": " + cublasGetStatusString(status));
}

// The failed call's error is also cleared from cudaGetLastError() (where it is not sticky), so
// that a caller who catches and carries on is not blamed for it at the next launch check.
inline void check_cuda(cudaError_t err, const char* expr, const char* file, int line) {
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw_cuda_error(err, expr, file, line);
  }
}

inline void check_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(status, expr, file, line);
}

// After a <<<>>> launch: cudaGetLastError() reports a bad launch configuration (and clears it).
// Faults inside the kernel surface later, at the next synchronizing call, through RLT_CUDA_CHECK.
inline void check_launch(const char* kernel, const char* file, int line) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, (std::string("launch of ") + kernel).c_str(), file, line);
}

}  // namespace detail
}  // namespace rlt

#define RLT_CUDA_CHECK(expr) ::rlt::detail::check_cuda((expr), #expr, __FILE__, __LINE__)
#define RLT_CUBLAS_CHECK(expr) ::rlt::detail::check_cublas((expr), #expr, __FILE__, __LINE__)
#define RLT_CUDA_CHECK_LAUNCH(kernel_name) ::rlt::detail::check_launch((kernel_name), __FILE__, __LINE__)
