// SIMD lanes: kLanes envs stepped by the same instructions (the CPU executor's classic-control
// step, EnvKernel::step_lanes in sim/vec_env_impl.h), and the math their single-source code calls.
//
// A lane type is the compiler's vector type (GCC and Clang `vector_size`): `f32xL` holds the same
// float of kLanes envs, and the arithmetic, comparison, `?:`, `&&` and `||` operators of scalar
// code apply lane by lane, scalars broadcast. So an env written as a template over its float type F
// (float: one env, the CUDA thread's and the scalar tail's; f32xL: kLanes envs) reads like the
// scalar code it was: a comparison gives a MaskOf<F> (bool, or a lane mask of 0 / -1), `c ? a : b`
// selects per lane, any(mask) asks whether some lane is set. Each lane computes exactly what the
// scalar code computes for that env (the same IEEE operations in the same order; the build has
// -ffp-contract=off), so lanes and scalar give the same bits (tests/envs/test_classic_trace.cpp).
//
// What the operators do not cover is here, overloaded for float and the lane types: m_sincos,
// m_floor, clamp, is_finite, any, splat (a scalar assigned to every lane).
//
// m_sincos is glibc 2.36's sinf/cosf/sincosf (sysdeps/ieee754/flt-32/s_sincosf.h with
// sysdeps/x86/fpu/sincosf_poly.h, as its x86-64 FMA build compiles them: in double, one rounding
// per fma) for |x| < 120, and libm's sinf/cosf beyond: the bits the classic envs got from libm on
// Debian 12 (tests/sim/test_lanes.cpp checks it against the libm it runs with over (-120, 120)),
// the same in lanes and in scalar code. With another libm the two would differ in the last bit now
// and then; the envs keep glibc 2.36's. CUDA device code calls CUDA's sinf/cosf as before.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "sim/common.h"

namespace rlt {

// Lane code is small and hot; a call would pass its vectors through memory.
#if defined(__GNUC__) || defined(__clang__)
#define RLT_LANES_INLINE inline __attribute__((always_inline))
#else
#define RLT_LANES_INLINE inline
#endif

#if !defined(__CUDACC__) && (defined(__GNUC__) || defined(__clang__))
#define RLT_LANES 1
// Envs per lane vector: 8 floats (one AVX register; the double-precision sin/cos fills an AVX-512
// register). On a CPU without them the compiler splits each vector into what it has.
constexpr int kLanes = 8;
typedef float f32xL __attribute__((vector_size(kLanes * sizeof(float))));
typedef std::int32_t i32xL __attribute__((vector_size(kLanes * sizeof(std::int32_t))));
typedef double f64xL __attribute__((vector_size(kLanes * sizeof(double))));
typedef std::int64_t i64xL __attribute__((vector_size(kLanes * sizeof(std::int64_t))));
#endif

// The comparison result of F: bool for float, a lane mask (0 or -1 per lane) for a lane type.
template <class F>
using MaskOf = decltype(F{} < F{});

RLT_HD RLT_INLINE bool any(bool m) { return m; }
// v in every lane of F (for float: v). Needed where a scalar is assigned, not combined by an operator.
template <class F>
RLT_HD RLT_INLINE F splat(float v) {
  return v;
}
// The random numbers of a step in lanes: none (an env whose step draws does not step in lanes).
struct NoRandom {};

#if defined(RLT_LANES)
RLT_LANES_INLINE bool any(i32xL m) {
  std::int32_t r = 0;
  for (int l = 0; l < kLanes; ++l) r |= m[l];
  return r != 0;
}
RLT_LANES_INLINE i32xL is_finite(f32xL x) {
  i32xL bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0x7f800000) != 0x7f800000;
}
template <class S>
RLT_LANES_INLINE f32xL clamp(f32xL x, S lo, S hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}
RLT_LANES_INLINE f32xL m_floor(f32xL x) {
  f32xL r;
  for (int l = 0; l < kLanes; ++l) r[l] = floorf(x[l]);
  return r;
}
template <>
RLT_LANES_INLINE f32xL splat<f32xL>(float v) {
  f32xL r;
  for (int l = 0; l < kLanes; ++l) r[l] = v;
  return r;
}
// kLanes rows of n values (row-major, as VecEnv's per-env arrays are) from src into n lane
// vectors, lane l holding row l; store_rows writes them back.
template <class V, class T>
RLT_LANES_INLINE void load_rows(V* dst, const T* src, int n) {
  for (int k = 0; k < n; ++k)
    for (int l = 0; l < kLanes; ++l) dst[k][l] = src[l * n + k];
}
template <class V, class T>
RLT_LANES_INLINE void store_rows(T* dst, const V* src, int n) {
  for (int l = 0; l < kLanes; ++l)
    for (int k = 0; k < n; ++k) dst[l * n + k] = src[k][l];
}
#endif

// ---- sin and cos with glibc 2.36's bits ---------------------------------------------------------

namespace sincosf_detail {

// glibc's __sincosf_table[0] (sysdeps/x86/fpu/s_sincosf_data.c; the table of quadrants 2 and 3
// holds the cosine polynomial negated, which is the same as negating its result).
constexpr double kHalfPiInv24 = 0x1.45F306DC9C883p+23;  // 2/pi * 2^24: the quadrant lands in bits 24..31
constexpr double kHalfPi = 0x1.921FB54442D18p0;
constexpr double kC0 = 0x1p0, kC1 = -0x1.ffffffd0c621cp-2, kC2 = 0x1.55553e1068f19p-5, kC3 = -0x1.6c087e89a359dp-10,
                 kC4 = 0x1.99343027bf8c3p-16;
constexpr double kS1 = -0x1.555545995a603p-3, kS2 = 0x1.1107605230bc4p-7, kS3 = -0x1.994eb3774cf24p-13;
constexpr std::int32_t kTop12Tiny = 0x398;  // |x| < 2^-12: sin x = x, cos x = 1
constexpr std::int32_t kTop12Big = 0x42f;   // |x| >= 120 (or inf, nan): libm's own reduction

// The types one lane type computes with: the float, its bits, the double it widens to, 64-bit ints.
template <class F>
struct Types;
template <>
struct Types<float> {
  using I = std::int32_t;
  using D = double;
  using L = std::int64_t;
  RLT_LANES_INLINE static D widen(float x) { return x; }
  RLT_LANES_INLINE static float narrow(D x) { return static_cast<float>(x); }
  RLT_LANES_INLINE static I to_i32(D x) { return static_cast<I>(x); }
  RLT_LANES_INLINE static D to_d(I x) { return x; }
  RLT_LANES_INLINE static L to_i64(I x) { return x; }
  RLT_LANES_INLINE static D c(double v) { return v; }
  RLT_LANES_INLINE static D fma(D a, D b, D c) { return std::fma(a, b, c); }
};
#if defined(RLT_LANES)
template <>
struct Types<f32xL> {
  using I = i32xL;
  using D = f64xL;
  using L = i64xL;
  RLT_LANES_INLINE static D widen(f32xL x) { return __builtin_convertvector(x, D); }
  RLT_LANES_INLINE static f32xL narrow(D x) { return __builtin_convertvector(x, f32xL); }
  RLT_LANES_INLINE static I to_i32(D x) { return __builtin_convertvector(x, I); }
  RLT_LANES_INLINE static D to_d(I x) { return __builtin_convertvector(x, D); }
  RLT_LANES_INLINE static L to_i64(I x) { return __builtin_convertvector(x, L); }
  RLT_LANES_INLINE static D c(double v) {
    D r;
    for (int l = 0; l < kLanes; ++l) r[l] = v;
    return r;
  }
  RLT_LANES_INLINE static D fma(D a, D b, D c) {
    D r;
    for (int l = 0; l < kLanes; ++l) r[l] = std::fma(a[l], b[l], c[l]);
    return r;
  }
};
#endif

// sin and cos of y for |y| < 120 (other lanes: garbage, the caller replaces them): the quadrant n
// and y - n pi/2 in double, the sine and cosine polynomials, swapped and negated by quadrant.
template <class F>
RLT_LANES_INLINE void sincos_reduced(F y, F& s, F& c) {
  using T = Types<F>;
  using D = typename T::D;
  typename T::I bits;
  std::memcpy(&bits, &y, sizeof bits);
  const typename T::I top = (bits >> 20) & 0x7ff;
  const D x0 = T::widen(top < kTop12Big ? y : F{});  // out-of-range lanes: 0, so the conversions stay defined
  const typename T::I n = (T::to_i32(x0 * T::c(kHalfPiInv24)) + 0x800000) >> 24;  // 0 for |y| < pi/4
  const D x = T::fma(-T::to_d(n), T::c(kHalfPi), x0);
  const typename T::L q = T::to_i64(n & 3);
  const D xs = (q == 1 || q == 2) ? -x : x;  // the sine's sign by quadrant
  const D x2 = x * x;
  const D x3 = x2 * xs, x4 = x2 * x2;
  const D x5 = x3 * x2, x6 = x4 * x2;
  const D s1 = T::fma(x2, T::c(kS3), T::c(kS2));
  const D c2 = T::fma(x2, T::c(kC4), T::c(kC3));
  const D c1 = T::fma(x2, T::c(kC1), T::c(kC0));
  const F sin_poly = T::narrow(T::fma(x5, s1, T::fma(x3, T::c(kS1), xs)));
  F cos_poly = T::narrow(T::fma(x6, c2, T::fma(x4, T::c(kC2), c1)));
  cos_poly = (n & 2) != 0 ? -cos_poly : cos_poly;
  const auto odd = (n & 1) != 0;
  s = odd ? cos_poly : sin_poly;
  c = odd ? sin_poly : cos_poly;
  s = top < kTop12Tiny ? y : s;
  c = top < kTop12Tiny ? F{} + 1.0f : c;
}

}  // namespace sincosf_detail

// sin and cos of one float: glibc 2.36's bits on the host, CUDA's sinf/cosf on the device.
RLT_HD RLT_INLINE void m_sincos(float x, float& s, float& c) {
#if defined(__CUDA_ARCH__)
  s = sinf(x);
  c = cosf(x);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if (((bits >> 20) & 0x7ff) >= static_cast<std::uint32_t>(sincosf_detail::kTop12Big)) {
    s = sinf(x);
    c = cosf(x);
    return;
  }
  sincosf_detail::sincos_reduced(x, s, c);
#endif
}

#if defined(RLT_LANES)
RLT_LANES_INLINE void m_sincos(f32xL x, f32xL& s, f32xL& c) {
  sincosf_detail::sincos_reduced(x, s, c);
  i32xL bits;
  std::memcpy(&bits, &x, sizeof bits);
  const i32xL big = ((bits >> 20) & 0x7ff) >= sincosf_detail::kTop12Big;
  if (any(big))
    for (int l = 0; l < kLanes; ++l)
      if (big[l]) s[l] = sinf(x[l]), c[l] = cosf(x[l]);
}
#endif

// ---- LaneFloat: the lane type of the physics templates (sim/spatial.h, sim/dynamics.h) ----------
//
// The robots' physics is templated on its scalar T and writes T(0), T(1e-15) and mixes T with the
// model's scalars, which the bare vector type does not allow (GCC cannot convert a scalar to a
// vector by a cast). LaneFloat is f32xL as a class: constructible from a number (T(x) splats
// float(x), as T(x) rounds x to float for T = float), arithmetic with floats broadcast, and a
// comparison gives a LaneMask that `if` refuses (no conversion to bool): where the physics branches
// on data it selects per lane (select below), so a lane cannot take another lane's branch. A
// double operand does not convert implicitly (float code would compute x * 0.5 in double).
// ModelReal<LaneFloat> is float: the model, shared by every lane, stays one scalar per field.
#if defined(RLT_LANES)
struct LaneMask {
  i32xL v;  // 0 or -1 per lane
  friend RLT_LANES_INLINE LaneMask operator&&(LaneMask a, LaneMask b) { return {a.v & b.v}; }
  friend RLT_LANES_INLINE LaneMask operator||(LaneMask a, LaneMask b) { return {a.v | b.v}; }
  friend RLT_LANES_INLINE LaneMask operator!(LaneMask a) { return {~a.v}; }
};
RLT_LANES_INLINE bool any(LaneMask m) { return any(m.v); }

struct LaneFloat {
  f32xL v;

  LaneFloat() = default;
  RLT_LANES_INLINE LaneFloat(float s) : v(splat<f32xL>(s)) {}  // NOLINT: a float broadcasts implicitly
  RLT_LANES_INLINE explicit LaneFloat(double s) : LaneFloat(static_cast<float>(s)) {}
  RLT_LANES_INLINE explicit LaneFloat(int s) : LaneFloat(static_cast<float>(s)) {}
  RLT_LANES_INLINE explicit LaneFloat(f32xL x) : v(x) {}

  RLT_LANES_INLINE float lane(int l) const { return v[l]; }
  RLT_LANES_INLINE void set_lane(int l, float x) { v[l] = x; }

  friend RLT_LANES_INLINE LaneFloat operator+(LaneFloat a, LaneFloat b) { return LaneFloat(a.v + b.v); }
  friend RLT_LANES_INLINE LaneFloat operator-(LaneFloat a, LaneFloat b) { return LaneFloat(a.v - b.v); }
  friend RLT_LANES_INLINE LaneFloat operator*(LaneFloat a, LaneFloat b) { return LaneFloat(a.v * b.v); }
  friend RLT_LANES_INLINE LaneFloat operator/(LaneFloat a, LaneFloat b) { return LaneFloat(a.v / b.v); }
  friend RLT_LANES_INLINE LaneFloat operator-(LaneFloat a) { return LaneFloat(-a.v); }
  friend RLT_LANES_INLINE LaneFloat& operator+=(LaneFloat& a, LaneFloat b) { return a.v += b.v, a; }
  friend RLT_LANES_INLINE LaneFloat& operator-=(LaneFloat& a, LaneFloat b) { return a.v -= b.v, a; }
  friend RLT_LANES_INLINE LaneFloat& operator*=(LaneFloat& a, LaneFloat b) { return a.v *= b.v, a; }
  friend RLT_LANES_INLINE LaneFloat& operator/=(LaneFloat& a, LaneFloat b) { return a.v /= b.v, a; }
  friend RLT_LANES_INLINE LaneMask operator<(LaneFloat a, LaneFloat b) { return {a.v < b.v}; }
  friend RLT_LANES_INLINE LaneMask operator>(LaneFloat a, LaneFloat b) { return {a.v > b.v}; }
  friend RLT_LANES_INLINE LaneMask operator<=(LaneFloat a, LaneFloat b) { return {a.v <= b.v}; }
  friend RLT_LANES_INLINE LaneMask operator>=(LaneFloat a, LaneFloat b) { return {a.v >= b.v}; }
  friend RLT_LANES_INLINE LaneMask operator==(LaneFloat a, LaneFloat b) { return {a.v == b.v}; }
  friend RLT_LANES_INLINE LaneMask operator!=(LaneFloat a, LaneFloat b) { return {a.v != b.v}; }
};
static_assert(sizeof(LaneFloat) == sizeof(f32xL), "LaneFloat is one lane vector");

template <>
struct ModelRealOf<LaneFloat> {
  using type = float;
};

// c ? a : b per lane.
RLT_LANES_INLINE LaneFloat select(LaneMask c, LaneFloat a, LaneFloat b) { return LaneFloat(c.v ? a.v : b.v); }

// sqrt is correctly rounded in IEEE arithmetic, so each lane's is sqrtf's.
RLT_LANES_INLINE LaneFloat m_sqrt(LaneFloat x) {
  f32xL r;
  for (int l = 0; l < kLanes; ++l) r[l] = __builtin_sqrtf(x.v[l]);
  return LaneFloat(r);
}
// libm's sinf and cosf bits (glibc 2.36's, m_sincos above), as m_sin / m_cos give one float.
RLT_LANES_INLINE LaneFloat m_sin(LaneFloat x) {
  f32xL s, c;
  m_sincos(x.v, s, c);
  return LaneFloat(s);
}
RLT_LANES_INLINE LaneFloat m_cos(LaneFloat x) {
  f32xL s, c;
  m_sincos(x.v, s, c);
  return LaneFloat(c);
}
RLT_LANES_INLINE LaneFloat spring_atan2(LaneFloat y, LaneFloat x) {
  f32xL r;
  for (int l = 0; l < kLanes; ++l) r[l] = atan2f(y.v[l], x.v[l]);
  return LaneFloat(r);
}

// r[i][j] <-> r[j][i]: eight vectors of eight floats transposed (interleaves of 32, 64 and 128 bits;
// __builtin_shufflevector, which GCC 12 and Clang both have: GCC's __builtin_shuffle is not Clang's).
RLT_LANES_INLINE void transpose_lanes(f32xL* r) {
  static_assert(kLanes == 8, "transpose_lanes is written for 8 lanes");
  f32xL t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)
    for (int k = 0; k < 2; ++k) {
      u[i + k] = __builtin_shufflevector(t[i + k], t[i + 2 + k], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 + k] = __builtin_shufflevector(t[i + k], t[i + 2 + k], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  // u[0..3]: rows 0-3's columns (0,4) (1,5) (2,6) (3,7) in their 128-bit halves, as u[4..7] for rows 4-7
  const int col[4] = {0, 2, 1, 3};
  for (int k = 0; k < 4; ++k) {
    r[col[k]] = __builtin_shufflevector(u[k], u[4 + k], 0, 1, 2, 3, 8, 9, 10, 11);
    r[col[k] + 4] = __builtin_shufflevector(u[k], u[4 + k], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// Field-major lanes of kLanes one-env blocks of n floats (rows[l] the block of lane l): dst[k]
// holds field k of every lane (qpos[i][lane]), as ModelView<LaneFloat>'s DataView lays them out;
// scatter_lanes is the way back. Eight fields at a time through transpose_lanes.
RLT_LANES_INLINE void gather_lanes(LaneFloat* dst, const float* const* rows, int n) {
  int k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    f32xL r[kLanes];
    for (int l = 0; l < kLanes; ++l) std::memcpy(&r[l], rows[l] + k, sizeof(f32xL));
    transpose_lanes(r);
    for (int j = 0; j < kLanes; ++j) dst[k + j].v = r[j];
  }
  for (; k < n; ++k)
    for (int l = 0; l < kLanes; ++l) dst[k].v[l] = rows[l][k];
}
RLT_LANES_INLINE void scatter_lanes(float* const* rows, const LaneFloat* src, int n) {
  int k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    f32xL r[kLanes];
    for (int j = 0; j < kLanes; ++j) r[j] = src[k + j].v;
    transpose_lanes(r);
    for (int l = 0; l < kLanes; ++l) std::memcpy(rows[l] + k, &r[l], sizeof(f32xL));
  }
  for (; k < n; ++k)
    for (int l = 0; l < kLanes; ++l) rows[l][k] = src[k].v[l];
}
#endif

}  // namespace rlt
