// Checks shared by the env tests: a tolerance comparison, seeded random actions, rollouts through
// VecEnvT on the CPU executor, and the determinism / bounds checks every env must pass
// (STYLE.md 7).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

#include "sim/vec_env_impl.h"

namespace rlt {
namespace testing_util {

// |x - ref| <= atol + rtol * |ref|, with both values in the message when it fails.
inline ::testing::AssertionResult close(double x, double ref, double atol, double rtol) {
  const double err = std::abs(x - ref);
  if (err <= atol + rtol * std::abs(ref)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << x << ", expected " << ref << " (error " << err << " > " << atol
                                       << " + " << rtol << " * |ref|)";
}

// close() that also remembers the worst error and the largest fraction of the tolerance it used,
// so that a passing test still says how much room its tolerance leaves (report() prints it).
struct ErrorStats {
  const char* what;
  double max_err = 0.0;
  double max_frac = 0.0;  // max over checks of error / (atol + rtol * |ref|)
  ::testing::AssertionResult check(double x, double ref, double atol, double rtol) {
    const double err = std::abs(x - ref), tol = atol + rtol * std::abs(ref);
    if (err > max_err) max_err = err;
    if (tol > 0 && err / tol > max_frac) max_frac = err / tol;
    return close(x, ref, atol, rtol);
  }
  void report() const {
    std::printf("[ errors   ] %s: max error %.3g, %.1f%% of its tolerance\n", what, max_err, 100.0 * max_frac);
  }
};

// Seeded actions for env i at step t, from a stream that does not depend on the env's seed.
// Continuous actions are drawn from the action box widened by `overshoot` on each side, so the
// env's own clipping is exercised; discrete actions are uniform over the indices.
inline void random_actions(const EnvSpec& spec, int t, float overshoot, std::vector<float>& actions) {
  const int dim = spec.action.dim;
  const i64 n = static_cast<i64>(actions.size()) / dim;
  for (i64 i = 0; i < n; ++i) {
    Philox rng(12345, RngStream::kAction, static_cast<u32>(i), static_cast<u32>(t));
    float u[4];
    uniform4(rng, 0.0f, 1.0f, u, 4);
    for (int k = 0; k < dim; ++k) {
      float& a = actions[static_cast<size_t>(i * dim + k)];
      if (spec.action.discrete) {
        a = std::floor(u[k % 4] * static_cast<float>(spec.action.num_actions));
      } else {
        const float lo = spec.action.low[k] - overshoot, hi = spec.action.high[k] + overshoot;
        a = lo + (hi - lo) * u[k % 4];
      }
    }
  }
}

// Everything a VecEnv step produces, concatenated over a rollout, for exact comparisons.
struct Trace {
  std::vector<float> obs, final_obs, reward;
  std::vector<std::uint8_t> terminated, truncated;
  bool operator==(const Trace& o) const {
    return obs == o.obs && final_obs == o.final_obs && reward == o.reward && terminated == o.terminated &&
           truncated == o.truncated;
  }
};

// Runs `steps` steps of seeded random actions on n envs reset with `seed`. final_obs is recorded
// only where an episode ended (elsewhere it holds stale values).
template <class Env>
Trace rollout(std::uint64_t seed, i64 n, int steps, float overshoot) {
  CpuExecutor exec(1);
  VecEnvT<Env, CpuExecutor> env(exec, n);
  env.reset(seed);
  std::vector<float> actions(static_cast<size_t>(n * Env::kActDim));
  Trace tr;
  tr.obs.insert(tr.obs.end(), env.obs(), env.obs() + n * Env::kObsDim);
  for (int t = 0; t < steps; ++t) {
    random_actions(env.spec(), t, overshoot, actions);
    env.step(actions.data());
    tr.obs.insert(tr.obs.end(), env.obs(), env.obs() + n * Env::kObsDim);
    tr.reward.insert(tr.reward.end(), env.reward(), env.reward() + n);
    tr.terminated.insert(tr.terminated.end(), env.terminated(), env.terminated() + n);
    tr.truncated.insert(tr.truncated.end(), env.truncated(), env.truncated() + n);
    for (i64 i = 0; i < n; ++i)
      if (env.terminated()[i] || env.truncated()[i])
        tr.final_obs.insert(tr.final_obs.end(), env.final_obs() + i * Env::kObsDim,
                            env.final_obs() + (i + 1) * Env::kObsDim);
  }
  return tr;
}

// Same seed -> bit-identical rollouts; another seed -> different observations.
template <class Env>
void expect_seed_determinism(i64 n, int steps) {
  const Trace a = rollout<Env>(7, n, steps, 0.5f);
  const Trace b = rollout<Env>(7, n, steps, 0.5f);
  const Trace c = rollout<Env>(8, n, steps, 0.5f);
  EXPECT_TRUE(a == b) << "same seed gave different rollouts";
  EXPECT_NE(a.obs, c.obs) << "another seed gave the same observations";
}

// Every observation (and every final observation) inside the declared observation box.
template <class Env>
void expect_obs_in_bounds(i64 n, int steps) {
  const Trace tr = rollout<Env>(3, n, steps, 0.5f);
  EnvSpec spec;
  {
    CpuExecutor exec(1);
    spec = VecEnvT<Env, CpuExecutor>(exec, 1).spec();
  }
  ASSERT_EQ(spec.observation.dim, Env::kObsDim);
  int reported = 0;
  for (const auto* v : {&tr.obs, &tr.final_obs}) {
    for (size_t j = 0; j < v->size(); ++j) {
      const int k = static_cast<int>(j % Env::kObsDim);
      const float x = (*v)[j];
      const bool ok = std::isfinite(x) && x >= spec.observation.low[k] && x <= spec.observation.high[k];
      if (!ok && reported++ < 5)
        ADD_FAILURE() << (v == &tr.obs ? "obs" : "final_obs") << " row " << j / Env::kObsDim << " component " << k
                      << " = " << x << " outside [" << spec.observation.low[k] << ", " << spec.observation.high[k]
                      << "]";
    }
  }
  EXPECT_EQ(reported, 0) << "observations outside the declared bounds";
}

}  // namespace testing_util
}  // namespace rlt
