// Robot envs (envs/robot_env.h and the tasks of RLT_FOR_EACH_ROBOT_ENV) on the CPU executor:
// spaces and bounds, determinism, reset noise, termination rules, rewards recomputed from the
// physics rows against each header's formula, 10^4 random-action steps without a non-finite
// state, auto-reset and truncation, non-finite resets (D9), domain randomization and noise,
// checkpoints, and the viewer's geoms and poses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "envs/all_envs.h"
#include "envs/registry.h"
#include "envs/robot_env.h"
#include "tests/envs/reset_one_check.h"

namespace rlt {
namespace {

constexpr std::uint64_t kSeed = 7;

// The Gymnasium-style tasks this file checks against their headers' formulas.
std::vector<std::string> gym_names() { return {"reacher", "ant", "halfcheetah", "hopper", "walker2d", "humanoid"}; }

// Every robot task (generic checks: determinism, finiteness, checkpoints, auto-reset, drawing).
// Every registered robot env (the quadruped and the joystick tasks too).
std::vector<std::string> every_robot_name() {
  std::vector<std::string> names;
#define RLT_ROBOT_NAME(E) names.push_back(E::kName);
  RLT_FOR_EACH_ROBOT_ENV(RLT_ROBOT_NAME)
#undef RLT_ROBOT_NAME
  return names;
}

std::vector<std::string> robot_names() {
  std::vector<std::string> names;
  // quadruped (velocity tracking, privileged critic obs) is not a Gymnasium task: its own tests are
  // in tests/envs/test_quadruped.cpp.
#define RLT_ROBOT_NAME(E) \
  if (std::string(E::kName) != "quadruped") names.push_back(E::kName);
  RLT_FOR_EACH_ROBOT_ENV(RLT_ROBOT_NAME)
#undef RLT_ROBOT_NAME
  return names;
}

// Seeded actions in [-1.2, 1.2] (beyond the bounds, so the clip is exercised).
void actions_for(const EnvSpec& spec, i64 n, int t, std::vector<float>& a) {
  const int dim = spec.action.dim;
  a.resize(static_cast<size_t>(n * dim));
  for (i64 i = 0; i < n; ++i) {
    Philox rng(99, RngStream::kAction, static_cast<u32>(i), static_cast<u32>(t));
    for (int k = 0; k < dim; k += 4) {
      float u[4];
      uniform4(rng, -1.2f, 1.2f, u, 4);
      for (int q = 0; q < 4 && k + q < dim; ++q) a[static_cast<size_t>(i * dim + k + q)] = u[q];
    }
  }
}

std::vector<float> copy_of(const float* p, i64 n) { return std::vector<float>(p, p + n); }

// The internals of a robot env made by the registry (CPU executor), whatever its task.
struct RobotView {
  VecEnv* env;
  const Model* model;
  const ModelView<float>* view;
  DataLayout layout;
  DrLayout drl;
  float* data;
  float* dr;
  EnvCounters* counters;
  float dt;
  std::function<void(const std::string&, double)> set;
};

template <class Task>
bool view_as(VecEnv* env, RobotView& v) {
  auto* e = dynamic_cast<VecEnvT<Task, CpuExecutor>*>(env);
  if (!e) return false;
  auto& w = e->world();
  v = RobotView{env,
                &w.model(),
                &w.host_model_view(),
                w.layout(),
                w.randomization_layout(),
                w.physics_rows(),
                w.randomization_rows(),
                e->counters(),
                w.control_dt(),
                nullptr};
  return true;
}

RobotView robot_view(VecEnv* env) {
  RobotView v{};
  bool ok = false;
#define RLT_ROBOT_VIEW(E) ok = ok || view_as<E>(env, v);
  RLT_FOR_EACH_ROBOT_ENV(RLT_ROBOT_VIEW)
#undef RLT_ROBOT_VIEW
  if (!ok) throw std::runtime_error("not a robot env: " + env->spec().name);
  return v;
}

struct Made {
  CpuExecutor exec{1};
  std::unique_ptr<VecEnv> env;
  RobotView v;
  Made(const std::string& name, i64 n, const std::vector<std::pair<std::string, double>>& params = {}) {
    env = make_vec_env(name, n, exec);
    for (const auto& [k, x] : params) EXPECT_TRUE(env->set_param(k, x)) << k;
    v = robot_view(env.get());
  }
  const float* row(i64 i) const { return v.data + i * v.layout.row; }
  float* qpos(i64 i) { return v.data + i * v.layout.row + v.layout.qpos; }
  float* qvel(i64 i) { return v.data + i * v.layout.row + v.layout.qvel; }
};

class RobotEnv : public ::testing::TestWithParam<std::string> {};  // every robot task
class GymTask : public ::testing::TestWithParam<std::string> {};   // the Gymnasium-style ones

TEST_P(GymTask, SpacesAndBounds) {
  Made m(GetParam(), 4);
  const EnvSpec& spec = m.env->spec();
  EXPECT_EQ(spec.name, GetParam());
  EXPECT_FALSE(spec.action.discrete);
  EXPECT_EQ(spec.action.dim, m.v.model->nu);
  for (int k = 0; k < spec.action.dim; ++k) {
    EXPECT_EQ(spec.action.low[static_cast<size_t>(k)], -1.0f);
    EXPECT_EQ(spec.action.high[static_cast<size_t>(k)], 1.0f);
  }
  for (int k = 0; k < spec.observation.dim; ++k) {
    EXPECT_EQ(spec.observation.low[static_cast<size_t>(k)], -INFINITY);
    EXPECT_EQ(spec.observation.high[static_cast<size_t>(k)], INFINITY);
  }
  const int want_obs = GetParam() == "reacher"    ? 11
                       : GetParam() == "ant"      ? 27
                       : GetParam() == "hopper"   ? 11
                       : GetParam() == "humanoid" ? 332
                                                  : 17;
  EXPECT_EQ(spec.observation.dim, want_obs);
  EXPECT_EQ(spec.max_episode_steps, GetParam() == "reacher" ? 50 : 1000);
  EXPECT_EQ(spec.critic_obs_dim, 0);
  EXPECT_EQ(m.env->critic_obs(), nullptr);
  const double want_dt = GetParam() == "reacher"                                ? 0.02
                         : (GetParam() == "hopper" || GetParam() == "walker2d") ? 0.008
                         : GetParam() == "humanoid"                             ? 0.015
                                                                                : 0.05;
  EXPECT_NEAR(m.v.dt, want_dt, 1e-7);
}

TEST_P(RobotEnv, ActionsInTheBoxObservationsFinite) {
  Made m(GetParam(), 4);
  const EnvSpec& spec = m.env->spec();
  EXPECT_EQ(spec.name, GetParam());
  EXPECT_EQ(static_cast<int>(spec.observation.low.size()), spec.observation.dim);
  EXPECT_EQ(static_cast<int>(spec.action.low.size()), spec.action.dim);
  EXPECT_EQ(m.env->critic_obs() != nullptr, spec.critic_obs_dim > 0);
  m.env->reset(kSeed);
  for (u32 t = 0; t < 20; ++t) {
    const float* a = m.env->sample_actions(3, t);
    for (i64 k = 0; k < 4 * spec.action.dim; ++k) {
      EXPECT_GE(a[k], spec.action.low[static_cast<size_t>(k % spec.action.dim)]);
      EXPECT_LE(a[k], spec.action.high[static_cast<size_t>(k % spec.action.dim)]);
    }
    m.env->step(a);
    for (i64 k = 0; k < 4 * spec.observation.dim; ++k) ASSERT_TRUE(std::isfinite(m.env->obs()[k]));
    if (spec.critic_obs_dim > 0) {
      ASSERT_TRUE(all_finite(m.env->critic_obs(), 4 * spec.critic_obs_dim));
    }
  }
}

TEST_P(RobotEnv, SameSeedSameEpisodesOtherSeedOther) {
  const i64 n = 3;
  Made a(GetParam(), n), b(GetParam(), n), c(GetParam(), n);
  a.env->reset(kSeed), b.env->reset(kSeed), c.env->reset(kSeed + 1);
  const int dim = a.env->spec().observation.dim;
  std::vector<float> act;
  bool differs = false;
  for (int t = 0; t < 120; ++t) {
    actions_for(a.env->spec(), n, t, act);
    a.env->step(act.data()), b.env->step(act.data()), c.env->step(act.data());
    ASSERT_EQ(0, std::memcmp(a.env->obs(), b.env->obs(), sizeof(float) * n * dim)) << "step " << t;
    ASSERT_EQ(0, std::memcmp(a.env->reward(), b.env->reward(), sizeof(float) * n));
    differs = differs || std::memcmp(a.env->obs(), c.env->obs(), sizeof(float) * n * dim) != 0;
  }
  EXPECT_TRUE(differs);
  // Envs of one batch start differently.
  EXPECT_NE(0, std::memcmp(a.row(0), a.row(1), sizeof(float) * a.v.model->nq));
}

// The documented reset distribution: qpos0 + U(-s, s) (Reacher: joints, then a goal in the disc),
// qvel U(-s, s) or s N(0, 1).
TEST_P(GymTask, ResetNoiseWithinDocumentedRange) {
  const i64 n = 256;
  Made m(GetParam(), n);
  m.env->reset(kSeed);
  const std::string name = GetParam();
  const Model& model = *m.v.model;
  const double s = name == "reacher"                          ? 0.1
                   : (name == "ant" || name == "halfcheetah") ? 0.1
                                                              : (name == "humanoid" ? 1e-2 : 5e-3);
  double max_dev = 0, sum_v2 = 0, max_v = 0;
  for (i64 i = 0; i < n; ++i) {
    const float* q = m.qpos(i);
    const float* v = m.qvel(i);
    const bool free_root = model.jnt_type[0] == kJointFree;
    for (int k = 0; k < model.nq; ++k) {
      if (free_root && k >= 3 && k < 7) continue;  // renormalized quaternion
      if (name == "reacher" && k >= 2) continue;
      const double dev = q[k] - model.qpos0[static_cast<size_t>(k)];
      EXPECT_LE(std::abs(dev), s + 1e-6) << "env " << i << " qpos " << k;
      max_dev = std::max(max_dev, std::abs(dev));
    }
    if (free_root) {
      const double qn = std::sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
      EXPECT_NEAR(qn, 1.0, 1e-6);
    }
    if (name == "reacher") {
      EXPECT_LT(std::hypot(q[2], q[3]), 0.2);
      EXPECT_LE(std::abs(v[0]), 0.005f);
      EXPECT_LE(std::abs(v[1]), 0.005f);
      EXPECT_EQ(v[2], 0.0f);
      EXPECT_EQ(v[3], 0.0f);
      continue;
    }
    for (int k = 0; k < model.nv; ++k) {
      sum_v2 += v[k] * v[k];
      max_v = std::max(max_v, static_cast<double>(std::abs(v[k])));
      if (name != "ant" && name != "halfcheetah") {
        EXPECT_LE(std::abs(v[k]), s + 1e-6);
      }
    }
  }
  EXPECT_GT(max_dev, 0.8 * s);                   // the noise is there, and uses its range
  if (name == "ant" || name == "halfcheetah") {  // qvel = 0.1 N(0, 1): its std
    const double std_v = std::sqrt(sum_v2 / static_cast<double>(n * model.nv));
    EXPECT_NEAR(std_v, s, 0.1 * s);
  }
}

// What each task's header documents, recomputed from the physics rows around one step.
struct Expect {
  double reward;
  bool healthy;
  bool check_healthy;
};

double sum_sq_clipped(const float* a, int dim) {
  double s = 0;
  for (int k = 0; k < dim; ++k) {
    const double x = std::min(1.0f, std::max(-1.0f, a[k]));
    s += x * x;
  }
  return s;
}

Expect expected(const std::string& name, const Made& m, const std::vector<float>& before, const float* after,
                const float* a, int dim) {
  const DataLayout& l = m.v.layout;
  const double dt = m.v.dt;
  const double ctrl = sum_sq_clipped(a, dim);
  auto qpos = [&](const float* row, int k) { return static_cast<double>(row[l.qpos + k]); };
  auto qvel = [&](const float* row, int k) { return static_cast<double>(row[l.qvel + k]); };
  const float* b = before.data();
  if (name == "reacher") {
    double d2 = 0;
    for (int k = 0; k < 3; ++k) {
      const double v = b[l.xipos + 3 * 3 + k] - b[l.xipos + 3 * 4 + k];
      d2 += v * v;
    }
    return {-std::sqrt(d2) - ctrl, true, false};
  }
  if (name == "ant") {
    const double vx = (after[l.xipos + 3] - b[l.xipos + 3]) / dt;
    const double z = qpos(after, 2);
    return {vx + 1.0 - 0.5 * ctrl, z >= 0.2 && z <= 1.0, true};
  }
  if (name == "halfcheetah") return {(qpos(after, 0) - qpos(b, 0)) / dt - 0.1 * ctrl, true, false};
  if (name == "hopper") {
    bool ok = true;
    for (int k = 2; k < 6; ++k) ok = ok && std::abs(qpos(after, k)) < 100;
    for (int k = 0; k < 6; ++k) ok = ok && std::abs(qvel(after, k)) < 100;
    const double z = qpos(after, 1) + 1.25, ang = qpos(after, 2);
    ok = ok && z > 0.7 && std::abs(ang) < 0.2;
    return {(qpos(after, 0) - qpos(b, 0)) / dt + 1.0 - 1e-3 * ctrl, ok, true};
  }
  if (name == "walker2d") {
    const double z = qpos(after, 1) + 1.25, ang = qpos(after, 2);
    return {(qpos(after, 0) - qpos(b, 0)) / dt + 1.0 - 1e-3 * ctrl, z > 0.8 && z < 2.0 && std::abs(ang) < 1.0, true};
  }
  if (name == "humanoid") {
    const ModelView<float>& mv = *m.v.view;
    auto com_x = [&](const float* row) {
      double mx = 0, mass = 0;
      for (int bd = 1; bd < mv.nbody; ++bd) mx += mv.body_mass[bd] * row[l.xipos + 3 * bd], mass += mv.body_mass[bd];
      return mx / mass;
    };
    const double z = qpos(after, 2);
    return {1.25 * (com_x(after) - com_x(b)) / dt + 5.0 - 0.1 * ctrl, z > 1.0 && z < 2.0, true};
  }
  ADD_FAILURE() << "no reference for " << name;
  return {0, true, false};
}

// Rewards and termination against the documented formulas, stepping one env at a time so that the
// row before the step is known (the row after is read where the episode did not end; where it
// ended, the terminal flag is checked against the rule on the final observation).
TEST_P(GymTask, RewardAndTerminationFollowTheDocumentedFormulas) {
  const std::string name = GetParam();
  Made m(name, 2);
  m.env->reset(kSeed);
  const int dim = m.env->spec().action.dim;
  std::vector<float> act;
  int checked = 0, terminations = 0;
  double worst = 0;
  for (int t = 0; t < 1500; ++t) {
    actions_for(m.env->spec(), 2, t, act);
    const std::vector<float> before = copy_of(m.row(0), m.v.layout.row);
    m.env->step(act.data());
    const bool done = m.env->terminated()[0] || m.env->truncated()[0];
    const Expect e = expected(name, m, before, m.row(0), act.data(), dim);
    if (!done) {
      const double r = m.env->reward()[0];
      const double tol = 2e-3 + 1e-4 * std::abs(e.reward);
      worst = std::max(worst, std::abs(r - e.reward));
      ASSERT_NEAR(r, e.reward, tol) << name << " step " << t;
      if (e.check_healthy) {
        ASSERT_TRUE(e.healthy) << name << " step " << t << ": unhealthy but not terminated";
      }
      ++checked;
    } else if (m.env->terminated()[0]) {
      ++terminations;
      // The final observation shows the unhealthy state (height obs[0] for every task that terminates).
      const float* fo = m.env->final_obs();
      ASSERT_TRUE(e.check_healthy) << name << " terminated, but never should";
      if (name == "ant") {
        EXPECT_TRUE(fo[0] < 0.2f || fo[0] > 1.0f) << fo[0];
      }
      if (name == "humanoid") {
        EXPECT_TRUE(fo[0] <= 1.0f || fo[0] >= 2.0f) << fo[0];
      }
      if (name == "walker2d") {
        EXPECT_TRUE(fo[0] <= 0.8f || fo[0] >= 2.0f || std::abs(fo[1]) >= 1.0f);
      }
      if (name == "hopper") {  // height, pitch, or a velocity at the clip (|qvel| >= 100 shows as 10)
        EXPECT_TRUE(fo[0] <= 0.7f || std::abs(fo[1]) >= 0.2f || std::abs(fo[5]) >= 10.0f || std::abs(fo[6]) >= 10.0f ||
                    std::abs(fo[7]) >= 10.0f || std::abs(fo[8]) >= 10.0f || std::abs(fo[9]) >= 10.0f ||
                    std::abs(fo[10]) >= 10.0f);
      }
    }
  }
  std::printf("[ reward   ] %s: %d steps checked, %d terminations, worst |reward - formula| %.3g\n", name.c_str(),
              checked, terminations, worst);
  EXPECT_GT(checked, 100);
}

// A state that breaks the task's healthy rule by hand ends the episode at the next step.
TEST_P(GymTask, UnhealthyStateTerminates) {
  const std::string name = GetParam();
  Made m(name, 1);
  m.env->reset(kSeed);
  if (name == "reacher" || name == "halfcheetah") {
    // These two never terminate (Gymnasium's definition): a wild pose only ever truncates.
    m.qpos(0)[2] = 3.0f;  // reacher: the second link folded back; halfcheetah: the body upside down
    std::vector<float> act(static_cast<size_t>(m.env->spec().action.dim), 1.0f);
    for (int k = 0; k < 40; ++k) {
      m.env->step(act.data());
      ASSERT_EQ(m.env->terminated()[0], 0) << name << " terminated at step " << k;
    }
    return;
  }
  if (name == "ant" || name == "humanoid") m.qpos(0)[2] = 5.0f;  // far above healthy_z_max
  if (name == "hopper") m.qpos(0)[2] = 0.6f;                     // pitch beyond 0.2 rad
  if (name == "walker2d") m.qpos(0)[2] = 1.5f;                   // pitch beyond 1 rad
  std::vector<float> act(static_cast<size_t>(m.env->spec().action.dim), 0.0f);
  m.env->step(act.data());
  EXPECT_EQ(m.env->terminated()[0], 1);
  EXPECT_EQ(m.env->truncated()[0], 0);
  EXPECT_EQ(m.env->ep_length()[0], 1);
  EXPECT_EQ(m.v.counters[0].episode, 1u);
  EXPECT_EQ(m.v.counters[0].step, 0);
}

TEST_P(RobotEnv, TenThousandRandomStepsStayFinite) {
  Made m(GetParam(), 2);
  m.env->reset(kSeed);
  const int dim = m.env->spec().observation.dim;
  i64 episodes = 0;
  for (u32 t = 0; t < 10000; ++t) {
    m.env->step(m.env->sample_actions(5, t));
    for (int i = 0; i < 2; ++i) episodes += m.env->terminated()[i] || m.env->truncated()[i];
    ASSERT_TRUE(all_finite(m.env->obs(), 2 * dim)) << "step " << t;
  }
  EXPECT_EQ(m.env->num_nonfinite_resets(), 0);
  std::printf("[ random   ] %s: 2 x 10^4 steps, %lld episodes ended\n", GetParam().c_str(),
              static_cast<long long>(episodes));
}

TEST_P(RobotEnv, TruncatesAtTheTimeLimitWithFinalObs) {
  Made m(GetParam(), 2, {{"max_episode_steps", 7}});
  m.env->set_param("terminate_when_unhealthy", 0);  // where a task has it: no termination in 7 steps
  m.env->reset(kSeed);
  const int dim = m.env->spec().observation.dim;
  std::vector<float> zero(static_cast<size_t>(2 * m.env->spec().action.dim), 0.0f);
  std::vector<float> obs_before_last;
  float ret = 0;
  for (int t = 0; t < 7; ++t) {
    m.env->step(zero.data());
    ret += m.env->reward()[0];
    if (t < 6) {
      EXPECT_EQ(m.env->truncated()[0], 0);
      obs_before_last = copy_of(m.env->obs(), dim);
    }
  }
  EXPECT_EQ(m.env->truncated()[0], 1);
  EXPECT_EQ(m.env->terminated()[0], 0);
  EXPECT_EQ(m.env->ep_length()[0], 7);
  EXPECT_FLOAT_EQ(m.env->ep_return()[0], ret);
  // final_obs is the last observation of the old episode; obs is the new episode's first.
  EXPECT_NE(0, std::memcmp(m.env->final_obs(), m.env->obs(), sizeof(float) * dim));
  EXPECT_NE(0, std::memcmp(m.env->final_obs(), obs_before_last.data(), sizeof(float) * dim));
  EXPECT_EQ(m.v.counters[0].episode, 1u);
}

TEST_P(RobotEnv, NonFiniteStateIsCountedAndReset) {
  Made m(GetParam(), 2);
  m.env->reset(kSeed);
  std::vector<float> zero(static_cast<size_t>(2 * m.env->spec().action.dim), 0.0f);
  m.env->step(zero.data());
  m.qvel(1)[0] = NAN;
  m.env->step(zero.data());
  EXPECT_EQ(m.env->num_nonfinite_resets(), 1);
  EXPECT_EQ(m.env->terminated()[1], 1);
  EXPECT_EQ(m.env->reward()[1], 0.0f);
  EXPECT_EQ(m.env->terminated()[0], 0);
  const int dim = m.env->spec().observation.dim;
  EXPECT_TRUE(all_finite(m.env->obs(), 2 * dim));
  for (int k = 0; k < dim; ++k) EXPECT_EQ(m.env->final_obs()[dim + k], 0.0f);
  m.env->step(zero.data());
  EXPECT_TRUE(all_finite(m.env->obs(), 2 * dim));
}

TEST_P(RobotEnv, CheckpointResumesBitForBit) {
  const i64 n = 3;
  Made a(GetParam(), n, {{"dr_friction_min", 0.5}, {"dr_friction_max", 1.5}, {"obs_noise", 0.01}});
  a.env->reset(kSeed);
  std::vector<float> act;
  for (int t = 0; t < 30; ++t) actions_for(a.env->spec(), n, t, act), a.env->step(act.data());
  const std::vector<StateBlob> saved = a.env->save_state();
  Made b(GetParam(), n, {{"dr_friction_min", 0.5}, {"dr_friction_max", 1.5}, {"obs_noise", 0.01}});
  b.env->reset(kSeed + 100);
  b.env->load_state(saved);
  const int dim = a.env->spec().observation.dim;
  EXPECT_EQ(0, std::memcmp(a.env->obs(), b.env->obs(), sizeof(float) * n * dim));
  for (int t = 30; t < 90; ++t) {
    actions_for(a.env->spec(), n, t, act);
    a.env->step(act.data()), b.env->step(act.data());
    ASSERT_EQ(0, std::memcmp(a.env->obs(), b.env->obs(), sizeof(float) * n * dim)) << "step " << t;
    ASSERT_EQ(0, std::memcmp(a.env->reward(), b.env->reward(), sizeof(float) * n));
  }
  Made c(GetParam(), n + 1);
  EXPECT_THROW(c.env->load_state(saved), std::runtime_error);
}

// A checkpoint written before the Newton solver's warm start (the physics row's last field,
// qacc_warmstart, on the joystick tasks whose scenes set an iterations budget) resumes: its rows
// load in front of the new ones, the warm start zeroed as after reset_data; a blob of any other size
// is still refused.
TEST(RobotEnvCheckpoint, RowsWithoutTheWarmStartLoad) {
  for (const std::string name : {"go1_joystick", "g1_joystick"}) {
    const i64 n = 3;
    Made a(name, n);
    ASSERT_EQ(a.v.view->newton_warmstart, 1) << name;
    a.env->reset(kSeed);
    std::vector<float> act;
    for (int t = 0; t < 10; ++t) actions_for(a.env->spec(), n, t, act), a.env->step(act.data());
    std::vector<StateBlob> old = a.env->save_state();
    ModelView<float> old_view = *a.v.view;
    old_view.newton_warmstart = 0;
    const size_t row = static_cast<size_t>(a.v.layout.row), old_row = static_cast<size_t>(data_layout(old_view).row);
    ASSERT_LT(old_row, row) << name;
    const int nv = a.v.model->nv;
    bool nonzero = false;
    for (auto& b : old) {
      if (b.name != "physics") continue;
      ASSERT_EQ(b.bytes.size(), sizeof(float) * row * n);
      std::vector<std::uint8_t> bytes(sizeof(float) * old_row * n);
      for (i64 e = 0; e < n; ++e) {
        std::memcpy(bytes.data() + sizeof(float) * old_row * e, b.bytes.data() + sizeof(float) * row * e,
                    sizeof(float) * old_row);
        for (int i = 0; i < nv; ++i) nonzero = nonzero || a.row(e)[a.v.layout.qacc_warmstart + i] != 0.0f;
      }
      b.bytes = bytes;
    }
    EXPECT_TRUE(nonzero) << name << ": the steps left no warm start";
    Made b(name, n);
    b.env->reset(kSeed + 1);
    b.env->load_state(old);
    for (i64 e = 0; e < n; ++e)
      for (size_t k = 0; k < row; ++k) {
        const bool warm = k >= static_cast<size_t>(b.v.layout.qacc_warmstart) &&
                          k < static_cast<size_t>(b.v.layout.qacc_warmstart + nv);
        ASSERT_EQ(b.row(e)[k], warm ? 0.0f : a.row(e)[k]) << name << " env " << e << " scalar " << k;
      }
    for (int t = 10; t < 20; ++t) actions_for(b.env->spec(), n, t, act), b.env->step(act.data());
    EXPECT_TRUE(all_finite(b.env->obs(), n * b.env->spec().observation.dim)) << name;
    for (auto& blob : old)
      if (blob.name == "physics") blob.bytes.resize(blob.bytes.size() - sizeof(float));
    EXPECT_THROW(b.env->load_state(old), std::runtime_error) << name;
  }
}

TEST_P(RobotEnv, DrawGeomsAndPoses) {
  Made m(GetParam(), 3);
  m.env->reset(kSeed);
  const std::vector<DrawGeom> geoms = m.env->draw_geoms();
  ASSERT_EQ(static_cast<int>(geoms.size()), m.v.model->ngeom);
  // the floor (or the reacher's ground, or the rough joystick tasks' height field) is drawn too
  const bool hfield = GetParam() == "go1_joystick_rough" || GetParam() == "g1_joystick_rough";
  EXPECT_EQ(geoms[0].type, hfield ? kGeomHField : kGeomPlane);
  std::vector<float> poses(2 * geoms.size() * 12);
  m.env->draw_poses(1, 2, poses.data());
  const DataLayout& l = m.v.layout;
  for (size_t g = 0; g < geoms.size(); ++g)
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(poses[12 * g + k], m.row(1)[l.geom_xpos + 3 * g + k]);
      EXPECT_EQ(poses[geoms.size() * 12 + 12 * g + 3 + k], m.row(2)[l.geom_xmat + 9 * g + k]);
    }
  EXPECT_THROW(m.env->draw_poses(2, 2, poses.data()), std::out_of_range);
  // The begin/end pair behind draw_poses: ranges one after the other; a second request replaces the
  // first; a step between request and wait leaves what was requested alone.
  const size_t per_env = geoms.size() * 12;
  std::vector<float> all(3 * per_env);
  m.env->draw_poses(0, 3, all.data());
  m.env->request_draw_poses(0, 3);
  m.env->request_draw_poses(std::vector<VecEnv::DrawRange>{{2, 1}, {0, 1}});
  std::vector<float> act;
  actions_for(m.env->spec(), 3, 0, act);
  m.env->step(act.data());
  const float* got = m.env->wait_draw_poses();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(std::vector<float>(got, got + per_env), std::vector<float>(all.begin() + 2 * per_env, all.end()));
  EXPECT_EQ(std::vector<float>(got + per_env, got + 2 * per_env),
            std::vector<float>(all.begin(), all.begin() + per_env));
}

// ep_forward_speed: with the forward velocity the reward's only term (weight 1, no healthy reward,
// no control cost), an episode's mean forward speed is its return over its length. Reacher has no
// forward direction.
TEST_P(GymTask, EpisodeForwardSpeedIsTheMeanRewardedVelocity) {
  Made m(GetParam(), 3, {{"max_episode_steps", 25}});
  if (GetParam() == "reacher") {
    EXPECT_EQ(m.env->ep_forward_speed(), nullptr);
    return;
  }
  for (const char* k : {"ctrl_cost_weight", "healthy_reward"}) m.env->set_param(k, 0.0);  // where the task has it
  EXPECT_TRUE(m.env->set_param("forward_reward_weight", 1.0));
  m.env->reset(kSeed);
  ASSERT_NE(m.env->ep_forward_speed(), nullptr);
  std::vector<float> a;
  int ended = 0;
  double largest = 0;
  for (int t = 0; t < 60; ++t) {
    actions_for(m.env->spec(), 3, t, a);
    m.env->step(a.data());
    for (int i = 0; i < 3; ++i) {
      if (!(m.env->terminated()[i] || m.env->truncated()[i])) continue;
      const double len = m.env->ep_length()[i], ret = m.env->ep_return()[i], speed = m.env->ep_forward_speed()[i];
      EXPECT_NEAR(speed, ret / len, 1e-4 + 1e-3 * std::fabs(ret / len)) << "env " << i << " step " << t;
      largest = std::max(largest, std::fabs(speed));
      ++ended;
    }
  }
  EXPECT_GE(ended, 6);
  EXPECT_GT(largest, 1e-3) << "random actions should move the robot";
}

// reset_one on every robot task (quadruped too), with randomization, noise and pushes on: only that
// env's rows move (physics, randomization, task state, observations), into the episode its
// auto-reset would start.
TEST(RobotEnvs, ResetOneStartsTheNextEpisodeOfThatEnvOnly) {
  for (const auto& name : every_robot_name()) {
    SCOPED_TRACE(name);
    CpuExecutor exec(2);
    auto make = [&] {
      auto env = make_vec_env(name, 4, exec);
      for (const auto& [k, x] : std::vector<std::pair<const char*, double>>{{"dr_friction_min", 0.7},
                                                                            {"dr_friction_max", 1.3},
                                                                            {"dr_damping_min", 0.8},
                                                                            {"dr_damping_max", 1.2},
                                                                            {"obs_noise", 0.02},
                                                                            {"push_interval_s", 0.1},
                                                                            {"push_velocity", 0.3}})
        EXPECT_TRUE(env->set_param(k, x)) << k;
      return env;
    };
    auto same_physics_state = [](VecEnv& a, VecEnv& b, i64 i) {
      const RobotView va = robot_view(&a), vb = robot_view(&b);
      const float* ra = va.data + i * va.layout.row;
      const float* rb = vb.data + i * vb.layout.row;
      EXPECT_EQ(0, std::memcmp(ra + va.layout.qpos, rb + vb.layout.qpos, sizeof(float) * va.model->nq)) << "qpos";
      EXPECT_EQ(0, std::memcmp(ra + va.layout.qvel, rb + vb.layout.qvel, sizeof(float) * va.model->nv)) << "qvel";
      EXPECT_EQ(0, std::memcmp(ra + va.layout.xpos, rb + vb.layout.xpos, sizeof(float) * 3 * va.model->nbody))
          << "xpos";
    };
    testing_util::expect_reset_one_is_an_auto_reset(make, kSeed, 2, 12, same_physics_state);
  }
  Made m("hopper", 3);
  testing_util::expect_reset_one_rejects_bad_index(*m.env);
}

// A robot env's step is a costly parallel_for item (Items::kCostly): a batch far below the cheap
// items' grain is split over the threads. The split must not change a bit: 1 and 3 threads, with
// randomization, noise and pushes on, over steps that cross auto-resets.
TEST(RobotEnvs, ThreadCountDoesNotChangeTheBits) {
  for (const auto& name : every_robot_name()) {
    SCOPED_TRACE(name);
    CpuExecutor one(1), three(3);
    auto a = make_vec_env(name, 13, one), b = make_vec_env(name, 13, three);
    for (VecEnv* e : {a.get(), b.get()}) {
      for (const auto& [k, x] : std::vector<std::pair<const char*, double>>{
               {"dr_friction_min", 0.7}, {"obs_noise", 0.02}, {"push_interval_s", 0.1}, {"push_velocity", 0.3}})
        e->set_param(k, x);
      e->set_param("max_episode_steps", 7);
      e->reset(kSeed);
    }
    const i64 no = 13 * a->spec().observation.dim;
    for (std::uint32_t t = 0; t < 16; ++t) {
      const float* act = a->sample_actions(kSeed, t);
      a->step(act);
      b->step(act);
      ASSERT_EQ(0, std::memcmp(a->obs(), b->obs(), sizeof(float) * static_cast<size_t>(no))) << "step " << t;
      ASSERT_EQ(0, std::memcmp(a->reward(), b->reward(), sizeof(float) * 13)) << "step " << t;
      ASSERT_EQ(0, std::memcmp(a->terminated(), b->terminated(), 13)) << "step " << t;
      ASSERT_EQ(0, std::memcmp(a->truncated(), b->truncated(), 13)) << "step " << t;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllRobotEnvs, RobotEnv, ::testing::ValuesIn(robot_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Gymnasium, GymTask, ::testing::ValuesIn(gym_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ---- domain randomization and noise -------------------------------------------------------------

TEST(RobotDomainRandomization, ValuesWithinRangesReproducibleAndPerEnv) {
  const std::vector<std::pair<std::string, double>> p = {{"dr_friction_min", 0.5},       {"dr_friction_max", 1.25},
                                                         {"dr_added_mass_min", -0.2},    {"dr_added_mass_max", 0.4},
                                                         {"dr_motor_strength_min", 0.8}, {"dr_motor_strength_max", 1.2},
                                                         {"dr_damping_min", 0.5},        {"dr_damping_max", 2.0}};
  const i64 n = 64;
  Made a("ant", n, p), b("ant", n, p);
  a.env->reset(kSeed), b.env->reset(kSeed);
  const DrLayout& l = a.v.drl;
  const ModelView<float>& base = *a.v.view;
  EXPECT_EQ(0, std::memcmp(a.v.dr, b.v.dr, sizeof(float) * n * l.size));
  double lo[4] = {1e9, 1e9, 1e9, 1e9}, hi[4] = {-1e9, -1e9, -1e9, -1e9};
  for (i64 i = 0; i < n; ++i) {
    const float* r = a.v.dr + i * l.size;
    for (int k = 0; k < 4; ++k) lo[k] = std::min(lo[k], double(r[k])), hi[k] = std::max(hi[k], double(r[k]));
    EXPECT_FLOAT_EQ(r[l.body_mass + 1], base.body_mass[1] + r[kDrAddedMass]);
    EXPECT_FLOAT_EQ(r[l.body_mass + 2], base.body_mass[2]);
    for (int g = 0; g < 3 * base.ngeom; ++g)
      EXPECT_FLOAT_EQ(r[l.geom_friction + g], base.geom_friction[g] * r[kDrFriction]);
    for (int k = 0; k < base.nv; ++k) EXPECT_FLOAT_EQ(r[l.dof_damping + k], base.dof_damping[k] * r[kDrDamping]);
    for (int u = 0; u < base.nu; ++u)
      EXPECT_FLOAT_EQ(r[l.actuator_gear + u], base.actuator_gear[u] * r[kDrMotorStrength]);
  }
  const double want_lo[4] = {0.5, -0.2, 0.8, 0.5}, want_hi[4] = {1.25, 0.4, 1.2, 2.0};  // the torso: 0.48 kg
  for (int k = 0; k < 4; ++k) {
    EXPECT_GE(lo[k], want_lo[k]);
    EXPECT_LE(hi[k], want_hi[k]);
    EXPECT_LT(lo[k], want_lo[k] + 0.2 * (want_hi[k] - want_lo[k])) << "value " << k << " does not use its range";
    EXPECT_GT(hi[k], want_hi[k] - 0.2 * (want_hi[k] - want_lo[k])) << "value " << k;
  }
  // A new episode draws again.
  const std::vector<float> first = copy_of(a.v.dr, l.size);
  a.qpos(0)[2] = 5.0f;  // unhealthy: ends the episode
  std::vector<float> zero(static_cast<size_t>(n * 8), 0.0f);
  a.env->step(zero.data());
  EXPECT_NE(0, std::memcmp(first.data(), a.v.dr, sizeof(float) * 4));
}

TEST(RobotDomainRandomization, OffByDefault) {
  Made m("ant", 2);
  int seen = 0;
  for (const auto& info : m.env->params()) {
    const bool scale = info.name == "dr_friction_min" || info.name == "dr_friction_max" ||
                       info.name.rfind("dr_motor_strength", 0) == 0 || info.name.rfind("dr_damping", 0) == 0;
    const bool zero =
        info.name.rfind("dr_added_mass", 0) == 0 || info.name == "obs_noise" || info.name.rfind("push_", 0) == 0;
    if (scale || zero) {
      EXPECT_EQ(info.value, scale ? 1.0 : 0.0) << info.name;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 11);
  EXPECT_THROW(m.env->set_param("dr_friction_min", -0.5), std::invalid_argument);
  EXPECT_THROW(m.env->set_param("dr_added_mass_min", -100.0), std::invalid_argument);  // more than the torso weighs
  EXPECT_THROW(m.env->set_param("obs_noise", -1.0), std::invalid_argument);
}

// The drawn values change the physics: with zero motor strength, actions do nothing; friction,
// damping and mass change a trajectory.
TEST(RobotDomainRandomization, ChangesThePhysics) {
  {
    Made m("reacher", 2, {{"dr_motor_strength_min", 0.0}, {"dr_motor_strength_max", 0.0}});
    Made ref("reacher", 2);
    m.env->reset(kSeed), ref.env->reset(kSeed);
    // env 1 gets the state of env 0, then both get different actions: identical without motors.
    std::memcpy(m.qpos(1), m.qpos(0), sizeof(float) * 4), std::memcpy(m.qvel(1), m.qvel(0), sizeof(float) * 4);
    std::memcpy(ref.qpos(1), ref.qpos(0), sizeof(float) * 4), std::memcpy(ref.qvel(1), ref.qvel(0), sizeof(float) * 4);
    std::vector<float> act = {1.0f, -1.0f, -1.0f, 1.0f};
    for (int t = 0; t < 10; ++t) m.env->step(act.data()), ref.env->step(act.data());
    for (int k = 0; k < 2; ++k) EXPECT_FLOAT_EQ(m.qpos(0)[k], m.qpos(1)[k]);
    EXPECT_GT(std::abs(ref.qpos(0)[0] - ref.qpos(1)[0]), 1e-2);
  }
  auto final_x = [](const std::vector<std::pair<std::string, double>>& p) {
    Made m("halfcheetah", 1, p);
    m.env->reset(kSeed);
    std::vector<float> act;
    for (int t = 0; t < 60; ++t) actions_for(m.env->spec(), 1, t, act), m.env->step(act.data());
    return std::vector<float>(m.qpos(0), m.qpos(0) + 9);
  };
  const std::vector<float> plain = final_x({});
  for (const auto& p : std::vector<std::vector<std::pair<std::string, double>>>{
           {{"dr_friction_min", 0.1}, {"dr_friction_max", 0.1}},
           {{"dr_damping_min", 3.0}, {"dr_damping_max", 3.0}},
           {{"dr_added_mass_min", 5.0}, {"dr_added_mass_max", 5.0}}}) {
    const std::vector<float> x = final_x(p);
    double diff = 0;
    for (int k = 0; k < 9; ++k) diff = std::max(diff, double(std::abs(x[k] - plain[k])));
    EXPECT_GT(diff, 1e-2) << p[0].first;
  }
}

TEST(RobotDomainRandomization, ObservationNoiseAndPushes) {
  // Observation noise: the obs differs from the clean one by about obs_noise; the physics does not.
  Made clean("halfcheetah", 64), noisy("halfcheetah", 64, {{"obs_noise", 0.05}});
  clean.env->reset(kSeed), noisy.env->reset(kSeed);
  std::vector<float> act;
  actions_for(clean.env->spec(), 64, 0, act);
  clean.env->step(act.data()), noisy.env->step(act.data());
  EXPECT_EQ(0, std::memcmp(clean.row(0), noisy.row(0), sizeof(float) * clean.v.model->nq));
  double s2 = 0;
  for (i64 k = 0; k < 64 * 17; ++k) s2 += std::pow(noisy.env->obs()[k] - clean.env->obs()[k], 2);
  EXPECT_NEAR(std::sqrt(s2 / (64 * 17)), 0.05, 0.005);
  // Pushes: every 0.25 s (5 steps of 0.05 s) the root's horizontal velocity jumps.
  Made pushed("ant", 4, {{"push_interval_s", 0.25}, {"push_velocity", 1.0}}), ref("ant", 4);
  pushed.env->reset(kSeed), ref.env->reset(kSeed);
  std::vector<float> zero(4 * 8, 0.0f);
  for (int t = 0; t < 5; ++t) pushed.env->step(zero.data()), ref.env->step(zero.data());
  EXPECT_EQ(0, std::memcmp(pushed.row(0), ref.row(0), sizeof(float) * 15));
  pushed.env->step(zero.data()), ref.env->step(zero.data());
  EXPECT_GT(std::abs(pushed.qvel(0)[0] - ref.qvel(0)[0]) + std::abs(pushed.qvel(0)[1] - ref.qvel(0)[1]), 1e-2);
}

TEST(RobotEnvs, RegisteredAndEmbedded) {
  for (const std::string& name : robot_names()) EXPECT_TRUE(env_exists(name)) << name;
  for (const std::string& name : gym_names()) EXPECT_TRUE(env_exists(name)) << name;
  for (const char* f : {"reacher.xml", "ant.xml", "halfcheetah.xml", "hopper.xml", "walker2d.xml", "humanoid.xml"})
    EXPECT_NE(embedded_asset(f), nullptr) << f;
  EXPECT_EQ(embedded_asset("nope.xml"), nullptr);
}

// Humanoid's cfrc_ext block (obs 260-331) is the physics row's cfrc_ext (sim/contact.h), which
// holds the last substep's contact wrench per body: non-zero exactly for the bodies with an active
// contact (the feet land within a few steps, then the limp body falls and lies on the floor),
// zero for the world and every other body. Lying still at the end, the forces carry the weight and
// the torques about the torso origin (the reference point of cinert and cvel) balance gravity's.
TEST(HumanoidContactWrench, ObservedPerBodyAndCarriesTheWeight) {
  Made m("humanoid", 1, {{"terminate_when_unhealthy", 0.0}});
  m.env->reset(kSeed);
  const ModelView<float>& mv = *m.v.view;
  const DataLayout& l = m.v.layout;
  const int nbody = mv.nbody;
  ASSERT_EQ(nbody, Humanoid::kNumBodies);
  const int right_shin = m.v.model->body_id("right_shin"), left_shin = m.v.model->body_id("left_shin");
  ASSERT_GT(right_shin, 0);
  ASSERT_GT(left_shin, 0);
  const float* obs0 = m.env->obs();
  for (int k = 0; k < 6 * nbody; ++k) ASSERT_EQ(obs0[260 + k], 0.0f) << "after reset " << k;
  const std::vector<float> zero(static_cast<size_t>(Humanoid::kActDim), 0.0f);
  int foot_steps = 0, other_steps = 0, touching_rows = 0, quiet_rows = 0;
  for (int t = 0; t < 400; ++t) {
    m.env->step(zero.data());
    ASSERT_FALSE(m.env->terminated()[0] || m.env->truncated()[0]) << t;
    const float* row = m.row(0);
    const float* obs = m.env->obs();
    for (int k = 0; k < 6 * nbody; ++k)
      ASSERT_EQ(obs[260 + k], row[l.cfrc_ext + k]) << "step " << t << " idx " << 260 + k;
    bool touching[Humanoid::kNumBodies] = {};
    const int ncon = static_cast<int>(row[l.ncon]);
    for (int c = 0; c < ncon; ++c) {
      const float* con = row + l.contact + kContactStride * c;
      if (con[kConActive] == 0.0f) continue;
      touching[mv.geom_bodyid[static_cast<int>(con[kConGeom1])]] = true;
      touching[mv.geom_bodyid[static_cast<int>(con[kConGeom2])]] = true;
    }
    for (int k = 0; k < 6; ++k) ASSERT_EQ(row[l.cfrc_ext + k], 0.0f) << "world row, step " << t;
    for (int b = 1; b < nbody; ++b) {
      const float* w = row + l.cfrc_ext + 6 * b;
      if (!touching[b]) {
        for (int k = 0; k < 6; ++k) ASSERT_EQ(w[k], 0.0f) << "body " << b << " not touching, step " << t;
        ++quiet_rows;
      } else {
        ASSERT_GT(std::hypot(w[3], w[4], w[5]), 1e-3f) << "body " << b << " touching, step " << t;
        ++touching_rows;
        if (b == right_shin || b == left_shin) {
          ++foot_steps;
        } else {
          ++other_steps;
        }
      }
    }
  }
  EXPECT_GT(foot_steps, 10);
  EXPECT_GT(other_steps, 10);  // it fell: more than the feet touch
  EXPECT_GT(quiet_rows, 100);
  // Lying on the floor: the contacts carry the weight and cancel gravity's torque about the torso origin.
  const float* row = m.row(0);
  double speed = 0;
  for (int i = 0; i < 6; ++i) speed = std::max(speed, std::abs(static_cast<double>(row[l.qvel + i])));  // the torso
  double f[3] = {0, 0, 0}, tau[3] = {0, 0, 0}, mass = 0, mr[3] = {0, 0, 0};
  for (int b = 1; b < nbody; ++b) {
    for (int k = 0; k < 3; ++k) {
      tau[k] += row[l.cfrc_ext + 6 * b + k];
      f[k] += row[l.cfrc_ext + 6 * b + 3 + k];
      mr[k] += mv.body_mass[b] * (static_cast<double>(row[l.xipos + 3 * b + k]) - row[l.xpos + 3 + k]);
    }
    mass += mv.body_mass[b];
  }
  const double g = 9.81, weight = mass * g;
  std::printf(
      "[ measured ] humanoid lying (torso max |qvel| %.3g): sum Fz / weight %.4f, |F_xy| %.3g N, torque (%.3g %.3g "
      "%.3g) vs (%.3g %.3g 0) N m\n",
      speed, f[2] / weight, std::hypot(f[0], f[1]), tau[0], tau[1], tau[2], mr[1] * g, -mr[0] * g);
  ASSERT_LT(speed, 0.1) << "the torso is not at rest: the balance checks below assume it";
  EXPECT_NEAR(f[2] / weight, 1.0, 0.03);
  EXPECT_LT(std::hypot(f[0], f[1]), 0.03 * weight);
  // Gravity's torque about the torso origin: sum_b (xipos_b - x_torso) x (0, 0, -m_b g).
  const double arm = std::hypot(mr[0], mr[1]) / mass;
  ASSERT_GT(arm, 0.05);  // the centre of mass is well off the torso origin, so the check has teeth
  EXPECT_NEAR(tau[0], mr[1] * g, 0.03 * weight * arm + 0.5);
  EXPECT_NEAR(tau[1], -mr[0] * g, 0.03 * weight * arm + 0.5);
  EXPECT_NEAR(tau[2], 0.0, 0.03 * weight * arm + 0.5);
}

}  // namespace
}  // namespace rlt
