#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "envs/acrobot.h"
#include "envs/registry.h"
#include "sim/vec_env_impl.h"
#include "tests/envs/env_test_util.h"

namespace rlt {
namespace {

using testing_util::close;

// Gymnasium's AcrobotEnv.step in double precision, written from acrobot.py: _dsdt ("book"),
// rk4 over [0, dt] with the torque appended to the state, wrap, bound, _terminal.
struct RefAcrobot {
  double s[4];
  double scale = 0.0;  // of the last step: dt * the largest |component| of any RK4 stage

  static void dsdt(const double* y, double a, double* d) {
    const double m1 = 1.0, m2 = 1.0, l1 = 1.0, lc1 = 0.5, lc2 = 0.5, I1 = 1.0, I2 = 1.0, g = 9.8;
    const double theta1 = y[0], theta2 = y[1], dtheta1 = y[2], dtheta2 = y[3];
    const double d1 = m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * std::cos(theta2)) + I1 + I2;
    const double d2 = m2 * (lc2 * lc2 + l1 * lc2 * std::cos(theta2)) + I2;
    const double phi2 = m2 * lc2 * g * std::cos(theta1 + theta2 - M_PI / 2.0);
    const double phi1 = -m2 * l1 * lc2 * dtheta2 * dtheta2 * std::sin(theta2) -
                        2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * std::sin(theta2) +
                        (m1 * lc1 + m2 * l1) * g * std::cos(theta1 - M_PI / 2) + phi2;
    const double ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1 * dtheta1 * std::sin(theta2) - phi2) /
                            (m2 * lc2 * lc2 + I2 - d2 * d2 / d1);
    const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    d[0] = dtheta1;
    d[1] = dtheta2;
    d[2] = ddtheta1;
    d[3] = ddtheta2;
  }
  static double wrap(double x) {
    while (x > M_PI) x -= 2 * M_PI;
    while (x < -M_PI) x += 2 * M_PI;
    return x;
  }
  // Tip height -cos(s0) - cos(s1 + s0); terminal when above 1.
  double height() const { return -std::cos(s[0]) - std::cos(s[1] + s[0]); }
  // Returns terminated.
  bool step(int action) {
    const double a = action == 0 ? -1.0 : (action == 1 ? 0.0 : 1.0);
    const double dt = 0.2, dt2 = dt / 2.0;
    double k1[4], k2[4], k3[4], k4[4], y[4];
    dsdt(s, a, k1);
    for (int j = 0; j < 4; ++j) y[j] = s[j] + dt2 * k1[j];
    dsdt(y, a, k2);
    for (int j = 0; j < 4; ++j) y[j] = s[j] + dt2 * k2[j];
    dsdt(y, a, k3);
    for (int j = 0; j < 4; ++j) y[j] = s[j] + dt * k3[j];
    dsdt(y, a, k4);
    scale = 0.0;
    for (int j = 0; j < 4; ++j)
      scale = std::max({scale, dt * std::abs(k1[j]), dt * std::abs(k2[j]), dt * std::abs(k3[j]), dt * std::abs(k4[j])});
    for (int j = 0; j < 4; ++j) s[j] = s[j] + dt / 6.0 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
    s[0] = wrap(s[0]);
    s[1] = wrap(s[1]);
    s[2] = std::min(std::max(s[2], -4 * M_PI), 4 * M_PI);
    s[3] = std::min(std::max(s[3], -9 * M_PI), 9 * M_PI);
    return height() > 1.0;
  }
};

struct StepResult {
  float obs[6];
  float reward;
  bool terminated;
};

StepResult step_once(Acrobot::State& s, int action) {
  Acrobot::Params p;
  Philox rng(0, RngStream::kEnvStep, 0, 0);
  StepResult r{};
  const float a = static_cast<float>(action);
  Acrobot::step(p, s, &a, rng, r.reward, r.terminated);
  Acrobot::observe(p, s, r.obs);
  return r;
}

// Compares an observation with the reference state; returns the first failing component.
::testing::AssertionResult obs_close(testing_util::ErrorStats& stats, const float* o, const RefAcrobot& ref,
                                     double atol, double rtol) {
  const double want[6] = {std::cos(ref.s[0]), std::sin(ref.s[0]), std::cos(ref.s[1]),
                          std::sin(ref.s[1]), ref.s[2],           ref.s[3]};
  for (int k = 0; k < 6; ++k) {
    auto c = stats.check(o[k], want[k], atol, rtol);
    if (!c) return c << " at obs[" << k << "]";
  }
  return ::testing::AssertionSuccess();
}

// A simple swing-up policy: torque with the sign of dtheta2 reaches the goal in ~60-120 steps
// from the reset distribution, so terminations are exercised.
int pump_action(double dtheta2) { return dtheta2 > 0 ? 2 : 0; }

// One step from states spread over the whole state space, every action. A float32 RK4 step
// differs from double by rounding in its largest intermediate quantities: near the velocity
// limits the stages reach |derivatives| of 1e3-2e4 rad/s^2 (centrifugal terms grow with
// dtheta^2), and the error is then up to 7e-4 while it is ~1e-6 near rest. The error measured
// against dt * max|stage derivative| is at most 6e-6 (100 float eps) over this sample, so the
// tolerance is 1e-5 + 3e-5 * that scale. Near rest (scale ~2) that allows ~7e-5, while a wrong
// constant such as g = 9.81 moves the velocities by up to ~1e-3. The termination flag must match
// except within 1e-5 of the threshold.
TEST(Acrobot, OneStepMatchesGymnasiumEquationsOverTheStateSpace) {
  Philox rng(5, RngStream::kBench, 0, 0);
  int wrapped = 0, clipped1 = 0, clipped2 = 0, terminal = 0;
  const float pi = Acrobot::kPi;
  testing_util::ErrorStats err{"one-step obs"};
  for (int k = 0; k < 30000; ++k) {
    float u[4];
    uniform4(rng, -1.0f, 1.0f, u, 4);
    Acrobot::State s{pi * u[0], pi * u[1], 4 * pi * u[2], 9 * pi * u[3]};
    RefAcrobot ref{{s.theta1, s.theta2, s.dtheta1, s.dtheta2}};
    const int action = k % 3;
    const StepResult r = step_once(s, action);
    const bool ref_term = ref.step(action);
    ASSERT_TRUE(obs_close(err, r.obs, ref, 1e-5 + 3e-5 * ref.scale, 0.0)) << "k=" << k << " scale " << ref.scale;
    if (std::abs(ref.height() - 1.0) > 1e-5) {
      ASSERT_EQ(r.terminated, ref_term) << "k=" << k << " height " << ref.height();
      ASSERT_EQ(r.reward, ref_term ? 0.0f : -1.0f);
    }
    ASSERT_LE(std::abs(s.theta1), pi);
    ASSERT_LE(std::abs(s.theta2), pi);
    wrapped += std::abs(s.theta1 - u[0] * pi) > pi;
    clipped1 += std::abs(ref.s[2]) == 4 * M_PI;
    clipped2 += std::abs(ref.s[3]) == 9 * M_PI;
    terminal += ref_term;
  }
  err.report();
  // The sample reached every edge rule it is meant to check.
  EXPECT_GT(wrapped, 100);
  EXPECT_GT(clipped1, 100);
  EXPECT_GT(clipped2, 100);
  EXPECT_GT(terminal, 100);
}

// Free-running trajectories. The double pendulum is chaotic: float and double drift apart
// exponentially (here the gap is 2e-6 after 100 steps, 1e-3 after 300, O(1) after 400), so the
// trajectory is compared over 100 steps with 1e-4 + 1e-4 |ref|.
TEST(Acrobot, TrajectoryMatchesGymnasiumEquations) {
  testing_util::ErrorStats err{"trajectory obs"};
  for (int start = 0; start < 4; ++start) {
    Acrobot::State s{0.05f * static_cast<float>(start) - 0.1f, 0.03f, -0.02f * static_cast<float>(start), 0.01f};
    RefAcrobot ref{{s.theta1, s.theta2, s.dtheta1, s.dtheta2}};
    for (int t = 0; t < 100; ++t) {
      const int action = (t / 7) % 3 == 0 ? 1 : (s.dtheta1 > 0 ? 2 : 0);
      const StepResult r = step_once(s, action);
      const bool ref_term = ref.step(action);
      ASSERT_TRUE(obs_close(err, r.obs, ref, 1e-4, 1e-4)) << "start " << start << " t=" << t;
      ASSERT_EQ(r.terminated, ref_term) << "start " << start << " t=" << t;
      if (ref_term) break;
    }
  }
  err.report();
}

// Whole episodes of a swing-up policy, re-synchronised to the reference each step (the float
// state is set from the double one), so that termination is checked where it really happens.
// Tolerance as in the one-step test.
TEST(Acrobot, SwingUpEpisodesTerminateWithTheReference) {
  int episodes = 0;
  testing_util::ErrorStats err{"swing-up obs"};
  for (int start = 0; start < 5; ++start) {
    RefAcrobot ref{{0.02 * start - 0.05, -0.03, 0.01 * start, -0.02}};
    bool ended = false;
    for (int t = 0; t < 500 && !ended; ++t) {
      Acrobot::State s{static_cast<float>(ref.s[0]), static_cast<float>(ref.s[1]), static_cast<float>(ref.s[2]),
                       static_cast<float>(ref.s[3])};
      ref = RefAcrobot{{s.theta1, s.theta2, s.dtheta1, s.dtheta2}};  // both start from the same values
      const int action = pump_action(ref.s[3]);
      const StepResult r = step_once(s, action);
      ended = ref.step(action);
      ASSERT_TRUE(obs_close(err, r.obs, ref, 1e-5 + 3e-5 * ref.scale, 0.0)) << "start " << start << " t=" << t;
      if (std::abs(ref.height() - 1.0) > 1e-5) {
        ASSERT_EQ(r.terminated, ended) << "t=" << t;
      }
      EXPECT_EQ(r.reward, r.terminated ? 0.0f : -1.0f);
    }
    episodes += ended;
  }
  err.report();
  EXPECT_EQ(episodes, 5) << "the swing-up policy should reach the goal from every start";
}

TEST(Acrobot, TerminalRuleAndReward) {
  // Both links pointing up: the tip is 2 link lengths above the pivot.
  Acrobot::State up{Acrobot::kPi, 0.0f, 0.0f, 0.0f};
  StepResult r = step_once(up, 1);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reward, 0.0f);
  // Hanging at rest with no torque is an equilibrium: nothing moves, reward -1.
  Acrobot::State down{0.0f, 0.0f, 0.0f, 0.0f};
  r = step_once(down, 1);
  EXPECT_FALSE(r.terminated);
  EXPECT_EQ(r.reward, -1.0f);
  EXPECT_EQ(down.theta1, 0.0f);
  EXPECT_EQ(down.dtheta2, 0.0f);
  // Torque sign: action 2 accelerates link 2 positively from rest, action 0 negatively.
  Acrobot::State a{0.0f, 0.0f, 0.0f, 0.0f}, b{0.0f, 0.0f, 0.0f, 0.0f};
  step_once(a, 2);
  step_once(b, 0);
  EXPECT_GT(a.dtheta2, 0.0f);
  EXPECT_LT(b.dtheta2, 0.0f);
  EXPECT_EQ(a.dtheta2, -b.dtheta2);
}

TEST(Acrobot, TruncatesAt500StepsAndKeepsTerminationApart) {
  CpuExecutor exec(1);
  VecEnvT<Acrobot, CpuExecutor> env(exec, 2);
  env.reset(8);
  env.states()[0] = Acrobot::State{0.0f, 0.0f, 0.0f, 0.0f};  // at rest: never terminates
  std::vector<float> actions = {1.0f, 0.0f};
  for (int t = 0; t < 500; ++t) {
    actions[1] = static_cast<float>(pump_action(env.states()[1].dtheta2));
    env.step(actions.data());
    ASSERT_FALSE(env.terminated()[0]) << "t=" << t;
    ASSERT_EQ(static_cast<bool>(env.truncated()[0]), t == 499) << "t=" << t;
    ASSERT_FALSE(env.terminated()[1] && env.truncated()[1]);
  }
  EXPECT_EQ(env.ep_length()[0], 500);
  EXPECT_EQ(env.ep_return()[0], -500.0f);
  // A termination on the last allowed step is a termination, not a truncation.
  VecEnvT<Acrobot, CpuExecutor> one(exec, 1);
  ASSERT_TRUE(one.set_param("max_episode_steps", 1));
  one.reset(8);
  one.states()[0] = Acrobot::State{Acrobot::kPi, 0.0f, 0.0f, 0.0f};
  const float act = 1.0f;
  one.step(&act);
  EXPECT_TRUE(one.terminated()[0]);
  EXPECT_FALSE(one.truncated()[0]);
  EXPECT_EQ(one.reward()[0], 0.0f);
  EXPECT_EQ(one.ep_return()[0], 0.0f);
  EXPECT_NEAR(one.final_obs()[0], -1.0f, 1e-6);  // cos(theta1) of the terminal state
  one.step(&act);                                // the fresh episode (reset near hanging) hits the limit after one step
  EXPECT_FALSE(one.terminated()[0]);
  EXPECT_TRUE(one.truncated()[0]);
}

TEST(Acrobot, SameSeedIsIdenticalOtherSeedDiffers) { testing_util::expect_seed_determinism<Acrobot>(64, 600); }

TEST(Acrobot, ObservationsStayInsideDeclaredBounds) { testing_util::expect_obs_in_bounds<Acrobot>(256, 1200); }

TEST(Acrobot, ResetDistributionCoversItsRange) {
  CpuExecutor exec(1);
  const int n = 20000;
  VecEnvT<Acrobot, CpuExecutor> env(exec, n);
  env.reset(31);
  float lo = 1e9f, hi = -1e9f;
  for (int i = 0; i < n; ++i) {
    const Acrobot::State s = env.states()[i];
    for (float v : {s.theta1, s.theta2, s.dtheta1, s.dtheta2}) {
      ASSERT_GE(v, -0.1f);
      ASSERT_LT(v, 0.1f);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    ASSERT_EQ(env.obs()[i * 6 + 4], s.dtheta1);
    ASSERT_EQ(env.obs()[i * 6 + 5], s.dtheta2);
  }
  EXPECT_LT(lo, -0.0999f);
  EXPECT_GT(hi, 0.0999f);
}

TEST(Acrobot, IsRegisteredWithItsSpaces) {
  CpuExecutor exec(1);
  auto env = make_vec_env("acrobot", 2, exec);
  const EnvSpec& spec = env->spec();
  EXPECT_EQ(spec.max_episode_steps, 500);
  EXPECT_EQ(spec.observation.dim, 6);
  EXPECT_NEAR(spec.observation.high[4], 4 * M_PI, 1e-5);
  EXPECT_NEAR(spec.observation.high[5], 9 * M_PI, 1e-5);
  EXPECT_TRUE(spec.action.discrete);
  EXPECT_EQ(spec.action.num_actions, 3);
}

}  // namespace
}  // namespace rlt
