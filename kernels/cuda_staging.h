// HostStaging<CudaExecutor>: how a PlacedEnv (sim/placed_env.h) moves arrays between CUDA device
// memory and host staging, the twin of HostStaging<CpuExecutor> there:
//   Buffer<T>                   PinnedBuffer<T>: page-locked host memory (cudaMallocHost), so the
//                               copies are DMA and queue without waiting
//   Event                       CudaEvent: record(exec) on the executor's stream; wait() on it only
//   to_host(exec, host, src, n)    cudaMemcpyAsync device -> pinned host on the stream (queued;
//                                  counted in exec.transfers() as an asynchronous copy)
//   from_host(exec, dst, host, n)  exec.copy_from_host: pinned host -> device, queued, counted
// Plain C++ (needs only cuda_runtime_api.h), so host code compiled by g++ (apps/) instantiates
// PlacedEnv over CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/cuda_check.h"
#include "kernels/cuda_executor.h"
#include "sim/placed_env.h"

namespace rlt {

// Owning page-locked host array; move-only, the surface of HostBuffer (resize(n) leaves n zeroed
// elements). Freed without throwing.
template <class T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable<T>::value, "copied as bytes");

 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(i64 n) { resize(n); }
  ~PinnedBuffer() { release(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept : m_data(std::exchange(o.m_data, nullptr)), m_size(std::exchange(o.m_size, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      m_data = std::exchange(o.m_data, nullptr);
      m_size = std::exchange(o.m_size, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void resize(i64 n) {
    if (n < 0) throw std::invalid_argument("PinnedBuffer::resize: negative size " + std::to_string(n));
    if (n != m_size) {
      release();
      if (n > 0) {
        void* p = nullptr;
        RLT_CUDA_CHECK(cudaMallocHost(&p, sizeof(T) * static_cast<size_t>(n)));
        m_data = static_cast<T*>(p);
        m_size = n;
      }
    }
    for (i64 i = 0; i < m_size; ++i) m_data[i] = T{};
  }
  T* data() { return m_data; }
  const T* data() const { return m_data; }
  i64 size() const { return m_size; }

 private:
  void release() noexcept {
    if (m_data != nullptr && cudaFreeHost(m_data) != cudaSuccess) cudaGetLastError();
    m_data = nullptr;
    m_size = 0;
  }
  T* m_data = nullptr;
  i64 m_size = 0;
};

// An event on an executor's stream, created on first record. wait() returns at once when nothing
// was recorded since the last wait.
class CudaEvent {
 public:
  CudaEvent() = default;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() {
    if (m_event != nullptr) {
      if (m_pending) cudaEventSynchronize(m_event);
      cudaEventDestroy(m_event);
    }
  }
  void record(const CudaExecutor& exec) {
    if (m_event == nullptr) RLT_CUDA_CHECK(cudaEventCreateWithFlags(&m_event, cudaEventDisableTiming));
    RLT_CUDA_CHECK(cudaEventRecord(m_event, exec.stream()));
    m_pending = true;
  }
  void wait() {
    if (!m_pending) return;
    m_pending = false;
    RLT_CUDA_CHECK(cudaEventSynchronize(m_event));
  }

 private:
  cudaEvent_t m_event = nullptr;
  bool m_pending = false;
};

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
