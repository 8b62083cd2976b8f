// The quadruped velocity-tracking task (envs/quadruped.h) on the CPU executor: spaces, determinism,
// command resampling, the reward terms recomputed from the physics rows against the header's table,
// termination on base contact, standing under the PD targets, 10^4 random steps without a non-finite
// state (terrain and domain randomization on), the privileged critic observation, a short training
// run that must improve its return, and (when RLT_QUADRUPED_CHECKPOINT names a checkpoint) the
// velocity tracking error of a trained policy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "apps/evaluate.h"
#include "apps/runtime.h"
#include "envs/all_envs.h"
#include "envs/registry.h"
#include "envs/robot_env.h"
#include "rl/checkpoint.h"
#include "rl/config.h"

namespace rlt {
namespace {

using Env = VecEnvT<Quadruped, CpuExecutor>;
constexpr std::uint64_t kSeed = 11;

struct Made {
  CpuExecutor exec{1};
  std::unique_ptr<VecEnv> env;
  Env* q = nullptr;
  explicit Made(i64 n, const std::vector<std::pair<std::string, double>>& params = {}) {
    env = make_vec_env("quadruped", n, exec);
    q = dynamic_cast<Env*>(env.get());
    if (!q) throw std::runtime_error("the registry's quadruped is not VecEnvT<Quadruped, CpuExecutor>");
    for (const auto& [k, x] : params) EXPECT_TRUE(env->set_param(k, x)) << k;
  }
  float* row(i64 i) { return q->world().physics_rows() + i * q->world().layout().row; }
  const Quadruped::State& state(i64 i) { return q->states()[i]; }
};

std::vector<float> seeded_actions(i64 n, int t, float lo, float hi) {
  std::vector<float> a(static_cast<size_t>(n * 12));
  for (i64 i = 0; i < n; ++i) {
    Philox rng(5, RngStream::kAction, static_cast<u32>(i), static_cast<u32>(t));
    for (int k = 0; k < 12; k += 4) uniform4(rng, lo, hi, a.data() + i * 12 + k, 4);
  }
  return a;
}

TEST(Quadruped, Spaces) {
  Made m(4);
  const EnvSpec& s = m.env->spec();
  EXPECT_EQ(s.name, "quadruped");
  EXPECT_EQ(s.observation.dim, 45);
  EXPECT_EQ(s.action.dim, 12);
  EXPECT_FALSE(s.action.discrete);
  for (int k = 0; k < 12; ++k) {
    EXPECT_EQ(s.action.low[static_cast<size_t>(k)], -2.0f);
    EXPECT_EQ(s.action.high[static_cast<size_t>(k)], 2.0f);
  }
  EXPECT_EQ(s.critic_obs_dim, 61);
  EXPECT_EQ(s.max_episode_steps, 500);
  EXPECT_NE(m.env->critic_obs(), nullptr);
  EXPECT_NE(m.env->final_critic_obs(), nullptr);
  EXPECT_FLOAT_EQ(m.q->world().control_dt(), 0.02f);
  m.env->reset(kSeed);
  for (u32 t = 0; t < 10; ++t) {
    const float* a = m.env->sample_actions(1, t);
    for (int k = 0; k < 48; ++k) EXPECT_TRUE(a[k] >= -2.0f && a[k] <= 2.0f);
    m.env->step(a);
  }
}

TEST(Quadruped, SameSeedSameEpisodesOtherSeedOther) {
  auto run = [](std::uint64_t seed) {
    Made m(3, {{"terrain_fraction", 0.5}, {"dr_friction_min", 0.5}, {"dr_friction_max", 1.25}, {"obs_noise", 1.0}});
    m.env->reset(seed);
    std::vector<float> trace;
    for (int t = 0; t < 60; ++t) {
      const auto a = seeded_actions(3, t, -1, 1);
      m.env->step(a.data());
      trace.insert(trace.end(), m.env->obs(), m.env->obs() + 3 * 45);
      trace.insert(trace.end(), m.env->critic_obs(), m.env->critic_obs() + 3 * 61);
      trace.insert(trace.end(), m.env->reward(), m.env->reward() + 3);
    }
    return trace;
  };
  const auto a = run(kSeed), b = run(kSeed), c = run(kSeed + 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

// Commands: drawn at reset and every resample_time_s, within their ranges, small planar ones zeroed;
// constant in between.
TEST(Quadruped, CommandsResampledWithinRanges) {
  const i64 n = 64;
  Made m(n, {{"resample_time_s", 0.1}, {"cmd_vx_max", 0.8}, {"cmd_vy_max", 0.4}, {"cmd_yaw_max", 0.6}});
  m.env->reset(kSeed);
  std::vector<float> prev(static_cast<size_t>(3 * n));
  int changes = 0, zeroed = 0, checked = 0;
  double max_vx = 0, max_vy = 0, max_yaw = 0;
  for (int t = 0; t <= 40; ++t) {
    for (i64 i = 0; i < n; ++i) {
      const auto& s = m.state(i);
      EXPECT_LE(std::abs(s.command[0]), 0.8f);
      EXPECT_LE(std::abs(s.command[1]), 0.4f);
      EXPECT_LE(std::abs(s.command[2]), 0.6f);
      const float vxy = std::hypot(s.command[0], s.command[1]);
      EXPECT_TRUE(vxy == 0.0f || vxy >= 0.1f) << vxy;
      zeroed += vxy == 0.0f;
      max_vx = std::max(max_vx, static_cast<double>(std::abs(s.command[0])));
      max_vy = std::max(max_vy, static_cast<double>(std::abs(s.command[1])));
      max_yaw = std::max(max_yaw, static_cast<double>(std::abs(s.command[2])));
      // The observation carries the command (scaled 2, 2, 0.25).
      EXPECT_FLOAT_EQ(m.env->obs()[i * 45 + 6], 2.0f * s.command[0]);
      EXPECT_FLOAT_EQ(m.env->obs()[i * 45 + 8], 0.25f * s.command[2]);
      if (t > 0 && s.t > 0) {  // same episode as the previous step
        const bool changed = s.command[0] != prev[3 * i] || s.command[2] != prev[3 * i + 2];
        EXPECT_EQ(changed, s.t % 5 == 0) << "env " << i << " t " << s.t;  // 0.1 s = 5 control steps
        changes += changed;
        ++checked;
      }
      for (int k = 0; k < 3; ++k) prev[3 * i + k] = s.command[k];
    }
    std::vector<float> zero(static_cast<size_t>(12 * n), 0.0f);
    m.env->step(zero.data());
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(changes, 300);
  EXPECT_GT(max_vx, 0.7);  // the ranges are used
  EXPECT_GT(max_vy, 0.35);
  EXPECT_GT(max_yaw, 0.5);
  EXPECT_GT(zeroed, 0);
}

// The reward terms of envs/quadruped.h's table, recomputed here in double from the physics row after
// the step (quaternion, velocities, actuator forces, contacts, foot positions) and the state before it.
TEST(Quadruped, RewardTermsFollowTheDocumentedFormulas) {
  Made m(2, {{"only_positive_rewards", 0.0}});
  m.env->reset(kSeed);
  const DataLayout& l = m.q->world().layout();
  const Quadruped::Params p;
  const double dt = 0.02;
  int checked = 0, touchdowns = 0;
  double worst = 0;
  for (int t = 0; t < 400; ++t) {
    const auto a = seeded_actions(2, t, -0.5f, 0.5f);
    const Quadruped::State before = m.state(0);
    m.env->step(a.data());
    if (m.env->terminated()[0] || m.env->truncated()[0]) continue;
    const Quadruped::State& s = m.state(0);
    const float* r = m.row(0);
    const float* q = r + l.qpos;
    const float* v = r + l.qvel;
    // Rotation from the quaternion (w x y z): base = R^T world.
    const double w = q[3], x = q[4], y = q[5], z = q[6];
    const double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                            {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                            {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    double vb[3], gb[3];
    for (int k = 0; k < 3; ++k) {
      vb[k] = R[0][k] * v[0] + R[1][k] * v[1] + R[2][k] * v[2];
      gb[k] = -R[2][k];
    }
    double T[Quadruped::kNumTerms];
    const double ex = before.command[0] - vb[0], ey = before.command[1] - vb[1], ez = before.command[2] - v[5];
    T[Quadruped::kTrackLinVel] = std::exp(-(ex * ex + ey * ey) / 0.25);
    T[Quadruped::kTrackAngVel] = std::exp(-(ez * ez) / 0.25);
    T[Quadruped::kLinVelZ] = vb[2] * vb[2];
    T[Quadruped::kAngVelXy] = v[3] * v[3] + v[4] * v[4];
    T[Quadruped::kOrientation] = gb[0] * gb[0] + gb[1] * gb[1];
    double tau = 0, acc = 0, rate = 0;
    for (int j = 0; j < 12; ++j) {
      const double f = r[l.actuator_force + j];
      EXPECT_LE(std::abs(f), 30.0 + 1e-4);  // forcerange
      tau += f * f;
      const double dq = (v[6 + j] - before.last_dof_vel[j]) / dt, da = a[j] - before.last_action[j];
      acc += dq * dq, rate += da * da;
    }
    T[Quadruped::kTorques] = tau, T[Quadruped::kDofAcc] = acc, T[Quadruped::kActionRate] = rate;
    double air = 0, feet_z = 0;
    for (int f = 0; f < 4; ++f) {
      const bool contact = s.contact[f] > 0, filt = contact || before.contact[f] > 0;
      if (before.air_time[f] > 0 && filt) air += before.air_time[f] + dt - 0.5, ++touchdowns;
      feet_z += r[l.geom_xpos + 3 * Quadruped::foot_geom(f) + 2];
    }
    const bool moving = std::hypot(before.command[0], before.command[1]) > 0.1;
    T[Quadruped::kFeetAirTime] = moving ? air : 0.0;
    const double h = q[2] - feet_z / 4 + 0.02 - 0.30;
    T[Quadruped::kBaseHeight] = h * h;
    double reward = 0;
    for (int k = 0; k < Quadruped::kNumTerms; ++k) {
      const double tol = 1e-4 + 2e-4 * std::abs(T[k]);
      EXPECT_NEAR(s.terms[k], T[k], tol) << "term " << k << " step " << t;
      reward += p.w[k] * T[k];
    }
    reward *= dt;
    worst = std::max(worst, std::abs(reward - m.env->reward()[0]));
    EXPECT_NEAR(m.env->reward()[0], reward, 1e-5 + 1e-4 * std::abs(reward)) << "step " << t;
    ++checked;
  }
  std::printf("[ reward   ] quadruped: %d steps checked, %d touchdowns, worst |reward - formula| %.3g\n", checked,
              touchdowns, worst);
  EXPECT_GT(checked, 100);
  EXPECT_GT(touchdowns, 0);
}

// With only_positive_rewards (the default) a step never pays less than 0.
TEST(Quadruped, OnlyPositiveRewardsClips) {
  Made m(4);
  m.env->reset(kSeed);
  for (int t = 0; t < 100; ++t) {
    const auto a = seeded_actions(4, t, -2, 2);
    m.env->step(a.data());
    for (int i = 0; i < 4; ++i) EXPECT_GE(m.env->reward()[i], 0.0f);
  }
}

// Standing: the default pose held by the PD targets (action 0) keeps the trunk up for 5 s, never
// touching the ground; with the trunk put on the ground by hand the episode ends at the next step.
TEST(Quadruped, StandsUnderPdTargetsAndTerminatesOnBaseContact) {
  Made m(1, {{"reset_velocity", 0.0}});
  m.env->reset(kSeed);
  std::vector<float> zero(12, 0.0f);
  double min_z = 1, max_z = 0;
  for (int t = 0; t < 250; ++t) {
    m.env->step(zero.data());
    ASSERT_EQ(m.env->terminated()[0], 0) << "step " << t;
    const double zt = m.row(0)[m.q->world().layout().qpos + 2];
    if (t > 50) min_z = std::min(min_z, zt), max_z = std::max(max_z, zt);
  }
  std::printf("[ stand    ] trunk height over 1-5 s: %.4f .. %.4f m\n", min_z, max_z);
  EXPECT_GT(min_z, 0.27);
  EXPECT_LT(max_z, 0.32);
  // Feet on the ground: every foot in contact.
  for (int f = 0; f < 4; ++f) EXPECT_EQ(m.state(0).contact[f], 1.0f);
  // Upside down with the trunk on the ground (legs in the air): the episode ends at the next step.
  float* q = m.row(0) + m.q->world().layout().qpos;
  q[2] = 0.045f;
  q[3] = 0.0f, q[4] = 1.0f, q[5] = 0.0f, q[6] = 0.0f;
  m.env->step(zero.data());
  EXPECT_EQ(m.env->terminated()[0], 1);
  EXPECT_EQ(m.env->truncated()[0], 0);
  EXPECT_EQ(m.q->counters()[0].episode, 1u);
}

// terrain_fraction 1: every episode starts on the field of steps (envs/assets/quadruped.xml, 2-6 cm
// boxes); standing there, some feet rest on steps (in contact above the floor) and the robot stays up.
TEST(Quadruped, StandsOnTheFieldOfSteps) {
  const i64 n = 32;
  Made m(n, {{"terrain_fraction", 1.0}, {"reset_velocity", 0.0}});
  m.env->reset(kSeed);
  std::vector<float> zero(static_cast<size_t>(12 * n), 0.0f);
  int terminated = 0;
  for (int t = 0; t < 100; ++t) {
    m.env->step(zero.data());
    for (i64 i = 0; i < n; ++i) terminated += m.env->terminated()[i];
  }
  int on_steps = 0;
  for (i64 i = 0; i < n; ++i) {
    const float* r = m.row(i);
    EXPECT_LE(std::abs(r[m.q->world().layout().qpos] - 17.0f), 2.5f) << "env " << i << " is not on the field";
    for (int f = 0; f < 4; ++f)
      on_steps +=
          m.state(i).contact[f] > 0 && r[m.q->world().layout().geom_xpos + 3 * Quadruped::foot_geom(f) + 2] > 0.035f;
  }
  std::printf("[ terrain  ] %d of %lld feet rest on steps after 2 s; %d base-contact terminations\n", on_steps,
              static_cast<long long>(4 * n), terminated);
  EXPECT_GT(on_steps, 4);
  EXPECT_LE(terminated, n / 8);  // a spawn across a step edge may tip over (2 of 32 with this seed)
}

TEST(Quadruped, TenThousandRandomStepsStayFinite) {
  Made m(2, {{"terrain_fraction", 0.5},
             {"dr_friction_min", 0.5},
             {"dr_friction_max", 1.25},
             {"dr_added_mass_min", -1.0},
             {"dr_added_mass_max", 2.0},
             {"dr_motor_strength_min", 0.9},
             {"dr_motor_strength_max", 1.1},
             {"push_interval_s", 3.0},
             {"push_velocity", 0.5}});
  m.env->reset(kSeed);
  i64 episodes = 0, terminations = 0;
  for (u32 t = 0; t < 10000; ++t) {
    m.env->step(m.env->sample_actions(5, t));
    for (int i = 0; i < 2; ++i)
      episodes += m.env->terminated()[i] || m.env->truncated()[i], terminations += m.env->terminated()[i];
    ASSERT_TRUE(all_finite(m.env->obs(), 2 * 45)) << "step " << t;
    ASSERT_TRUE(all_finite(m.env->critic_obs(), 2 * 61)) << "step " << t;
  }
  EXPECT_EQ(m.env->num_nonfinite_resets(), 0);
  std::printf("[ random   ] quadruped: 2 x 10^4 steps, %lld episodes ended (%lld on base contact)\n",
              static_cast<long long>(episodes), static_cast<long long>(terminations));
}

// The critic's privileged observation: the actor's observation without its noise, then the base
// velocity, height, foot contacts and air times, and the env's domain randomization draw.
TEST(Quadruped, CriticObservationContent) {
  const i64 n = 8;
  Made m(n, {{"obs_noise", 1.0},
             {"dr_friction_min", 0.5},
             {"dr_friction_max", 1.5},
             {"dr_added_mass_min", -1.0},
             {"dr_added_mass_max", 2.0},
             {"dr_motor_strength_min", 0.8},
             {"dr_motor_strength_max", 1.2}});
  m.env->reset(kSeed);
  const DataLayout& l = m.q->world().layout();
  std::vector<float> zero(static_cast<size_t>(12 * n), 0.0f);
  double noise = 0;
  for (int t = 0; t < 30; ++t) {
    m.env->step(zero.data());
    for (i64 i = 0; i < n; ++i) {
      if (m.env->terminated()[i] || m.env->truncated()[i]) continue;
      const float* o = m.env->obs() + i * 45;
      const float* c = m.env->critic_obs() + i * 61;
      const float* r = m.row(i);
      const auto& s = m.state(i);
      for (int k = 0; k < 45; ++k) noise += std::abs(o[k] - c[k]);
      // Noise-free actor part, from the physics row.
      for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(c[k], 0.25f * r[l.qvel + 3 + k]);
      for (int j = 0; j < 12; ++j) {
        EXPECT_FLOAT_EQ(c[9 + j], r[l.qpos + 7 + j] - Quadruped::default_pose(j));
        EXPECT_FLOAT_EQ(c[33 + j], 0.0f);  // previous action
        EXPECT_FLOAT_EQ(o[33 + j], 0.0f);  // no noise on actions
      }
      // Privileged part: base velocity in the base frame (x 2), height, contacts, air time, DR.
      const float* R = r + l.xmat + 9 * Quadruped::kTrunk;
      for (int k = 0; k < 3; ++k) {
        const float vb = R[k] * r[l.qvel] + R[3 + k] * r[l.qvel + 1] + R[6 + k] * r[l.qvel + 2];
        EXPECT_NEAR(c[45 + k], 2.0f * vb, 1e-5f);
      }
      EXPECT_NEAR(c[48], 0.30f, 0.04f);
      for (int f = 0; f < 4; ++f) {
        EXPECT_EQ(c[49 + f], s.contact[f]);
        EXPECT_EQ(c[53 + f], s.air_time[f]);
      }
      const float* dr = m.q->world().randomization_rows() + i * m.q->world().randomization_layout().size;
      EXPECT_EQ(c[57], dr[kDrFriction]);
      EXPECT_EQ(c[58], dr[kDrAddedMass]);
      EXPECT_EQ(c[59], dr[kDrMotorStrength]);
      EXPECT_EQ(c[60], dr[kDrDamping]);
      EXPECT_TRUE(c[57] >= 0.5f && c[57] <= 1.5f);
      EXPECT_TRUE(c[58] >= -1.0f && c[58] <= 2.0f);
      EXPECT_TRUE(c[59] >= 0.8f && c[59] <= 1.2f);
    }
  }
  EXPECT_GT(noise, 1.0);  // the actor's observation is noisy, the critic's is not
}

// A short PPO run of the shipped config (fewer envs and steps, 100-step episodes, the initial
// action noise of legged_gym, std 1, under which the robot falls often, rewards not clipped at 0)
// must improve the mean
// return of finished episodes: iterations 5-12 (every episode there could have run its 100 steps)
// against the last 8.
TEST(Quadruped, ShortTrainingImprovesReturn) {
  const std::string path = std::string(RLT_SOURCE_DIR) + "/configs/quadruped.toml";
  Config cfg = load_config(path);
  cfg.env.num_envs = 32;
  cfg.ppo.num_steps = 24;
  cfg.ppo.num_minibatches = 4;
  cfg.train.threads = 2;
  cfg.train.device = "cpu";
  cfg.train.eval_episodes = 32;
  cfg.env.params["max_episode_steps"] = 100;  // many finished episodes in a short run
  cfg.policy.init_log_std = 0.0;
  cfg.env.params["only_positive_rewards"] = 0.0;  // unclipped: the penalties of a noisy gait count
  Runtime rt("cpu", 2);
  auto env = rt.make_env(cfg);
  env->reset(cfg.train.seed);
  auto learner = rt.make_learner(cfg, *env);
  learner->start(cfg.train.seed);
  const int iterations = 40;
  double first = 0, last = 0;
  int nf = 0, nl = 0;
  for (int it = 1; it <= iterations; ++it) {
    const IterationStats st = learner->iterate(it, iterations);
    for (float r : st.finished_returns) {
      if (it >= 5 && it <= 12) first += r, ++nf;
      if (it > iterations - 8) last += r, ++nl;
    }
  }
  ASSERT_GT(nf, 0);
  ASSERT_GT(nl, 0);
  first /= nf, last /= nl;
  std::printf("[ learning ] quadruped: mean return %.3f (iterations 5-12) -> %.3f (last 8 of %d)\n", first, last,
              iterations);
  EXPECT_GT(last, first);
}

// Velocity tracking of a trained policy (a measurement, run when RLT_QUADRUPED_CHECKPOINT names a
// checkpoint or run directory): 64 envs on flat ground, deterministic actions, 500 steps; the RMS of
// the planar base velocity error against the command, skipping the first second after each command.
TEST(Quadruped, TrackingErrorOfACheckpoint) {
  const char* ck_path = std::getenv("RLT_QUADRUPED_CHECKPOINT");
  if (!ck_path) GTEST_SKIP() << "set RLT_QUADRUPED_CHECKPOINT to a checkpoint or run directory to measure";
  const Checkpoint ck = read_checkpoint(resolve_checkpoint_path(ck_path));
  Config cfg = ck.config;
  cfg.env.num_envs = 64;
  cfg.ppo.num_steps = 1;
  cfg.ppo.num_minibatches = 1;
  cfg.env.params["terrain_fraction"] = 0.0;
  cfg.env.params["obs_noise"] = 0.0;
  cfg.env.params["push_velocity"] = 0.0;
  Runtime rt("cpu", 2);
  auto env = rt.make_env(cfg);
  auto learner = rt.make_learner(cfg, *env);
  restore_checkpoint(ck, *learner, LearnerLoad::kPolicy, nullptr, nullptr);
  env->reset(12345);
  auto* q = dynamic_cast<Env*>(env.get());
  ASSERT_NE(q, nullptr);
  const DataLayout& l = q->world().layout();
  double se = 0, se_yaw = 0, speed = 0;
  i64 count = 0, terminations = 0;
  for (int t = 0; t < 500; ++t) {
    env->step(learner->act(true, static_cast<u32>(t)));
    for (i64 i = 0; i < 64; ++i) {
      terminations += env->terminated()[i];
      const auto& s = q->states()[i];
      if (env->terminated()[i] || env->truncated()[i] || s.t % 200 < 50) continue;
      const float* r = q->world().physics_rows() + i * l.row;
      const float* R = r + l.xmat + 9 * Quadruped::kTrunk;
      float vb[2];
      for (int k = 0; k < 2; ++k) vb[k] = R[k] * r[l.qvel] + R[3 + k] * r[l.qvel + 1] + R[6 + k] * r[l.qvel + 2];
      const double ex = s.command[0] - vb[0], ey = s.command[1] - vb[1], ez = s.command[2] - r[l.qvel + 5];
      se += ex * ex + ey * ey, se_yaw += ez * ez, speed += std::hypot(s.command[0], s.command[1]);
      ++count;
    }
  }
  std::printf(
      "[ tracking ] %s: planar velocity RMS error %.3f m/s (mean commanded speed %.3f m/s), yaw rate RMS "
      "error %.3f rad/s, %lld samples, %lld base-contact terminations in 64 x 500 steps\n",
      ck_path, std::sqrt(se / count), speed / count, std::sqrt(se_yaw / count), static_cast<long long>(count),
      static_cast<long long>(terminations));
}

}  // namespace
}  // namespace rlt
