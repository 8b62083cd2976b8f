#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "envs/pendulum.h"
#include "envs/registry.h"
#include "sim/vec_env_impl.h"
#include "tests/envs/env_test_util.h"

namespace rlt {
namespace {

using testing_util::close;

// Gymnasium's PendulumEnv.step in double precision, written from pendulum.py (theta unwrapped,
// as Gymnasium keeps it).
struct RefPendulum {
  double th, thdot;
  static double angle_normalize(double x) {
    double y = std::fmod(x + M_PI, 2 * M_PI);  // Python's % is floored: result in [0, 2 pi)
    if (y < 0) y += 2 * M_PI;
    return y - M_PI;
  }
  // Returns the reward.
  double step(double u) {
    const double g = 10.0, m = 1.0, l = 1.0, dt = 0.05;
    u = std::min(std::max(u, -2.0), 2.0);
    const double costs = std::pow(angle_normalize(th), 2) + 0.1 * thdot * thdot + 0.001 * u * u;
    double newthdot = thdot + (3 * g / (2 * l) * std::sin(th) + 3.0 / (m * l * l) * u) * dt;
    newthdot = std::min(std::max(newthdot, -8.0), 8.0);
    th = th + newthdot * dt;
    thdot = newthdot;
    return -costs;
  }
};

float step_once(Pendulum::State& s, float u, float* obs, bool* term = nullptr) {
  Pendulum::Params p;
  Philox rng(0, RngStream::kEnvStep, 0, 0);
  float r = 0;
  bool t = true;
  Pendulum::step(p, s, &u, rng, r, t);
  Pendulum::observe(p, s, obs);
  if (term) *term = t;
  return r;
}

// One step from states spread over the whole state space (theta also far outside [-pi, pi],
// torques beyond the limit). A float32 step differs from double by rounding alone: about one ulp
// of theta (1e-6 at |theta| = 12; observed max 1.1e-6 on cos/sin, 4.7e-6 on a reward of up to 16), so
// 1e-5 absolute plus 1e-5 relative has room for another libm and still sees a wrong constant
// (g = 9.81 instead of 10 moves theta_dot by up to 1.4e-2).
TEST(Pendulum, OneStepMatchesGymnasiumEquationsOverTheStateSpace) {
  Philox rng(99, RngStream::kBench, 0, 0);
  testing_util::ErrorStats obs_err{"one-step obs"}, reward_err{"one-step reward"}, theta_err{"one-step theta"};
  for (int k = 0; k < 20000; ++k) {
    float u4[4];
    uniform4(rng, -1.0f, 1.0f, u4, 4);
    const float th = 12.0f * u4[0], thdot = 8.0f * u4[1], u = 3.0f * u4[2];
    Pendulum::State s{th, thdot};
    RefPendulum ref{th, thdot};
    float o[3];
    bool term = true;
    const float r = step_once(s, u, o, &term);
    const double ref_r = ref.step(u);
    ASSERT_TRUE(obs_err.check(o[0], std::cos(ref.th), 1e-5, 1e-5)) << "k=" << k << " th=" << th;
    ASSERT_TRUE(obs_err.check(o[1], std::sin(ref.th), 1e-5, 1e-5)) << "k=" << k << " th=" << th;
    ASSERT_TRUE(obs_err.check(o[2], ref.thdot, 1e-5, 1e-5)) << "k=" << k;
    ASSERT_TRUE(reward_err.check(r, ref_r, 1e-5, 1e-5)) << "k=" << k << " th=" << th << " thdot=" << thdot;
    ASSERT_FALSE(term);
    // The state keeps theta wrapped (see pendulum.h) and equal to Gymnasium's modulo 2 pi.
    ASSERT_LE(std::abs(s.theta), Pendulum::kPi);
    ASSERT_TRUE(theta_err.check(RefPendulum::angle_normalize(s.theta - ref.th), 0.0, 1e-5, 0)) << "k=" << k;
  }
  obs_err.report();
  reward_err.report();
  theta_err.report();
}

// Free-running trajectories. The swing-up region amplifies rounding (near upright errors grow
// by e^{sqrt(15) t}, t in seconds); over these 60 steps the float/double gap stays at 1e-5 on
// the observation and 3.4e-5 on the reward, so 1e-4 + 1e-4 |ref| flags a wrong equation without
// depending on the libm's last bit.
TEST(Pendulum, TrajectoryMatchesGymnasiumEquations) {
  testing_util::ErrorStats obs_err{"trajectory obs"}, reward_err{"trajectory reward"};
  for (int start = 0; start < 6; ++start) {
    const float th0 = -3.0f + 1.1f * static_cast<float>(start), thdot0 = -1.0f + 0.4f * static_cast<float>(start);
    Pendulum::State s{th0, thdot0};
    RefPendulum ref{th0, thdot0};
    for (int t = 0; t < 60; ++t) {
      const float u = 3.0f * std::sin(0.1f * static_cast<float>(t) + static_cast<float>(start));
      float o[3];
      const float r = step_once(s, u, o);
      const double ref_r = ref.step(u);
      ASSERT_TRUE(obs_err.check(o[0], std::cos(ref.th), 1e-4, 1e-4)) << "start " << start << " t=" << t;
      ASSERT_TRUE(obs_err.check(o[1], std::sin(ref.th), 1e-4, 1e-4)) << "start " << start << " t=" << t;
      ASSERT_TRUE(obs_err.check(o[2], ref.thdot, 1e-4, 1e-4)) << "start " << start << " t=" << t;
      ASSERT_TRUE(reward_err.check(r, ref_r, 1e-4, 1e-4)) << "start " << start << " t=" << t;
    }
  }
  obs_err.report();
  reward_err.report();
}

TEST(Pendulum, RewardUsesTheStateBeforeTheStepAndTheClippedTorque) {
  float o[3];
  Pendulum::State s{0.5f, 1.0f};
  const float r = step_once(s, 1.0f, o);
  EXPECT_FLOAT_EQ(r, -(0.25f + 0.1f * 1.0f + 0.001f * 1.0f));
  // Torque 5 is clipped to 2, in the dynamics and in the cost.
  Pendulum::State a{0.5f, 1.0f}, b{0.5f, 1.0f};
  float oa[3], ob[3];
  const float ra = step_once(a, 5.0f, oa), rb = step_once(b, 2.0f, ob);
  EXPECT_EQ(ra, rb);
  EXPECT_EQ(a.theta, b.theta);
  EXPECT_EQ(a.theta_dot, b.theta_dot);
  // theta = pi (hanging down) costs pi^2 from either side of the wrap.
  Pendulum::State up{Pendulum::kPi, 0.0f}, down{-Pendulum::kPi, 0.0f};
  EXPECT_NEAR(step_once(up, 0.0f, o), -M_PI * M_PI, 1e-5);
  EXPECT_NEAR(step_once(down, 0.0f, o), -M_PI * M_PI, 1e-5);
}

TEST(Pendulum, AngularVelocityIsClippedToMaxSpeed) {
  float o[3];
  Pendulum::State s{1.5f, 7.9f};  // gravity and torque both accelerate it past 8
  step_once(s, 2.0f, o);
  EXPECT_EQ(s.theta_dot, 8.0f);
  EXPECT_EQ(o[2], 8.0f);
  Pendulum::State n{-1.5f, -7.9f};
  step_once(n, -2.0f, o);
  EXPECT_EQ(o[2], -8.0f);
  // theta advances by the clipped velocity (semi-implicit Euler).
  EXPECT_NEAR(n.theta, -1.5f - 8.0f * 0.05f, 1e-6);
}

TEST(Pendulum, NeverTerminatesAndTruncatesAt200Steps) {
  CpuExecutor exec(1);
  VecEnvT<Pendulum, CpuExecutor> env(exec, 8);
  env.reset(4);
  std::vector<float> actions(8);
  std::vector<double> returns(8, 0.0);
  for (int t = 0; t < 600; ++t) {
    testing_util::random_actions(env.spec(), t, 1.0f, actions);
    env.step(actions.data());
    for (int i = 0; i < 8; ++i) {
      ASSERT_FALSE(env.terminated()[i]) << "t=" << t;
      returns[i] += env.reward()[i];
      const bool end = (t + 1) % 200 == 0;
      ASSERT_EQ(static_cast<bool>(env.truncated()[i]), end) << "t=" << t << " env " << i;
      if (end) {
        EXPECT_EQ(env.ep_length()[i], 200);
        EXPECT_NEAR(env.ep_return()[i], returns[i], 1e-3 * std::abs(returns[i]));
        returns[i] = 0.0;
        // The next episode starts inside the reset distribution; final_obs is a unit vector.
        EXPECT_LE(std::abs(env.obs()[i * 3 + 2]), 1.0f);
        const float* fo = env.final_obs() + i * 3;
        EXPECT_NEAR(fo[0] * fo[0] + fo[1] * fo[1], 1.0f, 1e-5);
      }
    }
  }
}

TEST(Pendulum, SameSeedIsIdenticalOtherSeedDiffers) { testing_util::expect_seed_determinism<Pendulum>(64, 450); }

TEST(Pendulum, ObservationsStayInsideDeclaredBounds) { testing_util::expect_obs_in_bounds<Pendulum>(256, 1000); }

TEST(Pendulum, ResetDistributionCoversItsRange) {
  CpuExecutor exec(1);
  const int n = 20000;
  VecEnvT<Pendulum, CpuExecutor> env(exec, n);
  env.reset(21);
  float lo[2] = {1e9f, 1e9f}, hi[2] = {-1e9f, -1e9f};
  double mean[2] = {0, 0};
  for (int i = 0; i < n; ++i) {
    const Pendulum::State s = env.states()[i];
    const float v[2] = {s.theta, s.theta_dot};
    ASSERT_GE(s.theta, -Pendulum::kPi);
    ASSERT_LT(s.theta, Pendulum::kPi);
    ASSERT_GE(s.theta_dot, -1.0f);
    ASSERT_LT(s.theta_dot, 1.0f);
    ASSERT_EQ(env.obs()[i * 3 + 0], std::cos(s.theta));
    ASSERT_EQ(env.obs()[i * 3 + 2], s.theta_dot);
    for (int k = 0; k < 2; ++k) {
      lo[k] = std::min(lo[k], v[k]);
      hi[k] = std::max(hi[k], v[k]);
      mean[k] += v[k] / n;
    }
  }
  // 20000 uniform draws: the extremes lie within 0.1% of the ends, the mean within 5 sigma.
  EXPECT_LT(lo[0], -Pendulum::kPi * 0.999f);
  EXPECT_GT(hi[0], Pendulum::kPi * 0.999f);
  EXPECT_LT(lo[1], -0.999f);
  EXPECT_GT(hi[1], 0.999f);
  EXPECT_NEAR(mean[0], 0.0, 5 * M_PI / std::sqrt(3.0 * n));
  EXPECT_NEAR(mean[1], 0.0, 5 * 1.0 / std::sqrt(3.0 * n));
}

TEST(Pendulum, IsRegisteredWithItsSpaces) {
  CpuExecutor exec(1);
  auto env = make_vec_env("pendulum", 2, exec);
  const EnvSpec& spec = env->spec();
  EXPECT_EQ(spec.max_episode_steps, 200);
  EXPECT_EQ(spec.observation.dim, 3);
  EXPECT_EQ(spec.observation.high, (std::vector<float>{1.0f, 1.0f, 8.0f}));
  EXPECT_FALSE(spec.action.discrete);
  EXPECT_EQ(spec.action.dim, 1);
  EXPECT_EQ(spec.action.low[0], -2.0f);
  EXPECT_EQ(spec.action.high[0], 2.0f);
  // Changing a limit updates the declared spaces.
  ASSERT_TRUE(env->set_param("max_torque", 1.5));
  EXPECT_EQ(env->spec().action.high[0], 1.5f);
}

}  // namespace
}  // namespace rlt
