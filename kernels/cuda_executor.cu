// The non-template part of CudaExecutor (kernels/cuda_executor.h): stream, copies, counters, fill.
#include "kernels/cuda_executor.cuh"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace rlt {

CudaExecutor::State::~State() {
  blas.reset();  // cublasDestroy, while the stream still exists
  scratch = DeviceBuffer<unsigned char>();
  if (stream != nullptr && cudaStreamDestroy(stream) != cudaSuccess) cudaGetLastError();  // never throw
}

CudaExecutor::CudaExecutor(int device) : m_state(std::make_shared<State>()) {
  RLT_CUDA_CHECK(cudaSetDevice(device));
  m_state->device = device;
  // A blocking stream (not cudaStreamNonBlocking): it stays ordered with the legacy default
  // stream, which DeviceBuffer::resize uses to zero memory.
  RLT_CUDA_CHECK(cudaStreamCreateWithFlags(&m_state->stream, cudaStreamDefault));
  int sms = 0, per_sm = 0;
  RLT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  RLT_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  m_state->device_threads = std::max<i64>(kBlockSize, static_cast<i64>(sms) * per_sm / kBlockSize * kBlockSize);
  m_state->max_threads = m_state->device_threads;
}

i64 CudaExecutor::max_threads() const { return m_state->max_threads.load(); }
void CudaExecutor::set_max_threads(i64 threads) {
  m_state->max_threads = std::clamp<i64>(threads / kBlockSize * kBlockSize, kBlockSize, m_state->device_threads);
}

int CudaExecutor::device() const { return m_state->device; }
cudaStream_t CudaExecutor::stream() const { return m_state->stream; }

void CudaExecutor::synchronize() const { RLT_CUDA_CHECK(cudaStreamSynchronize(m_state->stream)); }

void CudaExecutor::copy_to_host_bytes(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  RLT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, m_state->stream));
  RLT_CUDA_CHECK(cudaStreamSynchronize(m_state->stream));
  m_state->d2h_copies += 1;
  m_state->d2h_bytes += static_cast<i64>(bytes);
}

void CudaExecutor::copy_from_host_bytes(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  RLT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, m_state->stream));
  m_state->h2d_copies += 1;
  m_state->h2d_bytes += static_cast<i64>(bytes);
}

void CudaExecutor::copy_device_bytes(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  RLT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, m_state->stream));
}

TransferStats CudaExecutor::transfers() const {
  TransferStats t;
  t.h2d_copies = m_state->h2d_copies.load();
  t.h2d_bytes = m_state->h2d_bytes.load();
  t.d2h_copies = m_state->d2h_copies.load();
  t.d2h_bytes = m_state->d2h_bytes.load();
  t.d2h_async_copies = m_state->d2h_async_copies.load();
  t.d2h_async_bytes = m_state->d2h_async_bytes.load();
  return t;
}

void CudaExecutor::count_async_copy_to_host(size_t bytes) const {
  m_state->d2h_async_copies += 1;
  m_state->d2h_async_bytes += static_cast<i64>(bytes);
}

void CudaExecutor::reset_transfers() {
  m_state->h2d_copies = 0;
  m_state->h2d_bytes = 0;
  m_state->d2h_copies = 0;
  m_state->d2h_bytes = 0;
  m_state->d2h_async_copies = 0;
  m_state->d2h_async_bytes = 0;
}

void CudaExecutor::set_gemm_precision(GemmPrecision p) { m_state->gemm_precision = p; }
GemmPrecision CudaExecutor::gemm_precision() const { return m_state->gemm_precision.load(std::memory_order_relaxed); }

void* CudaExecutor::scratch(size_t bytes) const {
  DeviceBuffer<unsigned char>& s = m_state->scratch;
  if (static_cast<size_t>(s.size()) < bytes) {
    // Grow geometrically so a slowly growing n does not reallocate every call. The old block is
    // freed by cudaFree, which waits for any reduction still using it.
    const size_t grown = std::max(bytes, 2 * static_cast<size_t>(s.size()));
    s.resize(static_cast<i64>(grown));
  }
  return s.data();
}

// ---- fill ------------------------------------------------------------------------------------------

namespace {

// dst[i] = value for a word type W of the element's size (1, 2, 4, 8 or 16 bytes, aligned).
template <class W>
__global__ void __launch_bounds__(CudaExecutor::kBlockSize) fill_words_kernel(W* dst, W value, i64 n) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = value;
}

struct alignas(16) Word16 {
  unsigned char b[16];
};

template <class W>
void launch_fill_words(cudaStream_t stream, void* dst, const void* value, i64 n) {
  W w;
  std::memcpy(&w, value, sizeof(W));
  const i64 blocks = std::min<i64>((n + CudaExecutor::kBlockSize - 1) / CudaExecutor::kBlockSize, 65535);
  fill_words_kernel<W>
      <<<static_cast<unsigned>(blocks), CudaExecutor::kBlockSize, 0, stream>>>(static_cast<W*>(dst), w, n);
  RLT_CUDA_CHECK_LAUNCH("fill_words_kernel");
}

bool all_bytes_equal(const void* value, size_t size) {
  const auto* b = static_cast<const unsigned char*>(value);
  for (size_t k = 1; k < size; ++k)
    if (b[k] != b[0]) return false;
  return true;
}

}  // namespace

void CudaExecutor::fill_bytes(void* dst, const void* value, size_t value_size, i64 n) const {
  if (n <= 0) return;
  cudaStream_t stream = m_state->stream;
  const size_t total = value_size * static_cast<size_t>(n);
  if (all_bytes_equal(value, value_size)) {  // zeros, 0xff, single bytes: the memset engine
    RLT_CUDA_CHECK(cudaMemsetAsync(dst, *static_cast<const unsigned char*>(value), total, stream));
    return;
  }
  const bool aligned = reinterpret_cast<std::uintptr_t>(dst) % value_size == 0;
  if (aligned) {
    switch (value_size) {
      case 2:
        return launch_fill_words<std::uint16_t>(stream, dst, value, n);
      case 4:
        return launch_fill_words<std::uint32_t>(stream, dst, value, n);
      case 8:
        return launch_fill_words<std::uint64_t>(stream, dst, value, n);
      case 16:
        return launch_fill_words<Word16>(stream, dst, value, n);
      default:
        break;
    }
  }
  // Any other size or alignment: place one element, then double the filled prefix with
  // device-to-device copies (log2(n) copies, all queued on the stream).
  RLT_CUDA_CHECK(cudaMemcpyAsync(dst, value, value_size, cudaMemcpyHostToDevice, stream));
  auto* bytes = static_cast<unsigned char*>(dst);
  size_t done = value_size;
  while (done < total) {
    const size_t chunk = std::min(done, total - done);
    RLT_CUDA_CHECK(cudaMemcpyAsync(bytes + done, bytes, chunk, cudaMemcpyDeviceToDevice, stream));
    done += chunk;
  }
}

}  // namespace rlt
