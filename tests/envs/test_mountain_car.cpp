#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "envs/mountain_car_continuous.h"
#include "envs/registry.h"
#include "sim/vec_env_impl.h"
#include "tests/envs/env_test_util.h"

namespace rlt {
namespace {

using testing_util::close;
using MCC = MountainCarContinuous;

// Gymnasium's Continuous_MountainCarEnv.step, written from continuous_mountain_car.py: the step
// is computed in double from the stored state, and the state is stored back as float32
// (np.array([position, velocity], dtype=np.float32)), as Gymnasium does.
struct RefMountainCar {
  float position, velocity;
  double reward = 0.0;
  // Returns terminated.
  bool step(double action) {
    double p = position, v = velocity;
    const double force = std::min(std::max(action, -1.0), 1.0);
    v += force * 0.0015 - 0.0025 * std::cos(3 * p);
    if (v > 0.07) v = 0.07;
    if (v < -0.07) v = -0.07;
    p += v;
    if (p > 0.6) p = 0.6;
    if (p < -1.2) p = -1.2;
    if (p == -1.2 && v < 0) v = 0;
    const bool terminated = p >= 0.45 && v >= 0.0;
    reward = terminated ? 100.0 : 0.0;
    reward -= std::pow(action, 2) * 0.1;  // the action as given, not the clipped force
    position = static_cast<float>(p);
    velocity = static_cast<float>(v);
    return terminated;
  }
};

struct StepResult {
  float obs[2];
  float reward;
  bool terminated;
};

StepResult step_once(MCC::State& s, float action) {
  MCC::Params p;
  Philox rng(0, RngStream::kEnvStep, 0, 0);
  StepResult r{};
  MCC::step(p, s, &action, rng, r.reward, r.terminated);
  MCC::observe(p, s, r.obs);
  return r;
}

// An energy-pumping policy (push along the velocity) with an offset and a swing beyond [-1, 1],
// so that the wall, the goal, force clipping and the unclipped action cost all occur.
float pump_action(const MCC::State& s, int t) {
  const float base = s.velocity >= 0 ? 1.0f : -1.0f;
  return base * (0.6f + 0.8f * std::abs(std::sin(0.37f * static_cast<float>(t))));
}

// The system is not chaotic and both sides store float32 state, so float and double stay within
// a few ulps for a whole episode, the gap drifting slowly (observed: position 4.8e-7, velocity
// 4.5e-8 over these episodes). Tolerances: 5e-6 on position (ulp 6e-8 at 0.5), 5e-7 on velocity
// (ulp 7e-9 at 0.07; power = 0.0016 instead of 0.0015 would move it by 1e-4), 1e-5 on reward
// (ulp 8e-6 at 100).
TEST(MountainCarContinuous, TrajectoryMatchesGymnasiumEquations) {
  int goals = 0, walls = 0, overshoots = 0;
  testing_util::ErrorStats pos_err{"trajectory position"}, vel_err{"trajectory velocity"},
      reward_err{"trajectory reward"};
  for (int start = 0; start < 6; ++start) {
    MCC::State s{-0.6f + 0.04f * static_cast<float>(start), 0.0f};
    RefMountainCar ref{s.position, s.velocity};
    for (int t = 0; t < 999; ++t) {
      float a = pump_action(s, t);
      if (start % 2 == 1 && t < 40) a = -1.5f;  // drive into the left wall first
      const StepResult r = step_once(s, a);
      const bool ref_term = ref.step(a);
      ASSERT_TRUE(pos_err.check(r.obs[0], ref.position, 5e-6, 0)) << "start " << start << " t=" << t;
      ASSERT_TRUE(vel_err.check(r.obs[1], ref.velocity, 5e-7, 0)) << "start " << start << " t=" << t;
      ASSERT_TRUE(reward_err.check(r.reward, ref.reward, 1e-5, 1e-6)) << "start " << start << " t=" << t;
      ASSERT_EQ(r.terminated, ref_term) << "start " << start << " t=" << t;
      walls += ref.position == -1.2f;
      overshoots += std::abs(a) > 1.0f;
      if (ref_term) {
        ++goals;
        break;
      }
    }
  }
  pos_err.report();
  vel_err.report();
  reward_err.report();
  EXPECT_EQ(goals, 6) << "the pumping policy should reach the goal from every start";
  EXPECT_GT(walls, 0);
  EXPECT_GT(overshoots, 0);
}

// One step from states spread over the whole state space with actions in [-2, 2]: one step of
// rounding only (observed 1 ulp), so 2e-6 on position and 2e-7 on velocity.
TEST(MountainCarContinuous, OneStepMatchesGymnasiumEquationsOverTheStateSpace) {
  Philox rng(77, RngStream::kBench, 0, 0);
  int terminal = 0, wall = 0;
  testing_util::ErrorStats pos_err{"one-step position"}, vel_err{"one-step velocity"}, reward_err{"one-step reward"};
  for (int k = 0; k < 30000; ++k) {
    float u[4];
    uniform4(rng, 0.0f, 1.0f, u, 4);
    MCC::State s{-1.2f + 1.8f * u[0], -0.07f + 0.14f * u[1]};
    RefMountainCar ref{s.position, s.velocity};
    const float a = -2.0f + 4.0f * u[2];
    const StepResult r = step_once(s, a);
    const bool ref_term = ref.step(a);
    ASSERT_TRUE(pos_err.check(r.obs[0], ref.position, 2e-6, 0)) << "k=" << k;
    ASSERT_TRUE(vel_err.check(r.obs[1], ref.velocity, 2e-7, 0)) << "k=" << k;
    ASSERT_TRUE(reward_err.check(r.reward, ref.reward, 1e-5, 1e-6)) << "k=" << k;
    // Termination must agree except within rounding of the goal (x = 0.45 or v = 0 exactly).
    if (std::abs(ref.position - 0.45f) > 1e-6f && std::abs(ref.velocity) > 1e-7f) {
      ASSERT_EQ(r.terminated, ref_term) << "k=" << k;
    }
    terminal += ref_term;
    wall += ref.position == -1.2f;
  }
  pos_err.report();
  vel_err.report();
  reward_err.report();
  EXPECT_GT(terminal, 100);
  EXPECT_GT(wall, 100);
}

TEST(MountainCarContinuous, LeftWallIsInelastic) {
  MCC::State s{-1.19f, -0.07f};
  const StepResult r = step_once(s, -1.0f);
  EXPECT_EQ(r.obs[0], -1.2f);
  EXPECT_EQ(r.obs[1], 0.0f);  // negative velocity at the wall is set to 0
  EXPECT_FALSE(r.terminated);
  // At the wall, a push to the right moves the car off it.
  const StepResult r2 = step_once(s, 1.0f);
  EXPECT_GT(r2.obs[1], 0.0f);
  EXPECT_GT(r2.obs[0], -1.2f);
}

TEST(MountainCarContinuous, VelocityIsClippedAndForceIsClipped) {
  MCC::State a{-0.6f, 0.0695f};  // cos(3x) < 0 there: the slope and the push both accelerate
  step_once(a, 1.0f);
  EXPECT_EQ(a.velocity, 0.07f);
  MCC::State b{0.0f, -0.0695f};
  step_once(b, -1.0f);
  EXPECT_EQ(b.velocity, -0.07f);
  // A force of 5 acts like 1 in the dynamics ...
  MCC::State c{-0.5f, 0.01f}, d{-0.5f, 0.01f};
  const StepResult rc = step_once(c, 5.0f), rd = step_once(d, 1.0f);
  EXPECT_EQ(c.position, d.position);
  EXPECT_EQ(c.velocity, d.velocity);
  // ... but costs 0.1 * 25, as in Gymnasium (reward -= pow(action[0], 2) * 0.1).
  EXPECT_FLOAT_EQ(rc.reward, -2.5f);
  EXPECT_FLOAT_EQ(rd.reward, -0.1f);
}

TEST(MountainCarContinuous, GoalNeedsPositionAndNonNegativeVelocity) {
  // Reaching x >= 0.45 moving right terminates with 100 minus the action cost.
  MCC::State s{0.44f, 0.03f};
  StepResult r = step_once(s, 0.5f);
  EXPECT_GE(r.obs[0], 0.45f);
  EXPECT_TRUE(r.terminated);
  EXPECT_FLOAT_EQ(r.reward, 100.0f - 0.1f * 0.25f);
  // Past the goal but moving left: not terminal.
  MCC::State back{0.5f, -0.02f};
  r = step_once(back, -1.0f);
  EXPECT_GE(r.obs[0], 0.45f);
  EXPECT_LT(r.obs[1], 0.0f);
  EXPECT_FALSE(r.terminated);
  EXPECT_FLOAT_EQ(r.reward, -0.1f);
  // The right end clips position (the episode has ended there anyway).
  MCC::State edge{0.59f, 0.07f};
  r = step_once(edge, 1.0f);
  EXPECT_EQ(r.obs[0], 0.6f);
  EXPECT_TRUE(r.terminated);
}

TEST(MountainCarContinuous, TruncatesAt999StepsAndKeepsTerminationApart) {
  CpuExecutor exec(1);
  VecEnvT<MCC, CpuExecutor> env(exec, 2);
  env.reset(2);
  std::vector<float> actions(2, 0.0f);  // env 0 never pushes: it cannot leave the valley
  int goals = 0;
  double action_cost = 0.0;  // env 1's episode so far
  for (int t = 0; t < 999; ++t) {
    actions[1] = pump_action(env.states()[1], t);
    action_cost += 0.1 * actions[1] * actions[1];
    env.step(actions.data());
    ASSERT_FALSE(env.terminated()[0]) << "t=" << t;
    ASSERT_EQ(static_cast<bool>(env.truncated()[0]), t == 998) << "t=" << t;
    ASSERT_FALSE(env.terminated()[1] && env.truncated()[1]);
    if (env.terminated()[1]) {
      ++goals;
      EXPECT_GE(env.final_obs()[2], 0.45f);
      EXPECT_NEAR(env.ep_return()[1], 100.0 - action_cost, 1e-3);  // float sum of ~100 terms
      action_cost = 0.0;
      EXPECT_EQ(env.obs()[3], 0.0f);  // the next episode starts at rest
    }
  }
  EXPECT_EQ(env.ep_length()[0], 999);
  EXPECT_EQ(env.ep_return()[0], 0.0f);
  EXPECT_GT(goals, 0);
}

TEST(MountainCarContinuous, SameSeedIsIdenticalOtherSeedDiffers) {
  testing_util::expect_seed_determinism<MCC>(64, 1100);
}

TEST(MountainCarContinuous, ObservationsStayInsideDeclaredBounds) {
  testing_util::expect_obs_in_bounds<MCC>(256, 2000);
}

TEST(MountainCarContinuous, ResetDistributionCoversItsRange) {
  CpuExecutor exec(1);
  const int n = 20000;
  VecEnvT<MCC, CpuExecutor> env(exec, n);
  env.reset(41);
  float lo = 1e9f, hi = -1e9f;
  double mean = 0;
  for (int i = 0; i < n; ++i) {
    const MCC::State s = env.states()[i];
    ASSERT_GE(s.position, -0.6f);
    ASSERT_LT(s.position, -0.4f);
    ASSERT_EQ(s.velocity, 0.0f);
    ASSERT_EQ(env.obs()[i * 2], s.position);
    lo = std::min(lo, s.position);
    hi = std::max(hi, s.position);
    mean += s.position / n;
  }
  EXPECT_LT(lo, -0.5998f);
  EXPECT_GT(hi, -0.4002f);
  EXPECT_NEAR(mean, -0.5, 5 * 0.2 / std::sqrt(12.0 * n));  // 5 sigma of the mean of U(width 0.2)
}

TEST(MountainCarContinuous, IsRegisteredWithItsSpaces) {
  CpuExecutor exec(1);
  auto env = make_vec_env("mountaincar_continuous", 2, exec);
  const EnvSpec& spec = env->spec();
  EXPECT_EQ(spec.max_episode_steps, 999);
  EXPECT_EQ(spec.observation.low, (std::vector<float>{-1.2f, -0.07f}));
  EXPECT_EQ(spec.observation.high, (std::vector<float>{0.6f, 0.07f}));
  EXPECT_FALSE(spec.action.discrete);
  EXPECT_EQ(spec.action.low[0], -1.0f);
  EXPECT_EQ(spec.action.high[0], 1.0f);
}

}  // namespace
}  // namespace rlt
