// HostStaging<CudaExecutor>: how a PlacedEnv (sim/placed_env.h) moves arrays between CUDA device
// memory and host staging, the twin of HostStaging<CpuExecutor> there:
//   Buffer<T>                   PinnedBuffer<T> (kernels/pinned.h): page-locked host memory (cudaMallocHost), so the
//                               copies are DMA and queue without waiting
//   Event                       CudaEvent: record(exec) on the executor's stream; wait() on it only
//   to_host(exec, host, src, n)    cudaMemcpyAsync device -> pinned host on the stream (queued;
//                                  counted in exec.transfers() as an asynchronous copy)
//   from_host(exec, dst, host, n)  exec.copy_from_host: pinned host -> device, queued, counted
// Plain C++ (needs only cuda_runtime_api.h), so host code compiled by g++ (apps/) instantiates
// PlacedEnv over CUDA.
#pragma once

#include <cuda_runtime_api.h>


#include "kernels/cuda_check.h"
#include "kernels/cuda_executor.h"
#include "kernels/pinned.h"
#include "sim/placed_env.h"

namespace rlt {

template <>
struct HostStaging<CudaExecutor> {
  static constexpr bool kPinned = true;
  template <class T>
  using Buffer = PinnedBuffer<T>;
  using Event = CudaEvent;
  template <class T>
  static void to_host(const CudaExecutor& exec, T* host, const T* src, i64 n) {
    if (n <= 0) return;
    const size_t bytes = sizeof(T) * static_cast<size_t>(n);
    RLT_CUDA_CHECK(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, exec.stream()));
    exec.count_async_copy_to_host(bytes);  // the host waits on the slot's event, not the stream
  }
  template <class T>
  static void from_host(const CudaExecutor& exec, T* dst, const T* host, i64 n) {
    exec.copy_from_host(dst, host, n);
  }
};

}  // namespace rlt
