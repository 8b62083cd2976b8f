// Robot tasks: envs defined over an MJCF robot model (envs/assets/*.xml, embedded in the binary).
// They run in the one VecEnv framework, VecEnvT<Task, Exec> (sim/vec_env_impl.h), like the classic
// envs: same step/reset path, auto-reset, final_obs, truncation and non-finite resets. What a robot
// task has beyond its State is its World (the trait EnvWorld picks RobotWorld<Task, Exec>, below, for
// any env with a kAsset): the model uploaded once, a physics row and a randomization row per env,
// domain randomization, pushes, observation noise, the critic observation and the forward speed.
// Single source: the per-env code below is RLT_HD and runs under parallel_for on the CPU executor and,
// unchanged, on the CUDA executor. A new task: its header, a line in RLT_FOR_EACH_ROBOT_ENV
// (envs/all_envs.h), RLT_VEC_ENV_INSTANCE(Task, rlt::CpuExecutor) in an envs/robot_envs_cpu_*.cpp,
// and RLT_VEC_ENV_INSTANCE(Task, rlt::CudaExecutor) in the envs/robot_envs_cuda_*.cu of the same
// group.
//
// ---- The task contract ------------------------------------------------------------------------
// A task is a struct of static members (see envs/reacher.h for a small documented example, and
// envs/ant.h for a floating base):
//
//   static constexpr const char* kName;      // registry name, "ant"
//   static constexpr const char* kAsset;     // file in envs/assets/, "ant.xml" (embedded at build time)
//   static constexpr int kObsDim;            // actor observation length
//   static constexpr int kActDim;            // action length (== model nu unless the task defines spaces())
//   static constexpr int kCriticObsDim;      // privileged critic observation length; 0 = symmetric
//   static constexpr int kMaxEpisodeSteps;   // truncation (the [env] param max_episode_steps overrides)
//   static constexpr int kFrameSkip;         // physics substeps per control step
//   static constexpr double kTimestep;       // physics timestep in s; 0 = the asset's option/timestep
//   struct Params { float ...; template <class V> void visit(V&& v); };  // v(name, field, doc): [env] keys
//   struct State { ... };                    // plain data, one env: command, previous action, ...
//                                            // (value-initialized before each reset)
//   static void check_model(const Model& m); // host, once: throws std::runtime_error when the asset
//                                            // does not have what the task hard-codes (body/joint
//                                            // indices, nq, nu, ...)
//   RLT_HD static void reset(const Params&, const RobotCtx& ctx, State&, Philox& rng);
//       // on entry ctx.d is the model's qpos0 at rest (reset_data), DR already drawn; set qpos/qvel
//       // (reset noise) and State. The framework then runs kinematics before observe.
//   RLT_HD static void step(const Params&, const RobotCtx& ctx, State&, const float* action,
//                           Philox& rng, float& reward, bool& terminated);
//       // action is clipped to the action space; call ctx.simulate(ctrl) once (frame_skip physics
//       // substeps, then kinematics); compute reward and termination.
//   RLT_HD static void observe(const Params&, const RobotCtx& ctx, const State&, float* obs,
//                              float* critic_obs);   // critic_obs is null when kCriticObsDim == 0
// Optional:
//   RLT_HD static float forward_position(const Params&, const RobotCtx& ctx);
//       // locomotion tasks: the x coordinate whose velocity the reward pays (torso, root slide or
//       // centre of mass); VecEnv::ep_forward_speed() reports each episode's mean forward speed
//   static void spaces(const Params&, const Model&, Space& obs, Space& act);
//       // default: obs unbounded, act = the actuators' ctrlrange (every actuator must be ctrllimited)
//   RLT_HD static void tracking(const Params&, const RobotCtx& ctx, const State&, float* out);
//       // command-tracking tasks (the joysticks): after step, the command the step used and what
//       // the robot did, out = (c_vx, c_vy, c_yaw, v_x, v_y, w_z) in the base frame, then the base's
//       // heading (rad, world); kTrackingFloats values (sim/vec_env.h); VecEnv::tracking()
//       // holds them per env and `rltrain eval` reports the RMS tracking errors
//   RLT_HD static float obs_noise_scale(const Params&, int k);
//       // std of the observation noise on component k, in units of the [env] obs_noise (default 1)
//
// Called by VecEnvT through RobotWorldKernel, per env and control step: the push (when due), the
// action clipped to the box, Task::step, Task::observe (+ noise), the non-finite check over the
// observation, reward, qpos, qvel and critic observation; when the episode ended, the final
// observations, the mean forward speed, and the next episode's start (randomization draw,
// reset_data, Task::reset, kinematics, observe).
//
// RobotCtx gives the env's model view `m` (with its randomized fields rebound, below), its physics
// data row `d` (sim/dynamics.h DataView: qpos, qvel, xpos, xipos, geom_x*, site_x*, contacts, ...;
// x* are current in reset, after simulate and in observe), `dt`, `frame_skip`, the env's drawn
// randomization values `dr`, and simulate(ctrl) / com_quantities() (cinert, cvel on demand). Everything a task computes
// happens inside one functor call per env and control step (physics substeps + reward + observation in one pass over
// its row).
//
// ---- Domain randomization and noise ([env] params of every robot task; all off by default) ------
// (a range's two ends may come in either order; a draw is uniform between them)
//   dr_friction_min/max        scale of every geom's friction               (1, 1)
//   dr_added_mass_min/max      kg added to the base body (body 1)           (0, 0)
//   dr_motor_strength_min/max  scale of each actuator's gear (motors) or kp/kv (servos)  (1, 1)
//   dr_damping_min/max         scale of every dof's damping                  (1, 1)
//   obs_noise                  std of Gaussian noise on the actor observation (x obs_noise_scale)
//   push_interval_s, push_velocity   every push_interval_s of episode time, the base's horizontal
//                              velocity (free joint: world x, y; planar root: its horizontal slides)
//                              gets a kick uniform in [-push_velocity, push_velocity] m/s
// Drawn per env at every reset from Philox keyed (seed, kEnvReset, env, episode, sub-stream 1), so
// runs are reproducible and independent of the batch. Each env keeps its values and its own copy
// of the few model fields they change (body_mass, geom_friction, dof_damping, actuator_gear/kp/kv)
// in one row of `dr` (DrLayout); inside the functor a copy of the ModelView (a struct of pointers)
// has those fields pointed at the env's row. With every range at its default the shared model is
// used as is. Noise draws: (seed, kEnvStep, env, episode, step) with the draw counter's top bits
// set (sub-streams), so they never collide with the task's own draws.
//
// ---- Layout (all in executor memory) -----------------------------------------------------------
//   RobotWorld:  data (num_envs x layout.row) physics rows (DataLayout, sim/dynamics.h) and, on the
//                device, their constraint workspace (BatchRows)
//                dr   (num_envs x DrLayout::size) drawn values + per-env model fields
//                critic_obs, final_critic_obs (num_envs x kCriticObsDim); ep_forward_speed (num_envs)
//   VecEnvT:     states (num_envs) Task::State; counters (num_envs) EnvCounters;
//                obs, final_obs (num_envs x kObsDim); the other step outputs (EnvOutputs)
// The model's two blocks (HostModel<float>: reals, ints) are uploaded once; ModelView::bind points
// a view at the executor copy.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "envs/assets.h"
#include "sim/dynamics.h"
#include "sim/env_step.h"
#include "sim/mjcf.h"
#include "sim/model.h"
#include "sim/model_view.h"
#include "sim/philox.h"
#include "sim/physics_step.h"
#include "sim/vec_env.h"
#include "sim/vec_env_impl.h"  // VecEnvT, EnvWorld, EnvOutputs

namespace rlt {

// The generic [env] params of every robot task (domain randomization and noise, see the header).
struct RobotParams {
  float dr_friction_min = 1.0f, dr_friction_max = 1.0f;
  float dr_added_mass_min = 0.0f, dr_added_mass_max = 0.0f;
  float dr_motor_strength_min = 1.0f, dr_motor_strength_max = 1.0f;
  float dr_damping_min = 1.0f, dr_damping_max = 1.0f;
  float obs_noise = 0.0f;
  float push_interval_s = 0.0f;
  float push_velocity = 0.0f;
  // 1: the float Newton solve runs to convergence from qacc_smooth (sim/model_view.h
  // without_newton_budget: no iterations budget, no warm start, the exact line search), as in
  // double; 0: the scene's <option> (iterations, ls_iterations, warmstart), MuJoCo's semantics.
  // Only scenes with a budget differ (Playground's Go1 1 iteration, G1 3). A curriculum for small
  // CPU batches: the Go1 learns to walk in fewer steps on the converged contacts (docs/RESULTS.md,
  // twenty-fourth session), then fine-tunes on the scene's.
  float converged_solve = 0.0f;
  template <class V>
  void visit(V&& v) {
    v("dr_friction_min", dr_friction_min, "domain randomization: friction scale, lower bound", kNonNegative);
    v("dr_friction_max", dr_friction_max, "domain randomization: friction scale, upper bound", kNonNegative);
    v("dr_added_mass_min", dr_added_mass_min, "domain randomization: kg added to the base body, lower bound");
    v("dr_added_mass_max", dr_added_mass_max, "domain randomization: kg added to the base body, upper bound");
    v("dr_motor_strength_min", dr_motor_strength_min, "domain randomization: actuator strength scale, lower bound", kNonNegative);
    v("dr_motor_strength_max", dr_motor_strength_max, "domain randomization: actuator strength scale, upper bound", kNonNegative);
    v("dr_damping_min", dr_damping_min, "domain randomization: joint damping scale, lower bound", kNonNegative);
    v("dr_damping_max", dr_damping_max, "domain randomization: joint damping scale, upper bound", kNonNegative);
    v("obs_noise", obs_noise, "std of Gaussian noise added to the actor observation (0: none)", kNonNegative);
    v("push_interval_s", push_interval_s, "seconds between random base velocity kicks (0: none)", kNonNegative);
    v("push_velocity", push_velocity, "base velocity kick, uniform in [-push_velocity, push_velocity] m/s", kNonNegative);
    v("converged_solve", converged_solve,
      "1: the Newton solve runs to convergence, ignoring the scene's iterations budget and warm start; 0: the scene's",
      kUnitInterval);
  }
  bool randomizes_model() const {
    return dr_friction_min != 1.0f || dr_friction_max != 1.0f || dr_added_mass_min != 0.0f ||
           dr_added_mass_max != 0.0f || dr_motor_strength_min != 1.0f || dr_motor_strength_max != 1.0f ||
           dr_damping_min != 1.0f || dr_damping_max != 1.0f;
  }
};

// The drawn values at the start of an env's DR row.
enum DrValue : int { kDrFriction = 0, kDrAddedMass = 1, kDrMotorStrength = 2, kDrDamping = 3, kNumDrValues = 4 };

// Offsets in one env's DR row: the drawn values, then the env's copies of the model fields they change.
struct DrLayout {
  int body_mass, geom_friction, dof_damping, actuator_gear, actuator_kp, actuator_kv;
  int size;
};
template <class T>
inline DrLayout dr_layout(const ModelView<T>& m) {
  DrLayout l{};
  int at = kNumDrValues;
  l.body_mass = at, at += m.nbody;
  l.geom_friction = at, at += 3 * m.ngeom;
  l.dof_damping = at, at += m.nv;
  l.actuator_gear = at, at += m.nu;
  l.actuator_kp = at, at += m.nu;
  l.actuator_kv = at, at += m.nu;
  l.size = (at + 3) / 4 * 4;
  return l;
}

// What a task sees of one env.
struct RobotCtx {
  ModelView<float> m;  // this env's model (randomized fields point at its DR row when DR is on)
  DataView<float> d;   // this env's physics row (inputs too: qfrc_applied; mocap_pos, mocap_quat where the
                       // model has mocap bodies, set before simulate(), as MuJoCo's d->mocap_pos)
  int frame_skip;      // physics substeps per control step
  float dt;            // control step, frame_skip * m.timestep (s)
  const float* dr;     // drawn values [kNumDrValues]: friction scale, added mass, motor strength, damping scale

  // One control step of physics with ctrl (nu values) held, then kinematics, so that x* (xpos,
  // xipos, geom_xpos, site_xpos, ...) describe the new qpos. (MuJoCo's mj_step leaves them one
  // substep behind; Gymnasium reads them there. Ours are current: a documented deviation.)
  RLT_HD void simulate(const float* ctrl) const {
    physics_step(m, d, ctrl, frame_skip, static_cast<int*>(nullptr));
    kinematics(m, d);
  }
  // com-based inertia and velocity (cinert, cdof, cvel, cdof_dot) for the current qpos, qvel.
  RLT_HD void com_quantities() const {
    com_position(m, d);
    com_velocity(m, d);
  }
  // Sensor `id`'s output after simulate() (m.sensor_dim[id] floats; id from Model::sensor_id on the
  // host, sim/sensors.h): the state at the start of the control step's last substep, as MuJoCo's.
  RLT_HD const float* sensor(int id) const { return d.sensordata + m.sensor_adr[id]; }
};

namespace robot_detail {
template <class Task, class = void>
struct HasSpaces : std::false_type {};
template <class Task>
struct HasSpaces<
    Task, std::void_t<decltype(Task::spaces(std::declval<const typename Task::Params&>(), std::declval<const Model&>(),
                                            std::declval<Space&>(), std::declval<Space&>()))>> : std::true_type {};
template <class Task, class = void>
struct HasForwardPosition : std::false_type {};
template <class Task>
struct HasForwardPosition<Task, std::void_t<decltype(Task::forward_position(
                                    std::declval<const typename Task::Params&>(), std::declval<const RobotCtx&>()))>>
    : std::true_type {};

template <class Task, class = void>
struct HasTracking : std::false_type {};
template <class Task>
struct HasTracking<Task, std::void_t<decltype(Task::tracking(std::declval<const typename Task::Params&>(),
                                                             std::declval<const RobotCtx&>(),
                                                             std::declval<const typename Task::State&>(),
                                                             std::declval<float*>()))>> : std::true_type {};

template <class Task, class = void>
struct HasNoiseScale : std::false_type {};
template <class Task>
struct HasNoiseScale<Task,
                     std::void_t<decltype(Task::obs_noise_scale(std::declval<const typename Task::Params&>(), 0))>>
    : std::true_type {};

template <class Task>
RLT_HD RLT_INLINE float noise_scale(const typename Task::Params& p, int k) {
  if constexpr (HasNoiseScale<Task>::value) return Task::obs_noise_scale(p, k);
  else return 1.0f;
}

// The draw counter's top byte tags a sub-stream of one Philox key and counter.
RLT_HD RLT_INLINE Philox substream(Philox rng, u32 tag) {
  rng.ctr.v[3] = tag << 24;
  return rng;
}
constexpr u32 kSubNoise = 1, kSubPush = 2;
}  // namespace robot_detail

// x[k] += scale(k) * N(0, 1) for k < n, four normals per Philox draw (Box-Muller).
template <class Scale>
RLT_HD RLT_INLINE void add_scaled_normal_noise(Philox& rng, float* x, int n, const Scale& scale) {
  for (int k = 0; k < n; k += 4) {
    const U32x4 r = rng.next4();
    float z[4];
    box_muller(r.v[0], r.v[1], z[0], z[1]);
    box_muller(r.v[2], r.v[3], z[2], z[3]);
    for (int q = 0; q < 4 && k + q < n; ++q) x[k + q] += scale(k + q) * z[q];
  }
}

// Draws env i's randomization (values and model fields) into its DR row.
RLT_HD inline void draw_randomization(const RobotParams& p, const ModelView<float>& base, const DrLayout& l, float* row,
                                      Philox rng) {
  float u[4];
  uniform4(rng, 0.0f, 1.0f, u, 4);
  const float friction = p.dr_friction_min + (p.dr_friction_max - p.dr_friction_min) * u[0];
  const float added_mass = p.dr_added_mass_min + (p.dr_added_mass_max - p.dr_added_mass_min) * u[1];
  const float strength = p.dr_motor_strength_min + (p.dr_motor_strength_max - p.dr_motor_strength_min) * u[2];
  const float damping = p.dr_damping_min + (p.dr_damping_max - p.dr_damping_min) * u[3];
  row[kDrFriction] = friction, row[kDrAddedMass] = added_mass, row[kDrMotorStrength] = strength,
  row[kDrDamping] = damping;
  for (int b = 0; b < base.nbody; ++b) row[l.body_mass + b] = base.body_mass[b] + (b == 1 ? added_mass : 0.0f);
  for (int k = 0; k < 3 * base.ngeom; ++k) row[l.geom_friction + k] = base.geom_friction[k] * friction;
  for (int k = 0; k < base.nv; ++k) row[l.dof_damping + k] = base.dof_damping[k] * damping;
  for (int a = 0; a < base.nu; ++a) {
    const bool motor = base.actuator_kind[a] == kActMotor;
    row[l.actuator_gear + a] = base.actuator_gear[a] * (motor ? strength : 1.0f);
    row[l.actuator_kp + a] = base.actuator_kp[a] * (motor ? 1.0f : strength);
    row[l.actuator_kv + a] = base.actuator_kv[a] * (motor ? 1.0f : strength);
  }
}

// The kernel part of RobotWorld (sim/vec_env_impl.h, "Worlds"): env i's view of the model and its
// rows, and the task's functions called with it.
template <class Task>
struct RobotWorldKernel {
  using Params = typename Task::Params;
  using State = typename Task::State;
  using Ctx = RobotCtx;
  RobotParams robot;
  ModelView<float> model;  // executor copy of the model
  DataLayout layout;
  DrLayout drl;
  int frame_skip;
  float dt;
  int dr_on;        // rebind the randomized model fields
  int push_every;   // control steps between pushes (0: none)
  int push_dof[2];  // dofs a push kicks (-1: none)
  float* data;       // (num_envs x layout.row) physics rows
  Workspace<float> workspace;  // their constraint workspace (BatchRows, sim/dynamics.h)
  float* dr;
  float* critic_obs;  // null when kCriticObsDim == 0
  float* final_critic_obs;
  const float* act_low;
  const float* act_high;
  float* ep_forward_speed;  // (num_envs) null unless the task has a forward_position
  float* tracking;          // (num_envs x kTrackingFloats) null unless the task has tracking()

  RLT_HD RobotCtx ctx(i64 i) const {
    RobotCtx c;
    c.m = model;
    const float* row = dr + i * drl.size;
    if (dr_on) {
      c.m.body_mass = row + drl.body_mass;
      c.m.geom_friction = row + drl.geom_friction;
      c.m.dof_damping = row + drl.dof_damping;
      c.m.actuator_gear = row + drl.actuator_gear;
      c.m.actuator_kp = row + drl.actuator_kp;
      c.m.actuator_kv = row + drl.actuator_kv;
    }
    c.d = BatchRows<float>{layout, data, workspace}.env(i);
    c.frame_skip = frame_skip;
    c.dt = dt;
    c.dr = row;
    return c;
  }

  // A push when one is due, the action clipped to the box, then the task's step.
  RLT_HD void step(const Params& params, const RobotCtx& c, i64 i, const EnvCounters& cnt, State& s,
                   const float* action, Philox& rng, float& reward, bool& terminated) const {
    if (push_every > 0 && cnt.step > 0 && cnt.step % push_every == 0) {
      Philox push = robot_detail::substream(rng, robot_detail::kSubPush);
      float u[4];
      uniform4(push, -robot.push_velocity, robot.push_velocity, u, 2);
      for (int k = 0; k < 2; ++k)
        if (push_dof[k] >= 0) c.d.qvel[push_dof[k]] += u[k];
    }
    float a[Task::kActDim];
    for (int k = 0; k < Task::kActDim; ++k) a[k] = clamp(action[k], act_low[k], act_high[k]);
    Task::step(params, c, s, a, rng, reward, terminated);
    if constexpr (robot_detail::HasTracking<Task>::value) Task::tracking(params, c, s, tracking + kTrackingFloats * i);
    (void)i;
  }

  // Actor (with noise from `noise`) and critic observations of env i.
  RLT_HD void observe(const Params& params, const RobotCtx& c, i64 i, const State& s, float* o, Philox noise) const {
    float* co = Task::kCriticObsDim > 0 ? critic_obs + i * Task::kCriticObsDim : static_cast<float*>(nullptr);
    Task::observe(params, c, s, o, co);
    if (robot.obs_noise > 0.0f) {
      noise = robot_detail::substream(noise, robot_detail::kSubNoise);
      const Params& p = params;
      const float sd = robot.obs_noise;
      add_scaled_normal_noise(noise, o, Task::kObsDim,
                              [&](int k) { return sd * robot_detail::noise_scale<Task>(p, k); });
    }
  }

  RLT_HD bool finite(const RobotCtx& c, i64 i) const {
    return all_finite(c.d.qpos, c.m.nq) && all_finite(c.d.qvel, c.m.nv) &&
           (Task::kCriticObsDim == 0 || all_finite(critic_obs + i * Task::kCriticObsDim, Task::kCriticObsDim));
  }

  // The ended episode's mean forward speed and final critic observation.
  RLT_HD void end_episode(const Params& params, const RobotCtx& c, i64 i, const EnvCounters& cnt, bool finite,
                          std::int32_t length) const {
    if constexpr (robot_detail::HasForwardPosition<Task>::value)
      ep_forward_speed[i] =
          finite ? (Task::forward_position(params, c) - cnt.x0) / (static_cast<float>(length) * dt) : 0.0f;
    if (Task::kCriticObsDim > 0)
      keep_final_obs(final_critic_obs + i * Task::kCriticObsDim, critic_obs + i * Task::kCriticObsDim,
                     Task::kCriticObsDim, finite);
  }

  // The episode's randomization draw, the physics at rest (qpos0), the task's reset, kinematics.
  RLT_HD void reset(const Params& params, const RobotCtx& c, i64 i, State& s, Philox& rng, Philox randomize) const {
    draw_randomization(robot, model, drl, dr + i * drl.size, randomize);
    reset_data(c.m, c.d);
    Task::reset(params, c, s, rng);
    kinematics(c.m, c.d);
  }

  RLT_HD float forward_position(const Params& params, const RobotCtx& c) const {
    if constexpr (robot_detail::HasForwardPosition<Task>::value) return Task::forward_position(params, c);
    else return 0.0f;
  }
};

// The directory of the robot assets that are read from disk (a scene in a folder of its own, with its
// includes and meshes: "go1/scene.xml"): $RLT_ASSET_DIR, else the source tree's envs/assets.
inline std::string robot_asset_dir() {
  const char* env = std::getenv("RLT_ASSET_DIR");
  if (env && *env) return env;
#ifdef RLT_ASSET_DIR
  return RLT_ASSET_DIR;
#else
  return "envs/assets";
#endif
}

// The compiled model of a task's asset (host), with the task's timestep: a single file of
// envs/assets/ is embedded in the binary; "dir/file.xml" is read from robot_asset_dir() (includes
// and meshes beside it); an absolute path is read as is (tests).
inline Model load_robot_model(const char* asset, double timestep) {
  const std::string name = asset;
  Model m;
  if (!name.empty() && name[0] == '/') {
    m = load_mjcf(name);
  } else if (name.find('/') != std::string::npos) {
    m = load_mjcf(robot_asset_dir() + "/" + name);
  } else {
    const char* text = embedded_asset(asset);
    if (!text) throw std::runtime_error(std::string("robot asset '") + asset + "' is not embedded in this build");
    m = parse_mjcf(text, std::string("envs/assets/") + asset);
  }
  if (timestep > 0) m.timestep = timestep;
  return m;
}

// The world of a robot task (sim/vec_env_impl.h, "Worlds"): the model uploaded once, one physics
// row and one randomization row per env, the critic observations and forward speeds, and the
// generic [env] params (RobotParams).
template <class Task, class Exec>
class RobotWorld {
  static constexpr bool kOnDevice = Exec::kDevice == Device::kCuda;

 public:
  using Params = RobotParams;
  using Kernel = RobotWorldKernel<Task>;
  static_assert(Task::kCriticObsDim >= 0, "task dimensions");

  RobotWorld(Exec& exec, i64 num_envs) : m_model(load_robot_model(Task::kAsset, Task::kTimestep)), m_host(m_model) {
    Task::check_model(m_model);
    // The model's two blocks in executor memory, and a view of them.
    m_model_reals.resize(static_cast<i64>(m_host.reals().size()));
    m_model_ints.resize(static_cast<i64>(m_host.ints().size()));
    exec.copy_from_host(m_model_reals.data(), m_host.reals().data(), static_cast<i64>(m_host.reals().size()));
    exec.copy_from_host(m_model_ints.data(), m_host.ints().data(), static_cast<i64>(m_host.ints().size()));
    m_view = m_host.view();
    m_view.bind(m_model_reals.data(), m_model_ints.data());
    m_layout = data_layout(m_host.view());
    m_drl = dr_layout(m_host.view());
    // The dofs a push kicks: a free root's world x, y velocity, or a planar root's horizontal slides.
    m_push_dof[0] = m_push_dof[1] = -1;
    if (m_model.njnt > 0 && m_model.jnt_type[0] == kJointFree) {
      m_push_dof[0] = 0, m_push_dof[1] = 1;
    } else {
      int n = 0;
      for (int j = 0; j < m_model.njnt && n < 2; ++j)
        if (m_model.jnt_bodyid[static_cast<size_t>(j)] == 1 &&
            m_model.jnt_type[static_cast<size_t>(j)] == kJointSlide &&
            std::fabs(m_model.jnt_axis[3 * static_cast<size_t>(j) + 2]) < 0.5)
          m_push_dof[n++] = m_model.jnt_dofadr[static_cast<size_t>(j)];
    }
    m_data.resize(num_envs * m_layout.row);
    m_slots = exec.workspace_slots(num_envs);
    m_workspace.resize(batch_workspace_scalars(m_layout, m_slots));
    m_dr.resize(num_envs * m_drl.size);
    m_critic_obs.resize(num_envs * Task::kCriticObsDim);
    m_final_critic_obs.resize(num_envs * Task::kCriticObsDim);
    if (robot_detail::HasForwardPosition<Task>::value) m_ep_forward_speed.resize(num_envs);
    if (robot_detail::HasTracking<Task>::value) m_tracking.resize(num_envs * kTrackingFloats);
  }

  // What the constructor allocates: the model's blocks once; per env the rows above.
  EnvMemory memory() const {
    EnvMemory m;
    m.fixed = static_cast<i64>(sizeof(float) * m_host.reals().size() + sizeof(int) * m_host.ints().size());
    m.device_per_slot = static_cast<i64>(sizeof(float)) * m_layout.workspace;  // (BatchRows)
    m.per_env = static_cast<i64>(sizeof(float)) *
                (m_layout.row + m_drl.size + 2 * Task::kCriticObsDim +
                 (robot_detail::HasForwardPosition<Task>::value ? 1 : 0) +
                 (robot_detail::HasTracking<Task>::value ? kTrackingFloats : 0));
    return m;
  }

  Params& params() { return m_robot; }
  const Params& params() const { return m_robot; }

  // The added-mass range depends on the model (the scales' ranges are in Params::visit). Each value
  // on its own: a range is drawn uniformly between its two ends, whichever is larger.
  void check_params() const {
    const float base_mass = m_model.nbody > 1 ? static_cast<float>(m_model.body_mass[1]) : 0.0f;
    for (float v : {m_robot.dr_added_mass_min, m_robot.dr_added_mass_max})
      if (!(v > -base_mass) || !std::isfinite(v))
        throw std::invalid_argument("kg > -(base body mass " + std::to_string(base_mass) + ")");
  }

  // The task's spaces(), or by default: observation unbounded, action = the actuators' ctrlrange.
  void spaces(const typename Task::Params& p, EnvSpec& spec) const {
    spec.critic_obs_dim = Task::kCriticObsDim;
    if constexpr (robot_detail::HasSpaces<Task>::value) {
      Task::spaces(p, m_model, spec.observation, spec.action);
    } else {
      if (m_model.nu != Task::kActDim)
        throw std::runtime_error(std::string(Task::kName) + ": the model has " + std::to_string(m_model.nu) +
                                 " actuators, the task " + std::to_string(Task::kActDim) + " actions");
      const float inf = INFINITY;
      spec.observation = Space{Task::kObsDim, false, 0, std::vector<float>(Task::kObsDim, -inf),
                               std::vector<float>(Task::kObsDim, inf)};
      Space act{Task::kActDim, false, 0, {}, {}};
      for (int a = 0; a < m_model.nu; ++a) {
        if (!m_model.actuator_ctrllimited[static_cast<size_t>(a)])
          throw std::runtime_error(std::string(Task::kName) + ": actuator " + std::to_string(a) + " has no ctrlrange");
        act.low.push_back(static_cast<float>(m_model.actuator_ctrlrange[2 * static_cast<size_t>(a)]));
        act.high.push_back(static_cast<float>(m_model.actuator_ctrlrange[2 * static_cast<size_t>(a) + 1]));
      }
      spec.action = act;
    }
    if (spec.observation.dim != Task::kObsDim || spec.action.dim != Task::kActDim ||
        static_cast<int>(spec.action.low.size()) != Task::kActDim)
      throw std::runtime_error(std::string(Task::kName) + ": spaces do not match kObsDim/kActDim");
  }

  void clear(Exec& exec) {
    exec.fill(m_data.data(), 0.0f, m_data.size());
    if (m_ep_forward_speed.size() > 0) exec.fill(m_ep_forward_speed.data(), 0.0f, m_ep_forward_speed.size());
    if (m_tracking.size() > 0) exec.fill(m_tracking.data(), 0.0f, m_tracking.size());
  }

  Kernel kernel(const EnvOutputs<Exec>& out) {
    Kernel k{};
    k.robot = m_robot;
    k.model = m_robot.converged_solve != 0.0f ? without_newton_budget(m_view) : m_view;
    k.layout = m_layout;
    k.drl = m_drl;
    k.frame_skip = Task::kFrameSkip;
    k.dt = control_dt();
    k.dr_on = m_robot.randomizes_model() ? 1 : 0;
    k.push_every = 0;
    if (m_robot.push_interval_s > 0.0f && m_robot.push_velocity > 0.0f)
      k.push_every = std::max(1, static_cast<int>(std::lround(m_robot.push_interval_s / k.dt)));
    k.push_dof[0] = m_push_dof[0], k.push_dof[1] = m_push_dof[1];
    k.data = m_data.data();
    k.workspace = {m_workspace.data(), m_slots};
    k.dr = m_dr.data();
    k.critic_obs = Task::kCriticObsDim > 0 ? m_critic_obs.data() : nullptr;
    k.final_critic_obs = Task::kCriticObsDim > 0 ? m_final_critic_obs.data() : nullptr;
    k.act_low = out.act_low.data();
    k.act_high = out.act_high.data();
    k.ep_forward_speed = robot_detail::HasForwardPosition<Task>::value ? m_ep_forward_speed.data() : nullptr;
    k.tracking = robot_detail::HasTracking<Task>::value ? m_tracking.data() : nullptr;
    return k;
  }

  const float* ep_forward_speed() const {
    return robot_detail::HasForwardPosition<Task>::value ? m_ep_forward_speed.data() : nullptr;
  }
  const float* tracking() const { return robot_detail::HasTracking<Task>::value ? m_tracking.data() : nullptr; }
  const float* critic_obs() const { return Task::kCriticObsDim > 0 ? m_critic_obs.data() : nullptr; }
  const float* final_critic_obs() const { return Task::kCriticObsDim > 0 ? m_final_critic_obs.data() : nullptr; }

  // Every geom of the model (the floor too).
  std::vector<DrawGeom> draw_geoms(const typename Task::Params&) const { return model_draw_geoms(m_model); }
  // The envs' geom_xpos / geom_xmat rows (floats_per_env = 12 ngeom).
  void gather_poses(const Exec& exec, const typename Task::Params&, const typename Task::State*, i64 first, i64 count,
                    int, float* out) const {
    parallel_for(exec, count, GatherGeomPoses{m_data.data(), m_layout, m_model.ngeom, first, out});
  }

  void save(const Exec& exec, std::vector<StateBlob>& out) const {
    out.push_back(buffer_blob<float>(exec, "critic_obs", m_critic_obs));
    out.push_back(buffer_blob<float>(exec, "physics", m_data));
    out.push_back(buffer_blob<float>(exec, "randomization", m_dr));
  }
  void load(const Exec& exec, const std::vector<StateBlob>& blobs) {
    buffer_unblob<float>(exec, find_state_blob(blobs, "critic_obs"), m_critic_obs);
    load_physics(exec, find_state_blob(blobs, "physics"));
    buffer_unblob<float>(exec, find_state_blob(blobs, "randomization"), m_dr);
  }
  // The physics rows; those of a checkpoint written before the solver's warm start (the row's last
  // field, qacc_warmstart, where m.newton_warmstart) load in front of each row, the warm start zeroed
  // as after reset_data.
  void load_physics(const Exec& exec, const StateBlob& b) {
    const i64 n = m_layout.row > 0 ? static_cast<i64>(m_data.size()) / m_layout.row : 0;
    if (m_host.view().newton_warmstart) {
      ModelView<float> old = m_host.view();
      old.newton_warmstart = 0;
      const size_t old_row = static_cast<size_t>(data_layout(old).row), row = static_cast<size_t>(m_layout.row);
      if (old_row != row && b.bytes.size() == sizeof(float) * old_row * static_cast<size_t>(n)) {
        std::vector<float> rows(row * static_cast<size_t>(n), 0.0f);
        for (i64 e = 0; e < n; ++e) {
          float* dst = rows.data() + static_cast<size_t>(e) * row;
          std::memcpy(dst, b.bytes.data() + sizeof(float) * old_row * static_cast<size_t>(e), sizeof(float) * old_row);
          std::fill(dst + m_layout.qacc_warmstart, dst + m_layout.qacc_warmstart + m_model.nv, 0.0f);
        }
        exec.copy_from_host(m_data.data(), rows.data(), rows.size());
        return;
      }
    }
    buffer_unblob<float>(exec, b, m_data);
  }

  // For tests and tools: the compiled model, its views, row layouts and rows (executor memory).
  const Model& model() const { return m_model; }
  const ModelView<float>& model_view() const { return m_view; }  // executor memory
  // For tools and tests: the float Newton solve run to convergence from qacc_smooth, as in double (the
  // scene's iterations budget and the warm start off; the rows keep the warm start's field).
  void solve_to_convergence() { m_view = without_newton_budget(m_view); }
  const ModelView<float>& host_model_view() const { return m_host.view(); }
  const DataLayout& layout() const { return m_layout; }
  const DrLayout& randomization_layout() const { return m_drl; }
  int frame_skip() const { return Task::kFrameSkip; }
  float control_dt() const { return static_cast<float>(Task::kFrameSkip * m_model.timestep); }
  float* physics_rows() { return m_data.data(); }
  float* randomization_rows() { return m_dr.data(); }

 private:
  Model m_model;            // host, double (spaces, draw_geoms, checks)
  HostModel<float> m_host;  // host float blocks
  ModelView<float> m_view;  // bound to the executor copy below
  DataLayout m_layout;
  DrLayout m_drl;
  int m_push_dof[2];
  RobotParams m_robot;
  typename Exec::template Buffer<float> m_model_reals;                     // HostModel<float>::reals() on the executor
  typename Exec::template Buffer<int> m_model_ints;                        // HostModel<float>::ints()
  typename Exec::template Buffer<float> m_data;                            // (num_envs x layout.row) physics rows
  i64 m_slots = 0;                                    // workspace blocks: Exec::workspace_slots (none on the host)
  typename Exec::template Buffer<float> m_workspace;  // (m_slots x layout.workspace) on the device, empty on the host
  typename Exec::template Buffer<float> m_dr;                              // (num_envs x drl.size) randomization rows
  typename Exec::template Buffer<float> m_critic_obs, m_final_critic_obs;  // (num_envs x kCriticObsDim)
  typename Exec::template Buffer<float> m_ep_forward_speed;                // (num_envs) with a forward_position
  typename Exec::template Buffer<float> m_tracking;                        // (num_envs x kTrackingFloats) with tracking()
};

// A task (an env with a kAsset) lives in a RobotWorld.
template <class Task, class Exec>
struct EnvWorld<Task, Exec, std::void_t<decltype(Task::kAsset)>> {
  using type = RobotWorld<Task, Exec>;
};

// ---- helpers for tasks -------------------------------------------------------------------------

// x[k] += U(-h, h) for k < n.
RLT_HD inline void add_uniform_noise(Philox& rng, float h, float* x, int n) {
  for (int k = 0; k < n; k += 4) {
    float u[4];
    uniform4(rng, -h, h, u, 4);
    for (int q = 0; q < 4 && k + q < n; ++q) x[k + q] += u[q];
  }
}
// x[k] += scale * N(0, 1) for k < n.
RLT_HD inline void add_normal_noise(Philox& rng, float scale, float* x, int n) {
  add_scaled_normal_noise(rng, x, n, [scale](int) { return scale; });
}
RLT_HD inline float sum_squares(const float* x, int n) {
  float s = 0.0f;
  for (int k = 0; k < n; ++k) s += x[k] * x[k];
  return s;
}
// Renormalizes the quaternion at q (4 values) after additive reset noise (MuJoCo normalizes it in
// its next step; our kinematics wants it unit at once).
RLT_HD inline void normalize_quat(float* q) {
  const float n = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; ++k) q[k] /= n;
}

}  // namespace rlt
