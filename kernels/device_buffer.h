// DeviceBuffer<T>: the owning device array behind CudaExecutor::Buffer<T> (DESIGN.md D2: no naked
// cudaMalloc/cudaFree). The device twin of HostBuffer in sim/cpu_executor.h, with the same surface:
// move-only, data(), size(), resize(n) which leaves n zeroed elements.
// Plain C++ (needs only cuda_runtime_api.h), so host-only code can hold one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/cuda_check.h"
#include "sim/common.h"

namespace rlt {

template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable<T>::value, "device buffers hold plain data (copied as bytes)");

 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(i64 n) { resize(n); }
  ~DeviceBuffer() { release(); }

  DeviceBuffer(DeviceBuffer&& other) noexcept
      : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      m_data = std::exchange(other.m_data, nullptr);
      m_size = std::exchange(other.m_size, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // n zeroed elements (previous contents are discarded, as in HostBuffer::resize). Synchronous:
  // when it returns the zeros are in place for every stream. Allocation is rare (setup, growth),
  // so this does not need to be stream-ordered.
  void resize(i64 n) {
    if (n < 0) throw std::invalid_argument("DeviceBuffer::resize: negative size " + std::to_string(n));
    if (n != m_size) {
      release();
      if (n > 0) {
        const size_t bytes = sizeof(T) * static_cast<size_t>(n);
        void* p = nullptr;
        const cudaError_t err = cudaMalloc(&p, bytes);
        if (err != cudaSuccess) {
          cudaGetLastError();  // an out-of-memory error is not sticky; leave no trace of it
          throw std::runtime_error("DeviceBuffer: cudaMalloc of " + std::to_string(bytes) + " bytes (" +
                                   std::to_string(n) + " elements) failed: " + cudaGetErrorName(err) + ": " +
                                   cudaGetErrorString(err));
        }
        m_data = static_cast<T*>(p);
        m_size = n;
      }
    }
    if (m_size > 0) {
      // On the legacy default stream: it waits for earlier work on every blocking stream (the
      // CudaExecutor's stream is one), so no kernel still reads the old contents; and it is waited
      // for here, so the zeros are in place for work later submitted on any stream.
      RLT_CUDA_CHECK(cudaMemsetAsync(m_data, 0, bytes(), cudaStreamLegacy));
      RLT_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    }
  }

  T* data() { return m_data; }
  const T* data() const { return m_data; }
  i64 size() const { return m_size; }
  size_t bytes() const { return sizeof(T) * static_cast<size_t>(m_size); }

 private:
  // Never throws: cudaFree waits for the device (no kernel still uses the memory), and an error
  // here (driver already shut down at exit, earlier sticky fault) has no one left to report to.
  // A non-sticky error is cleared so that a later launch check does not report it as its own.
  void release() noexcept {
    if (m_data != nullptr) {
      if (cudaFree(m_data) != cudaSuccess) cudaGetLastError();
      m_data = nullptr;
      m_size = 0;
    }
  }

  T* m_data = nullptr;
  i64 m_size = 0;
};

}  // namespace rlt
