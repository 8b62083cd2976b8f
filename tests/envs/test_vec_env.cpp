#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "envs/cartpole.h"
#include "envs/registry.h"
#include "sim/vec_env_impl.h"
#include "tests/envs/reset_one_check.h"

namespace rlt {
namespace {

TEST(VecEnv, RegistryKnowsCartPoleAndRejectsUnknown) {
  CpuExecutor exec(1);
  auto env = make_vec_env("cartpole", 4, exec);
  EXPECT_EQ(env->spec().name, "cartpole");
  EXPECT_EQ(env->spec().observation.dim, 4);
  EXPECT_TRUE(env->spec().action.discrete);
  EXPECT_THROW(make_vec_env("no_such_env", 4, exec), std::invalid_argument);
}

// Physical parameters have ranges (a negative mass, a zero time step or length are refused with the
// range's words), and every env's defaults lie within their own ranges.
TEST(VecEnv, ParameterRangesRefuseUnphysicalValuesAndHoldTheDefaults) {
  CpuExecutor exec(1);
  for (const std::string& name : env_names()) {
    SCOPED_TRACE(name);
    auto env = make_vec_env(name, 1, exec);
    for (const VecEnv::ParamInfo& p : env->params()) EXPECT_NO_THROW(env->set_param(p.name, p.value)) << p.name;
  }
  auto cartpole = make_vec_env("cartpole", 1, exec);
  const std::vector<std::tuple<std::string, double, std::string>> refused = {
      {"tau", 0.0, "a finite positive number"},      {"mass_pole", -1.0, "a finite positive number"},
      {"half_length", 0.0, "a finite positive number"}, {"gravity", -9.8, "a finite non-negative number"},
      {"reset_noise", -0.1, "a finite non-negative number"}};
  for (const auto& [key, value, expect] : refused) {
    try {
      cartpole->set_param(key, value);
      ADD_FAILURE() << key << " = " << value << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), expect) << key;
    }
  }
  // A refused value leaves the parameter as it was.
  for (const VecEnv::ParamInfo& p : cartpole->params()) {
    if (p.name == "tau") {
      EXPECT_FLOAT_EQ(static_cast<float>(p.value), 0.02f);
    }
  }
  auto go1 = make_vec_env("go1_joystick", 1, exec);
  EXPECT_THROW(go1->set_param("tracking_sigma", 0.0), std::invalid_argument);
  EXPECT_THROW(go1->set_param("cmd_b_vx", 1.5), std::invalid_argument);
}

TEST(VecEnv, AutoResetKeepsFinalObservationAndSeparatesTruncation) {
  CpuExecutor exec(1);
  VecEnvT<CartPole, CpuExecutor> env(exec, 2);
  ASSERT_TRUE(env.set_param("max_episode_steps", 5));
  env.reset(3);
  // Env 0 is pushed over quickly by constant force on a tilted pole; env 1 stays near upright
  // for 5 steps and must be truncated, not terminated.
  env.states()[0] = CartPole::State{0.0f, 0.0f, 0.2f, 2.0f};
  std::vector<float> actions = {1.0f, 0.0f};
  int term_seen = 0, trunc_seen = 0;
  for (int t = 0; t < 5; ++t) {
    const float before_theta = env.states()[0].theta;
    actions[1] = static_cast<float>(t % 2);
    env.step(actions.data());
    if (env.terminated()[0]) {
      ++term_seen;
      EXPECT_FALSE(env.truncated()[0]);
      EXPECT_GT(std::abs(env.final_obs()[2]), CartPole::Params{}.theta_threshold);
      EXPECT_GT(std::abs(env.final_obs()[2]), std::abs(before_theta));
      // The observation after auto-reset is a fresh start inside the reset noise.
      for (int k = 0; k < 4; ++k) EXPECT_LE(std::abs(env.obs()[k]), 0.05f);
      EXPECT_EQ(env.ep_length()[0], t + 1);
      EXPECT_FLOAT_EQ(env.ep_return()[0], static_cast<float>(t + 1));
    }
    if (env.truncated()[1]) {
      ++trunc_seen;
      EXPECT_EQ(t, 4);
      EXPECT_FALSE(env.terminated()[1]);
      EXPECT_EQ(env.ep_length()[1], 5);
    }
  }
  EXPECT_EQ(term_seen, 1);
  EXPECT_EQ(trunc_seen, 1);
}

TEST(VecEnv, NonFiniteStateIsCountedAndReset) {
  CpuExecutor exec(1);
  VecEnvT<CartPole, CpuExecutor> env(exec, 3);
  env.reset(1);
  env.states()[1].x_dot = NAN;
  std::vector<float> actions(3, 1.0f);
  env.step(actions.data());
  EXPECT_EQ(env.num_nonfinite_resets(), 1);
  EXPECT_TRUE(env.terminated()[1]);
  EXPECT_EQ(env.reward()[1], 0.0f);
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(std::isfinite(env.obs()[4 + k]));
  EXPECT_FALSE(env.terminated()[0]);
}

TEST(VecEnv, ResultsDoNotDependOnThreadCount) {
  const i64 n = 5000;
  std::vector<std::vector<float>> runs;
  for (int threads : {1, 2, 5}) {
    CpuExecutor exec(threads);
    VecEnvT<CartPole, CpuExecutor> env(exec, n);
    env.reset(11);
    std::vector<float> actions(n);
    std::vector<float> trace;
    for (int t = 0; t < 300; ++t) {
      for (i64 i = 0; i < n; ++i) actions[i] = static_cast<float>((i * 7 + t * 3) % 5 < 2);
      env.step(actions.data());
      trace.insert(trace.end(), env.obs(), env.obs() + n * 4);
    }
    runs.push_back(trace);
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

TEST(VecEnv, SaveAndLoadStateContinuesIdentically) {
  CpuExecutor exec(2);
  VecEnvT<CartPole, CpuExecutor> a(exec, 64), b(exec, 64);
  a.reset(5);
  std::vector<float> actions(64);
  auto act = [&](int t) {
    for (int i = 0; i < 64; ++i) actions[i] = static_cast<float>((i + t) % 3 == 0);
  };
  for (int t = 0; t < 50; ++t) act(t), a.step(actions.data());
  b.reset(99);
  b.load_state(a.save_state());
  for (int t = 50; t < 150; ++t) {
    act(t);
    a.step(actions.data());
    b.step(actions.data());
    ASSERT_EQ(0, std::memcmp(a.obs(), b.obs(), sizeof(float) * 64 * 4)) << "step " << t;
  }
  VecEnvT<CartPole, CpuExecutor> wrong(exec, 32);
  EXPECT_THROW(wrong.load_state(a.save_state()), std::runtime_error);
}

// reset_one on every classic env: only that env moves, into the episode its auto-reset would start.
TEST(VecEnv, ResetOneStartsTheNextEpisodeOfThatEnvOnly) {
  for (const char* name : {"cartpole", "pendulum", "acrobot", "mountaincar_continuous"}) {
    SCOPED_TRACE(name);
    CpuExecutor exec(2);
    testing_util::expect_reset_one_is_an_auto_reset([&] { return make_vec_env(name, 6, exec); }, 4, 3, 30);
  }
}

TEST(VecEnv, ResetOneRejectsABadIndex) {
  CpuExecutor exec(1);
  VecEnvT<CartPole, CpuExecutor> env(exec, 4);
  testing_util::expect_reset_one_rejects_bad_index(env);
}

}  // namespace
}  // namespace rlt
