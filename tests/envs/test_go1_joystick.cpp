// The Go1 joystick tasks (envs/go1_joystick.h, MuJoCo Playground's Go1JoystickFlatTerrain and
// Go1JoystickRoughTerrain) on the CPU executor, each on its vendored scene (envs/assets/go1/: the
// Menagerie meshes, the rough terrain's height field): spaces, determinism, the observation against
// the sensors and state, commands within their ranges, the reward terms' formulas and signs,
// termination when the trunk is upside down, reset_one, standing under zero actions, randomization
// staying finite, and (rough) the feet standing on the height field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "envs/go1_joystick.h"
#include "envs/registry_impl.h"
#include "sim/contact.h"

namespace rlt {

namespace {

using G = Go1Joystick;  // the constants and terms both tasks share
constexpr std::uint64_t kSeed = 3;

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
  std::vector<float> a(static_cast<size_t>(n * 12));
  for (i64 i = 0; i < n; ++i) {
    Philox rng(5, RngStream::kAction, static_cast<u32>(i), static_cast<u32>(t));
    for (int k = 0; k < 12; k += 4) uniform4(rng, -h, h, a.data() + i * 12 + k, 4);
  }
  return a;
}

// The tests below run on both tasks; the flat one's also check command sampling, the rough one's
// the height field.
template <class Task>
class Go1Both : public ::testing::Test {};
using Go1Tasks = ::testing::Types<Go1Joystick, Go1JoystickRough>;
struct TaskName {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(Go1Both, Go1Tasks, TaskName);

TYPED_TEST(Go1Both, Spaces) {
  Made<TypeParam> m(2);
  const EnvSpec& s = m.env->spec();
  EXPECT_EQ(s.observation.dim, 48);
  EXPECT_EQ(s.action.dim, 12);
  EXPECT_EQ(s.critic_obs_dim, 123);
  EXPECT_EQ(s.max_episode_steps, 1000);
  for (int k = 0; k < 12; ++k) EXPECT_EQ(s.action.low[static_cast<size_t>(k)], -1.0f);
  EXPECT_FLOAT_EQ(m.q->world().control_dt(), 0.02f);
  EXPECT_FLOAT_EQ(static_cast<float>(m.q->world().model().timestep), 0.004f);
}

TYPED_TEST(Go1Both, SameSeedSameEpisodesOtherSeedOther) {
  auto run = [](std::uint64_t seed) {
    Made<TypeParam> m(3, {{"kick_enable", 1}});
    m.env->reset(seed);
    std::vector<float> trace;
    for (int t = 0; t < 40; ++t) {
      const auto a = seeded_actions(3, t, 0.5f);
      m.env->step(a.data());
      trace.insert(trace.end(), m.env->obs(), m.env->obs() + 3 * 48);
      trace.insert(trace.end(), m.env->critic_obs(), m.env->critic_obs() + 3 * 123);
      trace.insert(trace.end(), m.env->reward(), m.env->reward() + 3);
    }
    return trace;
  };
  const auto a = run(kSeed), b = run(kSeed), c = run(kSeed + 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

// Noise off: the observation is the sensors, joint state, the action before last and the command.
TYPED_TEST(Go1Both, ObservationLayout) {
  const i64 n = 4;
  Made<TypeParam> m(n, {{"noise_level", 0}});
  m.env->reset(kSeed);
  std::vector<float> prev(12 * n, 0.0f), prev2(12 * n, 0.0f);
  for (int t = 0; t < 30; ++t) {
    std::vector<float> cmd_before(3 * n);
    for (i64 i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) cmd_before[3 * i + k] = m.state(i).command[k];
    const auto a = seeded_actions(n, t, 0.3f);
    m.env->step(a.data());
    for (i64 i = 0; i < n; ++i) {
      const float* o = m.env->obs() + i * 48;
      const float* co = m.env->critic_obs() + i * 123;
      const DataView<float> d = m.data(i);
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(o[k], m.sensor(i, G::kLocalLinvel)[k]);
        EXPECT_EQ(o[3 + k], m.sensor(i, G::kGyro)[k]);
        EXPECT_EQ(o[6 + k], -d.site_xmat[9 * G::kImuSite + 6 + k]);
        if (m.state(i).t > 0) {
          EXPECT_EQ(o[45 + k], cmd_before[3 * i + k]);  // the command the reward used
        }
        EXPECT_EQ(co[51 + k], m.sensor(i, G::kAccelerometer)[k]);
      }
      for (int j = 0; j < 12; ++j) {
        EXPECT_FLOAT_EQ(o[9 + j], d.qpos[7 + j] - G::default_pose(j));
        EXPECT_EQ(o[21 + j], d.qvel[6 + j]);
        if (m.state(i).t > 1) {
          EXPECT_EQ(o[33 + j], prev[12 * i + j]);  // the action before this step's
        }
        EXPECT_EQ(co[87 + j], d.actuator_force[j]);
      }
      for (int k = 0; k < 48; ++k) EXPECT_EQ(co[k], o[k]);
      for (int k = 0; k < 123; ++k) EXPECT_TRUE(std::isfinite(co[k]));
    }
    prev2 = prev;
    prev = a;
  }
  // Noise on: the actor observation moves off the sensors, within level x scale.
  Made<TypeParam> z(n);
  z.env->reset(kSeed);
  std::vector<float> zero(12 * n, 0.0f);
  z.env->step(zero.data());
  double max_gyro = 0;
  for (i64 i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      const double e = std::abs(z.env->obs()[i * 48 + 3 + k] - z.sensor(i, G::kGyro)[k]);
      EXPECT_LE(e, 0.2 + 1e-5);
      max_gyro = std::max(max_gyro, e);
    }
  EXPECT_GT(max_gyro, 0.01);
}

// env.converged_solve = 1: the scene's iterations budget and warm start off, the rows stepped as
// world().solve_to_convergence() steps them (bit for bit), and not as the scene's budget does.
TYPED_TEST(Go1Both, ConvergedSolveIgnoresTheScenesBudget) {
  const i64 n = 4;
  Made<TypeParam> a(n, {{"converged_solve", 1}}), b(n), budget(n);
  b.q->world().solve_to_convergence();
  ASSERT_EQ(budget.q->world().model_view().newton_iterations, 1);  // the scene's: iterations="1"
  for (Made<TypeParam>* m : {&a, &b, &budget}) m->env->reset(kSeed);
  const size_t bytes = sizeof(float) * static_cast<size_t>(n * a.q->world().layout().row);
  bool budget_differs = false;
  for (int t = 0; t < 30; ++t) {
    const auto act = seeded_actions(n, t, 0.5f);
    for (Made<TypeParam>* m : {&a, &b, &budget}) m->env->step(act.data());
    ASSERT_EQ(std::memcmp(a.row(0), b.row(0), bytes), 0) << "step " << t;
    budget_differs = budget_differs || std::memcmp(a.row(0), budget.row(0), bytes) != 0;
  }
  EXPECT_TRUE(budget_differs);
}

TEST(Go1Joystick, CommandsWithinRanges) {
  const i64 n = 32;
  Made<Go1Joystick> m(n, {{"cmd_resample_mean_s", 0.1}});
  m.env->reset(kSeed);
  int changes = 0, zeros = 0;
  std::vector<float> prev(3 * n);
  for (int t = 0; t < 60; ++t) {
    for (i64 i = 0; i < n; ++i) {
      const auto& s = m.state(i);
      EXPECT_LE(std::abs(s.command[0]), 1.5f);
      EXPECT_LE(std::abs(s.command[1]), 0.8f);
      EXPECT_LE(std::abs(s.command[2]), 1.2f);
      for (int k = 0; k < 3; ++k) {
        changes += t > 0 && s.command[k] != prev[3 * i + k];
        zeros += s.command[k] == 0.0f;
        prev[3 * i + k] = s.command[k];
      }
    }
    std::vector<float> zero(12 * n, 0.0f);
    m.env->step(zero.data());
  }
  EXPECT_GT(changes, 100);
  EXPECT_GT(zeros, 10);
}

// The reward terms recomputed in double from the row after the step and the state before it.
TYPED_TEST(Go1Both, RewardTermsFollowTheTable) {
  const i64 n = 6;
  Made<TypeParam> m(n, {{"noise_level", 0}});
  m.env->reset(kSeed);
  const Model& model = m.q->world().model();
  double seen_air = 0, seen_slip = 0;
  for (int t = 0; t < 80; ++t) {
    std::vector<typename TypeParam::State> before(m.q->states(), m.q->states() + n);
    const auto a = seeded_actions(n, t, 0.6f);
    m.env->step(a.data());
    for (i64 i = 0; i < n; ++i) {
      if (m.state(i).t != before[static_cast<size_t>(i)].t + 1) continue;  // reset in this step
      const typename TypeParam::State& s0 = before[static_cast<size_t>(i)];
      const typename TypeParam::State& s = m.state(i);
      const DataView<float> d = m.data(i);
      const float* v = m.sensor(i, G::kLocalLinvel);
      const float* w = m.sensor(i, G::kGyro);
      const double cn = std::sqrt(double(s0.command[0]) * s0.command[0] + double(s0.command[1]) * s0.command[1] +
                                  double(s0.command[2]) * s0.command[2]);
      const double ex = s0.command[0] - v[0], ey = s0.command[1] - v[1], ez = s0.command[2] - w[2];
      EXPECT_NEAR(s.terms[G::kTrackingLinVel], std::exp(-(ex * ex + ey * ey) / 0.25), 1e-5);
      EXPECT_NEAR(s.terms[G::kTrackingAngVel], std::exp(-(ez * ez) / 0.25), 1e-5);
      const float* up = m.sensor(i, G::kUpvector);
      EXPECT_NEAR(s.terms[G::kOrientation], double(up[0]) * up[0] + double(up[1]) * up[1], 1e-6);
      double pose = 0, rate = 0, tau2 = 0, tau1 = 0, lim = 0;
      for (int j = 0; j < 12; ++j) {
        const double e = d.qpos[7 + j] - G::default_pose(j);
        pose += e * e * (j % 3 == 2 ? 0.1 : 1.0);
        rate += (a[12 * i + j] - s0.last_act[j]) * double(a[12 * i + j] - s0.last_act[j]);
        tau2 += double(d.actuator_force[j]) * d.actuator_force[j];
        tau1 += std::abs(d.actuator_force[j]);
        const double lo = 0.95 * model.jnt_range[2 * (j + 1)], hi = 0.95 * model.jnt_range[2 * (j + 1) + 1];
        lim += std::max(lo - d.qpos[7 + j], 0.0) + std::max(d.qpos[7 + j] - hi, 0.0);
        EXPECT_LE(std::abs(d.actuator_force[j]), j % 3 == 2 ? 35.55f + 1e-3f : 23.7f + 1e-3f);
      }
      EXPECT_NEAR(s.terms[G::kPose], std::exp(-pose), 1e-5);
      EXPECT_NEAR(s.terms[G::kActionRate], rate, 1e-4);
      EXPECT_NEAR(s.terms[G::kTorques], std::sqrt(tau2) + tau1, 1e-3);
      EXPECT_NEAR(s.terms[G::kDofPosLimits], lim, 1e-5);
      EXPECT_EQ(s.terms[G::kTermination], m.env->terminated()[i] ? 1.0f : 0.0f);
      if (cn < 0.01) {
        EXPECT_EQ(s.terms[G::kFeetAirTime], 0.0f);
      }
      // signs: penalties are >= 0 terms under negative weights
      for (int k :
           {G::kLinVelZ, G::kAngVelXy, G::kStandStill, G::kEnergy, G::kFeetSlip, G::kFeetClearance, G::kFeetHeight})
        EXPECT_GE(s.terms[k], 0.0f) << k;
      seen_air += std::abs(s.terms[G::kFeetAirTime]);
      seen_slip += s.terms[G::kFeetSlip];
      // the step reward: clip(dt x sum w x term, 0, 1e4)
      const G::Params p{};
      double r = 0;
      for (int k = 0; k < G::kNumTerms; ++k) r += double(p.w[k]) * s.terms[k];
      EXPECT_NEAR(m.env->reward()[i], std::min(std::max(0.02 * r, 0.0), 1e4), 1e-5);
    }
  }
  EXPECT_GT(seen_air, 0.0);  // the feet terms are exercised
  EXPECT_GT(seen_slip, 0.0);
}

// Upside down: terminated on the next step, with the termination term.
TYPED_TEST(Go1Both, TerminatesUpsideDown) {
  Made<TypeParam> m(2, {{"noise_level", 0}});
  m.env->reset(kSeed);
  float* q = m.data(0).qpos;
  q[2] = 0.5f, q[3] = 0.0f, q[4] = 1.0f, q[5] = 0.0f, q[6] = 0.0f;  // rolled by pi
  std::vector<float> zero(24, 0.0f);
  m.env->step(zero.data());
  EXPECT_TRUE(m.env->terminated()[0]);
  EXPECT_FALSE(m.env->terminated()[1]);
  EXPECT_EQ(m.state(0).t, 0);  // auto-reset
}

// Zero actions hold the home pose. Playground's reset spins the trunk at up to 0.5 rad/s per axis
// and, on the rough terrain, drops the robot from 0.35 m onto uneven ground; MuJoCo 3 itself (the
// python package, Kp/Kd as here, 64 such starts, 150 control steps of zero action) tips 5 of 64
// over on the flat floor and 15 of 64 on the rough terrain with a converged solver (4 and 16 with
// Playground's iterations=1). So: most envs stand (bounds at ~3x and ~2x those rates), and those
// stand still, the trunk 0.22-0.24 m above the feet (measured: flat 0.234-0.237, rough 0.220-0.240).
TYPED_TEST(Go1Both, StandsUnderZeroActions) {
  const i64 n = 16;
  Made<TypeParam> m(n, {{"noise_level", 0}, {"rand_enable", 0}});
  m.env->reset(kSeed);
  std::vector<float> zero(12 * n, 0.0f);
  int ends = 0;
  for (int t = 0; t < 150; ++t) {
    m.env->step(zero.data());
    for (i64 i = 0; i < n; ++i) ends += m.env->terminated()[i];
  }
  EXPECT_LE(ends, TypeParam::kIsRough ? 8 : 3);
  int standing = 0;
  for (i64 i = 0; i < n; ++i) {
    if (m.state(i).t != 150) continue;  // tipped over and restarted
    ++standing;
    float feet_z = 0.0f;
    for (int f = 0; f < 4; ++f) feet_z += 0.25f * m.data(i).site_xpos[3 * G::foot_site(f) + 2];
    const float above = m.data(i).qpos[2] - feet_z;
    EXPECT_GT(above, 0.21f) << i;
    EXPECT_LT(above, 0.25f) << i;
    EXPECT_LT(std::abs(m.sensor(i, G::kGlobalLinvel)[0]), 0.1f);
  }
  EXPECT_GE(standing, TypeParam::kIsRough ? 8 : 13);
}

// The rough terrain: the feet rest on the height field (geom 0, the only geom the feet collide
// with), each foot's found sensor on (>= 1), its sphere centre a radius (0.023 m) above the terrain, which
// is 0..0.05 m high: the feet stand at different heights (the flat floor puts them all at 0.0225).
TEST(Go1JoystickRough, FeetStandOnTheHeightField) {
  const i64 n = 8;
  Made<Go1JoystickRough> m(n, {{"noise_level", 0}, {"rand_enable", 0}});
  const Model& model = m.q->world().model();
  ASSERT_EQ(model.geom_type[0], kGeomHField);
  EXPECT_EQ(model.nhfield, 1);
  m.env->reset(kSeed);
  std::vector<float> zero(12 * n, 0.0f);
  for (int t = 0; t < 100; ++t) m.env->step(zero.data());
  int standing = 0;
  double spread = 0;
  for (i64 i = 0; i < n; ++i) {
    if (m.state(i).t != 100) continue;
    ++standing;
    const DataView<float> d = m.data(i);
    float lo = 1, hi = -1;
    for (int f = 0; f < 4; ++f) {
      // "found" counts the matching contacts: one per terrain prism the sphere touches (1..4 seen)
      EXPECT_GE(m.sensor(i, G::foot_found_sensor(f))[0], 1.0f) << i << " foot " << f;
      const float z = d.site_xpos[3 * G::foot_site(f) + 2];
      EXPECT_GT(z, 0.023f - 0.003f) << i << " foot " << f;
      EXPECT_LT(z, 0.05f + 0.023f) << i << " foot " << f;
      lo = std::min(lo, z), hi = std::max(hi, z);
    }
    spread = std::max(spread, double(hi - lo));
    const int ncon = static_cast<int>(d.ncon[0]);
    int on_floor = 0;
    for (int c = 0; c < ncon; ++c) {
      const float* con = d.contact + kContactStride * c;
      if (con[kConActive] == 0.0f) continue;
      EXPECT_EQ(static_cast<int>(con[kConGeom1]), 0);  // every active contact is the terrain's
      ++on_floor;
    }
    EXPECT_GE(on_floor, 4) << i;
  }
  EXPECT_GE(standing, 3);    // measured: 4 of 8 (the tip-overs above)
  EXPECT_GT(spread, 0.005);  // measured: 0.035 m between one robot's lowest and highest foot
}

// Randomization with every range collapsed onto the asset's values moves the robot exactly as none.
TYPED_TEST(Go1Both, IdentityRandomizationIsNone) {
  const double mu = Made<TypeParam>(1).q->world().model().geom_friction[0];  // the floor's: 0.6 flat, 1 rough
  EXPECT_EQ(mu, TypeParam::kIsRough ? 1.0 : 0.6);
  auto run = [mu](bool identity) {
    std::vector<std::pair<std::string, double>> p = {{"noise_level", 0}, {"rand_enable", identity ? 1.0 : 0.0}};
    if (identity)
      p.insert(p.end(), {{"rand_floor_friction_min", mu},
                         {"rand_floor_friction_max", mu},
                         {"rand_frictionloss_min", 1},
                         {"rand_frictionloss_max", 1},
                         {"rand_armature_min", 1},
                         {"rand_armature_max", 1},
                         {"rand_com", 0},
                         {"rand_mass_min", 1},
                         {"rand_mass_max", 1},
                         {"rand_trunk_mass", 0}});
    Made<TypeParam> m(3, p);
    m.env->reset(kSeed);
    std::vector<float> trace;
    for (int t = 0; t < 30; ++t) {
      const auto a = seeded_actions(3, t, 0.5f);
      m.env->step(a.data());
      trace.insert(trace.end(), m.env->critic_obs(), m.env->critic_obs() + 3 * 123);
    }
    return trace;
  };
  EXPECT_EQ(run(true), run(false));
}

TYPED_TEST(Go1Both, RandomActionsStayFiniteWithRandomizationAndKicks) {
  const i64 n = 16;
  Made<TypeParam> m(n, {{"kick_enable", 1}, {"rand_enable", 1}});
  m.env->reset(kSeed);
  int ends = 0;
  for (int t = 0; t < 400; ++t) {
    const auto a = seeded_actions(n, t, 1.0f);
    m.env->step(a.data());
    for (i64 i = 0; i < n; ++i) {
      ends += m.env->terminated()[i];
      for (int k = 0; k < 48; ++k) ASSERT_TRUE(std::isfinite(m.env->obs()[i * 48 + k]));
    }
  }
  EXPECT_EQ(m.env->num_nonfinite_resets(), 0);
  (void)ends;
}

TYPED_TEST(Go1Both, ResetOneRestartsOnlyThatEnv) {
  Made<TypeParam> m(3, {{"noise_level", 0}});
  m.env->reset(kSeed);
  std::vector<float> zero(36, 0.0f);
  for (int t = 0; t < 5; ++t) m.env->step(zero.data());
  const std::vector<float> other(m.env->obs() + 48, m.env->obs() + 96);
  m.env->reset_one(0);
  EXPECT_EQ(m.state(0).t, 0);
  EXPECT_EQ(m.state(1).t, 5);
  EXPECT_EQ(std::vector<float>(m.env->obs() + 48, m.env->obs() + 96), other);
  EXPECT_NEAR(m.data(0).qpos[2], TypeParam::kHomeHeight, 1e-6);
  for (int k = 33; k < 45; ++k) EXPECT_EQ(m.env->obs()[k], 0.0f);
}

// joystick::max_of / min_of (envs/joystick.h), the tasks' inline fmaxf / fminf: the same bits as
// libm's on every pair of a set with signed zeros, infinities, subnormals, NaN and ordinary values
// (both NaN: a NaN). libm is called through volatile pointers so the compiler cannot fold the calls.
TEST(Joystick, MaxOfMinOfAreLibmFmaxfFminf) {
  float (*volatile libm_max)(float, float) = fmaxf;
  float (*volatile libm_min)(float, float) = fminf;
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 1e-40f, -1e-40f, 3.4e38f, -3.4e38f,
                          INFINITY, -INFINITY, NAN, -NAN};
  Philox rng(7, RngStream::kBench, 0, 0);
  for (int k = 0; k < 64; ++k) {
    float u[4];
    uniform4(rng, -4.0f, 4.0f, u, 4);
    v.insert(v.end(), u, u + 4);
  }
  auto bits = [](float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  };
  int pairs = 0;
  for (float a : v)
    for (float b : v) {
      const float mx = joystick::max_of(a, b), mn = joystick::min_of(a, b);
      if (std::isnan(a) && std::isnan(b)) {
        EXPECT_TRUE(std::isnan(mx) && std::isnan(mn));
        continue;
      }
      ASSERT_EQ(bits(mx), bits(libm_max(a, b))) << "max_of(" << a << ", " << b << ")";
      ASSERT_EQ(bits(mn), bits(libm_min(a, b))) << "min_of(" << a << ", " << b << ")";
      ++pairs;
    }
  EXPECT_GT(pairs, 70000);
}

}  // namespace
}  // namespace rlt
