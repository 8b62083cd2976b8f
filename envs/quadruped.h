// Quadruped velocity tracking, in the style of legged-robot training on GPUs (legged_gym / Isaac
// Lab's locomotion velocity task), on our own 12-joint quadruped (envs/assets/quadruped.xml: a 12 kg
// robot, box trunk on a free joint, legs FL, FR, RL, RR of hip abduction, hip flexion and knee, PD
// position actuators kp 50 N m/rad with joint damping 1 N m s/rad, torques limited to 30 N m; it
// stands at ~0.30 m in its default pose). Physics: timestep 0.005 s, frame_skip 4, dt = 0.02 s
// (50 Hz control). Episode: 500 steps (10 s).
//
// Commands (vx, vy in the base's heading frame, m/s; yaw rate, rad/s) are drawn at reset and
// every resample_time_s: vx ~ U(-cmd_vx_max, cmd_vx_max), vy ~ U(-cmd_vy_max, cmd_vy_max),
// yaw ~ U(-cmd_yaw_max, cmd_yaw_max); a planar command under cmd_zero_below m/s is set to 0 (stand).
//
// qpos (19) = trunk position (3), quaternion w x y z (4), 12 joint angles (per leg FL, FR, RL, RR:
// abduction, flexion, knee); qvel (18) = trunk linear velocity (world, 3), angular velocity (body, 3),
// 12 joint velocities. Default pose q0 = (0, 0.8, -1.5) per leg.
//
// Actor observation (Box(45), float32, unbounded); noise (obs_noise x scale) on the actor's only
// | idx   | meaning                                       | scale | noise scale   |
// |-------|-----------------------------------------------|-------|---------------|
// | 0-2   | base angular velocity, base frame (rad/s)      | 0.25  | 0.2 x 0.25    |
// | 3-5   | gravity direction in the base frame (unit)     | 1     | 0.05          |
// | 6-8   | command vx, vy (m/s), yaw rate (rad/s)         | 2, 2, 0.25 | 0        |
// | 9-20  | joint angles - q0 (rad)                        | 1     | 0.01          |
// | 21-32 | joint velocities (rad/s)                       | 0.05  | 1.5 x 0.05    |
// | 33-44 | previous action                                | 1     | 0             |
// Critic observation (privileged, kCriticObsDim = 61, noise-free): 0-44 as the actor's, then
// | 45-47 | base linear velocity, base frame (m/s) x 2 | 48 base height above the feet (m) |
// | 49-52 | foot contacts (0/1) | 53-56 feet air time (s) | 57 friction scale | 58 added base mass (kg) |
// | 59 motor strength scale | 60 joint damping scale |  (57-60: the env's domain randomization draw)
// Action (Box(12), [-2, 2]): joint position targets q0 + action_scale * a (rad), in actuator order.
//
// Reward per step = dt x sum of the terms below (each term's weight is an [env] param), clipped at 0
// from below when only_positive_rewards (legged_gym's default). v, w: base linear and angular
// velocity in the base frame; c: command; tau: actuator torques; g: gravity direction in the base frame.
// | term            | formula                                              | weight (default) |
// |-----------------|------------------------------------------------------|------------------|
// | track_lin_vel   | exp(-|c_xy - v_xy|^2 / tracking_sigma)                | 1.0              |
// | track_ang_vel   | exp(-(c_yaw - w_z)^2 / tracking_sigma)                | 0.5              |
// | lin_vel_z       | v_z^2                                                 | -2.0             |
// | ang_vel_xy      | |w_xy|^2                                              | -0.05            |
// | orientation     | |g_xy|^2                                              | -1.0             |
// | torques         | sum tau^2 (actuator forces of the last substep)       | -2e-4            |
// | dof_acc         | sum ((qd - qd_prev) / dt)^2                           | -2.5e-7          |
// | action_rate     | sum (a - a_prev)^2                                    | -0.01            |
// | feet_air_time   | sum_f (air_f - 0.5) [first contact of f], if |c_xy| > 0.1 | 1.0          |
// | base_height     | (h - base_height_target)^2, h = trunk z - mean foot z + foot radius | -10.0 |
// Terminated: the trunk touches the ground or a terrain step (an active contact of the trunk geom in
// any physics substep of the step). Foot contact (air time, critic obs): likewise, in any substep.
// Reset: spawn on flat ground near the origin, or with probability terrain_fraction on the field of
// steps (envs/assets/quadruped.xml); random heading; joints q0 + U(-0.1, 0.1); base velocities
// U(-reset_velocity, reset_velocity).
#pragma once

#include "envs/robot_env.h"

namespace rlt {

struct Quadruped {
  static constexpr const char* kName = "quadruped";
  static constexpr const char* kAsset = "quadruped.xml";
  static constexpr int kObsDim = 45;
  static constexpr int kActDim = 12;
  static constexpr int kCriticObsDim = 61;
  static constexpr int kMaxEpisodeSteps = 500;
  static constexpr int kFrameSkip = 4;
  static constexpr double kTimestep = 0.0;                 // the asset's 0.005 s
  static constexpr int kTrunk = 1;                         // body id
  static constexpr int kNumTerrainGeoms = 17;              // geoms 1..17: the steps
  static constexpr int kTrunkGeom = kNumTerrainGeoms + 1;  // 18
  static constexpr float kFootRadius = 0.02f;
  static constexpr float kStandHeight = 0.30f;             // trunk z standing on flat ground
  static constexpr float kFieldX = 17.0f, kFieldY = 0.0f;  // centre of the field of steps (m)
  static constexpr float kFieldHalf = 2.0f;                // spawn half-width on the field (m)
  static constexpr float kMaxStep = 0.06f;                 // highest step (m)

  // Functions rather than constexpr arrays: indexed at run time inside device code.
  RLT_HD static int foot_geom(int f) { return kTrunkGeom + 4 + 4 * f; }  // FL, FR, RL, RR: 22, 26, 30, 34
  RLT_HD static float default_pose(int j) {  // joint j (leg-major): abduction 0, flexion 0.8, knee -1.5 rad
    const int k = j % 3;
    return k == 0 ? 0.0f : (k == 1 ? 0.8f : -1.5f);
  }

  enum Term : int {
    kTrackLinVel = 0,
    kTrackAngVel,
    kLinVelZ,
    kAngVelXy,
    kOrientation,
    kTorques,
    kDofAcc,
    kActionRate,
    kFeetAirTime,
    kBaseHeight,
    kNumTerms
  };

  struct Params {
    float cmd_vx_max = 1.0f;
    float cmd_vy_max = 0.5f;
    float cmd_yaw_max = 1.0f;
    float cmd_zero_below = 0.1f;
    float resample_time_s = 4.0f;
    float action_scale = 0.25f;
    float tracking_sigma = 0.25f;
    float base_height_target = 0.30f;
    float only_positive_rewards = 1.0f;
    float terrain_fraction = 0.0f;
    float reset_velocity = 0.2f;
    float w[kNumTerms] = {1.0f, 0.5f, -2.0f, -0.05f, -1.0f, -2e-4f, -2.5e-7f, -0.01f, 1.0f, -10.0f};
    template <class V>
    void visit(V&& v) {
      v("cmd_vx_max", cmd_vx_max, "forward velocity command range +- (m/s)", kNonNegative);
      v("cmd_vy_max", cmd_vy_max, "lateral velocity command range +- (m/s)", kNonNegative);
      v("cmd_yaw_max", cmd_yaw_max, "yaw rate command range +- (rad/s)", kNonNegative);
      v("cmd_zero_below", cmd_zero_below, "planar commands slower than this are set to 0 (m/s)", kNonNegative);
      v("resample_time_s", resample_time_s, "seconds between command resamples within an episode", kPositive);
      v("action_scale", action_scale, "joint target = default pose + action_scale * action (rad)", kNonNegative);
      v("tracking_sigma", tracking_sigma, "sigma of the tracking rewards exp(-err^2 / sigma)", kPositive);
      v("base_height_target", base_height_target, "base height the base_height penalty aims at (m)");
      v("only_positive_rewards", only_positive_rewards, "1: clip the step reward at 0 from below");
      v("terrain_fraction", terrain_fraction, "probability that an episode starts on the field of steps", kUnitInterval);
      v("reset_velocity", reset_velocity, "base velocities at reset ~ U(-r, r) (m/s, rad/s)", kNonNegative);
      v("w_track_lin_vel", w[kTrackLinVel], "weight: exp(-|c_xy - v_xy|^2 / sigma)");
      v("w_track_ang_vel", w[kTrackAngVel], "weight: exp(-(c_yaw - w_z)^2 / sigma)");
      v("w_lin_vel_z", w[kLinVelZ], "weight: v_z^2");
      v("w_ang_vel_xy", w[kAngVelXy], "weight: |w_xy|^2");
      v("w_orientation", w[kOrientation], "weight: |g_xy|^2 (gravity in the base frame)");
      v("w_torques", w[kTorques], "weight: sum tau^2");
      v("w_dof_acc", w[kDofAcc], "weight: sum joint acceleration^2");
      v("w_action_rate", w[kActionRate], "weight: sum (a - a_prev)^2");
      v("w_feet_air_time", w[kFeetAirTime], "weight: sum (air time - 0.5) at first contact");
      v("w_base_height", w[kBaseHeight], "weight: (base height - target)^2");
    }
  };

  struct State {
    float command[3];        // vx, vy (m/s, base heading frame), yaw rate (rad/s)
    float last_action[12];   // previous (clipped) action
    float last_dof_vel[12];  // joint velocities after the previous step
    float air_time[4];       // s since each foot left the ground
    float contact[4];        // foot contact (0/1) in the latest step (the previous one, inside step)
    float terms[kNumTerms];  // the last step's reward terms, unweighted (tests, logging)
    std::int32_t t;          // control steps in this episode
    std::int32_t pad;
  };

  static void spaces(const Params&, const Model&, Space& obs, Space& act) {
    const float inf = INFINITY;
    obs = Space{kObsDim, false, 0, std::vector<float>(kObsDim, -inf), std::vector<float>(kObsDim, inf)};
    act = Space{kActDim, false, 0, std::vector<float>(kActDim, -2.0f), std::vector<float>(kActDim, 2.0f)};
  }

  static void check_model(const Model& m) {
    bool ok = m.nq == 19 && m.nv == 18 && m.nu == 12 && m.njnt == 13 && m.jnt_type[0] == kJointFree && m.ngeom == 35 &&
              m.body_name[kTrunk] == "trunk" && m.geom_name[kTrunkGeom] == "trunk";
    const char* legs[4] = {"FL", "FR", "RL", "RR"};
    for (int f = 0; f < 4 && ok; ++f)
      ok = m.geom_name[static_cast<size_t>(foot_geom(f))] == std::string(legs[f]) + "_foot";
    for (int g = 1; g <= kNumTerrainGeoms && ok; ++g) ok = m.geom_name[static_cast<size_t>(g)].rfind("step", 0) == 0;
    if (!ok)
      throw std::runtime_error(
          "quadruped: envs/assets/quadruped.xml does not have the layout envs/quadruped.h expects");
  }

  RLT_HD static float obs_noise_scale(const Params&, int k) {
    if (k < 3) return 0.2f * 0.25f;
    if (k < 6) return 0.05f;
    if (k < 9) return 0.0f;
    if (k < 21) return 0.01f;
    if (k < 33) return 1.5f * 0.05f;
    return 0.0f;
  }

  RLT_HD static void sample_command(const Params& p, State& s, Philox& rng) {
    float u[4];
    uniform4(rng, -1.0f, 1.0f, u, 3);
    s.command[0] = p.cmd_vx_max * u[0];
    s.command[1] = p.cmd_vy_max * u[1];
    s.command[2] = p.cmd_yaw_max * u[2];
    if (s.command[0] * s.command[0] + s.command[1] * s.command[1] < p.cmd_zero_below * p.cmd_zero_below)
      s.command[0] = s.command[1] = 0.0f;
  }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State& s, Philox& rng) {
    float u[4];
    uniform4(rng, 0.0f, 1.0f, u, 4);
    const bool field = u[0] < p.terrain_fraction;
    const float cx = field ? kFieldX : 0.0f, cy = field ? kFieldY : 0.0f;
    const float half = field ? kFieldHalf : 1.0f;
    float* q = c.d.qpos;
    q[0] = cx + half * (2.0f * u[1] - 1.0f);
    q[1] = cy + half * (2.0f * u[2] - 1.0f);
    q[2] = kStandHeight + 0.01f + (field ? kMaxStep : 0.0f);
    const float yaw = 3.14159265f * (2.0f * u[3] - 1.0f);
    q[3] = cosf(0.5f * yaw), q[4] = 0.0f, q[5] = 0.0f, q[6] = sinf(0.5f * yaw);
    for (int j = 0; j < 12; ++j) q[7 + j] = default_pose(j);
    add_uniform_noise(rng, 0.1f, q + 7, 12);
    for (int k = 0; k < 18; ++k) c.d.qvel[k] = 0.0f;
    add_uniform_noise(rng, p.reset_velocity, c.d.qvel, 6);
    s = State{};
    sample_command(p, s, rng);
  }

  // Base-frame vectors from the trunk's rotation (xmat, row-major: world = R local).
  RLT_HD static void to_base(const RobotCtx& c, const float* world, float* base) {
    const float* r = c.d.xmat + 9 * kTrunk;
    for (int k = 0; k < 3; ++k) base[k] = r[k] * world[0] + r[3 + k] * world[1] + r[6 + k] * world[2];
  }
  RLT_HD static void base_lin_vel(const RobotCtx& c, float* v) { to_base(c, c.d.qvel, v); }
  RLT_HD static void gravity_in_base(const RobotCtx& c, float* g) {
    const float down[3] = {0.0f, 0.0f, -1.0f};
    to_base(c, down, g);
  }
  RLT_HD static float base_height(const RobotCtx& c) {
    float feet = 0.0f;
    for (int f = 0; f < 4; ++f) feet += c.d.geom_xpos[3 * foot_geom(f) + 2];
    return c.d.qpos[2] - 0.25f * feet + kFootRadius;
  }
  // Adds the active contacts of the last physics substep: foot[f] = 1 where foot f touches, returns
  // whether the trunk touches anything.
  RLT_HD static bool contacts(const RobotCtx& c, float* foot) {
    bool trunk = false;
    const int n = static_cast<int>(c.d.ncon[0]);
    for (int k = 0; k < n; ++k) {
      const float* con = c.d.contact + kContactStride * k;
      if (con[kConActive] == 0.0f) continue;
      const int g1 = static_cast<int>(con[kConGeom1]), g2 = static_cast<int>(con[kConGeom2]);
      trunk = trunk || g1 == kTrunkGeom || g2 == kTrunkGeom;
      for (int f = 0; f < 4; ++f)
        if (g1 == foot_geom(f) || g2 == foot_geom(f)) foot[f] = 1.0f;
    }
    return trunk;
  }

  RLT_HD static void step(const Params& p, const RobotCtx& c, State& s, const float* a, Philox& rng, float& reward,
                          bool& terminated) {
    float ctrl[12];
    for (int j = 0; j < 12; ++j) ctrl[j] = default_pose(j) + p.action_scale * a[j];
    // ctx.simulate's substeps one by one, so that a contact in any substep counts (a trunk that hits
    // the ground and bounces off within one control step still ends the episode).
    float foot[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    bool trunk_contact = false;
    for (int k = 0; k < c.frame_skip; ++k) {
      physics_step(c.m, c.d, ctrl, 1, static_cast<int*>(nullptr));
      trunk_contact = contacts(c, foot) || trunk_contact;
    }
    kinematics(c.m, c.d);
    s.t += 1;
    float v[3], g[3];
    base_lin_vel(c, v);
    gravity_in_base(c, g);
    const float* w = c.d.qvel + 3;  // body frame
    const float* qd = c.d.qvel + 6;
    float* tm = s.terms;
    const float ex = s.command[0] - v[0], ey = s.command[1] - v[1], ez = s.command[2] - w[2];
    tm[kTrackLinVel] = expf(-(ex * ex + ey * ey) / p.tracking_sigma);
    tm[kTrackAngVel] = expf(-(ez * ez) / p.tracking_sigma);
    tm[kLinVelZ] = v[2] * v[2];
    tm[kAngVelXy] = w[0] * w[0] + w[1] * w[1];
    tm[kOrientation] = g[0] * g[0] + g[1] * g[1];
    tm[kTorques] = sum_squares(c.d.actuator_force, 12);
    float acc = 0.0f, rate = 0.0f;
    for (int j = 0; j < 12; ++j) {
      const float dq = (qd[j] - s.last_dof_vel[j]) / c.dt, da = a[j] - s.last_action[j];
      acc += dq * dq;
      rate += da * da;
    }
    tm[kDofAcc] = acc;
    tm[kActionRate] = rate;
    // Feet air time (legged_gym): a foot's first contact after a swing pays its air time - 0.5 s.
    const bool moving = s.command[0] * s.command[0] + s.command[1] * s.command[1] > 0.01f;
    float air = 0.0f;
    for (int f = 0; f < 4; ++f) {
      const bool filt = foot[f] > 0.0f || s.contact[f] > 0.0f;  // now or in the previous step
      const bool first = s.air_time[f] > 0.0f && filt;
      s.air_time[f] += c.dt;
      if (first) air += s.air_time[f] - 0.5f;
      if (filt) s.air_time[f] = 0.0f;
      s.contact[f] = foot[f];
    }
    tm[kFeetAirTime] = moving ? air : 0.0f;
    const float dh = base_height(c) - p.base_height_target;
    tm[kBaseHeight] = dh * dh;
    float r = 0.0f;
    for (int k = 0; k < kNumTerms; ++k) r += p.w[k] * tm[k];
    r *= c.dt;
    reward = (p.only_positive_rewards != 0.0f && r < 0.0f) ? 0.0f : r;
    terminated = trunk_contact;
    for (int j = 0; j < 12; ++j) s.last_action[j] = a[j], s.last_dof_vel[j] = qd[j];
    const int every = static_cast<int>(p.resample_time_s / c.dt + 0.5f);
    if (every > 0 && s.t % every == 0) sample_command(p, s, rng);
  }

  RLT_HD static void observe(const Params&, const RobotCtx& c, const State& s, float* o, float* co) {
    float g[3], v[3];
    gravity_in_base(c, g);
    for (int k = 0; k < 3; ++k) o[k] = 0.25f * c.d.qvel[3 + k];
    for (int k = 0; k < 3; ++k) o[3 + k] = g[k];
    o[6] = 2.0f * s.command[0], o[7] = 2.0f * s.command[1], o[8] = 0.25f * s.command[2];
    for (int j = 0; j < 12; ++j) {
      o[9 + j] = c.d.qpos[7 + j] - default_pose(j);
      o[21 + j] = 0.05f * c.d.qvel[6 + j];
      o[33 + j] = s.last_action[j];
    }
    if (co == nullptr) return;
    for (int k = 0; k < kObsDim; ++k) co[k] = o[k];  // before the framework adds the actor's noise
    base_lin_vel(c, v);
    for (int k = 0; k < 3; ++k) co[45 + k] = 2.0f * v[k];
    co[48] = base_height(c);
    for (int f = 0; f < 4; ++f) co[49 + f] = s.contact[f], co[53 + f] = s.air_time[f];
    co[57] = c.dr[kDrFriction], co[58] = c.dr[kDrAddedMass], co[59] = c.dr[kDrMotorStrength], co[60] = c.dr[kDrDamping];
  }
};

}  // namespace rlt
