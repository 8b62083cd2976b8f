// Small single-source building blocks of the learner (DESIGN.md D1, D6).
#pragma once

#include <cmath>
#include <cstring>

#include "sim/common.h"
#include "sim/philox.h"

namespace rlt {

enum class Activation : int { kTanh = 0, kElu = 1, kRelu = 2 };

// exp(y) for y <= 0, branch-free so loops over it vectorize: 2^n * p(r) with r = y - n ln2 and
// a degree-6 Taylor polynomial (|r| <= ln2/2: relative error below 2e-7). Underflows to 0 below -87.
RLT_HD RLT_INLINE float fast_exp_neg(float y) {
  y = y < -87.0f ? -87.0f : y;
  const float n = rintf(y * 1.44269504f);
  const float r = (y - n * 0.693145752f) - n * 1.42860677e-6f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int bits = (static_cast<int>(n) + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// tanh with absolute error below 3e-7 (float), branch-free: an odd Taylor polynomial near 0,
// (1 - e) / (1 + e) with e = exp(-2|x|) elsewhere. The same code runs on both executors, so CPU
// and CUDA agree closely; double (gradient tests) uses the library tanh.
RLT_HD RLT_INLINE float fast_tanh(float x) {
  const float ax = fabsf(x) < 9.0f ? fabsf(x) : 9.0f;
  const float e = fast_exp_neg(-2.0f * ax);
  const float big = (1.0f - e) / (1.0f + e);
  const float x2 = ax * ax;
  float small = -1382.0f / 155925.0f;
  small = small * x2 + 62.0f / 2835.0f;
  small = small * x2 - 17.0f / 315.0f;
  small = small * x2 + 2.0f / 15.0f;
  small = small * x2 - 1.0f / 3.0f;
  small = ax + ax * x2 * small;
  const float t = ax < 0.4f ? small : big;
  return copysignf(t, x);
}

RLT_HD RLT_INLINE float act_tanh(float z) { return fast_tanh(z); }
RLT_HD RLT_INLINE double act_tanh(double z) { return m_tanh(z); }
RLT_HD RLT_INLINE float act_elu(float z) { return z > 0.0f ? z : fast_exp_neg(z) - 1.0f; }
RLT_HD RLT_INLINE double act_elu(double z) { return z > 0.0 ? z : m_expm1(z); }

template <Activation A, class T>
RLT_HD RLT_INLINE T activate(T z) {
  if (A == Activation::kTanh) return act_tanh(z);
  if (A == Activation::kElu) return act_elu(z);
  return z > T(0) ? z : T(0);
}

template <class T>
RLT_HD RLT_INLINE T activate(Activation a, T z) {
  switch (a) {
    case Activation::kTanh:
      return activate<Activation::kTanh>(z);
    case Activation::kElu:
      return activate<Activation::kElu>(z);
    default:
      return activate<Activation::kRelu>(z);
  }
}

// Derivative of the activation expressed through its output h (all three allow it).
template <Activation A, class T>
RLT_HD RLT_INLINE T activate_grad_from_output(T h) {
  if (A == Activation::kTanh) return T(1) - h * h;
  if (A == Activation::kElu) return h > T(0) ? T(1) : h + T(1);
  return h > T(0) ? T(1) : T(0);
}

template <class T>
RLT_HD RLT_INLINE T activate_grad_from_output(Activation a, T h) {
  switch (a) {
    case Activation::kTanh:
      return activate_grad_from_output<Activation::kTanh>(h);
    case Activation::kElu:
      return activate_grad_from_output<Activation::kElu>(h);
    default:
      return activate_grad_from_output<Activation::kRelu>(h);
  }
}

// A keyed bijection of [0, n): a 4-round Feistel network on the next power of two (even bit
// count) with cycle walking. Gives each epoch a random minibatch order without a sort or a host
// shuffle, the same on every executor.
//
// Ppo evaluates it once per epoch for the whole batch (PermutationTable, PermutationWalk in
// rl/ppo_impl.h): one pass of the network over the domain, vectorized on the CPU, then the walks as
// table lookups; operator() is the same map, one index at a time.
struct IndexPermutation {
  u64 n;
  u32 half_bits;  // bits per Feistel half
  u32 k0, k1;

  IndexPermutation(u64 n_, u64 seed, u32 c0, u32 c1) : n(n_), half_bits(domain_bits(n_) / 2) {
    Philox rng(seed, RngStream::kShuffle, c0, c1);
    const U32x4 r = rng.next4();
    k0 = r.v[0];
    k1 = r.v[1];
  }

  // The network's domain for n indices: 2^bits, the smallest even bits >= 2 with 2^bits >= n.
  static u32 domain_bits(u64 n) {
    u32 bits = 2;
    while ((u64{1} << bits) < n) bits += 2;
    return bits;
  }
  static u64 domain_of(u64 n) { return u64{1} << domain_bits(n); }
  u64 domain() const { return u64{1} << (2 * half_bits); }

  // The network's 4 rounds on the halves l, r (each below 2^half_bits).
  RLT_HD void rounds(u32& l, u32& r) const {
    const u32 mask = (1u << half_bits) - 1u;
    for (u32 round = 0; round < 4; ++round) {
      U32x4 c{{r, round, k0, k1}};
      const u32 f = philox_round_hash(c);
      const u32 nl = r;
      r = (l ^ f) & mask;
      l = nl;
    }
  }
  // One pass of the network: a bijection of [0, domain()).
  RLT_HD u64 feistel(u64 x) const {
    const u32 mask = (1u << half_bits) - 1u;
    u32 l = static_cast<u32>(x >> half_bits) & mask, r = static_cast<u32>(x) & mask;
    rounds(l, r);
    return (static_cast<u64>(l) << half_bits) | r;
  }
  // The same pass in 32-bit arithmetic, for a domain of at most 2^32 (the loop over a whole domain
  // vectorizes).
  RLT_HD u32 feistel32(u32 x) const {
    const u32 mask = (1u << half_bits) - 1u;
    u32 l = (x >> half_bits) & mask, r = x & mask;
    rounds(l, r);
    return (l << half_bits) | r;
  }

  RLT_HD u64 operator()(u64 i) const {
    u64 x = i;
    do {
      x = feistel(x);
    } while (x >= n);
    return x;
  }

  // A cheap keyed mix (two Philox rounds' worth of multiply-xor) for the Feistel function.
  RLT_HD static u32 philox_round_hash(U32x4 c) {
    u32 h = c.v[0] * 0x9E3779B1u ^ c.v[1] * 0x85EBCA77u ^ c.v[2];
    h ^= h >> 15;
    h *= 0xD2511F53u;
    h ^= c.v[3] + (h >> 13);
    h *= 0xCD9E8D57u;
    return h ^ (h >> 16);
  }
};

}  // namespace rlt
