// Pinned trajectories of the classic-control envs: a hash of everything VecEnv::step writes (obs,
// final_obs where an episode ended, reward, terminated, truncated, ep_return and ep_length where one
// ended, the non-finite count) over a rollout of seeded random actions. The hashes were recorded
// with the per-env scalar step that preceded the SIMD lanes step (sim/lanes.h, EnvKernel::step_lanes):
// a change of any bit of any output fails here. The batch sizes are not multiples of the lane
// width, so lanes and the scalar tail both run; two threads split the batch across tasks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "envs/acrobot.h"
#include "envs/cartpole.h"
#include "envs/mountain_car_continuous.h"
#include "envs/pendulum.h"
#include "envs/registry.h"
#include "sim/cpu_executor.h"
#include "tests/envs/env_test_util.h"

namespace rlt {
namespace {

struct Fnv1a {
  std::uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    for (size_t k = 0; k < n; ++k) h = (h ^ b[k]) * 1099511628211ull;
  }
};

// The hash of `steps` steps of n envs of `name` (params overridden by `params`) on `threads` threads.
std::uint64_t trace_hash(const std::string& name, i64 n, int steps, int threads,
                         const std::vector<std::pair<std::string, double>>& params = {}) {
  CpuExecutor exec(threads);
  auto env = make_vec_env(name, n, exec);
  for (const auto& [key, value] : params) EXPECT_TRUE(env->set_param(key, value)) << key;
  env->reset(2024);
  const EnvSpec& spec = env->spec();
  const int od = spec.observation.dim;
  std::vector<float> actions(static_cast<size_t>(n * spec.action.dim));
  Fnv1a h;
  h.add(env->obs(), sizeof(float) * n * od);
  for (int t = 0; t < steps; ++t) {
    testing_util::random_actions(spec, t, 0.5f, actions);
    env->step(actions.data());
    h.add(env->obs(), sizeof(float) * n * od);
    h.add(env->reward(), sizeof(float) * n);
    h.add(env->terminated(), n);
    h.add(env->truncated(), n);
    for (i64 i = 0; i < n; ++i) {
      if (!env->terminated()[i] && !env->truncated()[i]) continue;
      h.add(env->final_obs() + i * od, sizeof(float) * od);
      h.add(env->ep_return() + i, sizeof(float));
      h.add(env->ep_length() + i, sizeof(std::int32_t));
    }
  }
  const i64 nonfinite = env->num_nonfinite_resets();
  h.add(&nonfinite, sizeof(nonfinite));
  return h.h;
}

struct Pinned {
  const char* name;
  std::vector<std::pair<std::string, double>> params;
  std::uint64_t hash[2];  // n = 37, n = 1029
};

TEST(ClassicTrace, OutputsAreBitForBitThePinnedOnes) {
  const std::vector<Pinned> pinned = {
      {"cartpole", {}, {0x30333e17fb9f2eb8ull, 0x08b61b6f3be5c459ull}},
      {"pendulum", {}, {0x354d8d7a1cd299fdull, 0xc624d3bebd9b8c6full}},
      {"acrobot", {}, {0x5cb8e858420d9149ull, 0x8202eb6c39cb9de2ull}},
      {"mountaincar_continuous", {}, {0xe9af01b427880674ull, 0x7c008e11ac2e078aull}},
      // A pole that may fall all the way round and a cart that may run far: sin/cos of angles well
      // past pi/4 (and past 120 rad, libm's slow argument reduction), short episodes truncated.
      {"cartpole",
       {{"theta_threshold", 1e6}, {"x_threshold", 1e9}, {"max_episode_steps", 300}},
       {0x8da5f6ca4c7f5e6eull, 0xc0c07a0e1b8af378ull}},
      // Long time steps: pendulum and acrobot hit their velocity clips and angle wraps often.
      {"pendulum", {{"dt", 0.4}, {"max_speed", 30.0}}, {0xd8a3f2c99e636e4cull, 0x2f6dbad95a18d8ffull}},
      {"acrobot", {{"dt", 0.6}, {"torque", 3.0}}, {0xa9ce433370f55585ull, 0xc27ca5c2f79cc6b8ull}},
  };
  for (const Pinned& p : pinned) {
    for (int k = 0; k < 2; ++k) {
      const i64 n = k == 0 ? 37 : 1029;
      SCOPED_TRACE(std::string(p.name) + (p.params.empty() ? "" : " (params)") + " n=" + std::to_string(n));
      const std::uint64_t one = trace_hash(p.name, n, 700, 1, p.params);
      EXPECT_EQ(one, trace_hash(p.name, n, 700, 2, p.params)) << "1 and 2 threads differ";
      char got[24];
      std::snprintf(got, sizeof got, "0x%016llxull", static_cast<unsigned long long>(one));
      EXPECT_EQ(one, p.hash[k]) << "the outputs changed: the hash is now " << got;
    }
  }
}

// Every output array, whole (stale rows too), after `steps` steps of n envs, in lanes or one env
// per call (VecEnvT::use_lanes), on two threads; every 50 steps one env's state is made non-finite.
template <class Env>
std::vector<std::uint8_t> all_outputs(bool lanes, i64 n, int steps,
                                      const std::vector<std::pair<std::string, double>>& params) {
  CpuExecutor exec(2);
  VecEnvT<Env, CpuExecutor> env(exec, n);
  env.use_lanes(lanes);
  for (const auto& [key, value] : params) EXPECT_TRUE(env.set_param(key, value)) << key;
  env.reset(77);
  std::vector<float> actions(static_cast<size_t>(n * Env::kActDim));
  std::vector<std::uint8_t> bytes;
  auto add = [&](const void* p, size_t size) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + size);
  };
  const i64 od = Env::kObsDim;
  for (int t = 0; t < steps; ++t) {
    if (t % 50 == 10) {
      float* row = reinterpret_cast<float*>(env.states() + (t * 13) % n);
      row[(t / 50) % (sizeof(typename Env::State) / sizeof(float))] = t % 100 == 10 ? NAN : INFINITY;
    }
    testing_util::random_actions(env.spec(), t, 0.5f, actions);
    env.step(actions.data());
    add(env.obs(), sizeof(float) * n * od);
    add(env.final_obs(), sizeof(float) * n * od);
    add(env.reward(), sizeof(float) * n);
    add(env.terminated(), n);
    add(env.truncated(), n);
    add(env.ep_return(), sizeof(float) * n);
    add(env.ep_length(), sizeof(std::int32_t) * n);
    add(env.states(), sizeof(typename Env::State) * n);
    add(env.counters(), sizeof(EnvCounters) * n);
  }
  const i64 nonfinite = env.num_nonfinite_resets();
  EXPECT_GE(nonfinite, (steps + 40) / 100);  // the NaNs at least (an infinite speed may be clipped)
  add(&nonfinite, sizeof nonfinite);
  return bytes;
}

template <class Env>
void expect_lanes_as_one_env_at_a_time(const std::vector<std::pair<std::string, double>>& params = {}) {
  static_assert(VecEnvT<Env, CpuExecutor>::kStepsInLanes, "the env steps in lanes");
  for (const i64 n : {i64{kLanes - 1}, i64{203}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<std::uint8_t> one = all_outputs<Env>(false, n, 400, params);
    const std::vector<std::uint8_t> lanes = all_outputs<Env>(true, n, 400, params);
    ASSERT_EQ(one.size(), lanes.size());
    EXPECT_TRUE(one == lanes) << "lanes and one env per call differ";
  }
}

// The SIMD lanes step against the one-env step the CUDA executor runs: every byte of every output,
// state and counter, non-finite states (NaN, infinity) injected, with default and far-out params.
TEST(ClassicTrace, LanesGiveTheBitsOfOneEnvAtATime) {
  expect_lanes_as_one_env_at_a_time<CartPole>();
  expect_lanes_as_one_env_at_a_time<CartPole>({{"theta_threshold", 1e6}, {"x_threshold", 1e9}});
  expect_lanes_as_one_env_at_a_time<Pendulum>();
  expect_lanes_as_one_env_at_a_time<Pendulum>({{"dt", 0.4}, {"max_speed", 30.0}});
  expect_lanes_as_one_env_at_a_time<Acrobot>();
  expect_lanes_as_one_env_at_a_time<Acrobot>({{"dt", 0.6}, {"torque", 3.0}});
  expect_lanes_as_one_env_at_a_time<MountainCarContinuous>();
}

}  // namespace
}  // namespace rlt
