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
// growing either buffer first waits for the copy in flight). Move-only (its members are); frees
// without throwing. Page-locked memory and the event: kernels/pinned.h.
// Plain C++ (needs only cuda_runtime_api.h), so host-only code can hold one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <type_traits>

#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"
#include "kernels/pinned.h"
#include "sim/common.h"

namespace rlt {

template <class T>
class ReadbackBuffer {
  static_assert(std::is_trivially_copyable<T>::value, "copied as bytes");

 public:
  T* target(i64 n) {
    if (m_device.size() < n) {
      m_done.wait();  // the copy in flight reads the old scratch
      m_device.resize(n);
    }
    return m_device.data();
  }

  template <class Exec>
  void start(const Exec& exec, i64 n) {
    if (n <= 0) return;
    if (n > m_device.size()) throw std::logic_error("ReadbackBuffer::start: more than target() was asked for");
    if (n > m_host.size()) {
      m_done.wait();  // the copy in flight writes the old pinned buffer
      m_host.resize(n);
    }
    const size_t bytes = sizeof(T) * static_cast<size_t>(n);
    RLT_CUDA_CHECK(cudaMemcpyAsync(m_host.data(), m_device.data(), bytes, cudaMemcpyDeviceToHost, exec.stream()));
    m_done.record(exec);
    exec.count_async_copy_to_host(bytes);
  }

  const T* wait() {
    m_done.wait();
    return m_host.data();
  }

 private:
  // Declared in this order so that the event (waited for if a copy is pending) is destroyed
  // before the memory the copy reads and writes.
  DeviceBuffer<T> m_device;  // what the producer writes
  PinnedBuffer<T> m_host;    // its page-locked twin
  CudaEvent m_done;          // recorded after the copy
};

}  // namespace rlt
