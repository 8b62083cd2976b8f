#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "envs/cartpole.h"
#include "sim/vec_env_impl.h"

namespace rlt {
namespace {

// Gymnasium's CartPole step in double precision, written from the published equations.
struct RefCartPole {
  double x, x_dot, theta, theta_dot;
  bool step(int action) {
    const double g = 9.8, mc = 1.0, mp = 0.1, l = 0.5, f = action == 1 ? 10.0 : -10.0, tau = 0.02;
    const double tm = mc + mp, pml = mp * l;
    const double c = std::cos(theta), s = std::sin(theta);
    const double temp = (f + pml * theta_dot * theta_dot * s) / tm;
    const double thacc = (g * s - c * temp) / (l * (4.0 / 3.0 - mp * c * c / tm));
    const double xacc = temp - pml * thacc * c / tm;
    x += tau * x_dot;
    x_dot += tau * xacc;
    theta += tau * theta_dot;
    theta_dot += tau * thacc;
    return x < -2.4 || x > 2.4 || theta < -12 * 2 * M_PI / 360 || theta > 12 * 2 * M_PI / 360;
  }
};

TEST(CartPole, TrajectoryMatchesGymnasiumEquations) {
  CartPole::Params p;
  CartPole::State s{0.01f, -0.02f, 0.03f, 0.04f};
  RefCartPole ref{0.01, -0.02, 0.03, 0.04};
  Philox rng(0, RngStream::kEnvStep, 0, 0);
  for (int t = 0; t < 200; ++t) {
    const int a = (t / 3) % 2;
    const float af = static_cast<float>(a);
    float r = 0;
    bool term = false;
    CartPole::step(p, s, &af, rng, r, term);
    const bool ref_term = ref.step(a);
    EXPECT_NEAR(s.x, ref.x, 1e-4 + 1e-4 * std::abs(ref.x)) << "t=" << t;
    EXPECT_NEAR(s.x_dot, ref.x_dot, 1e-4 + 1e-4 * std::abs(ref.x_dot));
    EXPECT_NEAR(s.theta, ref.theta, 1e-4 + 1e-4 * std::abs(ref.theta));
    EXPECT_NEAR(s.theta_dot, ref.theta_dot, 1e-4 + 1e-4 * std::abs(ref.theta_dot));
    EXPECT_EQ(r, 1.0f);
    ASSERT_EQ(term, ref_term) << "t=" << t;
    if (term) break;
  }
}

TEST(CartPole, ResetIsSeededAndInsideItsRange) {
  CpuExecutor exec(1);
  VecEnvT<CartPole, CpuExecutor> a(exec, 100), b(exec, 100), c(exec, 100);
  a.reset(1);
  b.reset(1);
  c.reset(2);
  EXPECT_EQ(0, std::memcmp(a.obs(), b.obs(), sizeof(float) * 400));
  EXPECT_NE(0, std::memcmp(a.obs(), c.obs(), sizeof(float) * 400));
  for (int i = 0; i < 400; ++i) {
    EXPECT_GE(a.obs()[i], -0.05f);
    EXPECT_LT(a.obs()[i], 0.05f);
  }
}

}  // namespace
}  // namespace rlt
