// Counter-based Philox4x32-10 (Salmon et al., SC'11), as an RLT_HD function (DESIGN.md D4).
// Keyed by (seed, stream) and counted by (a, b): CPU and CUDA produce the same bits, and a
// draw for env 17 never depends on what env 18 did. Conventions used across rltrain:
//   key   = (seed low 32 bits, seed high 32 bits ^ stream tag)
//   ctr   = (env index, episode or iteration, step, sub-draw)
#pragma once

#include <cmath>

#include "sim/common.h"

namespace rlt {

struct U32x4 {
  u32 v[4];
};

RLT_HD RLT_INLINE void philox_mulhilo(u32 a, u32 b, u32& hi, u32& lo) {
  const u64 p = static_cast<u64>(a) * static_cast<u64>(b);
  hi = static_cast<u32>(p >> 32);
  lo = static_cast<u32>(p);
}

// Philox4x32 with 10 rounds; identical to Random123's philox4x32_10 and to cuRAND's
// Philox4_32_10 block function.
RLT_HD RLT_INLINE U32x4 philox4x32_10(U32x4 ctr, u32 k0, u32 k1) {
  constexpr u32 M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr u32 W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < 10; ++r) {
    u32 hi0, lo0, hi1, lo1;
    philox_mulhilo(M0, ctr.v[0], hi0, lo0);
    philox_mulhilo(M1, ctr.v[2], hi1, lo1);
    U32x4 next;
    next.v[0] = hi1 ^ ctr.v[1] ^ k0;
    next.v[1] = lo1;
    next.v[2] = hi0 ^ ctr.v[3] ^ k1;
    next.v[3] = lo0;
    ctr = next;
    k0 += W0;
    k1 += W1;
  }
  return ctr;
}

// Stream tags keep the users of one seed apart.
enum class RngStream : u32 {
  kEnvReset = 1,
  kEnvStep = 2,
  kPolicyInit = 3,
  kAction = 4,
  kShuffle = 5,
  kBench = 6,
};

// A Philox key plus counter: cheap to copy, produces 4 words per call.
struct Philox {
  u32 k0, k1;
  U32x4 ctr;

  RLT_HD Philox(u64 seed, RngStream stream, u32 c0, u32 c1, u32 c2 = 0)
      : k0(static_cast<u32>(seed)),
        k1(static_cast<u32>(seed >> 32) ^ (static_cast<u32>(stream) * 0x9E3779B9u)),
        ctr{{c0, c1, c2, 0u}} {}

  // Four fresh 32-bit words; advances the last counter word.
  RLT_HD U32x4 next4() {
    U32x4 r = philox4x32_10(ctr, k0, k1);
    ctr.v[3] += 1u;
    return r;
  }
};

// Uniform in [0, 1) with 24 bits of resolution (exactly representable in float).
RLT_HD RLT_INLINE float u32_to_unit_float(u32 x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
// Uniform in (0, 1]: safe for log().
RLT_HD RLT_INLINE float u32_to_open_unit_float(u32 x) {
  return (static_cast<float>(x >> 8) + 1.0f) * (1.0f / 16777216.0f);
}

// Fills out[0..n) (n <= 4 per Philox call) with uniforms in [lo, hi).
RLT_HD RLT_INLINE void uniform4(Philox& rng, float lo, float hi, float* out, int n) {
  U32x4 r = rng.next4();
  for (int k = 0; k < n && k < 4; ++k) out[k] = lo + (hi - lo) * u32_to_unit_float(r.v[k]);
}

// Two standard normals from two words (Box-Muller). Host and device use their own libm, so
// results agree to a few ulp, not bit for bit.
RLT_HD RLT_INLINE void box_muller(u32 a, u32 b, float& z0, float& z1) {
  const float r = sqrtf(-2.0f * logf(u32_to_open_unit_float(a)));
  const float t = 6.283185307179586f * u32_to_unit_float(b);
  z0 = r * cosf(t);
  z1 = r * sinf(t);
}

}  // namespace rlt
