// The CPU executor (DESIGN.md D1): parallel_for over a thread pool, host buffers, and
// deterministic reductions. The CUDA executor in kernels/cuda_executor.cuh has the same surface.
//
// Executor surface used by single-source code (VecEnv, learner):
//   Exec::Buffer<T>                           owning buffer in the executor's memory
//   parallel_for(exec, n, f)                  f(i) for i in [0, n); f is an RLT_HD callable
//   parallel_for(exec, n, f, Items::kCostly)  the same for items of microseconds each (an env's
//                                             physics step): on the CPU every item may be its own
//                                             task, where cheap items go in chunks of kMinGrain
//   parallel_for_2d(exec, rows, cols, f)      f(r, j) over a (rows x cols) grid
//   parallel_for_lanes(exec, n, f)            CPU only: f.lanes(i) per block of kLanes items, f(i) for
//                                             the rest (sim/lanes.h; the classic envs' step)
//   reduce_sum(exec, n, f, out)               *out = sum_i f(i) (double), out in executor memory
//   exec.copy_to_host / copy_from_host / copy (n elements, counted as transfers on CUDA)
//   exec.synchronize()
//   Exec::Readback<T>                         asynchronous readback to host memory (viewer poses):
//                                             target(n), start(exec, n), wait(); see HostReadback
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/common.h"
#include "sim/lanes.h"
#include "sim/precision.h"
#include "sim/thread_pool.h"

namespace rlt {

enum class Device { kCpu, kCuda };
inline const char* device_name(Device d) { return d == Device::kCuda ? "cuda" : "cpu"; }

// Owning host array. Move-only like its device twin, so code written for one compiles for both.
template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(i64 n) : m_data(static_cast<size_t>(n)) {}
  HostBuffer(HostBuffer&&) noexcept = default;
  HostBuffer& operator=(HostBuffer&&) noexcept = default;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void resize(i64 n) { m_data.assign(static_cast<size_t>(n), T{}); }
  T* data() { return m_data.data(); }
  const T* data() const { return m_data.data(); }
  i64 size() const { return static_cast<i64>(m_data.size()); }

 private:
  std::vector<T> m_data;
};

// Readback of executor memory to the host, the CPU stand-in for ReadbackBuffer<T>
// (kernels/readback_buffer.h: device scratch, async copy into pinned memory, event): here the
// producer writes host memory directly, so start() does nothing and wait() returns that memory.
//   T* target(n)           where the producer writes n elements (grown on demand)
//   void start(exec, n)    CUDA: queue the copy to the host; CPU: nothing
//   const T* wait()        the n elements in host memory, valid until the next target()/start()
template <class T>
class HostReadback {
 public:
  T* target(i64 n) {
    if (static_cast<i64>(m_data.size()) < n) m_data.resize(static_cast<size_t>(n));
    return m_data.data();
  }
  template <class Exec>
  void start(const Exec&, i64 n) {  // the same contract as the CUDA ReadbackBuffer
    if (n > static_cast<i64>(m_data.size()))
      throw std::logic_error("HostReadback::start: more than target() was asked for");
  }
  const T* wait() const { return m_data.data(); }

 private:
  std::vector<T> m_data;
};

class CpuExecutor {
 public:
  template <class T>
  using Buffer = HostBuffer<T>;
  template <class T>
  using Readback = HostReadback<T>;
  static constexpr Device kDevice = Device::kCpu;

  // Work is cut into chunks of at least this many items; small loops run on the caller.
  static constexpr i64 kMinGrain = 1024;
  // The same for parallel_for_lanes, whose items (an env's step in SIMD lanes) cost some ten times
  // less: a task of fewer would spend more on waking a worker than on its envs.
  static constexpr i64 kMinLaneGrain = 8192;
  // Reductions sum fixed-size chunks, then the chunk sums in order: the result does not depend
  // on the number of threads.
  static constexpr i64 kReduceChunk = 4096;

  explicit CpuExecutor(int num_threads = 0)
      : m_pool(std::make_shared<ThreadPool>(num_threads)),
        m_gemm_precision(std::make_shared<std::atomic<GemmPrecision>>(GemmPrecision::kFp32)) {}

  int num_threads() const { return m_pool->num_threads(); }
  ThreadPool& pool() const { return *m_pool; }
  // Constraint workspace blocks a batch of num_envs allocates (sim/dynamics.h, BatchRows): none, an
  // env's step runs on one thread start to end and uses that thread's own buffer.
  i64 workspace_slots(i64 num_envs) const {
    (void)num_envs;
    return 0;
  }

  // What gemm (rl/gemm.h) rounds its float inputs to before the fp32 products (sim/precision.h):
  // the CPU twin of the CUDA executor's cuBLAS compute type. fp32 by default; shared by copies,
  // like the CUDA executor's setting.
  void set_gemm_precision(GemmPrecision p) { *m_gemm_precision = p; }
  GemmPrecision gemm_precision() const { return m_gemm_precision->load(std::memory_order_relaxed); }

  template <class T>
  void copy_to_host(T* dst, const T* src, i64 n) const {
    copy(dst, src, n);
  }
  template <class T>
  void copy_from_host(T* dst, const T* src, i64 n) const {
    copy(dst, src, n);
  }
  template <class T>
  void copy(T* dst, const T* src, i64 n) const {
    if (n > 0 && dst != src) std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(n));
  }
  template <class T>
  void fill(T* dst, T value, i64 n) const {
    std::fill(dst, dst + n, value);
  }
  void synchronize() const {}

  // Tasks a loop is cut into per thread (at most; each of at least `grain` items). Threads claim
  // tasks as they finish, so more tasks leave less idle time at the end of a loop whose items
  // differ in cost; each claim takes the pool's lock. Costly items (an env's physics step, its
  // contacts and solver iterations varying from env to env) take more.
  static constexpr int kTasksPerThread = 4;
  static constexpr int kCostlyTasksPerThread = 32;

  // Runs body(begin, end) over [0, n) split into contiguous ranges.
  template <class Body>
  void for_ranges(i64 n, i64 grain, const Body& body, int tasks_per_thread = kTasksPerThread) const {
    if (n <= 0) return;
    const int threads = m_pool->num_threads();
    if (threads == 1 || n <= grain) {
      body(i64{0}, n);
      return;
    }
    i64 num_tasks = std::min<i64>((n + grain - 1) / grain, static_cast<i64>(threads) * tasks_per_thread);
    const i64 per_task = (n + num_tasks - 1) / num_tasks;
    num_tasks = (n + per_task - 1) / per_task;
    m_pool->run(static_cast<int>(num_tasks), [&](int t) {
      const i64 b = static_cast<i64>(t) * per_task;
      body(b, std::min(n, b + per_task));
    });
  }

 private:
  std::shared_ptr<ThreadPool> m_pool;
  std::shared_ptr<std::atomic<GemmPrecision>> m_gemm_precision;
};

// Each range loops over its own copy of f: the caller's f is seen by the pool's threads (its address
// escapes), so a store through one of f's pointers might, for all the compiler knows, change f's
// scalars, which it would then reload every iteration and not vectorize (AdamStep's clip, say).
template <class F>
void parallel_for(const CpuExecutor& exec, i64 n, const F& f, Items items = Items::kCheap) {
  const bool costly = items == Items::kCostly;
  exec.for_ranges(
      n, costly ? 1 : CpuExecutor::kMinGrain,
      [&](i64 b, i64 e) {
        const F local = f;
        for (i64 i = b; i < e; ++i) local(i);
      },
      costly ? CpuExecutor::kCostlyTasksPerThread : CpuExecutor::kTasksPerThread);
}

#if defined(RLT_LANES)
// f.lanes(i) for i = 0, kLanes, 2 kLanes, ... while a whole block of kLanes items [i, i + kLanes) is
// left, then f(i) for each of the last n % kLanes items. (On CUDA the same work is
// parallel_for(exec, n, f), one item per thread.)
template <class F>
void parallel_for_lanes(const CpuExecutor& exec, i64 n, const F& f) {
  const i64 blocks = n / kLanes;
  exec.for_ranges(blocks, CpuExecutor::kMinLaneGrain / kLanes, [&](i64 b, i64 e) {
    for (i64 j = b; j < e; ++j) f.lanes(j * kLanes);
  });
  for (i64 i = blocks * kLanes; i < n; ++i) f(i);
}
#endif

// f(r, j) for r in [0, rows), j in [0, cols): rows in parallel, j innermost so the compiler can
// vectorize the inner loop. (The CUDA executor runs one thread per (r, j).)
template <class F>
void parallel_for_2d(const CpuExecutor& exec, i64 rows, int cols, const F& f) {
  const i64 grain = std::max<i64>(1, CpuExecutor::kMinGrain / std::max(cols, 1));
  exec.for_ranges(rows, grain, [&](i64 b, i64 e) {
    const F local = f;  // as in parallel_for
    for (i64 r = b; r < e; ++r)
      for (int j = 0; j < cols; ++j) local(r, j);
  });
}

// Deterministic sum; writes the result to *out (host memory for this executor).
template <class F>
void reduce_sum(const CpuExecutor& exec, i64 n, const F& f, double* out) {
  const i64 num_chunks = (n + CpuExecutor::kReduceChunk - 1) / CpuExecutor::kReduceChunk;
  // Reused across calls (reductions run every minibatch): no allocation once it has grown.
  // (A thread_local named inside the lambda would be each worker's own: bind the caller's here.)
  thread_local std::vector<double> scratch;
  std::vector<double>& partial = scratch;
  if (partial.size() < static_cast<size_t>(num_chunks)) partial.resize(static_cast<size_t>(num_chunks));
  exec.for_ranges(num_chunks, 1, [&](i64 cb, i64 ce) {
    constexpr i64 kChunk = CpuExecutor::kReduceChunk;
    i64 c = cb;
    // Four whole chunks side by side: four sums, each in index order as below (the same bits), whose
    // additions do not wait on one another (one sum is a chain of dependent adds).
    for (; c + 4 <= ce && (c + 4) * kChunk <= n; c += 4) {
      const i64 b = c * kChunk;
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      for (i64 i = b; i < b + kChunk; ++i) {
        s0 += static_cast<double>(f(i));
        s1 += static_cast<double>(f(i + kChunk));
        s2 += static_cast<double>(f(i + 2 * kChunk));
        s3 += static_cast<double>(f(i + 3 * kChunk));
      }
      partial[static_cast<size_t>(c)] = s0;
      partial[static_cast<size_t>(c + 1)] = s1;
      partial[static_cast<size_t>(c + 2)] = s2;
      partial[static_cast<size_t>(c + 3)] = s3;
    }
    for (; c < ce; ++c) {
      const i64 b = c * kChunk;
      const i64 e = std::min(n, b + kChunk);
      double s = 0.0;
      for (i64 i = b; i < e; ++i) s += static_cast<double>(f(i));
      partial[static_cast<size_t>(c)] = s;
    }
  });
  double total = 0.0;
  for (i64 c = 0; c < num_chunks; ++c) total += partial[static_cast<size_t>(c)];
  *out = total;
}

// Of the indices i < n with flags[i] != 0, in order: writes their number to *count and
// a[i], b[i] of the last min(count, k) of them to out_a, out_b (oldest first), all in executor
// memory. (The CUDA twin in kernels/cuda_executor.cuh scans on the device.)
template <class A, class B>
void select_last_flagged(const CpuExecutor&, i64 n, const std::uint8_t* flags, const A* a, const B* b, i64 k,
                         double* count, double* out_a, double* out_b) {
  i64 total = 0;
  for (i64 i = 0; i < n; ++i) total += flags[i] != 0;
  const i64 skip = total > k ? total - k : 0;
  i64 seen = 0;
  for (i64 i = 0; i < n; ++i) {
    if (!flags[i]) continue;
    if (seen >= skip) {
      out_a[seen - skip] = static_cast<double>(a[i]);
      out_b[seen - skip] = static_cast<double>(b[i]);
    }
    ++seen;
  }
  *count = static_cast<double>(total);
}

}  // namespace rlt
