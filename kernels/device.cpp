#include "kernels/device.h"

#if defined(RLTRAIN_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace rlt {

bool built_with_cuda() {
#if defined(RLTRAIN_WITH_CUDA)
  return true;
#else
  return false;
#endif
}

CudaProbe probe_cuda() {
  CudaProbe p;
#if defined(RLTRAIN_WITH_CUDA)
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    p.reason = std::string("no usable CUDA device (") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err) + ")";
    cudaGetLastError();  // clear the sticky error state
    return p;
  }
  if (n == 0) {
    p.reason = "no CUDA device found";
    return p;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) p.reason = prop.name;
  p.device_count = n;
#else
  p.reason = "rltrain was built without CUDA (-DRLTRAIN_CUDA=OFF or no nvcc at build time)";
#endif
  return p;
}

bool cuda_memory_info(int gpu, std::int64_t* free_bytes, std::int64_t* total_bytes) {
#if defined(RLTRAIN_WITH_CUDA)
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess || cudaSetDevice(gpu) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  size_t free_b = 0, total_b = 0;
  const cudaError_t err = cudaMemGetInfo(&free_b, &total_b);
  cudaSetDevice(current);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  *free_bytes = static_cast<std::int64_t>(free_b);
  *total_bytes = static_cast<std::int64_t>(total_b);
  return true;
#else
  (void)gpu, (void)free_bytes, (void)total_bytes;
  return false;
#endif
}

}  // namespace rlt
