// The CUDA executor against its CPU twin (DESIGN.md D1, STYLE.md 5): device buffers, copies and
// their transfer counts, fill, parallel_for, reduce_sum; our Philox against cuRAND's; and the GEMM
// input rounding of sim/precision.h on the device against the host, bit for bit.
// Every test skips itself, with the reason, where no GPU answers.
#include <gtest/gtest.h>

#include <curand_kernel.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cuda_executor.cuh"
#include "kernels/curand_philox.h"
#include "sim/cpu_executor.h"
#include "sim/philox.h"
#include "sim/precision.h"
#include "sim/vec_env_impl.h"  // EnvCounters, the struct VecEnvT fills
#include "tests/kernels/gpu_test_util.h"

// Extended lambdas may not live in gtest's TestBody (a private member), so the lambda-based
// launches are in these named free functions.
namespace rlt {
namespace gpu_test_detail {

void write_twice_index(const CudaExecutor& exec, i64 n, float* out) {
  parallel_for(exec, n, [=] RLT_HD(i64 i) { out[i] = 2.0f * static_cast<float>(i); });
}

void sum_of_squares(const CudaExecutor& exec, i64 n, const float* x, double* out) {
  reduce_sum(
      exec, n, [=] RLT_HD(i64 i) { return x[i] * x[i]; }, out);  // float terms, summed in double
}

// out[i] = the bits of round_to(the float with bits i * stride, p), on the device.
void round_on_device(const CudaExecutor& exec, i64 n, u32 stride, GemmPrecision p, u32* out) {
  parallel_for(exec, n,
               [=] RLT_HD(i64 i) { out[i] = float_bits(round_to(float_from_bits(static_cast<u32>(i) * stride), p)); });
}

}  // namespace gpu_test_detail

namespace {

using gpu_test::all_close;

template <class T>
std::vector<T> to_host(const CudaExecutor& exec, const T* src, i64 n) {
  std::vector<T> h(static_cast<size_t>(n));
  exec.copy_to_host(h.data(), src, n);
  return h;
}

// A value per index from Philox bits: exact integer work plus a conversion that is exact on both
// sides (24-bit fraction), so CPU and GPU agree bit for bit.
struct IndexValue {
  RLT_HD float operator()(i64 i) const {
    const U32x4 r = philox4x32_10(U32x4{{static_cast<u32>(i), static_cast<u32>(i >> 32), 7u, 0u}}, 11u, 13u);
    return 2.0f * u32_to_unit_float(r.v[0]) - 1.0f;
  }
};

// The body both executors run: an exact value, a libm value (CUDA's sinf is within 2 ulp of
// glibc's), and a hit count that must end at exactly 1 per index.
struct WriteValues {
  float* exact;
  float* approx;
  unsigned* hits;
  RLT_HD void operator()(i64 i) const {
    const float v = IndexValue{}(i);
    exact[i] = v;
    approx[i] = sinf(3.0f * v) + v * v;
#if defined(__CUDA_ARCH__)
    atomicAdd(hits + i, 1u);
#else
    hits[i] += 1;
#endif
  }
};

// f(r, j) for parallel_for_2d: records which (r, j) it ran as, and counts hits.
struct WriteRowCol {
  i64* rows_seen;
  int* cols_seen;
  unsigned* hits;
  int cols;
  RLT_HD void operator()(i64 r, int j) const {
    const i64 idx = r * cols + j;
    rows_seen[idx] = r;
    cols_seen[idx] = j;
#if defined(__CUDA_ARCH__)
    atomicAdd(hits + idx, 1u);
#else
    hits[idx] += 1;
#endif
  }
};

// A reduction term read from memory and computed, in double.
struct ReduceTerm {
  const float* x;
  RLT_HD double operator()(i64 i) const {
    return static_cast<double>(x[i]) * (i % 3 ? 1.0 : -0.7) + 1e-3 * static_cast<double>(i % 1000);
  }
};

TEST(DeviceBuffer, ResizeZeroFillsAndMoveTransfersOwnership) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  DeviceBuffer<float> a(1000);
  EXPECT_EQ(a.size(), 1000);
  EXPECT_NE(a.data(), nullptr);
  for (float v : to_host(exec, a.data(), a.size())) ASSERT_EQ(v, 0.0f);
  exec.fill(a.data(), 3.0f, a.size());
  a.resize(1000);  // same size: still zeroed, as HostBuffer::resize does
  for (float v : to_host(exec, a.data(), a.size())) ASSERT_EQ(v, 0.0f);
  exec.fill(a.data(), 4.0f, a.size());
  const float* p = a.data();
  DeviceBuffer<float> b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0);
  EXPECT_EQ(b.data(), p);
  for (float v : to_host(exec, b.data(), b.size())) ASSERT_EQ(v, 4.0f);
  DeviceBuffer<float> c(10);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 1000);
  c.resize(0);
  EXPECT_EQ(c.data(), nullptr);
  EXPECT_EQ(c.size(), 0);
  EXPECT_THROW(c.resize(-1), std::invalid_argument);
}

TEST(CudaExecutor, CopiesRoundTripAndCountTransfers) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  const CudaExecutor alias = exec;  // copies share the stream and the counters
  exec.reset_transfers();
  std::vector<std::int32_t> h(12345);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<std::int32_t>(i * 7919 % 100003) - 50000;
  const i64 n = static_cast<i64>(h.size());
  DeviceBuffer<std::int32_t> d1(n), d2(n);
  exec.copy_from_host(d1.data(), h.data(), n);
  alias.copy(d2.data(), d1.data(), n);               // device to device: not a transfer
  exec.copy(d2.data(), d2.data(), n);                // same pointer: nothing to do
  exec.copy_from_host(d1.data(), h.data(), i64{0});  // empty: not counted
  std::vector<std::int32_t> back(h.size(), 0);
  alias.copy_to_host(back.data(), d2.data(), n);
  EXPECT_EQ(back, h);
  const TransferStats t = exec.transfers();
  EXPECT_EQ(t.h2d_copies, 1);
  EXPECT_EQ(t.h2d_bytes, n * 4);
  EXPECT_EQ(t.d2h_copies, 1);
  EXPECT_EQ(t.d2h_bytes, n * 4);
  EXPECT_EQ(t.copies(), 2);
  EXPECT_EQ(t.bytes(), n * 8);
  exec.reset_transfers();
  EXPECT_EQ(alias.transfers().copies(), 0);
  EXPECT_EQ(alias.stream(), exec.stream());
}

struct Bytes12 {
  std::uint32_t a, b, c;
};
struct Bytes40 {
  float v[10];
};
struct Pair32 {
  std::uint32_t lo, hi;
};

template <class T>
void expect_filled(const CudaExecutor& exec, i64 total, i64 begin, i64 n, const T& value, const T& outside,
                   const char* what, T* base) {
  const std::vector<T> h = to_host(exec, base, total);
  for (i64 i = 0; i < total; ++i) {
    const T& want = (i >= begin && i < begin + n) ? value : outside;
    ASSERT_EQ(std::memcmp(&h[static_cast<size_t>(i)], &want, sizeof(T)), 0) << what << " element " << i;
  }
}

TEST(CudaExecutor, FillWorksForAnyTriviallyCopyableType) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  // Each case fills the middle of a zeroed buffer and checks both the range and its neighbours.
  {  // one byte: the memset path
    DeviceBuffer<std::uint8_t> b(1001);
    exec.fill(b.data() + 3, std::uint8_t{0xA5}, 997);
    expect_filled<std::uint8_t>(exec, 1001, 3, 997, 0xA5, 0, "uint8", b.data());
  }
  {  // float: the 4-byte word kernel
    DeviceBuffer<float> b(70001);
    exec.fill(b.data() + 1, -1.25f, 70000);
    expect_filled<float>(exec, 70001, 1, 70000, -1.25f, 0.0f, "float", b.data());
  }
  {  // the struct VecEnvT fills: 16-byte word kernel
    DeviceBuffer<EnvCounters> b(300);
    const EnvCounters v{-3, 7u, 2.5f, -1.75e7f};
    exec.fill(b.data() + 1, v, 298);
    expect_filled<EnvCounters>(exec, 300, 1, 298, v, EnvCounters{0, 0, 0.0f, 0}, "EnvCounters", b.data());
  }
  {  // 12 bytes: no word type, the doubling-copy path, with a length that is not a power of two
    DeviceBuffer<Bytes12> b(1000);
    const Bytes12 v{1u, 2u, 3u};
    exec.fill(b.data() + 5, v, 989);
    expect_filled<Bytes12>(exec, 1000, 5, 989, v, Bytes12{0, 0, 0}, "Bytes12", b.data());
  }
  {  // 40 bytes
    DeviceBuffer<Bytes40> b(33);
    Bytes40 v;
    for (int k = 0; k < 10; ++k) v.v[k] = 0.5f * static_cast<float>(k) - 1.0f;
    exec.fill(b.data(), v, 33);
    expect_filled<Bytes40>(exec, 33, 0, 33, v, Bytes40{}, "Bytes40", b.data());
  }
  {  // an 8-byte type at an address that is 4- but not 8-aligned: the doubling path again
    DeviceBuffer<std::uint32_t> raw(2 * 100 + 2);
    Pair32* p = reinterpret_cast<Pair32*>(raw.data() + 1);
    const Pair32 v{0x01020304u, 0xA0B0C0D0u};
    exec.fill(p, v, 100);
    const std::vector<std::uint32_t> h = to_host(exec, raw.data(), raw.size());
    EXPECT_EQ(h.front(), 0u);
    EXPECT_EQ(h.back(), 0u);
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(h[static_cast<size_t>(1 + 2 * i)], v.lo) << i;
      ASSERT_EQ(h[static_cast<size_t>(2 + 2 * i)], v.hi) << i;
    }
  }
  {  // n == 0 touches nothing (and a null pointer is fine)
    exec.fill(static_cast<float*>(nullptr), 1.0f, 0);
    exec.synchronize();
  }
}

TEST(CudaExecutor, ParallelForMatchesTheCpuExecutor) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  // Sizes around the block size (256) and one large enough for many blocks.
  for (i64 n : {i64{0}, i64{1}, i64{255}, i64{256}, i64{257}, (i64{1} << 20) + 3}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<float> ref_exact(static_cast<size_t>(n)), ref_approx(static_cast<size_t>(n));
    std::vector<unsigned> ref_hits(static_cast<size_t>(n), 0);
    parallel_for(cpu, n, WriteValues{ref_exact.data(), ref_approx.data(), ref_hits.data()});

    DeviceBuffer<float> exact(n), approx(n);
    DeviceBuffer<unsigned> hits(n);
    parallel_for(exec, n, WriteValues{exact.data(), approx.data(), hits.data()});
    const auto got_exact = to_host(exec, exact.data(), n);
    const auto got_approx = to_host(exec, approx.data(), n);
    const auto got_hits = to_host(exec, hits.data(), n);
    EXPECT_EQ(got_hits, std::vector<unsigned>(static_cast<size_t>(n), 1u)) << "every index exactly once";
    EXPECT_EQ(got_exact, ref_exact) << "integer work and exact conversions agree bit for bit";
    // sinf: CUDA's is within 2 ulp, glibc's within 1; plus FMA contraction of v*v + s on the device.
    EXPECT_TRUE(all_close("sinf(3v) + v^2", got_approx.data(), ref_approx.data(), got_approx.size(), 1e-6, 1e-6));
  }
  // An extended __host__ __device__ lambda.
  const i64 n = 1000;
  DeviceBuffer<float> out(n);
  gpu_test_detail::write_twice_index(exec, n, out.data());
  const auto h = to_host(exec, out.data(), n);
  for (i64 i = 0; i < n; ++i) ASSERT_EQ(h[static_cast<size_t>(i)], 2.0f * static_cast<float>(i)) << i;
}

TEST(CudaExecutor, ParallelFor2dMatchesTheCpuExecutor) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  struct Shape {
    i64 rows;
    int cols;
  };
  for (Shape s : {Shape{0, 5}, Shape{7, 0}, Shape{1, 1}, Shape{3, 257}, Shape{1001, 33}, Shape{100000, 3}}) {
    SCOPED_TRACE(std::to_string(s.rows) + " x " + std::to_string(s.cols));
    const i64 n = s.rows * s.cols;
    std::vector<i64> ref_rows(static_cast<size_t>(n), -1);
    std::vector<int> ref_cols(static_cast<size_t>(n), -1);
    std::vector<unsigned> ref_hits(static_cast<size_t>(n), 0);
    parallel_for_2d(cpu, s.rows, s.cols, WriteRowCol{ref_rows.data(), ref_cols.data(), ref_hits.data(), s.cols});
    DeviceBuffer<i64> rows(n);
    DeviceBuffer<int> cols(n);
    DeviceBuffer<unsigned> hits(n);
    parallel_for_2d(exec, s.rows, s.cols, WriteRowCol{rows.data(), cols.data(), hits.data(), s.cols});
    EXPECT_EQ(to_host(exec, hits.data(), n), std::vector<unsigned>(static_cast<size_t>(n), 1u));
    EXPECT_EQ(to_host(exec, rows.data(), n), ref_rows);
    EXPECT_EQ(to_host(exec, cols.data(), n), ref_cols);
  }
}

TEST(CudaExecutor, ReduceSumMatchesTheCpuExecutor) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  CpuExecutor cpu(2);
  const i64 max_n = (i64{1} << 22) + 1;
  std::vector<float> x(static_cast<size_t>(max_n));
  for (i64 i = 0; i < max_n; ++i) x[static_cast<size_t>(i)] = IndexValue{}(i);
  DeviceBuffer<float> dx(max_n);
  exec.copy_from_host(dx.data(), x.data(), max_n);
  DeviceBuffer<double> dsum(2);
  size_t scratch_after_largest = 0;
  // Largest first: the scratch must not grow (nor be reallocated) for the smaller ones.
  for (i64 n : {max_n, i64{123457}, i64{1000}, i64{1}, i64{0}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    double ref = -1.0, abs_sum = 0.0;
    reduce_sum(cpu, n, ReduceTerm{x.data()}, &ref);
    for (i64 i = 0; i < n; ++i) abs_sum += std::abs(ReduceTerm{x.data()}(i));
    reduce_sum(exec, n, ReduceTerm{dx.data()}, dsum.data());
    reduce_sum(exec, n, ReduceTerm{dx.data()}, dsum.data() + 1);
    const auto got = to_host(exec, dsum.data(), 2);
    // Both sums are rounded differently (CUB's tree vs the CPU's 4096-chunks): each is within
    // ~(chunk + log2 n) * 1.1e-16 of the exact sum, relative to sum |terms|; 1e-11 is far above.
    EXPECT_NEAR(got[0], ref, 1e-11 * abs_sum + 1e-300);
    EXPECT_EQ(std::memcmp(&got[0], &got[1], sizeof(double)), 0) << "run to run, bit for bit";
    if (n == max_n) scratch_after_largest = static_cast<size_t>(exec.state().scratch.size());
    EXPECT_EQ(static_cast<size_t>(exec.state().scratch.size()), scratch_after_largest);
    if (n == 0) EXPECT_EQ(got[0], 0.0);
  }
  EXPECT_GT(scratch_after_largest, 0u);
  // An extended lambda returning float; terms are squares of values in [-1, 1).
  const i64 n = 100003;
  double ref = 0.0;
  for (i64 i = 0; i < n; ++i) ref += static_cast<double>(x[static_cast<size_t>(i)] * x[static_cast<size_t>(i)]);
  gpu_test_detail::sum_of_squares(exec, n, dx.data(), dsum.data());
  double got = 0.0;
  exec.copy_to_host(&got, dsum.data(), 1);
  EXPECT_NEAR(got, ref, 1e-11 * ref);
}

// ---- Philox: ours on the device, and cuRAND's ----------------------------------------------------

struct PhiloxCase {
  U32x4 ctr;
  u32 k0, k1;
};

// Counters and keys with all-zero, all-one, mixed words, and a carry out of ctr.v[0].
const PhiloxCase kPhiloxCases[] = {
    {{{0u, 0u, 0u, 0u}}, 0u, 0u},
    {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu},
    {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u},
    {{{17u, 3u, 5u, 0u}}, 42u, 0x9E3779B9u * 4u},
    {{{0xffffffffu, 5u, 9u, 0x80000000u}}, 0x12345678u, 0x9abcdef0u},
    {{{123456u, 0x3fffffffu, 0xfffffffeu, 1u}}, 0xdeadbeefu, 0u},
};
constexpr int kNumPhiloxCases = sizeof(kPhiloxCases) / sizeof(kPhiloxCases[0]);

__global__ void our_philox_kernel(const PhiloxCase* cases, int n, U32x4* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = philox4x32_10(cases[i].ctr, cases[i].k0, cases[i].k1);
}

__global__ void curand_block_kernel(const PhiloxCase* cases, int n, U32x4* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const PhiloxCase c = cases[i];
  const uint4 r =
      curand_Philox4x32_10(make_uint4(c.ctr.v[0], c.ctr.v[1], c.ctr.v[2], c.ctr.v[3]), make_uint2(c.k0, c.k1));
  out[i] = U32x4{{r.x, r.y, r.z, r.w}};
}

// kWords consecutive curand() outputs after curand_init(seed, subsequence, offset).
constexpr int kWords = 10;
__global__ void curand_stream_kernel(const CurandPhiloxInit* inits, int n, u32* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t s;
  curand_init(inits[i].seed, inits[i].subsequence, inits[i].offset, &s);
  for (int w = 0; w < kWords; ++w) out[i * kWords + w] = curand(&s);
}

template <class T>
DeviceBuffer<T> upload(const CudaExecutor& exec, const std::vector<T>& h) {
  DeviceBuffer<T> d(static_cast<i64>(h.size()));
  exec.copy_from_host(d.data(), h.data(), static_cast<i64>(h.size()));
  return d;
}

// The counter after `blocks` cuRAND steps: (v[0], v[1]) is one 64-bit counter.
U32x4 advance_low64(U32x4 c, u64 blocks) {
  const u64 lo = (static_cast<u64>(c.v[1]) << 32 | c.v[0]) + blocks;
  c.v[0] = static_cast<u32>(lo);
  c.v[1] = static_cast<u32>(lo >> 32);
  return c;
}

// sim/precision.h's rounding is one RLT_HD function for both sides: every 4099th fp32 bit pattern
// (every exponent, both signs, inf and NaNs) rounds to the same bits on the device as on the host
// (NaNs: a NaN on both sides).
TEST(CudaPrecision, RoundingOnTheDeviceMatchesTheHostBitForBit) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  const u32 stride = 4099;
  const i64 n = static_cast<i64>(0xffffffffull / stride) + 1;
  DeviceBuffer<u32> dout(n);
  for (GemmPrecision p : {GemmPrecision::kTf32, GemmPrecision::kBf16, GemmPrecision::kFp16}) {
    gpu_test_detail::round_on_device(exec, n, stride, p, dout.data());
    std::vector<u32> got(static_cast<size_t>(n));
    exec.copy_to_host(got.data(), dout.data(), n);
    i64 bad = 0;
    for (i64 i = 0; i < n; ++i) {
      const float want = round_to(float_from_bits(static_cast<u32>(i) * stride), p);
      const u32 g = got[static_cast<size_t>(i)];
      const bool ok = std::isnan(want) ? std::isnan(float_from_bits(g)) : g == float_bits(want);
      if (!ok && bad++ < 5)
        ADD_FAILURE() << gemm_precision_name(p) << ": 0x" << std::hex << static_cast<u32>(i) * stride << " -> device 0x"
                      << g << ", host 0x" << float_bits(want);
    }
    EXPECT_EQ(bad, 0) << gemm_precision_name(p);
  }
}

TEST(CudaPhilox, OurPhiloxOnTheDeviceMatchesTheHostBitForBit) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  const std::vector<PhiloxCase> cases(kPhiloxCases, kPhiloxCases + kNumPhiloxCases);
  auto dcases = upload(exec, cases);
  DeviceBuffer<U32x4> dout(kNumPhiloxCases);
  our_philox_kernel<<<1, 32, 0, exec.stream()>>>(dcases.data(), kNumPhiloxCases, dout.data());
  RLT_CUDA_CHECK_LAUNCH("our_philox_kernel");
  const auto got = to_host(exec, dout.data(), kNumPhiloxCases);
  for (int i = 0; i < kNumPhiloxCases; ++i) {
    const U32x4 want = philox4x32_10(cases[static_cast<size_t>(i)].ctr, cases[static_cast<size_t>(i)].k0,
                                     cases[static_cast<size_t>(i)].k1);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(got[static_cast<size_t>(i)].v[w], want.v[w]) << "case " << i << " word " << w;
  }
}

TEST(CudaPhilox, CurandBlockFunctionEqualsOurs) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  const std::vector<PhiloxCase> cases(kPhiloxCases, kPhiloxCases + kNumPhiloxCases);
  auto dcases = upload(exec, cases);
  DeviceBuffer<U32x4> dout(kNumPhiloxCases);
  curand_block_kernel<<<1, 32, 0, exec.stream()>>>(dcases.data(), kNumPhiloxCases, dout.data());
  RLT_CUDA_CHECK_LAUNCH("curand_block_kernel");
  const auto got = to_host(exec, dout.data(), kNumPhiloxCases);
  for (int i = 0; i < kNumPhiloxCases; ++i) {
    const PhiloxCase& c = cases[static_cast<size_t>(i)];
    const U32x4 want = philox4x32_10(c.ctr, c.k0, c.k1);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(got[static_cast<size_t>(i)].v[w], want.v[w]) << "case " << i << " word " << w;
  }
}

// curand_init(seed, subsequence, offset) maps onto (key, counter) as kernels/curand_philox.h says:
// its stream is our blocks at counters ctr, ctr + 1, ... in the low 64 bits, four words each,
// starting at word offset % 4.
TEST(CudaPhilox, CurandInitMapsOntoKeyAndCounter) {
  RLT_REQUIRE_GPU();
  CudaExecutor exec;
  std::vector<CurandPhiloxInit> inits;
  std::vector<std::vector<u32>> want;
  for (const PhiloxCase& c : kPhiloxCases) {
    if (c.ctr.v[1] >= (1u << 30)) continue;  // outside the mapping's range (offset overflows)
    for (u32 word : {0u, 2u}) {              // start on a block boundary, and two words into the block
      CurandPhiloxInit init = curand_philox_init_for(c.ctr, c.k0, c.k1);
      init.offset += word;
      inits.push_back(init);
      std::vector<u32> w;
      for (u64 block = 0; w.size() < word + kWords; ++block) {
        const U32x4 r = philox4x32_10(advance_low64(c.ctr, block), c.k0, c.k1);
        w.insert(w.end(), r.v, r.v + 4);
      }
      want.emplace_back(w.begin() + word, w.begin() + word + kWords);
    }
  }
  // Our Philox struct: its j-th next4() is the first block of curand_philox_init_for(rng).
  Philox rng(0x0123456789abcdefull, RngStream::kAction, 17u, 3u, 5u);
  for (int j = 0; j < 3; ++j) {
    inits.push_back(curand_philox_init_for(rng));
    const U32x4 ctr = rng.ctr;  // the counter this next4() draws at
    const U32x4 first = rng.next4();
    std::vector<u32> w(first.v, first.v + 4);
    // The words after the first block follow cuRAND's counter (v[0] + 1), not next4's (v[3] + 1).
    for (u64 block = 1; w.size() < kWords; ++block) {
      const U32x4 r = philox4x32_10(advance_low64(ctr, block), rng.k0, rng.k1);
      w.insert(w.end(), r.v, r.v + 4);
    }
    w.resize(kWords);
    want.push_back(w);
  }
  const int n = static_cast<int>(inits.size());
  auto dinits = upload(exec, inits);
  DeviceBuffer<u32> dout(static_cast<i64>(n) * kWords);
  curand_stream_kernel<<<1, 64, 0, exec.stream()>>>(dinits.data(), n, dout.data());
  RLT_CUDA_CHECK_LAUNCH("curand_stream_kernel");
  const auto got = to_host(exec, dout.data(), dout.size());
  for (int i = 0; i < n; ++i)
    for (int w = 0; w < kWords; ++w)
      EXPECT_EQ(got[static_cast<size_t>(i * kWords + w)], want[static_cast<size_t>(i)][static_cast<size_t>(w)])
          << "init " << i << " (seed " << inits[static_cast<size_t>(i)].seed << ", subsequence "
          << inits[static_cast<size_t>(i)].subsequence << ", offset " << inits[static_cast<size_t>(i)].offset
          << ") word " << w;
}

}  // namespace
}  // namespace rlt
