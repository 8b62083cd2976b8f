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

}  // namespace rlt
