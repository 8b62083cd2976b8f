// Reduced-precision GEMM inputs (issue 18): the precision a GEMM may round its inputs to, and the
// rounding itself, written once for the host and the device (RLT_HD).
//
// Storage stays fp32 everywhere; only the factors of a GEMM's products are rounded, the products
// are summed in fp32. cuBLAS does this itself for the CUBLAS_COMPUTE_32F_FAST_* compute types
// (kernels/cuda_gemm.cu); the CPU gemm (rl/gemm.h) is its twin: it rounds each element of A and B
// with round_to() below, then multiplies and accumulates in fp32.
//
//   precision  format   mantissa bits  exponent range   unit roundoff u
//   fp32       binary32 23             fp32             2^-24  (no rounding)
//   tf32       TF32     10             fp32             2^-11
//   bf16       bfloat16  7             fp32             2^-8
//   fp16       binary16 10             2^-14..65504,    2^-11  (overflow to inf at 65520 and
//                                      subnormals to 2^-24      above; subnormals below 2^-14)
//
// Every rounding is to nearest, ties to even; infinities and NaNs pass through unchanged; the sign
// of zero is kept.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "sim/common.h"

namespace rlt {

enum class GemmPrecision : std::uint8_t { kFp32, kTf32, kBf16, kFp16 };

// "fp32" | "tf32" | "bf16" | "fp16": the config value (ppo.gemm_precision) and what the CLI prints.
inline const char* gemm_precision_name(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kTf32:
      return "tf32";
    case GemmPrecision::kBf16:
      return "bf16";
    case GemmPrecision::kFp16:
      return "fp16";
    default:
      return "fp32";
  }
}

// The precision named `name`; false (and *out untouched) for any other text.
inline bool parse_gemm_precision(const char* name, GemmPrecision* out) {
  for (GemmPrecision p : {GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kBf16, GemmPrecision::kFp16}) {
    if (std::strcmp(name, gemm_precision_name(p)) == 0) {
      *out = p;
      return true;
    }
  }
  return false;
}

// Unit roundoff of the format (half the distance from 1 to the next number): a rounded x is
// x (1 + d) with |d| <= u, for x in the format's normal range.
inline double gemm_unit_roundoff(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kTf32:
    case GemmPrecision::kFp16:
      return 1.0 / 2048.0;  // 2^-11
    case GemmPrecision::kBf16:
      return 1.0 / 256.0;  // 2^-8
    default:
      return 1.0 / 16777216.0;  // 2^-24
  }
}

RLT_HD RLT_INLINE u32 float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  u32 u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

RLT_HD RLT_INLINE float float_from_bits(u32 u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

namespace precision_detail {

// The finite, non-negative float with bits `a` rounded to keep 23 - drop mantissa bits, to nearest,
// ties to even (1 <= drop <= 23). A carry out of the mantissa raises the exponent, which is right
// at every binade, at the subnormal/normal boundary and at the top (the largest finite values
// round up to infinity once they are at least half an ulp above the format's largest number).
RLT_HD RLT_INLINE u32 round_mantissa(u32 a, int drop) {
  const u32 keep_lsb = (a >> drop) & 1u;
  a += ((1u << (drop - 1)) - 1u) + keep_lsb;  // just below half an ulp, plus one on a tie with an odd kept part
  return a & ~((1u << drop) - 1u);
}

constexpr u32 kSign = 0x80000000u;
constexpr u32 kInf = 0x7f800000u;
constexpr u32 kFp16Overflow = 0x477ff000u;   // 65520 = 65504 + half an ulp: a tie that rounds to 2^16, so inf
constexpr u32 kFp16MinNormal = 0x38800000u;  // 2^-14

}  // namespace precision_detail

// x rounded to TF32 (10 mantissa bits, fp32's exponent range), as a float.
RLT_HD RLT_INLINE float round_to_tf32(float x) {
  using namespace precision_detail;
  const u32 u = float_bits(x), a = u & ~kSign;
  if (a >= kInf) return x;  // inf, NaN
  return float_from_bits((u & kSign) | round_mantissa(a, 13));
}

// x rounded to bfloat16 (7 mantissa bits, fp32's exponent range), as a float.
RLT_HD RLT_INLINE float round_to_bf16(float x) {
  using namespace precision_detail;
  const u32 u = float_bits(x), a = u & ~kSign;
  if (a >= kInf) return x;
  return float_from_bits((u & kSign) | round_mantissa(a, 16));
}

// x rounded to IEEE binary16 (10 mantissa bits, normal from 2^-14 to 65504, subnormal multiples of
// 2^-24 below), as a float: +-inf from 65520 up, zero (with x's sign) at 2^-25 and below.
// Branch-free (both roundings, then selects), so the CPU twin's loop over a matrix vectorizes.
RLT_HD RLT_INLINE float round_to_fp16(float x) {
  using namespace precision_detail;
  const u32 u = float_bits(x), sign = u & kSign, a = u & ~kSign;
  const u32 normal = round_mantissa(a, 13);
  // Below 2^-14 the result is a multiple of 2^-24, the ulp of 0.5: adding 0.5 rounds |x| to it (to
  // nearest even, the default rounding mode), and subtracting 0.5 again is exact.
  const u32 subnormal = float_bits((float_from_bits(a) + 0.5f) - 0.5f);
  u32 r = a < kFp16MinNormal ? subnormal : normal;
  r = a >= kFp16Overflow ? kInf : r;  // 65520 and up, inf included
  r = a > kInf ? a : r;               // NaN: unchanged
  return float_from_bits(sign | r);
}

// x rounded to the input format of `p` (fp32: x itself).
RLT_HD RLT_INLINE float round_to(float x, GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kTf32:
      return round_to_tf32(x);
    case GemmPrecision::kBf16:
      return round_to_bf16(x);
    case GemmPrecision::kFp16:
      return round_to_fp16(x);
    default:
      return x;
  }
}

}  // namespace rlt
