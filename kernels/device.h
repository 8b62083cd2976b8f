// Which device answers (DESIGN.md D8: the backend is chosen in one place).
#pragma once

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

}  // namespace rlt
