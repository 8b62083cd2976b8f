// Shared basics for single-source host/device code (DESIGN.md D1).
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define RLT_HD __host__ __device__
#define RLT_INLINE __forceinline__
#else
#define RLT_HD
#define RLT_INLINE inline
#endif

namespace rlt {

using i64 = std::int64_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

// What one item of a parallel_for costs (sim/cpu_executor.h): cheap (tens of nanoseconds: the CPU
// executor hands them out in chunks of kMinGrain) or costly (microseconds or more, an env's physics
// step: every item may be a task of its own, so a batch of 256 robots uses every thread). The CUDA
// executor runs one item per thread either way.
enum class Items { kCheap, kCostly };

template <class T>
RLT_HD RLT_INLINE T clamp(T x, T lo, T hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// c ? a : b, written so that the same line selects per lane for a lane type (sim/lanes.h select),
// where one env's branch on its data becomes a mask.
template <class M, class T>
RLT_HD RLT_INLINE T select(M c, T a, T b) {
  return c ? a : b;
}

// The scalar of a model's real fields in ModelView<T> (sim/model_view.h): T itself, except for a
// lane type (sim/lanes.h LaneFloat: several envs' data, one model shared by all, kept as float).
template <class T>
struct ModelRealOf {
  using type = T;
};
template <class T>
using ModelReal = typename ModelRealOf<T>::type;

// Math overloads for float and double usable in host and device code alike.
RLT_HD RLT_INLINE float m_exp(float x) { return expf(x); }
RLT_HD RLT_INLINE double m_exp(double x) { return ::exp(x); }
RLT_HD RLT_INLINE float m_log(float x) { return logf(x); }
RLT_HD RLT_INLINE double m_log(double x) { return ::log(x); }
RLT_HD RLT_INLINE float m_tanh(float x) { return tanhf(x); }
RLT_HD RLT_INLINE double m_tanh(double x) { return ::tanh(x); }
RLT_HD RLT_INLINE float m_expm1(float x) { return expm1f(x); }
RLT_HD RLT_INLINE double m_expm1(double x) { return ::expm1(x); }
RLT_HD RLT_INLINE float m_floor(float x) { return floorf(x); }
RLT_HD RLT_INLINE double m_floor(double x) { return ::floor(x); }
RLT_HD RLT_INLINE float m_sqrt(float x) { return sqrtf(x); }
RLT_HD RLT_INLINE double m_sqrt(double x) { return ::sqrt(x); }

// isfinite that works in host and device code (never build with -ffast-math: it breaks this).
RLT_HD RLT_INLINE bool is_finite(float x) {
#if defined(__CUDA_ARCH__)
  return isfinite(x);
#else
  return std::isfinite(x);
#endif
}

}  // namespace rlt
