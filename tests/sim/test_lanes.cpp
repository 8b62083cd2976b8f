// sim/lanes.h: m_sincos against the libm this test runs with (glibc 2.36 on Debian 12, whose sinf,
// cosf and sincosf it reproduces for |x| < 120), lanes against one float at a time, and the other
// lane functions on the values where a lane version could part from the scalar one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "sim/lanes.h"

namespace rlt {
namespace {

float from_bits(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Every 97th float bit pattern of both signs (all magnitudes: tiny, the polynomial's range, the
// fast reduction below 120, libm's own reduction above, infinities and NaNs), through m_sincos one
// at a time and in lanes. (Every float below 120 in magnitude was checked once the same way, 2.2e9
// of them, with no difference; that takes minutes, this a second.)
TEST(Lanes, SinCosAreLibmsBitsOneAtATimeAndInLanes) {
  const std::uint32_t stride = 97;
  long checked = 0, bad_libm = 0, bad_lanes = 0;
  std::vector<float> xs;
  for (std::uint64_t u = 0; u <= 0xffffffffull; u += stride) xs.push_back(from_bits(static_cast<std::uint32_t>(u)));
  for (float special : {0.0f, -0.0f, 0x1p-12f, -0x1p-12f, 0.75f, -0.75f, 0.7853982f, 120.0f, -120.0f,
                        std::nextafter(120.0f, 0.0f), 1e30f, INFINITY, -INFINITY, NAN})
    xs.push_back(special);
  while (xs.size() % kLanes != 0) xs.push_back(1.0f);
  for (size_t b = 0; b < xs.size(); b += kLanes) {
    f32xL v, sv, cv;
    for (int l = 0; l < kLanes; ++l) v[l] = xs[b + l];
    m_sincos(v, sv, cv);
    for (int l = 0; l < kLanes; ++l) {
      const float x = xs[b + l];
      float s, c;
      m_sincos(x, s, c);
      volatile float vx = x;  // libm's own call, not a value the compiler folded
      const float ls = sinf(vx), lc = cosf(vx);
      ++checked;
      if (!(same_bits(s, ls) || (std::isnan(s) && std::isnan(ls))) ||
          !(same_bits(c, lc) || (std::isnan(c) && std::isnan(lc)))) {
        if (bad_libm++ < 5)
          ADD_FAILURE() << "x = " << std::hexfloat << x << ": m_sincos " << s << ", " << c << "; libm " << ls << ", "
                        << lc;
      }
      if (!(same_bits(s, sv[l]) || (std::isnan(s) && std::isnan(sv[l]))) ||
          !(same_bits(c, cv[l]) || (std::isnan(c) && std::isnan(cv[l])))) {
        if (bad_lanes++ < 5)
          ADD_FAILURE() << "x = " << std::hexfloat << x << ": one at a time " << s << ", " << c << "; in lanes "
                        << sv[l] << ", " << cv[l];
      }
    }
  }
  EXPECT_EQ(bad_libm, 0) << "of " << checked << " (is libm glibc 2.36's FMA build?)";
  EXPECT_EQ(bad_lanes, 0) << "of " << checked;
}

TEST(Lanes, FloorClampAndFiniteAgreeWithTheScalarFunctions) {
  const std::vector<float> xs = {0.0f,      -0.0f,       0.5f,       -0.5f,       1.0f,       -1.0f,      0x1p23f,
                                 -0x1p23f,  0x1p23f + 1, 8388607.5f, -8388607.5f, 1e30f,      -1e30f,     INFINITY,
                                 -INFINITY, NAN,         1e-40f,     -1e-40f,     2.9999998f, -2.0000002f};
  for (size_t b = 0; b + kLanes <= xs.size() + kLanes - 1; b += kLanes) {
    f32xL v;
    for (int l = 0; l < kLanes; ++l) v[l] = xs[(b + l) % xs.size()];
    const f32xL f = m_floor(v), c = clamp(v, -2.0f, 3.0f);
    const i32xL fin = is_finite(v);
    for (int l = 0; l < kLanes; ++l) {
      const float x = v[l];
      SCOPED_TRACE(x);
      EXPECT_TRUE(same_bits(f[l], floorf(x)) || (std::isnan(x) && std::isnan(f[l])));
      const float cs = clamp(x, -2.0f, 3.0f);
      EXPECT_TRUE(same_bits(c[l], cs) || (std::isnan(x) && std::isnan(c[l])));
      EXPECT_EQ(fin[l] != 0, is_finite(x));
    }
  }
  const i32xL none = {}, one = {0, 0, 0, -1};
  EXPECT_FALSE(any(none));
  EXPECT_TRUE(any(one));
  const f32xL s = splat<f32xL>(-0.0f);
  for (int l = 0; l < kLanes; ++l) EXPECT_TRUE(same_bits(s[l], -0.0f));
}

}  // namespace
}  // namespace rlt
