// The G1 joystick tasks (envs/g1_joystick.h, MuJoCo Playground's G1JoystickFlatTerrain and
// G1JoystickRoughTerrain) on the CPU executor, each on its vendored scene (envs/assets/g1/): spaces,
// determinism, the observation against the sensors and state, the gait clock, commands within their
// ranges, every reward term against the header's table, termination (upside down, feet crossing),
// pushes, the restricted joint ranges, reset_one, falling under zero actions as MuJoCo 3 does, and
// randomization (identity = none; random actions stay finite).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "envs/ant.h"
#include "envs/g1_joystick.h"
#include "envs/registry_impl.h"

namespace rlt {

namespace {

using G = G1Joystick;  // the constants and terms both tasks share
constexpr std::uint64_t kSeed = 3;
constexpr int kObs = 103, kAct = 29, kCritic = 216;

template <class Task>
struct Made {
  using Env = VecEnvT<Task, CpuExecutor>;
  CpuExecutor exec{1};
  std::unique_ptr<VecEnv> env;
  Env* q = nullptr;
  explicit Made(i64 n, const std::vector<std::pair<std::string, double>>& params = {}) {
    env = new_vec_env<Task, CpuExecutor>(n, exec);
    q = dynamic_cast<Env*>(env.get());
    for (const auto& [k, x] : params) EXPECT_TRUE(env->set_param(k, x)) << k;
  }
  float* row(i64 i) { return q->world().physics_rows() + i * q->world().layout().row; }
  DataView<float> data(i64 i) { return BatchRows<float>{q->world().layout(), q->world().physics_rows(), {}}.env(i); }
  const typename Task::State& state(i64 i) { return q->states()[i]; }
  const float* sensor(i64 i, int id) {
    return data(i).sensordata + q->world().model().sensor_adr[static_cast<size_t>(id)];
  }
};

std::vector<float> seeded_actions(i64 n, int t, float h) {
  std::vector<float> a(static_cast<size_t>(n * kAct));
  for (i64 i = 0; i < n; ++i) {
    Philox rng(5, RngStream::kAction, static_cast<u32>(i), static_cast<u32>(t));
    float u[32];
    for (int k = 0; k < 32; k += 4) uniform4(rng, -h, h, u + k, 4);
    std::copy(u, u + kAct, a.begin() + i * kAct);
  }
  return a;
}

template <class Task>
class G1Both : public ::testing::Test {};
using G1Tasks = ::testing::Types<G1Joystick, G1JoystickRough>;
struct TaskName {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(G1Both, G1Tasks, TaskName);

TYPED_TEST(G1Both, Spaces) {
  Made<TypeParam> m(2);
  const EnvSpec& s = m.env->spec();
  EXPECT_EQ(s.observation.dim, kObs);
  EXPECT_EQ(s.action.dim, kAct);
  EXPECT_EQ(s.critic_obs_dim, kCritic);
  EXPECT_EQ(s.max_episode_steps, 1000);
  for (int k = 0; k < kAct; ++k) EXPECT_EQ(s.action.low[static_cast<size_t>(k)], -1.0f);
  EXPECT_FLOAT_EQ(m.q->world().control_dt(), 0.02f);
  EXPECT_FLOAT_EQ(static_cast<float>(m.q->world().model().timestep), 0.002f);
  EXPECT_EQ(m.q->world().frame_skip(), 10);
}

TYPED_TEST(G1Both, SameSeedSameEpisodesOtherSeedOther) {
  auto run = [](std::uint64_t seed) {
    Made<TypeParam> m(3, {{"push_interval_min", 0.1}, {"push_interval_max", 0.2}});
    m.env->reset(seed);
    std::vector<float> trace;
    for (int t = 0; t < 30; ++t) {
      const auto a = seeded_actions(3, t, 0.5f);
      m.env->step(a.data());
      trace.insert(trace.end(), m.env->obs(), m.env->obs() + 3 * kObs);
      trace.insert(trace.end(), m.env->critic_obs(), m.env->critic_obs() + 3 * kCritic);
      trace.insert(trace.end(), m.env->reward(), m.env->reward() + 3);
    }
    return trace;
  };
  const auto a = run(kSeed), b = run(kSeed), c = run(kSeed + 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

// Noise off: the observation is the sensors, joint state, the command, the action before last and the
// gait clock; the critic's is Playground's privileged state.
TYPED_TEST(G1Both, ObservationLayout) {
  const i64 n = 4;
  Made<TypeParam> m(n, {{"noise_level", 0}});
  m.env->reset(kSeed);
  std::vector<float> prev(kAct * n, 0.0f);
  for (int t = 0; t < 25; ++t) {
    std::vector<typename TypeParam::State> before(m.q->states(), m.q->states() + n);
    const auto a = seeded_actions(n, t, 0.3f);
    m.env->step(a.data());
    for (i64 i = 0; i < n; ++i) {
      const typename TypeParam::State& s0 = before[static_cast<size_t>(i)];
      const bool stepped = m.state(i).t == s0.t + 1;
      const float* o = m.env->obs() + i * kObs;
      const float* co = m.env->critic_obs() + i * kCritic;
      const DataView<float> d = m.data(i);
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(o[k], m.sensor(i, G::kLocalLinvel)[k]);
        EXPECT_EQ(o[3 + k], m.sensor(i, G::kGyro)[k]);
        EXPECT_EQ(o[6 + k], -d.site_xmat[9 * G::kPelvisImu + 6 + k]);
        if (stepped) {
          EXPECT_EQ(o[9 + k], s0.command[k]);  // the command the reward used
        }
        EXPECT_EQ(co[106 + k], m.sensor(i, G::kAccelerometer)[k]);
        EXPECT_EQ(co[115 + k], m.sensor(i, G::kGlobalAngvel)[k]);
        for (int f = 0; f < 2; ++f) EXPECT_EQ(co[208 + 3 * f + k], m.sensor(i, G::kFeetLinvel + f)[k]);
      }
      for (int j = 0; j < kAct; ++j) {
        EXPECT_FLOAT_EQ(o[12 + j], d.qpos[7 + j] - G::default_pose(j));
        EXPECT_EQ(o[41 + j], d.qvel[6 + j]);
        if (stepped) {
          EXPECT_EQ(o[70 + j], s0.last_act[j]);  // the action before this step's
        }
        EXPECT_EQ(co[177 + j], d.actuator_force[j]);
      }
      if (stepped) {
        for (int f = 0; f < 2; ++f) {  // the clock this step used, then advanced by phase_dt
          EXPECT_FLOAT_EQ(o[99 + f], std::cos(s0.phase[f]));
          EXPECT_FLOAT_EQ(o[101 + f], std::sin(s0.phase[f]));
          const double adv = std::remainder(double(m.state(i).phase[f]) - s0.phase[f] - s0.phase_dt, 2 * M_PI);
          EXPECT_NEAR(adv, 0.0, 1e-5);
        }
      }
      EXPECT_EQ(co[176], d.qpos[2]);
      for (int f = 0; f < 2; ++f) EXPECT_EQ(co[206 + f], m.sensor(i, G::kFootFloor + f)[0] > 0 ? 1.0f : 0.0f);
      for (int k = 0; k < kObs; ++k) EXPECT_EQ(co[k], o[k]);
      for (int k = 0; k < kCritic; ++k) EXPECT_TRUE(std::isfinite(co[k]));
    }
  }
  // The gait frequency per episode within U(1.25, 1.5): phase_dt = 2 pi dt f.
  for (i64 i = 0; i < n; ++i) {
    const double f = m.state(i).phase_dt / (2 * M_PI * 0.02);
    EXPECT_GE(f, 1.25 - 1e-5);
    EXPECT_LE(f, 1.5 + 1e-5);
  }
  // Noise on: the actor observation moves off the sensors, within level x scale.
  Made<TypeParam> z(n);
  z.env->reset(kSeed);
  std::vector<float> zero(kAct * n, 0.0f);
  z.env->step(zero.data());
  double max_gyro = 0, max_vel = 0;
  for (i64 i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      const double e = std::abs(z.env->obs()[i * kObs + 3 + k] - z.sensor(i, G::kGyro)[k]);
      EXPECT_LE(e, 0.2 + 1e-5);
      max_gyro = std::max(max_gyro, e);
    }
    for (int j = 0; j < kAct; ++j) {
      const double e = std::abs(z.env->obs()[i * kObs + 41 + j] - z.data(i).qvel[6 + j]);
      EXPECT_LE(e, 1.5 + 1e-4);
      max_vel = std::max(max_vel, e);
    }
  }
  EXPECT_GT(max_gyro, 0.01);
  EXPECT_GT(max_vel, 0.1);
}

TEST(G1Joystick, CommandsWithinRangesAndResampled) {
  const i64 n = 64;
  Made<G1Joystick> m(n, {{"cmd_resample_steps", 2}, {"rand_enable", 0}});
  m.env->reset(kSeed);
  int changes = 0, zeros = 0;
  std::vector<float> prev(3 * n);
  for (int t = 0; t < 30; ++t) {
    for (i64 i = 0; i < n; ++i) {
      const auto& s = m.state(i);
      EXPECT_LE(std::abs(s.command[0]), 1.0f);
      EXPECT_LE(std::abs(s.command[1]), 0.5f);
      EXPECT_LE(std::abs(s.command[2]), 1.0f);
      if (t % 3 == 0) zeros += s.command[0] == 0.0f && s.command[1] == 0.0f && s.command[2] == 0.0f;
      changes += t > 0 && s.command[0] != prev[3 * i];
      prev[3 * i] = s.command[0];
    }
    std::vector<float> zero(kAct * n, 0.0f);
    m.env->step(zero.data());
  }
  EXPECT_GT(changes, 400);  // a new command every 3 steps (and at each reset)
  // all-zero commands with probability 0.1: binomial(640, 0.1) = 64 +- 7.6
  EXPECT_GT(zeros, 30);
  EXPECT_LT(zeros, 100);
}

// Playground's rz(phi): 0 at phi = -pi (start of stance), h at phi = 0, back to 0 at pi.
TEST(G1Joystick, GaitProfile) {
  const float h = 0.15f;
  EXPECT_NEAR(G::gait_rz(-3.14159265f, h), 0.0f, 1e-6);
  EXPECT_NEAR(G::gait_rz(0.0f, h), h, 1e-6);
  EXPECT_NEAR(G::gait_rz(3.14159265f, h), 0.0f, 1e-6);
  EXPECT_NEAR(G::gait_rz(-0.5f * 3.14159265f, h), 0.5f * h, 1e-6);  // x^3 + 3 x^2 (1 - x) at 1/2
}

// Every reward term recomputed in double from the row after the step and the state before it.
TYPED_TEST(G1Both, RewardTermsFollowTheTable) {
  const i64 n = 6;
  Made<TypeParam> m(n, {{"noise_level", 0}, {"push_enable", 0}});
  m.env->reset(kSeed);
  const Model& model = m.q->world().model();
  const typename TypeParam::Params p{};
  double seen[G::kNumTerms] = {};
  for (int t = 0; t < 60; ++t) {
    std::vector<typename TypeParam::State> before(m.q->states(), m.q->states() + n);
    const auto a = seeded_actions(n, t, 0.4f);
    m.env->step(a.data());
    for (i64 i = 0; i < n; ++i) {
      const typename TypeParam::State& s0 = before[static_cast<size_t>(i)];
      const typename TypeParam::State& s = m.state(i);
      if (s.t != s0.t + 1) continue;  // reset in this step
      const DataView<float> d = m.data(i);
      auto sn = [&](int id, int k) { return double(m.sensor(i, id)[k]); };
      const double c0 = s0.command[0], c1 = s0.command[1], c2 = s0.command[2];
      const double cn = std::sqrt(c0 * c0 + c1 * c1 + c2 * c2);
      double e[G::kNumTerms] = {};
      e[G::kTrackingLinVel] =
          std::exp(-(std::pow(c0 - sn(G::kLocalLinvel, 0), 2) + std::pow(c1 - sn(G::kLocalLinvel, 1), 2)) / 0.25);
      e[G::kTrackingAngVel] = std::exp(-std::pow(c2 - sn(G::kGyro, 2), 2) / 0.25);
      e[G::kLinVelZ] = std::pow(sn(G::kGlobalLinvel, 2), 2) + std::pow(sn(G::kGlobalLinvelTorso, 2), 2);
      e[G::kAngVelXy] = std::pow(sn(G::kGlobalAngvelTorso, 0), 2) + std::pow(sn(G::kGlobalAngvelTorso, 1), 2);
      e[G::kOrientation] = std::pow(sn(G::kUpvectorTorso, 0) - 0.073, 2) + std::pow(sn(G::kUpvectorTorso, 1), 2) +
                           std::pow(sn(G::kUpvectorTorso, 2) - 1.0, 2);
      e[G::kBaseHeight] = std::pow(d.qpos[2] - 0.5, 2);
      double dev[29];
      for (int j = 0; j < 29; ++j) {
        dev[j] = d.qpos[7 + j] - G::default_pose(j);
        const double f = d.actuator_force[j];
        e[G::kTorques] += std::abs(f);
        e[G::kActionRate] += std::pow(a[kAct * i + j] - s0.last_act[j], 2);
        e[G::kEnergy] += std::abs(d.qvel[6 + j]) * std::abs(f);
        e[G::kDofAcc] += std::pow(d.qacc[6 + j], 2);
        e[G::kStandStill] += cn < 0.01 ? std::abs(dev[j]) : 0.0;
        e[G::kPose] += dev[j] * dev[j];
        const double lo = model.jnt_range[2 * (j + 1)], hi = model.jnt_range[2 * (j + 1) + 1];
        const double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo) * 0.95;
        e[G::kDofPosLimits] += std::max(mid - half - d.qpos[7 + j], 0.0) + std::max(d.qpos[7 + j] - mid - half, 0.0);
      }
      const double vxy = std::hypot(sn(G::kGlobalLinvel, 0), sn(G::kGlobalLinvel, 1));
      double phase_err = 0;
      for (int f = 0; f < 2; ++f) {
        const bool contact = m.sensor(i, G::kFootFloor + f)[0] > 0;
        const bool first = s0.air_time[f] > 0 && (contact || s0.last_contact[f] > 0);
        const double air = s0.air_time[f] + 0.02;
        const double z = d.site_xpos[3 * G::foot_site(f) + 2];
        const double peak = std::max(double(s0.swing_peak[f]), z);
        e[G::kFeetClearance] += std::abs(z - 0.15) * std::sqrt(std::hypot(sn(G::kFeetLinvel + f, 0), sn(G::kFeetLinvel + f, 1)));
        e[G::kFeetAirTime] += std::min((air - 0.2) * (first ? 1 : 0), 0.3);
        e[G::kFeetSlip] += contact ? vxy : 0.0;
        e[G::kFeetHeight] += first ? std::pow(peak / 0.15 - 1, 2) : 0.0;
        const double x = (double(s0.phase[f]) + M_PI) / (2 * M_PI);
        const double u = x <= 0.5 ? 2 * x : 2 * x - 1, b = u * u * u + 3 * u * u * (1 - u);
        phase_err += std::pow(z - (x <= 0.5 ? 0.15 * b : 0.15 * (1 - b)), 2);
        e[G::kContactForce] += std::max(std::abs(sn(G::kFootForce + f, 2)) - 500.0, 0.0);
      }
      const bool moving = vxy > 0.1 || std::abs(sn(G::kGlobalAngvel, 2)) > 0.1 || cn > 0.01;
      e[G::kFeetPhase] = moving ? std::exp(-phase_err / 0.01) : 0.0;
      e[G::kAlive] = 1;
      e[G::kTermination] = m.env->terminated()[i] ? 1 : 0;
      e[G::kCollision] = (sn(G::kHandThigh, 0) > 0 || sn(G::kHandThigh + 1, 0) > 0) ? 1 : 0;
      e[G::kJointDeviationKnee] = std::abs(dev[3]) + std::abs(dev[9]);
      e[G::kJointDeviationHip] = (c1 > 0.1 ? 0.0 : 1.0) * (std::abs(dev[1]) + std::abs(dev[7])) + std::abs(dev[2]) + std::abs(dev[8]);
      double r = 0;
      for (int k = 0; k < G::kNumTerms; ++k) {
        const double tol = 1e-4 * std::max(1.0, std::abs(e[k]));
        EXPECT_NEAR(s.terms[k], e[k], tol) << G::kWeightKeys[k] << " env " << i << " step " << t;
        seen[k] += std::abs(s.terms[k]);
        r += double(p.w[k]) * s.terms[k];
      }
      EXPECT_NEAR(m.env->reward()[i], 0.02 * r, 1e-4 * std::max(1.0, std::abs(0.02 * r)));  // dt x sum, no clip
    }
  }
  // the terms that need a foot event or motion are exercised
  for (int k : {G::kFeetAirTime, G::kFeetSlip, G::kFeetPhase, G::kFeetHeight, G::kDofAcc, G::kJointDeviationHip})
    EXPECT_GT(seen[k], 0.0) << G::kWeightKeys[k];
}

// Upside down: terminated on that step, with the termination term.
TYPED_TEST(G1Both, TerminatesUpsideDown) {
  Made<TypeParam> m(3, {{"noise_level", 0}, {"rand_enable", 0}, {"push_enable", 0}});
  m.env->reset(kSeed);
  float* q = m.data(0).qpos;
  q[2] = 1.5f, q[3] = 0.0f, q[4] = 1.0f, q[5] = 0.0f, q[6] = 0.0f;  // rolled by pi, in the air
  std::vector<float> zero(3 * kAct, 0.0f);
  m.env->step(zero.data());
  EXPECT_TRUE(m.env->terminated()[0]);
  EXPECT_FALSE(m.env->terminated()[2]);
  EXPECT_EQ(m.state(0).t, 0);  // auto-reset
}

// Zero actions (joint targets = q0): Playground's reset bends every joint by U(0.5, 1.5) and spins
// the pelvis, and the humanoid has no balance of its own. MuJoCo 3 (the python package, 64 such
// starts, 150 control steps, converged solver; as written, iterations 3: the same to +-1 step)
// ends every episode, at steps 34..86 (median 48.5) flat and 36..92 (median 49) rough. So: every
// env falls, none before step 20, most between 30 and 100.
TYPED_TEST(G1Both, FallsUnderZeroActionsAsMuJoCoDoes) {
  const i64 n = 16;
  Made<TypeParam> m(n, {{"noise_level", 0}, {"rand_enable", 0}, {"push_enable", 0}});
  m.env->reset(kSeed);
  std::vector<float> zero(kAct * n, 0.0f);
  std::vector<int> end(n, -1);
  for (int t = 0; t < 150; ++t) {
    m.env->step(zero.data());
    for (i64 i = 0; i < n; ++i)
      if (m.env->terminated()[i] && end[i] < 0) end[i] = t;
  }
  std::vector<int> s(end);
  std::sort(s.begin(), s.end());
  std::printf("zero actions: first ends at steps");
  for (int x : s) std::printf(" %d", x);
  std::printf("\n");
  for (i64 i = 0; i < n; ++i) {
    EXPECT_GE(end[i], 20) << i;
    EXPECT_LT(end[i], 130) << i;  // -1 (never) fails too
  }
  EXPECT_GE(s[n / 2], 30);
  EXPECT_LE(s[n / 2], 80);
}

// Randomization with every range collapsed onto the asset's values moves the robot exactly as none.
TYPED_TEST(G1Both, IdentityRandomizationIsNone) {
  EXPECT_EQ(Made<TypeParam>(1).q->world().model().pair_friction[0], 0.6);
  auto run = [](bool identity) {
    std::vector<std::pair<std::string, double>> p = {
        {"noise_level", 0}, {"push_enable", 0}, {"rand_enable", identity ? 1.0 : 0.0}};
    if (identity)
      p.insert(p.end(), {{"rand_floor_friction_min", 0.6},
                         {"rand_floor_friction_max", 0.6},
                         {"rand_frictionloss_min", 1},
                         {"rand_frictionloss_max", 1},
                         {"rand_armature_min", 1},
                         {"rand_armature_max", 1},
                         {"rand_mass_min", 1},
                         {"rand_mass_max", 1},
                         {"rand_torso_mass", 0}});
    Made<TypeParam> m(3, p);
    m.env->reset(kSeed);
    std::vector<float> trace;
    for (int t = 0; t < 20; ++t) {
      const auto a = seeded_actions(3, t, 0.5f);
      m.env->step(a.data());
      trace.insert(trace.end(), m.env->critic_obs(), m.env->critic_obs() + 3 * kCritic);
    }
    return trace;
  };
  EXPECT_EQ(run(true), run(false));
}

// Pushes: with a 0.02 s interval every step kicks the pelvis: its horizontal speed right after
// reset moves by up to push_magnitude_max; with pushes off it does not (same seed, same actions).
TEST(G1Joystick, PushesKickThePelvis) {
  auto speed_change = [](double enable) {
    Made<G1Joystick> m(8, {{"noise_level", 0},
                           {"rand_enable", 0},
                           {"push_enable", enable},
                           {"push_interval_min", 0.02},
                           {"push_interval_max", 0.02},
                           {"push_magnitude_min", 1.5},
                           {"push_magnitude_max", 1.5}});
    m.env->reset(kSeed);
    std::vector<float> zero(8 * kAct, 0.0f);
    m.env->step(zero.data());
    double total = 0;
    for (i64 i = 0; i < 8; ++i) total += std::hypot(m.data(i).qvel[0], m.data(i).qvel[1]);
    return total / 8;
  };
  const double off = speed_change(0), on = speed_change(1);
  std::printf("mean pelvis speed after one step: pushes off %.3f, on %.3f m/s\n", off, on);
  EXPECT_GT(on, off + 0.5);
}

// restricted_joint_range 1: Playground's RESTRICTED_JOINT_RANGE clamps the targets (ctrlrange) and
// moves the soft limits. Left hip roll: range [-0.5236, 2.9671], restricted [-0.5, 0.5]; a target
// of 1.0 rad (action_scale 1, action +1) is clamped to 0.5, so its servo (Kp 75) pulls with
// 75 (0.5 - q) instead of 75 (1.0 - q).
TEST(G1Joystick, RestrictedJointRange) {
  for (double restricted : {0.0, 1.0}) {
    Made<G1Joystick> m(1, {{"noise_level", 0},
                           {"rand_enable", 0},
                           {"push_enable", 0},
                           {"action_scale", 1.0},
                           {"restricted_joint_range", restricted}});
    m.env->reset(kSeed);
    std::vector<float> a(kAct, 0.0f);
    a[1] = 1.0f;
    m.env->step(a.data());
    const DataView<float> d = m.data(0);
    const double target = restricted != 0.0 ? 0.5 : 1.0;
    // the force was computed at the last substep's start: q within one substep (~0.015 rad) of qpos;
  // the two targets differ by 0.5 rad, 37.5 N m
    EXPECT_NEAR(d.actuator_force[1], 75.0 * (target - d.qpos[8]), 75.0 * 0.03) << restricted;
  }
}

TYPED_TEST(G1Both, RandomActionsStayFiniteWithRandomizationAndPushes) {
  const i64 n = 8;
  Made<TypeParam> m(n, {{"rand_enable", 1}, {"push_interval_min", 0.5}, {"push_interval_max", 1.0}});
  m.env->reset(kSeed);
  for (int t = 0; t < 200; ++t) {
    const auto a = seeded_actions(n, t, 1.0f);
    m.env->step(a.data());
    for (i64 i = 0; i < n; ++i) {
      for (int k = 0; k < kObs; ++k) ASSERT_TRUE(std::isfinite(m.env->obs()[i * kObs + k]));
      ASSERT_TRUE(std::isfinite(m.env->reward()[i]));
    }
  }
  EXPECT_EQ(m.env->num_nonfinite_resets(), 0);
}

TYPED_TEST(G1Both, ResetOneRestartsOnlyThatEnv) {
  Made<TypeParam> m(3, {{"noise_level", 0}});
  m.env->reset(kSeed);
  std::vector<float> zero(3 * kAct, 0.0f);
  for (int t = 0; t < 5; ++t) m.env->step(zero.data());
  const std::vector<float> other(m.env->obs() + kObs, m.env->obs() + 2 * kObs);
  m.env->reset_one(0);
  EXPECT_EQ(m.state(0).t, 0);
  EXPECT_EQ(m.state(1).t, 5);
  EXPECT_EQ(std::vector<float>(m.env->obs() + kObs, m.env->obs() + 2 * kObs), other);
  EXPECT_NEAR(m.data(0).qpos[2], TypeParam::kHomeHeight, 1e-6);
  for (int k = 70; k < 99; ++k) EXPECT_EQ(m.env->obs()[k], 0.0f);           // no previous action
  EXPECT_FLOAT_EQ(m.env->obs()[99], 1.0f);  // the clock at (0, pi)
  EXPECT_FLOAT_EQ(m.env->obs()[100], -1.0f);
}

}  // namespace
}  // namespace rlt

namespace rlt {
namespace {
// VecEnv::tracking(): per env the command the step used and the pelvis's local linear velocity and
// yaw rate (what the tracking rewards compare; `rltrain eval` reports their RMS errors).
TEST(G1Joystick, TrackingIsTheStepsCommandAndVelocity) {
  const i64 n = 3;
  Made<G1Joystick> m(n, {{"noise_level", 0}});
  m.env->reset(kSeed);
  ASSERT_NE(m.env->tracking(), nullptr);
  for (int t = 0; t < 5; ++t) {
    std::vector<G::State> before(m.q->states(), m.q->states() + n);
    const auto a = seeded_actions(n, t, 0.3f);
    m.env->step(a.data());
    for (i64 i = 0; i < n; ++i) {
      const float* x = m.env->tracking() + kTrackingFloats * i;
      if (m.state(i).t != before[static_cast<size_t>(i)].t + 1) continue;
      for (int k = 0; k < 3; ++k) EXPECT_EQ(x[k], before[static_cast<size_t>(i)].command[k]);
      EXPECT_EQ(x[3], m.sensor(i, G::kLocalLinvel)[0]);
      EXPECT_EQ(x[4], m.sensor(i, G::kLocalLinvel)[1]);
      EXPECT_EQ(x[5], m.sensor(i, G::kGyro)[2]);
      const float* r = m.data(i).site_xmat + 9 * G::kPelvisImu;  // heading: the imu x axis seen from above
      EXPECT_FLOAT_EQ(x[6], std::atan2(r[3], r[0]));
    }
  }
  // tasks without a command have none
  CpuExecutor exec{1};
  const auto ant = new_vec_env<Ant, CpuExecutor>(1, exec);
  EXPECT_EQ(ant->tracking(), nullptr);
}
}  // namespace
}  // namespace rlt
