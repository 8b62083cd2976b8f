// ReadbackBuffer<T>: CudaExecutor::Readback<T>, a small asynchronous device-to-host readback
// (the viewer's per-frame pose copy, sim/vec_env.h request_draw_poses / wait_draw_poses). The twin
// of HostReadback<T> in sim/cpu_executor.h, with the same surface, so that VecEnvT and PhysicsBatchT
// use it unchanged on both executors:
//   T* target(n)                 where the producer (a kernel on the executor's stream) writes n
//                                elements: device scratch, grown on demand
//   void start(exec, n)          queues the copy of target()[0, n) into page-locked host memory on
//                                the executor's stream and records an event after it; returns at once
//   const T* wait()              waits on that event only (not the stream, not the device) and
//                                returns the host copy: valid until the next target()/start()
// A second target()/start() before wait() replaces the first (stream order keeps the two apart;
// growing either buffer first waits for the copy in flight). Move-only; frees without throwing.
// Plain C++ (needs only cuda_runtime_api.h), so host-only code can hold one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"
#include "sim/common.h"

namespace rlt {

template <class T>
class ReadbackBuffer {
  static_assert(std::is_trivially_copyable<T>::value, "copied as bytes");

 public:
  ReadbackBuffer() = default;
  ReadbackBuffer(const ReadbackBuffer&) = delete;
  ReadbackBuffer& operator=(const ReadbackBuffer&) = delete;
  ReadbackBuffer(ReadbackBuffer&& o) noexcept
      : m_device(std::move(o.m_device)),
        m_host(std::exchange(o.m_host, nullptr)),
        m_host_capacity(std::exchange(o.m_host_capacity, 0)),
        m_done(std::exchange(o.m_done, nullptr)),
        m_pending(std::exchange(o.m_pending, false)) {}
  ~ReadbackBuffer() {
    if (m_done) {
      if (m_pending) cudaEventSynchronize(m_done);  // the DMA must not outlive the pinned buffer
      cudaEventDestroy(m_done);
    }
    if (m_host) cudaFreeHost(m_host);
  }

  T* target(i64 n) {
    if (m_device.size() < n) {
      settle();  // the copy in flight reads the old scratch
      m_device.resize(n);
    }
    return m_device.data();
  }

  template <class Exec>
  void start(const Exec& exec, i64 n) {
    if (n <= 0) return;
    if (n > m_device.size()) throw std::logic_error("ReadbackBuffer::start: more than target() was asked for");
    if (n > m_host_capacity) {
      settle();  // the copy in flight writes the old pinned buffer
      if (m_host) cudaFreeHost(m_host);
      m_host = nullptr, m_host_capacity = 0;
      RLT_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&m_host), sizeof(T) * static_cast<size_t>(n)));
      m_host_capacity = n;
    }
    if (!m_done) RLT_CUDA_CHECK(cudaEventCreateWithFlags(&m_done, cudaEventDisableTiming));
    RLT_CUDA_CHECK(cudaMemcpyAsync(m_host, m_device.data(), sizeof(T) * static_cast<size_t>(n), cudaMemcpyDeviceToHost,
                                   exec.stream()));
    RLT_CUDA_CHECK(cudaEventRecord(m_done, exec.stream()));
    exec.count_async_copy_to_host(sizeof(T) * static_cast<size_t>(n));
    m_pending = true;
  }

  const T* wait() {
    settle();
    return m_host;
  }

 private:
  void settle() {
    if (m_pending) {
      m_pending = false;
      RLT_CUDA_CHECK(cudaEventSynchronize(m_done));
    }
  }

  DeviceBuffer<T> m_device;  // what the producer writes
  T* m_host = nullptr;       // cudaMallocHost, its page-locked twin
  i64 m_host_capacity = 0;
  cudaEvent_t m_done = nullptr;
  bool m_pending = false;  // a copy was queued and not yet waited for
};

}  // namespace rlt
