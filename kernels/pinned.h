// Page-locked host memory and stream events, the two pieces every asynchronous device-to-host copy
// needs (ReadbackBuffer in kernels/readback_buffer.h, HostStaging<CudaExecutor> in
// kernels/cuda_staging.h):
//   PinnedBuffer<T>   owning cudaMallocHost array, the surface of HostBuffer (resize(n) zeroes)
//   CudaEvent         recorded on a stream (or an executor's), waited on alone
// Plain C++ (needs only cuda_runtime_api.h), so host-only code can hold them.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/cuda_check.h"
#include "sim/common.h"

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
// was recorded since the last wait. Move-only; a pending event is waited for before it is destroyed
// (the copy it marks may still write the memory its owner is about to free).
class CudaEvent {
 public:
  CudaEvent() = default;
  CudaEvent(CudaEvent&& o) noexcept : m_event(std::exchange(o.m_event, nullptr)), m_pending(std::exchange(o.m_pending, false)) {}
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() {
    if (m_event != nullptr) {
      if (m_pending) cudaEventSynchronize(m_event);
      cudaEventDestroy(m_event);
    }
  }
  template <class Exec>
  void record(const Exec& exec) {
    record(exec.stream());
  }
  void record(cudaStream_t stream) {
    if (m_event == nullptr) RLT_CUDA_CHECK(cudaEventCreateWithFlags(&m_event, cudaEventDisableTiming));
    RLT_CUDA_CHECK(cudaEventRecord(m_event, stream));
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

}  // namespace rlt
