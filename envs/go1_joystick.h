// Unitree Go1 joystick (velocity command tracking), as MuJoCo Playground's Go1JoystickFlatTerrain
// (mujoco_playground/_src/locomotion/go1/{joystick.py, base.py, go1_constants.py, randomize.py}),
// on Playground's own scene: envs/assets/go1/scene_mjx_feetonly_flat_terrain.xml (Menagerie's Go1,
// feet-only collisions: the four foot spheres against the floor; see envs/assets/go1/ATTRIBUTION.md).
// Physics: sim_dt 0.004 s (the asset's timestep), 5 substeps, ctrl_dt 0.02 s; PD position actuators,
// Kp 35 N m/rad, joint damping Kd 0.5 N m s/rad (both [env] keys, applied to the model as base.py
// does); torques limited to 23.7 N m (hip, thigh) and 35.55 N m (knee). Episode: 1000 steps (20 s).
//
// qpos (19) = trunk position, quaternion w x y z, 12 joint angles (FR, FL, RR, RL legs: hip
// abduction, thigh, calf); qvel (18) = trunk linear velocity (world), angular velocity (body), 12
// joint velocities. Default pose (keyframe "home") q0 = (+-0.1, 0.9, -1.8) per leg, trunk at 0.278 m.
// Sensors (the asset's, computed as MuJoCo's mj_step leaves them: the state at the start of the
// control step's last substep): gyro, local_linvel (velocimeter), accelerometer at the imu site;
// upvector (imu z axis, world), global_linvel, global_angvel; feet global linear velocities; feet
// contact "found" (floor). Gravity = imu site_xmat^T (0, 0, -1), feet heights = feet site_xpos z,
// both also as mj_step leaves them (one substep behind qpos, as Playground reads them).
//
// Actor observation "state" (Box(48), float32, unbounded). Noise: level x scale x U(-1, 1) per
// component (noise_level, noise_*), drawn by the task itself (the generic obs_noise stays 0):
// | idx   | meaning                                          | noise scale         |
// |-------|--------------------------------------------------|---------------------|
// | 0-2   | local_linvel: imu linear velocity, imu frame (m/s) | noise_linvel 0.1  |
// | 3-5   | gyro: imu angular velocity, imu frame (rad/s)    | noise_gyro 0.2      |
// | 6-8   | gravity direction in the imu frame (unit)        | noise_gravity 0.05  |
// | 9-20  | joint angles - q0 (rad)                          | noise_joint_pos 0.03|
// | 21-32 | joint velocities (rad/s)                         | noise_joint_vel 1.5 |
// | 33-44 | the action before the one just applied (Playground's obs reads last_act before updating it) | 0 |
// | 45-47 | command vx, vy (m/s, base frame), yaw rate (rad/s), the one this step's reward used | 0 |
// Critic observation "privileged_state" (kCriticObsDim 123): 0-47 the actor's (noisy), then noise-free
// | 48-50 gyro | 51-53 accelerometer | 54-56 gravity | 57-59 local_linvel | 60-62 global_angvel |
// | 63-74 joint angles - q0 | 75-86 joint velocities | 87-98 actuator forces | 99-102 last contact
// (the previous step's) | 103-114 feet global linear velocities (FR, FL, RR, RL) | 115-118 feet air
// time | 119-121 kick force on the trunk (N) | 122 kick active (0/1) |
// Action (Box(12), [-1, 1]): joint targets q0 + action_scale (0.5) x a, in actuator order (MuJoCo
// clamps them to the joints' ranges, ctrlrange by inheritrange).
//
// Reward per step = clip(dt x sum of weight x term, 0, 10000) (Playground's clip). c: command;
// v: local_linvel; w: gyro; tau: actuator forces; q, qd: joint angles, velocities; contact: foot
// touches the floor now; first: a foot's first contact after a swing (contact now or in the
// previous step, with air time > 0); |c| > 0.01 gates the feet terms; air, peak: per-foot air time
// and highest foot height since the last contact.
// | term             | formula                                                    | weight (w_*) |
// |------------------|------------------------------------------------------------|--------------|
// | tracking_lin_vel | exp(-|c_xy - v_xy|^2 / tracking_sigma (0.25))              | 1.0          |
// | tracking_ang_vel | exp(-(c_yaw - w_z)^2 / tracking_sigma)                     | 0.5          |
// | lin_vel_z        | global_linvel_z^2                                          | -0.5         |
// | ang_vel_xy       | |global_angvel_xy|^2                                       | -0.05        |
// | orientation      | |upvector_xy|^2                                            | -5.0         |
// | stand_still      | sum |q - q0| if |c| < 0.01                                 | -1.0         |
// | termination      | 1 if terminated                                            | -1.0         |
// | pose             | exp(-sum (q - q0)^2 x (1, 1, 0.1 per leg))                  | 0.5          |
// | torques          | |tau| + sum |tau|                                          | -0.0002      |
// | action_rate      | sum (a - a_prev)^2                                         | -0.01        |
// | energy           | sum |qd| |tau|                                             | -0.001       |
// | feet_slip        | sum |foot v_xy|^2 x contact, if |c| > 0.01                  | -0.1         |
// | feet_clearance   | sum |foot z - max_foot_height (0.1)| x sqrt(|foot v_xy|)     | -2.0         |
// | feet_height      | sum (peak / max_foot_height - 1)^2 x first, if |c| > 0.01   | -0.2         |
// | feet_air_time    | sum (air - 0.1) x first, if |c| > 0.01                      | 0.1          |
// | dof_pos_limits   | sum of q beyond the soft limits (0.95 x the joint range's ends) | -1.0     |
// Terminated: the trunk's up vector points down (upvector z < 0). Truncated: 1000 steps.
//
// Commands: at reset c ~ U(-a, a), a = (cmd_a_vx 1.5, cmd_a_vy 0.8, cmd_a_yaw 1.2); the next resample
// after round(Exp(1) x 5 s / dt) steps; a resample keeps each component with probability 0.5, else
// sets it to U(-a, a) with probability b = (cmd_b_vx 0.9, cmd_b_vy 0.25, cmd_b_yaw 0.5) and to 0
// otherwise. Reset: the home pose, x, y + U(-0.5, 0.5) m, yaw U(-3.14, 3.14), trunk velocities
// U(-0.5, 0.5) (m/s, rad/s), ctrl = q0, then a forward pass (sensors).
//
// Kicks (Playground's pert_config, off by default: kick_enable 0): after U(kick_wait_min 1, max 3) s
// a horizontal force in a random direction, 0.5 sin(pi t / T) x trunk subtree mass x U(kick_vel_min
// 0, max 3) m/s / T with T ~ U(kick_dur_min 0.05, max 0.2) s, on the trunk's centre of mass for T.
// Applied as qfrc_applied, its torque arm from the trunk pose at the control step's start (MuJoCo
// recomputes it every substep from xfrc_applied: a deviation while a kick lasts).
//
// Domain randomization (Playground's randomize.py; rand_enable 1, the default as Playground trains):
// floor friction U(0.4, 1.0); joint frictionloss x U(0.9, 1.1) and armature x U(1.0, 1.05) per
// joint; trunk centre of mass + U(-0.05, 0.05) m per axis; every body mass x U(0.9, 1.1), then the
// trunk + U(-1, 1) kg. Playground draws these once per env for the whole training; here they are
// drawn at every reset (a fresh robot per episode). Playground's qpos0 jitter is left out: it changes
// nothing in this task (reset takes the keyframe, no joint has a spring). The generic dr_* and
// obs_noise / push_* keys of every robot task (envs/robot_env.h) stay available and are off.
#pragma once

#include "envs/joystick.h"
#include "envs/robot_env.h"

namespace rlt {

// kRough: Go1JoystickRoughTerrain ("go1_joystick_rough"), the same task on
// scene_mjx_feetonly_rough_terrain.xml: the floor a 20 m x 20 m height field (256 x 256 samples,
// elevations 0..0.05 m, friction 1 before randomization), home pose at 0.35 m. Playground changes
// nothing else (joystick.py: only the scene and its MJX contact buffers). Only the four foot spheres
// collide with the floor in either scene (contype 1 / conaffinity 1; every other robot geom has
// 0/0), so sphere-hfield is the only terrain pair (mesh-hfield is not needed).
template <bool kRough>
struct Go1JoystickT {
  static constexpr bool kIsRough = kRough;
  static constexpr const char* kName = kRough ? "go1_joystick_rough" : "go1_joystick";
  static constexpr const char* kAsset =
      kRough ? "go1/scene_mjx_feetonly_rough_terrain.xml" : "go1/scene_mjx_feetonly_flat_terrain.xml";
  static constexpr int kObsDim = 48;
  static constexpr int kActDim = 12;
  static constexpr int kCriticObsDim = 123;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kFrameSkip = 5;
  static constexpr double kTimestep = 0.004;
  static constexpr int kTrunk = 1;  // body id
  static constexpr int kNumBodies = 14;
  static constexpr int kMaxGeoms = 64;  // the scene has 51 (38 without the visual meshes)
  static constexpr int kImuSite = 1;    // sites: head, imu, FR, FL, RR, RL
  // sensor ids (the asset's order)
  static constexpr int kGyro = 0, kLocalLinvel = 1, kAccelerometer = 2, kUpvector = 4, kGlobalLinvel = 6,
                       kGlobalAngvel = 7, kFeetLinvel = 9;
  RLT_HD static int foot_site(int f) { return 2 + f; }                                  // FR, FL, RR, RL
  RLT_HD static int foot_found_sensor(int f) { return f < 2 ? 17 + f : 20 - (f - 2); }  // FR FL RL RR in the file
  RLT_HD static float default_pose(int j) {
    const int k = j % 3, leg = j / 3;
    return k == 0 ? ((leg == 0 || leg == 2) ? 0.1f : -0.1f) : (k == 1 ? 0.9f : -1.8f);
  }
  static constexpr float kHomeHeight = kRough ? 0.35f : 0.278f;  // keyframe "home"

  enum Term : int {
    kTrackingLinVel = 0,
    kTrackingAngVel,
    kLinVelZ,
    kAngVelXy,
    kOrientation,
    kStandStill,
    kTermination,
    kPose,
    kTorques,
    kActionRate,
    kEnergy,
    kFeetSlip,
    kFeetClearance,
    kFeetHeight,
    kFeetAirTime,
    kDofPosLimits,
    kNumTerms
  };

  struct Params {
    float Kp = 35.0f, Kd = 0.5f;
    float action_scale = 0.5f;
    float soft_joint_pos_limit_factor = 0.95f;
    float noise_level = 1.0f, noise_joint_pos = 0.03f, noise_joint_vel = 1.5f, noise_gyro = 0.2f, noise_gravity = 0.05f,
          noise_linvel = 0.1f;
    float tracking_sigma = 0.25f, max_foot_height = 0.1f;
    float cmd_a[3] = {1.5f, 0.8f, 1.2f};
    float cmd_b[3] = {0.9f, 0.25f, 0.5f};
    float cmd_resample_mean_s = 5.0f;
    float kick_enable = 0.0f, kick_vel_min = 0.0f, kick_vel_max = 3.0f, kick_dur_min = 0.05f, kick_dur_max = 0.2f,
          kick_wait_min = 1.0f, kick_wait_max = 3.0f;
    float rand_enable = 1.0f, rand_floor_friction_min = 0.4f, rand_floor_friction_max = 1.0f,
          rand_frictionloss_min = 0.9f, rand_frictionloss_max = 1.1f, rand_armature_min = 1.0f,
          rand_armature_max = 1.05f, rand_com = 0.05f, rand_mass_min = 0.9f, rand_mass_max = 1.1f,
          rand_trunk_mass = 1.0f;
    float w[kNumTerms] = {1.0f,   0.5f,   -0.5f,  -0.05f, -5.0f, -1.0f, -1.0f, 0.5f,
                          -2e-4f, -0.01f, -1e-3f, -0.1f,  -2.0f, -0.2f, 0.1f,  -1.0f};
    template <class V>
    void visit(V&& v) {
      v("Kp", Kp, "position actuator gain (N m/rad), every actuator (Playground's Kp)", kNonNegative);
      v("Kd", Kd, "joint damping (N m s/rad), every leg joint (Playground's Kd)", kNonNegative);
      v("action_scale", action_scale, "joint target = q0 + action_scale * action (rad)", kNonNegative);
      v("soft_joint_pos_limit_factor", soft_joint_pos_limit_factor, "soft limits = factor x the joint range's ends", kNonNegative);
      v("noise_level", noise_level,
        "observation noise level (0: none, kNonNegative); each component's noise is U(-1,1) x level x scale");
      v("noise_joint_pos", noise_joint_pos, "noise scale: joint angles (rad)", kNonNegative);
      v("noise_joint_vel", noise_joint_vel, "noise scale: joint velocities (rad/s)", kNonNegative);
      v("noise_gyro", noise_gyro, "noise scale: gyro (rad/s)", kNonNegative);
      v("noise_gravity", noise_gravity, "noise scale: gravity direction", kNonNegative);
      v("noise_linvel", noise_linvel, "noise scale: local linear velocity (m/s)", kNonNegative);
      v("tracking_sigma", tracking_sigma, "sigma of the tracking rewards exp(-err^2 / sigma)", kPositive);
      v("max_foot_height", max_foot_height, "foot swing height the feet_clearance and feet_height terms aim at (m)", kPositive);
      v("cmd_a_vx", cmd_a[0], "command range: vx ~ U(-a, a) (m/s)", kNonNegative);
      v("cmd_a_vy", cmd_a[1], "command range: vy ~ U(-a, a) (m/s)", kNonNegative);
      v("cmd_a_yaw", cmd_a[2], "command range: yaw rate ~ U(-a, a) (rad/s)", kNonNegative);
      v("cmd_b_vx", cmd_b[0], "resample: probability that a new vx is not zeroed", kUnitInterval);
      v("cmd_b_vy", cmd_b[1], "resample: probability that a new vy is not zeroed", kUnitInterval);
      v("cmd_b_yaw", cmd_b[2], "resample: probability that a new yaw rate is not zeroed", kUnitInterval);
      v("cmd_resample_mean_s", cmd_resample_mean_s, "mean of the exponential time between command resamples (s)", kPositive);
      v("kick_enable", kick_enable, "1: Playground's kicks (pert_config) on");
      v("kick_vel_min", kick_vel_min, "kick magnitude range, lower (m/s)", kNonNegative);
      v("kick_vel_max", kick_vel_max, "kick magnitude range, upper (m/s)", kNonNegative);
      v("kick_dur_min", kick_dur_min, "kick duration range, lower (s)", kNonNegative);
      v("kick_dur_max", kick_dur_max, "kick duration range, upper (s)", kNonNegative);
      v("kick_wait_min", kick_wait_min, "time to the first kick, lower (s)", kNonNegative);
      v("kick_wait_max", kick_wait_max, "time to the first kick, upper (s)", kNonNegative);
      v("rand_enable", rand_enable, "1: Playground's domain randomization (randomize.py), drawn per episode");
      v("rand_floor_friction_min", rand_floor_friction_min, "floor friction, lower", kNonNegative);
      v("rand_floor_friction_max", rand_floor_friction_max, "floor friction, upper", kNonNegative);
      v("rand_frictionloss_min", rand_frictionloss_min, "joint frictionloss scale, lower", kNonNegative);
      v("rand_frictionloss_max", rand_frictionloss_max, "joint frictionloss scale, upper", kNonNegative);
      v("rand_armature_min", rand_armature_min, "joint armature scale, lower", kNonNegative);
      v("rand_armature_max", rand_armature_max, "joint armature scale, upper", kNonNegative);
      v("rand_com", rand_com, "trunk centre of mass offset ~ U(-r, r) per axis (m)", kNonNegative);
      v("rand_mass_min", rand_mass_min, "every body's mass scale, lower", kPositive);
      v("rand_mass_max", rand_mass_max, "every body's mass scale, upper", kPositive);
      v("rand_trunk_mass", rand_trunk_mass, "kg added to the trunk ~ U(-r, r), after the scale", kNonNegative);
      v("w_tracking_lin_vel", w[kTrackingLinVel], "weight: exp(-|c_xy - v_xy|^2 / sigma)");
      v("w_tracking_ang_vel", w[kTrackingAngVel], "weight: exp(-(c_yaw - w_z)^2 / sigma)");
      v("w_lin_vel_z", w[kLinVelZ], "weight: global linear velocity z^2");
      v("w_ang_vel_xy", w[kAngVelXy], "weight: |global angular velocity xy|^2");
      v("w_orientation", w[kOrientation], "weight: |up vector xy|^2");
      v("w_stand_still", w[kStandStill], "weight: sum |q - q0| under a zero command");
      v("w_termination", w[kTermination], "weight: 1 when the episode terminates");
      v("w_pose", w[kPose], "weight: exp(-sum (q - q0)^2 x (1, 1, 0.1))");
      v("w_torques", w[kTorques], "weight: |tau| + sum |tau|");
      v("w_action_rate", w[kActionRate], "weight: sum (a - a_prev)^2");
      v("w_energy", w[kEnergy], "weight: sum |qd| |tau|");
      v("w_feet_slip", w[kFeetSlip], "weight: sum |foot v_xy|^2 of the feet in contact");
      v("w_feet_clearance", w[kFeetClearance], "weight: sum |foot z - max height| sqrt(|foot v_xy|)");
      v("w_feet_height", w[kFeetHeight], "weight: sum (swing peak / max height - 1)^2 at first contact");
      v("w_feet_air_time", w[kFeetAirTime], "weight: sum (air time - 0.1) at first contact");
      v("w_dof_pos_limits", w[kDofPosLimits], "weight: sum of joint angles beyond the soft limits");
    }
  };

  struct State {
    float command[3];        // the current command
    float obs_command[3];    // the command this step's reward and observation used
    float last_act[12];      // the previous action
    float obs_last_act[12];  // the action before it (in this step's observation)
    float air_time[4];       // per foot, s since its last contact
    float obs_air_time[4];   // air time in this step's critic observation
    float last_contact[4];   // contact (0/1) in the previous step
    float obs_contact[4];    // the previous step's contact (this step's critic observation)
    float swing_peak[4];     // highest foot z since the last contact
    float noise[33];         // this observation's noise (U(-1, 1) x level x scale)
    float terms[kNumTerms];  // the last step's reward terms, unweighted (tests, logging)
    // kicks
    float kick_force[3], kick_dir[3], kick_mag, kick_dur_s;
    std::int32_t kick_wait_steps, kick_dur_steps, steps_since_kick, kick_steps;
    // domain randomization draw
    float floor_friction, frictionloss_scale[12], armature_scale[12], com_offset[3], mass_scale[kNumBodies],
        trunk_mass_add;
    std::int32_t steps_until_cmd;
    std::int32_t t;
  };

  static void spaces(const Params&, const Model&, Space& obs, Space& act) {
    const float inf = INFINITY;
    obs = Space{kObsDim, false, 0, std::vector<float>(kObsDim, -inf), std::vector<float>(kObsDim, inf)};
    act = Space{kActDim, false, 0, std::vector<float>(kActDim, -1.0f), std::vector<float>(kActDim, 1.0f)};
  }

  static void check_model(const Model& m) {
    bool ok = m.nq == 19 && m.nv == 18 && m.nu == 12 && m.njnt == 13 && m.jnt_type[0] == kJointFree &&
              m.nbody == kNumBodies && m.ngeom <= kMaxGeoms && m.nsite == 6 && m.nsensor == 21 &&
              m.body_name[kTrunk] == "trunk" && m.site_name[kImuSite] == "imu" && m.geom_name[0] == "floor";
    const char* feet[4] = {"FR", "FL", "RR", "RL"};
    for (int f = 0; f < 4 && ok; ++f) {
      ok = m.site_name[static_cast<size_t>(foot_site(f))] == feet[f] &&
           m.sensor_name[static_cast<size_t>(foot_found_sensor(f))] == std::string(feet[f]) + "_floor_found" &&
           m.sensor_name[static_cast<size_t>(kFeetLinvel + f)] == std::string(feet[f]) + "_global_linvel";
    }
    const char* sensors[8] = {"gyro",     "local_linvel",  "accelerometer", "position",
                              "upvector", "forwardvector", "global_linvel", "global_angvel"};
    for (int k = 0; k < 8 && ok; ++k) ok = m.sensor_name[static_cast<size_t>(k)] == sensors[k];
    for (int a = 0; a < 12 && ok; ++a)
      ok = m.actuator_kind[static_cast<size_t>(a)] == kActPosition && m.actuator_trnid[static_cast<size_t>(a)] == a + 1;
    int home = -1;
    for (int k = 0; k < m.nkey; ++k)
      if (m.key_name[static_cast<size_t>(k)] == "home") home = k;
    ok = ok && home >= 0 && std::fabs(m.key_qpos[19 * static_cast<size_t>(home) + 2] - kHomeHeight) < 1e-6;
    for (int j = 0; j < 12 && ok; ++j)
      ok = std::fabs(m.key_qpos[19 * static_cast<size_t>(home) + 7 + static_cast<size_t>(j)] - default_pose(j)) < 1e-6;
    if (!ok)
      throw std::runtime_error(std::string(kName) +
                               ": the model is not the layout envs/go1_joystick.h expects (Playground's " + kAsset +
                               ": bodies, sites, sensors, actuators, keyframe \"home\")");
  }

  // ---- the env's model: Kp, Kd and the randomization draw, in local arrays -----------------------
  struct Bound {
    float kp[12], damping[18], frictionloss[18], armature[18], ipos[3 * kNumBodies], mass[kNumBodies],
        friction[3 * kMaxGeoms];
    ModelView<float> m;
  };
  RLT_HD static void bind(const Params& p, const RobotCtx& c, const State& s, Bound& b) {
    b.m = c.m;
    // Kp, Kd as base.py sets them, times the generic dr_motor_strength / dr_damping draws (1 when off)
    for (int a = 0; a < 12; ++a) b.kp[a] = p.Kp * c.dr[kDrMotorStrength];
    for (int k = 0; k < 18; ++k) b.damping[k] = k < 6 ? c.m.dof_damping[k] : p.Kd * c.dr[kDrDamping];
    b.m.actuator_kp = b.kp;
    b.m.dof_damping = b.damping;
    if (p.rand_enable == 0.0f) return;
    for (int k = 0; k < 18; ++k) {
      b.frictionloss[k] = c.m.dof_frictionloss[k] * (k < 6 ? 1.0f : s.frictionloss_scale[k - 6]);
      b.armature[k] = c.m.dof_armature[k] * (k < 6 ? 1.0f : s.armature_scale[k - 6]);
    }
    for (int k = 0; k < 3 * kNumBodies; ++k) b.ipos[k] = c.m.body_ipos[k];
    for (int k = 0; k < 3; ++k) b.ipos[3 * kTrunk + k] += s.com_offset[k];
    for (int k = 0; k < kNumBodies; ++k) b.mass[k] = c.m.body_mass[k] * s.mass_scale[k];
    b.mass[kTrunk] += s.trunk_mass_add;
    for (int k = 0; k < 3 * c.m.ngeom; ++k) b.friction[k] = c.m.geom_friction[k];
    b.friction[0] = s.floor_friction;  // the floor (geom 0), sliding friction
    b.m.dof_frictionloss = b.frictionloss;
    b.m.dof_armature = b.armature;
    b.m.body_ipos = b.ipos;
    b.m.body_mass = b.mass;
    b.m.geom_friction = b.friction;
  }

  RLT_HD static float unit(Philox& rng) { return joystick::unit(rng); }
  RLT_HD static float uniform(Philox& rng, float lo, float hi) { return joystick::uniform(rng, lo, hi); }
  RLT_HD static std::int32_t resample_steps(const Params& p, const RobotCtx& c, Philox& rng) {
    const float e = -logf(1.0f - unit(rng));  // Exp(1)
    return static_cast<std::int32_t>(rintf(e * p.cmd_resample_mean_s / c.dt));
  }
  RLT_HD static void draw_noise(const Params& p, State& s, Philox& rng) {
    for (int k = 0; k < 33; ++k) {
      const float scale = k < 3    ? p.noise_linvel
                          : k < 6  ? p.noise_gyro
                          : k < 9  ? p.noise_gravity
                          : k < 21 ? p.noise_joint_pos
                                   : p.noise_joint_vel;
      s.noise[k] = p.noise_level == 0.0f ? 0.0f : (2.0f * unit(rng) - 1.0f) * p.noise_level * scale;
    }
  }
  RLT_HD static const float* sensor(const RobotCtx& c, int id) { return c.d.sensordata + c.m.sensor_adr[id]; }
  RLT_HD static void gravity(const RobotCtx& c, float* g) { joystick::gravity_in_site(c.d, kImuSite, g); }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State& s, Philox& rng) {
    s = State{};
    float* q = c.d.qpos;
    joystick::planar_start(q, kHomeHeight, rng);
    float ctrl[12];
    for (int j = 0; j < 12; ++j) q[7 + j] = ctrl[j] = default_pose(j);
    for (int k = 0; k < 18; ++k) c.d.qvel[k] = k < 6 ? uniform(rng, -0.5f, 0.5f) : 0.0f;
    for (int k = 0; k < 18; ++k) c.d.qfrc_applied[k] = 0.0f;
    // kicks
    s.kick_wait_steps = static_cast<std::int32_t>(rintf(uniform(rng, p.kick_wait_min, p.kick_wait_max) / c.dt));
    s.kick_dur_s = uniform(rng, p.kick_dur_min, p.kick_dur_max);
    s.kick_dur_steps = static_cast<std::int32_t>(rintf(s.kick_dur_s / c.dt));
    s.kick_mag = uniform(rng, p.kick_vel_min, p.kick_vel_max);
    // commands
    s.steps_until_cmd = resample_steps(p, c, rng);
    for (int k = 0; k < 3; ++k) s.command[k] = s.obs_command[k] = uniform(rng, -p.cmd_a[k], p.cmd_a[k]);
    // domain randomization (Playground's randomize.py, here per episode)
    s.floor_friction = uniform(rng, p.rand_floor_friction_min, p.rand_floor_friction_max);
    for (int j = 0; j < 12; ++j)
      s.frictionloss_scale[j] = uniform(rng, p.rand_frictionloss_min, p.rand_frictionloss_max);
    for (int j = 0; j < 12; ++j) s.armature_scale[j] = uniform(rng, p.rand_armature_min, p.rand_armature_max);
    for (int k = 0; k < 3; ++k) s.com_offset[k] = uniform(rng, -p.rand_com, p.rand_com);
    for (int b = 0; b < kNumBodies; ++b) s.mass_scale[b] = uniform(rng, p.rand_mass_min, p.rand_mass_max);
    s.trunk_mass_add = uniform(rng, -p.rand_trunk_mass, p.rand_trunk_mass);
    // mj_forward at the start state: sensors for the first observation
    Bound b;
    bind(p, c, s, b);
    physics_forward(b.m, c.d, ctrl, b.m.implicit_damping ? b.m.timestep : 0.0f);
    compute_sensors(b.m, c.d);
    draw_noise(p, s, rng);
  }

  // Playground's _maybe_apply_perturbation: the force on the trunk for this step.
  RLT_HD static void kick(const Params& p, const RobotCtx& c, State& s, Philox& rng) {
    for (int k = 0; k < 3; ++k) s.kick_force[k] = 0.0f;
    if (s.steps_since_kick >= s.kick_wait_steps) {
      const float t = static_cast<float>(s.kick_steps) * c.dt;
      const float u = 0.5f * sinf(3.14159265f * t / s.kick_dur_s);
      float mass = 0.0f;  // the trunk's subtree mass (the model's, as Playground's)
      for (int b = kTrunk; b < c.m.nbody; ++b) mass += c.m.body_mass[b];
      const float f = u * mass * s.kick_mag / s.kick_dur_s;
      for (int k = 0; k < 3; ++k) s.kick_force[k] = f * s.kick_dir[k];
      if (s.kick_steps >= s.kick_dur_steps) s.steps_since_kick = 0;
      s.kick_steps += 1;
    } else {
      const float angle = uniform(rng, 0.0f, 2.0f * 3.14159265f);
      s.steps_since_kick += 1;
      if (s.steps_since_kick >= s.kick_wait_steps) {
        s.kick_steps = 0;
        s.kick_dir[0] = cosf(angle), s.kick_dir[1] = sinf(angle), s.kick_dir[2] = 0.0f;
      }
    }
    // xfrc_applied on the trunk's centre of mass as generalized forces of the free joint: the force
    // on the translation dofs (world), the torque (xipos - xpos) x F on the rotation dofs (body frame).
    const float* F = s.kick_force;
    const float* r = c.d.xmat + 9 * kTrunk;
    float arm[3], tw[3];
    for (int k = 0; k < 3; ++k) arm[k] = c.d.xipos[3 * kTrunk + k] - c.d.xpos[3 * kTrunk + k];
    tw[0] = arm[1] * F[2] - arm[2] * F[1], tw[1] = arm[2] * F[0] - arm[0] * F[2], tw[2] = arm[0] * F[1] - arm[1] * F[0];
    for (int k = 0; k < 3; ++k) {
      c.d.qfrc_applied[k] = F[k];
      c.d.qfrc_applied[3 + k] = r[k] * tw[0] + r[3 + k] * tw[1] + r[6 + k] * tw[2];
    }
  }

  RLT_HD static void sample_command(const Params& p, State& s, Philox& rng) {
    for (int k = 0; k < 3; ++k) {
      const float y = uniform(rng, -p.cmd_a[k], p.cmd_a[k]);
      const bool z = unit(rng) < p.cmd_b[k];
      const bool w = unit(rng) < 0.5f;
      if (w) s.command[k] = z ? y : 0.0f;
    }
  }

  RLT_HD static float norm3(const float* x) { return sqrtf(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); }

  RLT_HD static void step(const Params& p, const RobotCtx& c, State& s, const float* a, Philox& rng, float& reward,
                          bool& terminated) {
    if (p.kick_enable != 0.0f) kick(p, c, s, rng);
    Bound b;
    bind(p, c, s, b);
    float ctrl[12];
    for (int j = 0; j < 12; ++j) ctrl[j] = default_pose(j) + p.action_scale * a[j];
    // x* (site_xpos, site_xmat) stay at the last substep's start, as after MuJoCo's mj_step
    physics_step(b.m, c.d, ctrl, c.frame_skip, static_cast<int*>(nullptr));
    s.t += 1;

    bool contact[4], first[4];
    for (int f = 0; f < 4; ++f) {
      contact[f] = sensor(c, foot_found_sensor(f))[0] > 0.0f;
      const bool filt = contact[f] || s.last_contact[f] > 0.0f;
      first[f] = s.air_time[f] > 0.0f && filt;
      s.air_time[f] += c.dt;
      s.swing_peak[f] = joystick::max_of(s.swing_peak[f], c.d.site_xpos[3 * foot_site(f) + 2]);
    }
    // what this step's observation shows (Playground builds it here, before the updates below)
    for (int j = 0; j < 12; ++j) s.obs_last_act[j] = s.last_act[j];
    for (int k = 0; k < 3; ++k) s.obs_command[k] = s.command[k];
    for (int f = 0; f < 4; ++f) s.obs_contact[f] = s.last_contact[f], s.obs_air_time[f] = s.air_time[f];
    draw_noise(p, s, rng);

    const float* up = sensor(c, kUpvector);
    const bool done = up[2] < 0.0f;
    const float* v = sensor(c, kLocalLinvel);
    const float* w = sensor(c, kGyro);
    const float* gv = sensor(c, kGlobalLinvel);
    const float* gw = sensor(c, kGlobalAngvel);
    const float* qj = c.d.qpos + 7;
    const float* qd = c.d.qvel + 6;
    const float* tau = c.d.actuator_force;
    const float cmd_norm = norm3(s.command);
    float* tm = s.terms;
    const float ex = s.command[0] - v[0], ey = s.command[1] - v[1], ez = s.command[2] - w[2];
    tm[kTrackingLinVel] = expf(-(ex * ex + ey * ey) / p.tracking_sigma);
    tm[kTrackingAngVel] = expf(-(ez * ez) / p.tracking_sigma);
    tm[kLinVelZ] = gv[2] * gv[2];
    tm[kAngVelXy] = gw[0] * gw[0] + gw[1] * gw[1];
    tm[kOrientation] = up[0] * up[0] + up[1] * up[1];
    float dev = 0.0f, pose = 0.0f, limits = 0.0f, tau2 = 0.0f, tau1 = 0.0f, energy = 0.0f, rate = 0.0f;
    for (int j = 0; j < 12; ++j) {
      const float e = qj[j] - default_pose(j);
      dev += fabsf(e);
      pose += e * e * (j % 3 == 2 ? 0.1f : 1.0f);
      const float lo = c.m.jnt_range[2 * (j + 1)] * p.soft_joint_pos_limit_factor;
      const float hi = c.m.jnt_range[2 * (j + 1) + 1] * p.soft_joint_pos_limit_factor;
      limits += -joystick::min_of(qj[j] - lo, 0.0f) + joystick::max_of(qj[j] - hi, 0.0f);
      tau2 += tau[j] * tau[j];
      tau1 += fabsf(tau[j]);
      energy += fabsf(qd[j]) * fabsf(tau[j]);
      const float da = a[j] - s.last_act[j];
      rate += da * da;
    }
    tm[kStandStill] = cmd_norm < 0.01f ? dev : 0.0f;
    tm[kTermination] = done ? 1.0f : 0.0f;
    tm[kPose] = expf(-pose);
    tm[kTorques] = sqrtf(tau2) + tau1;
    tm[kActionRate] = rate;
    tm[kEnergy] = energy;
    float slip = 0.0f, clearance = 0.0f, height = 0.0f, air = 0.0f;
    for (int f = 0; f < 4; ++f) {
      const float* fv = sensor(c, kFeetLinvel + f);
      const float vxy2 = fv[0] * fv[0] + fv[1] * fv[1];
      if (contact[f]) slip += vxy2;
      clearance += fabsf(c.d.site_xpos[3 * foot_site(f) + 2] - p.max_foot_height) * sqrtf(sqrtf(vxy2));
      const float e = s.swing_peak[f] / p.max_foot_height - 1.0f;
      if (first[f]) height += e * e, air += s.air_time[f] - 0.1f;
    }
    const bool moving = cmd_norm > 0.01f;
    tm[kFeetSlip] = moving ? slip : 0.0f;
    tm[kFeetClearance] = clearance;
    tm[kFeetHeight] = moving ? height : 0.0f;
    tm[kFeetAirTime] = moving ? air : 0.0f;
    tm[kDofPosLimits] = limits;
    float r = 0.0f;
    for (int k = 0; k < kNumTerms; ++k) r += p.w[k] * tm[k];
    reward = joystick::min_of(joystick::max_of(r * c.dt, 0.0f), 10000.0f);
    terminated = done;

    for (int j = 0; j < 12; ++j) s.last_act[j] = a[j];
    s.steps_until_cmd -= 1;
    const bool resample = s.steps_until_cmd <= 0;
    if (resample) sample_command(p, s, rng);
    if (done || resample) s.steps_until_cmd = resample_steps(p, c, rng);
    joystick::end_swings<4>(contact, s.air_time, s.swing_peak, s.last_contact);
  }

  // The command this step used, the base's velocities the tracking rewards compare with it, and the
  // base's heading (Task contract, envs/robot_env.h).
  RLT_HD static void tracking(const Params&, const RobotCtx& c, const State& s, float* out) {
    joystick::tracking(s.obs_command, sensor(c, kLocalLinvel), sensor(c, kGyro), c.d, kImuSite, out);
  }

  RLT_HD static void observe(const Params&, const RobotCtx& c, const State& s, float* o, float* co) {
    float g[3];
    gravity(c, g);
    const float* v = sensor(c, kLocalLinvel);
    const float* w = sensor(c, kGyro);
    for (int k = 0; k < 3; ++k)
      o[k] = v[k] + s.noise[k], o[3 + k] = w[k] + s.noise[3 + k], o[6 + k] = g[k] + s.noise[6 + k];
    for (int j = 0; j < 12; ++j) {
      o[9 + j] = c.d.qpos[7 + j] + s.noise[9 + j] - default_pose(j);
      o[21 + j] = c.d.qvel[6 + j] + s.noise[21 + j];
      o[33 + j] = s.obs_last_act[j];
    }
    for (int k = 0; k < 3; ++k) o[45 + k] = s.obs_command[k];
    if (co == nullptr) return;
    for (int k = 0; k < kObsDim; ++k) co[k] = o[k];
    const float* acc = sensor(c, kAccelerometer);
    const float* gw = sensor(c, kGlobalAngvel);
    for (int k = 0; k < 3; ++k) {
      co[48 + k] = w[k], co[51 + k] = acc[k], co[54 + k] = g[k], co[57 + k] = v[k], co[60 + k] = gw[k];
      co[119 + k] = s.kick_force[k];
    }
    for (int j = 0; j < 12; ++j) {
      co[63 + j] = c.d.qpos[7 + j] - default_pose(j);
      co[75 + j] = c.d.qvel[6 + j];
      co[87 + j] = c.d.actuator_force[j];
    }
    for (int f = 0; f < 4; ++f) {
      co[99 + f] = s.obs_contact[f];
      const float* fv = sensor(c, kFeetLinvel + f);
      for (int k = 0; k < 3; ++k) co[103 + 3 * f + k] = fv[k];
      co[115 + f] = s.obs_air_time[f];
    }
    co[122] = s.steps_since_kick >= s.kick_wait_steps ? 1.0f : 0.0f;
  }
};

using Go1Joystick = Go1JoystickT<false>;
using Go1JoystickRough = Go1JoystickT<true>;

}  // namespace rlt
