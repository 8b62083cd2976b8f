// The launch half of the CUDA executor (kernels/cuda_executor.h has the class): parallel_for,
// parallel_for_2d and reduce_sum for CudaExecutor, the twins of those in sim/cpu_executor.h. Needs nvcc, with
// --extended-lambda (rlt_cuda passes it on to whoever links it).
//
// f is a functor whose operator()(i64) const is RLT_HD (see StepOne in sim/vec_env_impl.h) or an
// extended lambda, [=] RLT_HD (i64 i) { ... }. It is copied to the device by value: capture
// device pointers and plain values, never host pointers or references.
#pragma once

#if !defined(__CUDACC__)
#error "kernels/cuda_executor.cuh needs nvcc; host-only code includes kernels/cuda_executor.h"
#endif

#include <algorithm>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/cuda_check.h"
#include "kernels/cuda_executor.h"

namespace rlt {

// f(i) for i in [0, n): thread t takes t, t + grid, t + 2 grid, ... (grid-stride), so a launch of
// more indices than the device holds at once reuses its threads (and their workspace slots).
template <class F>
__global__ void __launch_bounds__(CudaExecutor::kBlockSize) parallel_for_kernel(i64 n, F f) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

// One thread per index up to the executor's max_threads(), then grid-stride: no thread index
// reaches max_threads() (BatchRows' workspace slots rely on it).
template <class F>
void parallel_for(const CudaExecutor& exec, i64 n, const F& f, Items = Items::kCheap) {
  if (n <= 0) return;
  constexpr i64 kMaxBlocks = 0x7fffffff;  // gridDim.x limit
  const i64 blocks = std::min<i64>({(n + CudaExecutor::kBlockSize - 1) / CudaExecutor::kBlockSize,
                                    exec.max_threads() / CudaExecutor::kBlockSize, kMaxBlocks});
  parallel_for_kernel<F><<<static_cast<unsigned>(blocks), CudaExecutor::kBlockSize, 0, exec.stream()>>>(n, f);
  RLT_CUDA_CHECK_LAUNCH("parallel_for_kernel");
}

namespace detail {

// Flat index -> (row, column), row-major: consecutive threads take consecutive columns, so a
// row-major array is read and written coalesced.
template <class F>
struct Flat2d {
  F f;
  int cols;
  RLT_HD void operator()(i64 i) const { f(i / cols, static_cast<int>(i % cols)); }
};

}  // namespace detail

// f(r, j) for r in [0, rows), j in [0, cols): one thread per (r, j), the twin of the CPU
// executor's parallel_for_2d (which loops j innermost on each thread).
template <class F>
void parallel_for_2d(const CudaExecutor& exec, i64 rows, int cols, const F& f) {
  if (rows <= 0 || cols <= 0) return;
  parallel_for(exec, rows * cols, detail::Flat2d<F>{f, cols});
}

namespace detail {

// i -> double(f(i)): the input of the reduction, computed on the fly (nothing is materialized).
template <class F>
struct AsDouble {
  F f;
  RLT_HD double operator()(i64 i) const { return static_cast<double>(f(i)); }
};

}  // namespace detail

// *out = sum_{i<n} f(i) in double, out in device memory; queued (read it with copy_to_host).
// CUB's tree reduction: run-to-run reproducible on one GPU, but summed in another order than the
// CPU executor's fixed chunks, so the two agree to rounding, not bit for bit.
template <class F>
void reduce_sum(const CudaExecutor& exec, i64 n, const F& f, double* out) {
  if (n <= 0) {
    RLT_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(double), exec.stream()));  // all-zero bits are 0.0
    return;
  }
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<i64>(0), detail::AsDouble<F>{f});
  size_t temp_bytes = 0;
  RLT_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, n, exec.stream()));
  void* temp = exec.scratch(temp_bytes);
  RLT_CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, exec.stream()));
}

namespace detail {
struct FlagToCount {
  const std::uint8_t* flags;
  RLT_HD i64 operator()(i64 i) const { return flags[i] != 0 ? 1 : 0; }
};
template <class A, class B>
struct ScatterLastFlagged {
  const std::uint8_t* flags;
  const i64* pos;  // exclusive scan of the flags
  const A* a;
  const B* b;
  i64 n, k;
  double* count;
  double* out_a;
  double* out_b;
  RLT_HD void operator()(i64 i) const {
    const i64 total = pos[n - 1] + (flags[n - 1] != 0 ? 1 : 0);
    const i64 skip = total > k ? total - k : 0;
    if (flags[i] != 0 && pos[i] >= skip) {
      out_a[pos[i] - skip] = static_cast<double>(a[i]);
      out_b[pos[i] - skip] = static_cast<double>(b[i]);
    }
    if (i == n - 1) *count = static_cast<double>(total);
  }
};
}  // namespace detail

// The twin of select_last_flagged in sim/cpu_executor.h: a CUB exclusive scan of the flags gives
// each flagged index its rank; ranks past total - k are written out. Queued on the stream.
template <class A, class B>
void select_last_flagged(const CudaExecutor& exec, i64 n, const std::uint8_t* flags, const A* a, const B* b, i64 k,
                         double* count, double* out_a, double* out_b) {
  if (n <= 0) {
    RLT_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(double), exec.stream()));
    return;
  }
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<i64>(0), detail::FlagToCount{flags});
  size_t temp_bytes = 0;
  RLT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, in, static_cast<i64*>(nullptr), n, exec.stream()));
  const size_t pos_bytes = (sizeof(i64) * static_cast<size_t>(n) + 255) / 256 * 256;
  auto* base = static_cast<unsigned char*>(exec.scratch(pos_bytes + temp_bytes));
  i64* pos = reinterpret_cast<i64*>(base);
  RLT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(base + pos_bytes, temp_bytes, in, pos, n, exec.stream()));
  parallel_for(exec, n, detail::ScatterLastFlagged<A, B>{flags, pos, a, b, n, k, count, out_a, out_b});
}

}  // namespace rlt
