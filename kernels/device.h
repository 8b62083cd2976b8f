// Which device answers (DESIGN.md D8: the backend is chosen in one place).
#pragma once

#include <cstdint>
#include <string>

namespace rlt {

struct CudaProbe {
  int device_count = 0;  // 0 when no GPU answers
  std::string reason;    // why not, when device_count == 0; else the first device's name
};

// Never throws: no driver (cudaErrorInsufficientDriver, 35), no device, or a build without CUDA
// all mean "no GPU", with the reason in words.
CudaProbe probe_cuda();

bool built_with_cuda();

// Free and total memory of CUDA device `gpu` (cudaMemGetInfo), in bytes. False (and nothing
// written) when there is no such device or this build has no CUDA.
bool cuda_memory_info(int gpu, std::int64_t* free_bytes, std::int64_t* total_bytes);

}  // namespace rlt
