// The CUDA executor (DESIGN.md D1): the twin of CpuExecutor (sim/cpu_executor.h), with the same
// surface, so that VecEnvT and the learner compile unchanged for both:
//   CudaExecutor::Buffer<T>                  DeviceBuffer<T> (kernels/device_buffer.h)
//   parallel_for(exec, n, f)                 a kernel, grid-stride up to max_threads }
//   parallel_for_2d(exec, rows, cols, f)     one thread per (r, j)               } in cuda_executor.cuh
//   reduce_sum(exec, n, f, out)              CUB; *out is in device memory       }
//   exec.copy_to_host / copy_from_host       counted in transfers(); copy_to_host waits for the data
//   exec.copy / fill                         device to device, not counted
//   exec.synchronize()
//   CudaExecutor::Readback<T>                ReadbackBuffer<T> (kernels/readback_buffer.h): async
//                                            device-to-host copy into pinned memory, waited by event
//
// Everything is queued on the executor's one stream, in submission order; only copy_to_host and
// synchronize() wait. An executor is a cheap handle: copies share the stream, the cuBLAS handle,
// the reduction scratch and the transfer counters. Use one executor (and its copies) from one host
// thread at a time, as you would a stream.
//
// This header is plain C++ (it needs only cuda_runtime_api.h), so host-only code compiled by g++
// (apps/, tests) can make an executor and pass it to make_vec_env or gemm; the launch
// templates parallel_for, parallel_for_2d and reduce_sum need nvcc and live in kernels/cuda_executor.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <type_traits>

#include "kernels/device_buffer.h"
#include "kernels/readback_buffer.h"
#include "sim/common.h"
#include "sim/cpu_executor.h"  // enum Device
#include "sim/precision.h"     // enum GemmPrecision

struct cublasContext;  // cublasHandle_t is cublasContext*; created on first use by kernels/cuda_gemm.cu

namespace rlt {

// Host<->device traffic through an executor (and all its copies), for benchmarks: the training loop
// is meant to move nothing but a few scalars per iteration.
struct TransferStats {
  i64 h2d_copies = 0;  // copy_from_host calls with n > 0
  i64 h2d_bytes = 0;
  i64 d2h_copies = 0;  // copy_to_host calls with n > 0: each waits for the device
  i64 d2h_bytes = 0;
  i64 d2h_async_copies = 0;  // Readback copies (into pinned memory; the host waits on their event only)
  i64 d2h_async_bytes = 0;
  i64 copies() const { return h2d_copies + d2h_copies + d2h_async_copies; }
  i64 bytes() const { return h2d_bytes + d2h_bytes + d2h_async_bytes; }
};

class CudaExecutor {
 public:
  template <class T>
  using Buffer = DeviceBuffer<T>;
  template <class T>
  using Readback = ReadbackBuffer<T>;
  static constexpr Device kDevice = Device::kCuda;

  // Threads per block of parallel_for.
  static constexpr int kBlockSize = 256;

  // Makes `device` current on the calling thread and creates the executor's stream on it. Throws
  // std::runtime_error when no device answers (check probe_cuda() first for a clean message).
  explicit CudaExecutor(int device = 0);

  int device() const;
  cudaStream_t stream() const;

  // dst (host) <- src (device); waits until the data is on the host.
  template <class T>
  void copy_to_host(T* dst, const T* src, i64 n) const {
    static_assert(std::is_trivially_copyable<T>::value, "copied as bytes");
    copy_to_host_bytes(dst, src, bytes_of<T>(n));
  }
  // dst (device) <- src (host); queued. Pageable src may be reused on return (the runtime stages
  // it); pinned src (cudaMallocHost) must stay unchanged until the next synchronize().
  template <class T>
  void copy_from_host(T* dst, const T* src, i64 n) const {
    static_assert(std::is_trivially_copyable<T>::value, "copied as bytes");
    copy_from_host_bytes(dst, src, bytes_of<T>(n));
  }
  // dst (device) <- src (device); queued; not a transfer.
  template <class T>
  void copy(T* dst, const T* src, i64 n) const {
    static_assert(std::is_trivially_copyable<T>::value, "copied as bytes");
    if (dst != src) copy_device_bytes(dst, src, bytes_of<T>(n));
  }
  // dst[0..n) = value, for any trivially copyable T (a small kernel, or a memset when every byte of
  // value is the same); queued.
  template <class T>
  void fill(T* dst, T value, i64 n) const {
    static_assert(std::is_trivially_copyable<T>::value, "filled as bytes");
    fill_bytes(dst, &value, sizeof(T), n);
  }
  // Threads a launch runs at most: the device's resident threads (SMs x threads per SM, a multiple
  // of kBlockSize). parallel_for caps its grid there and loops grid-stride, so a batch's constraint
  // workspace needs one block per resident thread, not per env (sim/dynamics.h, BatchRows).
  // set_max_threads lowers it (rounded down to whole blocks, at least one, never above the device's),
  // e.g. for a test of the grid-stride reuse; shared by copies; set it before a batch sizes its
  // workspace (a batch launched after the cap rose would trap).
  i64 max_threads() const;
  void set_max_threads(i64 threads);
  // Constraint workspace blocks a batch of num_envs allocates: min(num_envs, max_threads()).
  i64 workspace_slots(i64 num_envs) const { return std::min(num_envs, max_threads()); }

  // Waits for everything queued on the stream; reports a fault raised by any of it.
  void synchronize() const;

  TransferStats transfers() const;
  void reset_transfers();
  // Counts a Readback's asynchronous device-to-host copy (kernels/readback_buffer.h calls it).
  void count_async_copy_to_host(size_t bytes) const;

  // What gemm lets cuBLAS round its fp32 inputs to (sim/precision.h): fp32 (CUBLAS_COMPUTE_32F), or
  // tf32, bf16, fp16 (CUBLAS_COMPUTE_32F_FAST_TF32 / _FAST_16BF / _FAST_16F: tensor cores on the
  // rounded inputs, fp32 sums; several times faster on Ampere and later). The CPU twin rounds the
  // same way (rl/gemm.h). fp32 by default; shared by copies; read once per gemm call.
  void set_gemm_precision(GemmPrecision p);
  GemmPrecision gemm_precision() const;

  // Device scratch of at least `bytes`, kept by the executor and grown on demand (reduce_sum's CUB
  // temp storage). Valid until the next call to scratch() on this executor or its copies.
  void* scratch(size_t bytes) const;

  // The executor's cuBLAS handle, bound to its stream; created on first use (kernels/cuda_gemm.cu).
  cublasContext* cublas() const;

  // Shared by an executor and its copies. Public so that the pieces of kernels/ (cuda_gemm.cu)
  // reach it; not for use elsewhere.
  struct State {
    int device = 0;
    cudaStream_t stream = nullptr;
    std::atomic<i64> h2d_copies{0}, h2d_bytes{0}, d2h_copies{0}, d2h_bytes{0}, d2h_async_copies{0}, d2h_async_bytes{0};
    std::atomic<GemmPrecision> gemm_precision{GemmPrecision::kFp32};
    i64 device_threads = kBlockSize;           // SMs x threads per SM, read at construction
    std::atomic<i64> max_threads{kBlockSize};  // device_threads unless set_max_threads lowered it
    DeviceBuffer<unsigned char> scratch;
    std::mutex blas_mutex;                // guards the lazy creation of blas
    std::shared_ptr<cublasContext> blas;  // deleter (cublasDestroy) set where it is created
    ~State();                             // releases blas and scratch, then the stream
  };
  State& state() const { return *m_state; }

 private:
  template <class T>
  static size_t bytes_of(i64 n) {
    return n > 0 ? sizeof(T) * static_cast<size_t>(n) : 0;
  }
  void copy_to_host_bytes(void* dst, const void* src, size_t bytes) const;
  void copy_from_host_bytes(void* dst, const void* src, size_t bytes) const;
  void copy_device_bytes(void* dst, const void* src, size_t bytes) const;
  void fill_bytes(void* dst, const void* value, size_t value_size, i64 n) const;

  std::shared_ptr<State> m_state;
};

}  // namespace rlt
