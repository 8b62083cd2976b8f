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

}  // namespace
}  // namespace rlt
