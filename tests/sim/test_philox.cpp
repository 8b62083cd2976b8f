#include <gtest/gtest.h>

#include <cmath>

#include "sim/philox.h"

namespace rlt {
namespace {

// Known-answer vectors from Random123's kat_vectors (philox4x32 with 10 rounds).
TEST(Philox, MatchesRandom123KnownAnswers) {
  struct Kat {
    U32x4 ctr;
    u32 k0, k1;
    U32x4 expected;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const auto& k : kats) {
    const U32x4 r = philox4x32_10(k.ctr, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r.v[i], k.expected.v[i]) << "word " << i;
  }
}

TEST(Philox, StreamsAndCountersAreIndependent) {
  Philox a(42, RngStream::kEnvReset, 17, 0);
  Philox b(42, RngStream::kEnvReset, 18, 0);
  Philox c(42, RngStream::kEnvStep, 17, 0);
  Philox d(43, RngStream::kEnvReset, 17, 0);
  const u32 ra = a.next4().v[0];
  EXPECT_NE(ra, b.next4().v[0]);
  EXPECT_NE(ra, c.next4().v[0]);
  EXPECT_NE(ra, d.next4().v[0]);
  Philox a2(42, RngStream::kEnvReset, 17, 0);
  EXPECT_EQ(ra, a2.next4().v[0]);
  EXPECT_NE(a.next4().v[0], ra) << "next4 must advance";
}

TEST(Philox, UniformAndNormalMoments) {
  Philox rng(7, RngStream::kBench, 0, 0);
  const int n = 200000;
  double su = 0, su2 = 0, sz = 0, sz2 = 0;
  float lo = 1, hi = 0;
  for (int i = 0; i < n / 2; ++i) {
    U32x4 r = rng.next4();
    for (int k = 0; k < 2; ++k) {
      const float u = u32_to_unit_float(r.v[k]);
      lo = std::min(lo, u);
      hi = std::max(hi, u);
      su += u;
      su2 += u * u;
    }
    float z0, z1;
    box_muller(r.v[2], r.v[3], z0, z1);
    sz += z0 + z1;
    sz2 += z0 * z0 + z1 * z1;
  }
  EXPECT_GE(lo, 0.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_NEAR(su / n, 0.5, 0.005);
  EXPECT_NEAR(su2 / n - (su / n) * (su / n), 1.0 / 12.0, 0.002);
  EXPECT_NEAR(sz / n, 0.0, 0.01);
  EXPECT_NEAR(sz2 / n, 1.0, 0.01);
}

}  // namespace
}  // namespace rlt
