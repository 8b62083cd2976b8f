// Unitree G1 joystick (velocity command tracking for a 29-joint humanoid), as MuJoCo Playground's
// G1JoystickFlatTerrain (mujoco_playground/_src/locomotion/g1/{joystick.py, base.py, g1_constants.py,
// randomize.py}), on Playground's own scene: envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml
// (Menagerie's G1, feet-only collisions: the two foot boxes against the floor, plus the explicit
// pairs foot-foot and hand-thigh; see envs/assets/g1/ATTRIBUTION.md). Physics: sim_dt 0.002 s (the
// asset's timestep, Euler, no implicit damping), 10 substeps, ctrl_dt 0.02 s; the asset's position
// actuators (Kp 75 legs/waist/shoulders, 20 ankle pitch, 2 ankle roll and wrists), joint damping and
// frictionloss 0.1 as written. Episode: 1000 steps (20 s).
//
// qpos (36) = pelvis position, quaternion w x y z, 29 joint angles (left leg: hip pitch, roll, yaw,
// knee, ankle pitch, roll; right leg the same; waist yaw, roll, pitch; left arm: shoulder pitch,
// roll, yaw, elbow, wrist roll, pitch, yaw; right arm the same); qvel (35). Default pose q0 =
// keyframe "knees_bent" (pelvis at 0.755 m). Sensors as mj_step leaves them (the state at the start
// of the control step's last substep; gravity and feet heights from site_xpos/xmat, likewise).
//
// Actor observation "state" (Box(103), float32, unbounded). Noise: level x scale x U(-1, 1):
// | idx    | meaning                                                      | noise scale          |
// |--------|--------------------------------------------------------------|----------------------|
// | 0-2    | local_linvel_pelvis: pelvis imu linear velocity, imu frame (m/s) | noise_linvel 0.1 |
// | 3-5    | gyro_pelvis (rad/s)                                          | noise_gyro 0.2       |
// | 6-8    | gravity direction in the pelvis imu frame (unit)             | noise_gravity 0.05   |
// | 9-11   | command vx, vy (m/s), yaw rate (rad/s), the one this step's reward used | 0         |
// | 12-40  | joint angles - q0 (rad)                                      | noise_joint_pos 0.03 |
// | 41-69  | joint velocities (rad/s)                                     | noise_joint_vel 1.5  |
// | 70-98  | the action before the one just applied                       | 0                    |
// | 99-102 | cos(phase L), cos(phase R), sin(phase L), sin(phase R), the gait clock this step used | 0 |
// Critic observation "privileged_state" (216), Playground's: 0-102 the actor's (noisy), then
// noise-free | 103-105 gyro | 106-108 accelerometer_pelvis | 109-111 gravity | 112-114 local_linvel
// | 115-117 global_angvel_pelvis | 118-146 joint angles - q0 | 147-175 joint velocities | 176 pelvis
// height qpos[2] | 177-205 actuator forces | 206-207 feet contact now (L, R) | 208-213 feet global
// linear velocities (L xyz, R xyz) | 214-215 feet air time |
// Action (Box(29), [-1, 1]): joint targets q0 + action_scale (0.5) x a, in actuator order (MuJoCo
// clamps them to ctrlrange = the joint ranges, inheritrange).
//
// Reward per step = dt x sum of weight x term (no clip, unlike Go1's). c: command; v, w: pelvis
// local_linvel, gyro; q, qd: joint angles, velocities; tau: actuator forces; contact: a foot's
// floor contact sensor now; first: a foot's first contact after a swing (contact now or in the
// previous step, with air time > 0); air, peak: per-foot air time (this step included) and highest
// foot height since the last contact; phi: the per-foot gait phase; rz(phi): Playground's cubic
// Bezier swing profile to max_foot_height (0.15 m); soft limits: the joint range shrunk about its
// middle to soft_joint_pos_limit_factor (0.95) of its width.
// | term                 | formula                                                         | weight |
// |----------------------|-----------------------------------------------------------------|--------|
// | tracking_lin_vel     | exp(-|c_xy - v_xy|^2 / tracking_sigma (0.25))                   | 1.0    |
// | tracking_ang_vel     | exp(-(c_yaw - w_z)^2 / tracking_sigma)                          | 0.75   |
// | lin_vel_z            | pelvis global v_z^2 + torso global v_z^2                        | 0      |
// | ang_vel_xy           | |torso global angular velocity xy|^2                            | -0.15  |
// | orientation          | |torso up vector - (0.073, 0, 1)|^2                             | -2.0   |
// | base_height          | (qpos z - base_height_target (0.5))^2                           | 0      |
// | torques              | sum |tau|                                                       | 0      |
// | action_rate          | sum (a - a_prev)^2                                              | 0      |
// | energy               | sum |qd| |tau|                                                  | 0      |
// | dof_acc              | sum qacc(joints)^2                                              | 0      |
// | feet_clearance       | sum |foot z - max_foot_height| sqrt(|foot v_xy|)                 | 0      |
// | feet_air_time        | sum min((air - 0.2) x first, 0.3)                               | 2.0    |
// | feet_slip            | |pelvis global v_xy| x number of feet in contact                 | -0.25  |
// | feet_height          | sum (peak / max_foot_height - 1)^2 x first                      | 0      |
// | feet_phase           | exp(-sum (foot z - rz(phi))^2 / 0.01), if the pelvis moves (|v_xy| > 0.1 or |w_z| > 0.1, global) or |c| > 0.01 | 1.0 |
// | alive                | 1                                                               | 0      |
// | stand_still          | sum |q - q0| if |c| < 0.01                                      | -1.0   |
// | termination          | 1 if terminated                                                 | -100.0 |
// | collision            | 1 if a hand touches its thigh (contact sensors)                 | -0.1   |
// | contact_force        | sum max(|foot force z| - max_contact_force (500 N), 0)          | -0.01  |
// | joint_deviation_knee | sum |q_knee - q0_knee|                                          | -0.1   |
// | joint_deviation_hip  | sum |q - q0| over hip roll, yaw (both legs); roll weight 0 if c_vy > 0.1 | -0.25 |
// | dof_pos_limits       | sum of q beyond the soft limits                                 | -1.0   |
// | pose                 | sum (q - q0)^2                                                  | -0.1   |
// Terminated: the torso's up vector points down (z < 0), or a foot touches the other foot or the
// other leg's shin (contact sensors). Truncated: 1000 steps.
//
// Commands: vx ~ U(lin_vel_x -1, 1), vy ~ U(lin_vel_y -0.5, 0.5), yaw rate ~ U(ang_vel_yaw -1, 1),
// all three zero with probability cmd_zero_prob (0.1); a new one every cmd_resample_steps + 1 (501)
// steps. Gait clock: phase (0, pi) at reset, advanced by 2 pi dt f per step, f ~ U(gait_freq 1.25,
// 1.5) per episode, wrapped to [-pi, pi). Reset: keyframe "knees_bent", x, y + U(-0.5, 0.5) m, yaw
// U(-3.14, 3.14), each joint angle x U(0.5, 1.5), pelvis velocities U(-0.5, 0.5) (m/s, rad/s),
// ctrl = those joint angles, then a forward pass (sensors).
//
// Pushes (Playground's push_config, on: push_enable 1): every push interval (U(push_interval 5, 10) s
// per episode, in steps) the pelvis's horizontal velocity gets a kick of U(push_magnitude 0.1, 2)
// m/s in a uniform random direction, before the step's physics.
//
// Domain randomization (Playground's randomize.py; rand_enable 1): the friction of the two foot-floor
// pairs U(0.4, 1.0) (sliding, both directions); joint frictionloss x U(0.5, 2.0) and armature
// x U(1.0, 1.05) per joint; every body mass x U(0.9, 1.1), then the torso + U(-1, 1) kg. Playground
// draws these once per env for the whole training; here at every reset (a fresh robot per
// episode). Its qpos0 jitter is left out: it changes nothing in this task (no springs; reset takes the
// keyframe). restricted_joint_range 1 replaces the joint ranges and ctrlranges by Playground's
// RESTRICTED_JOINT_RANGE (the soft limits follow). The generic dr_* / obs_noise / push_* keys of
// every robot task (envs/robot_env.h) stay available and are off.
#pragma once

#include "envs/joystick.h"
#include "envs/robot_env.h"

namespace rlt {

// kRough: G1JoystickRoughTerrain ("g1_joystick_rough"), the same task on
// scene_mjx_feetonly_rough_terrain.xml: the floor a 20 m x 20 m height field (Playground's
// hfield.png, elevations 0..0.05 m), knees_bent with the pelvis at 0.8 m. The foot boxes meet it
// through their explicit pairs (box-hfield, sim/hfield.h).
template <bool kRough>
struct G1JoystickT {
  static constexpr bool kIsRough = kRough;
  static constexpr const char* kName = kRough ? "g1_joystick_rough" : "g1_joystick";
  static constexpr const char* kAsset =
      kRough ? "g1/scene_mjx_feetonly_rough_terrain.xml" : "g1/scene_mjx_feetonly_flat_terrain.xml";
  static constexpr int kNj = 29;  // actuated joints
  static constexpr int kObsDim = 103;
  static constexpr int kActDim = kNj;
  static constexpr int kCriticObsDim = 216;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kFrameSkip = 10;
  static constexpr double kTimestep = 0.002;
  static constexpr int kPelvis = 1, kTorso = 16;  // body ids
  static constexpr int kNumBodies = 31;
  static constexpr int kNumPairs = 5;
  static constexpr int kPelvisImu = 0;  // sites: imu_in_pelvis, left_foot, right_foot, imu_in_torso, palms
  RLT_HD static int foot_site(int f) { return 1 + f; }
  // sensor ids (the asset's order)
  static constexpr int kUpvectorTorso = 0, kLocalLinvel = 2, kAccelerometer = 4, kGyro = 6, kGlobalLinvelTorso = 12,
                       kGlobalLinvel = 13, kGlobalAngvelTorso = 14, kGlobalAngvel = 15, kFeetLinvel = 16,
                       kFootForce = 20, kFootFloor = 22, kFootFoot = 24, kLeftFootRightShin = 25,
                       kRightFootLeftShin = 26, kHandThigh = 27;
  static constexpr int kNumSensors = 29;
  static constexpr float kHomeHeight = kRough ? 0.8f : 0.755f;  // keyframe "knees_bent"
  RLT_HD static float default_pose(int j) {                      // keyframe "knees_bent", qpos[7:]
    const float leg[6] = {-0.312f, 0.0f, 0.0f, 0.669f, -0.363f, 0.0f};
    const float arm[7] = {0.2f, 0.2f, 0.0f, 0.6f, 0.0f, 0.0f, 0.0f};
    if (j < 12) return leg[j % 6];
    if (j < 15) return j == 14 ? 0.073f : 0.0f;
    const int k = (j - 15) % 7;
    return (k == 1 && j >= 22) ? -arm[k] : arm[k];
  }
  // Playground's RESTRICTED_JOINT_RANGE (g1_constants.py), [lo, hi] per joint (restricted_joint_range 1)
  RLT_HD static void restricted_range(int j, float& lo, float& hi) {
    const float leg[6][2] = {{-1.57f, 1.57f}, {-0.5f, 0.5f}, {-0.7f, 0.7f}, {0.0f, 1.57f}, {-0.4f, 0.4f}, {-0.2f, 0.2f}};
    const float waist[3][2] = {{-2.618f, 2.618f}, {-0.52f, 0.52f}, {-0.52f, 0.52f}};
    const float arm[7][2] = {{-3.0892f, 2.6704f}, {-1.5882f, 2.2515f}, {-2.618f, 2.618f}, {-1.0472f, 2.0944f},
                             {-1.97222f, 1.97222f}, {-1.61443f, 1.61443f}, {-1.61443f, 1.61443f}};
    if (j < 12) {
      lo = leg[j % 6][0], hi = leg[j % 6][1];
    } else if (j < 15) {
      lo = waist[j - 12][0], hi = waist[j - 12][1];
    } else {
      const int k = (j - 15) % 7;
      lo = arm[k][0], hi = arm[k][1];
      if (k == 1 && j >= 22) lo = -arm[k][1], hi = -arm[k][0];  // the right shoulder roll, mirrored
    }
  }

  enum Term : int {
    kTrackingLinVel = 0,
    kTrackingAngVel,
    kLinVelZ,
    kAngVelXy,
    kOrientation,
    kBaseHeight,
    kTorques,
    kActionRate,
    kEnergy,
    kDofAcc,
    kFeetClearance,
    kFeetAirTime,
    kFeetSlip,
    kFeetHeight,
    kFeetPhase,
    kAlive,
    kStandStill,
    kTermination,
    kCollision,
    kContactForce,
    kJointDeviationKnee,
    kJointDeviationHip,
    kDofPosLimits,
    kPose,
    kNumTerms
  };
  // the [env] keys of the weights, w_<term> (Playground's reward_config.scales.<term>)
  static constexpr const char* kWeightKeys[kNumTerms] = {
      "w_tracking_lin_vel", "w_tracking_ang_vel", "w_lin_vel_z",     "w_ang_vel_xy",          "w_orientation",
      "w_base_height",      "w_torques",          "w_action_rate",   "w_energy",              "w_dof_acc",
      "w_feet_clearance",   "w_feet_air_time",    "w_feet_slip",     "w_feet_height",         "w_feet_phase",
      "w_alive",            "w_stand_still",      "w_termination",   "w_collision",           "w_contact_force",
      "w_joint_deviation_knee", "w_joint_deviation_hip", "w_dof_pos_limits", "w_pose"};

  struct Params {
    float action_scale = 0.5f;
    float soft_joint_pos_limit_factor = 0.95f;
    float restricted_joint_range = 0.0f;
    float noise_level = 1.0f, noise_joint_pos = 0.03f, noise_joint_vel = 1.5f, noise_gravity = 0.05f,
          noise_linvel = 0.1f, noise_gyro = 0.2f;
    float tracking_sigma = 0.25f, max_foot_height = 0.15f, base_height_target = 0.5f, max_contact_force = 500.0f;
    float push_enable = 1.0f, push_interval_min = 5.0f, push_interval_max = 10.0f, push_magnitude_min = 0.1f,
          push_magnitude_max = 2.0f;
    float lin_vel_x[2] = {-1.0f, 1.0f}, lin_vel_y[2] = {-0.5f, 0.5f}, ang_vel_yaw[2] = {-1.0f, 1.0f};
    float cmd_zero_prob = 0.1f, cmd_resample_steps = 500.0f;
    float gait_freq_min = 1.25f, gait_freq_max = 1.5f;
    float rand_enable = 1.0f, rand_floor_friction_min = 0.4f, rand_floor_friction_max = 1.0f,
          rand_frictionloss_min = 0.5f, rand_frictionloss_max = 2.0f, rand_armature_min = 1.0f,
          rand_armature_max = 1.05f, rand_mass_min = 0.9f, rand_mass_max = 1.1f, rand_torso_mass = 1.0f;
    float w[kNumTerms] = {1.0f, 0.75f, 0.0f, -0.15f, -2.0f,  0.0f,   0.0f,  0.0f,  0.0f, 0.0f,  0.0f,   2.0f,
                          -0.25f, 0.0f, 1.0f, 0.0f,  -1.0f, -100.0f, -0.1f, -0.01f, -0.1f, -0.25f, -1.0f, -0.1f};
    template <class V>
    void visit(V&& v) {
      v("action_scale", action_scale, "joint target = q0 + action_scale * action (rad)", kNonNegative);
      v("soft_joint_pos_limit_factor", soft_joint_pos_limit_factor,
        "soft limits: the joint range shrunk about its middle to this fraction of its width", kNonNegative);
      v("restricted_joint_range", restricted_joint_range,
        "1: Playground's RESTRICTED_JOINT_RANGE for the joint ranges and ctrlranges");
      v("noise_level", noise_level,
        "observation noise level (0: none, kNonNegative); each component's noise is U(-1,1) x level x scale");
      v("noise_joint_pos", noise_joint_pos, "noise scale: joint angles (rad)", kNonNegative);
      v("noise_joint_vel", noise_joint_vel, "noise scale: joint velocities (rad/s)", kNonNegative);
      v("noise_gravity", noise_gravity, "noise scale: gravity direction", kNonNegative);
      v("noise_linvel", noise_linvel, "noise scale: local linear velocity (m/s)", kNonNegative);
      v("noise_gyro", noise_gyro, "noise scale: gyro (rad/s)", kNonNegative);
      v("tracking_sigma", tracking_sigma, "sigma of the tracking rewards exp(-err^2 / sigma)", kPositive);
      v("max_foot_height", max_foot_height, "swing height of the gait clock's foot profile and feet terms (m)", kPositive);
      v("base_height_target", base_height_target, "pelvis height the base_height term aims at (m)");
      v("max_contact_force", max_contact_force, "foot force (z) beyond which contact_force costs (N)", kNonNegative);
      v("push_enable", push_enable, "1: Playground's pushes (push_config) on");
      v("push_interval_min", push_interval_min, "time between pushes, drawn per episode, lower (s)", kPositive);
      v("push_interval_max", push_interval_max, "time between pushes, upper (s)", kPositive);
      v("push_magnitude_min", push_magnitude_min, "push: horizontal velocity kick, lower (m/s)", kNonNegative);
      v("push_magnitude_max", push_magnitude_max, "push: horizontal velocity kick, upper (m/s)", kNonNegative);
      v("lin_vel_x_min", lin_vel_x[0], "command vx ~ U(min, max) (m/s)");
      v("lin_vel_x_max", lin_vel_x[1], "command vx, upper (m/s)");
      v("lin_vel_y_min", lin_vel_y[0], "command vy ~ U(min, max) (m/s)");
      v("lin_vel_y_max", lin_vel_y[1], "command vy, upper (m/s)");
      v("ang_vel_yaw_min", ang_vel_yaw[0], "command yaw rate ~ U(min, max) (rad/s)");
      v("ang_vel_yaw_max", ang_vel_yaw[1], "command yaw rate, upper (rad/s)");
      v("cmd_zero_prob", cmd_zero_prob, "probability that a new command is all zeros", kUnitInterval);
      v("cmd_resample_steps", cmd_resample_steps, "a new command after this many steps + 1", kPositive);
      v("gait_freq_min", gait_freq_min, "gait clock frequency ~ U(min, max) per episode (Hz)", kPositive);
      v("gait_freq_max", gait_freq_max, "gait clock frequency, upper (Hz)", kPositive);
      v("rand_enable", rand_enable, "1: Playground's domain randomization (randomize.py), drawn per episode");
      v("rand_floor_friction_min", rand_floor_friction_min, "foot-floor pair friction, lower", kNonNegative);
      v("rand_floor_friction_max", rand_floor_friction_max, "foot-floor pair friction, upper", kNonNegative);
      v("rand_frictionloss_min", rand_frictionloss_min, "joint frictionloss scale, lower", kNonNegative);
      v("rand_frictionloss_max", rand_frictionloss_max, "joint frictionloss scale, upper", kNonNegative);
      v("rand_armature_min", rand_armature_min, "joint armature scale, lower", kNonNegative);
      v("rand_armature_max", rand_armature_max, "joint armature scale, upper", kNonNegative);
      v("rand_mass_min", rand_mass_min, "every body's mass scale, lower", kPositive);
      v("rand_mass_max", rand_mass_max, "every body's mass scale, upper", kPositive);
      v("rand_torso_mass", rand_torso_mass, "kg added to the torso ~ U(-r, r), after the scale", kNonNegative);
      for (int k = 0; k < kNumTerms; ++k) v(kWeightKeys[k], w[k], "reward weight (envs/g1_joystick.h's table)");
    }
  };

  struct State {
    float command[3];           // the current command
    float obs_command[3];       // the command this step's reward and observation used
    float last_act[kNj];        // the previous action
    float obs_last_act[kNj];    // the action before it (in this step's observation)
    float phase[2];             // gait clock per foot (L, R)
    float obs_phase[2];         // the clock this step's reward and observation used
    float phase_dt;             // its advance per step (rad)
    float air_time[2];          // per foot, s since its last contact
    float obs_air_time[2];      // air time in this step's critic observation
    float last_contact[2];      // contact (0/1) in the previous step
    float contact[2];           // contact now (the critic observation)
    float swing_peak[2];        // highest foot z since the last contact
    float noise[3 + 3 + 3 + 2 * kNj];  // this observation's noise (U(-1, 1) x level x scale)
    float terms[kNumTerms];     // the last step's reward terms, unweighted (tests, logging)
    std::int32_t cmd_steps;     // steps since the last command (Playground's info["step"])
    std::int32_t push_step, push_interval_steps;
    // domain randomization draw
    float floor_friction, frictionloss_scale[kNj], armature_scale[kNj], mass_scale[kNumBodies], torso_mass_add;
    std::int32_t t;
  };

  static void spaces(const Params&, const Model&, Space& obs, Space& act) {
    const float inf = INFINITY;
    obs = Space{kObsDim, false, 0, std::vector<float>(kObsDim, -inf), std::vector<float>(kObsDim, inf)};
    act = Space{kActDim, false, 0, std::vector<float>(kActDim, -1.0f), std::vector<float>(kActDim, 1.0f)};
  }

  static void check_model(const Model& m) {
    bool ok = m.nq == 7 + kNj && m.nv == 6 + kNj && m.nu == kNj && m.njnt == 1 + kNj && m.jnt_type[0] == kJointFree &&
              m.nbody == kNumBodies && m.npair == kNumPairs && m.nsensor == kNumSensors &&
              m.body_name[kPelvis] == "pelvis" && m.body_name[kTorso] == "torso_link" &&
              m.site_name[kPelvisImu] == "imu_in_pelvis" && m.site_name[1] == "left_foot" &&
              m.site_name[2] == "right_foot" && m.geom_name[0] == "floor";
    const std::pair<int, const char*> sensors[] = {
        {kUpvectorTorso, "upvector_torso"},
        {kLocalLinvel, "local_linvel_pelvis"},
        {kAccelerometer, "accelerometer_pelvis"},
        {kGyro, "gyro_pelvis"},
        {kGlobalLinvelTorso, "global_linvel_torso"},
        {kGlobalLinvel, "global_linvel_pelvis"},
        {kGlobalAngvelTorso, "global_angvel_torso"},
        {kGlobalAngvel, "global_angvel_pelvis"},
        {kFeetLinvel, "left_foot_global_linvel"},
        {kFeetLinvel + 1, "right_foot_global_linvel"},
        {kFootForce, "left_foot_force"},
        {kFootForce + 1, "right_foot_force"},
        {kFootFloor, "left_foot_floor_found"},
        {kFootFloor + 1, "right_foot_floor_found"},
        {kFootFoot, "right_foot_left_foot_found"},
        {kLeftFootRightShin, "left_foot_right_shin_found"},
        {kRightFootLeftShin, "right_foot_left_shin_found"},
        {kHandThigh, "left_hand_left_thigh_found"},
        {kHandThigh + 1, "right_hand_right_thigh_found"}};
    for (const auto& s : sensors)
      if (ok) ok = m.sensor_name[static_cast<size_t>(s.first)] == s.second;
    // the foot-floor pairs first (the friction randomization writes pairs 0 and 1)
    for (int k = 0; k < 2 && ok; ++k)
      ok = m.pair_geom2[static_cast<size_t>(k)] == 0 &&
           m.geom_name[static_cast<size_t>(m.pair_geom1[static_cast<size_t>(k)])] == (k == 0 ? "left_foot" : "right_foot");
    for (int a = 0; a < kNj && ok; ++a)
      ok = m.actuator_kind[static_cast<size_t>(a)] == kActPosition && m.actuator_trnid[static_cast<size_t>(a)] == a + 1;
    int key = -1;
    for (int k = 0; k < m.nkey; ++k)
      if (m.key_name[static_cast<size_t>(k)] == "knees_bent") key = k;
    const size_t row = static_cast<size_t>(7 + kNj) * static_cast<size_t>(key < 0 ? 0 : key);
    ok = ok && key >= 0 && std::fabs(m.key_qpos[row + 2] - kHomeHeight) < 1e-6;
    for (int j = 0; j < kNj && ok; ++j)
      ok = std::fabs(m.key_qpos[row + 7 + static_cast<size_t>(j)] - default_pose(j)) < 1e-6;
    if (!ok)
      throw std::runtime_error(std::string(kName) + ": the model is not the layout envs/g1_joystick.h expects (Playground's " +
                               kAsset + ": bodies, sites, sensors, pairs, actuators, keyframe \"knees_bent\")");
  }

  // ---- the env's model: the randomization draw and the restricted ranges, in local arrays ------
  struct Bound {
    float frictionloss[6 + kNj], armature[6 + kNj], mass[kNumBodies], pair_friction[5 * kNumPairs],
        jnt_range[2 * (1 + kNj)], ctrlrange[2 * kNj];
    ModelView<float> m;
  };
  RLT_HD static void bind(const Params& p, const RobotCtx& c, const State& s, Bound& b) {
    b.m = c.m;
    if (p.restricted_joint_range != 0.0f) {
      b.jnt_range[0] = c.m.jnt_range[0], b.jnt_range[1] = c.m.jnt_range[1];
      for (int j = 0; j < kNj; ++j) {
        restricted_range(j, b.jnt_range[2 + 2 * j], b.jnt_range[3 + 2 * j]);
        b.ctrlrange[2 * j] = b.jnt_range[2 + 2 * j], b.ctrlrange[2 * j + 1] = b.jnt_range[3 + 2 * j];
      }
      b.m.jnt_range = b.jnt_range;
      b.m.actuator_ctrlrange = b.ctrlrange;
    }
    if (p.rand_enable == 0.0f) return;
    for (int k = 0; k < 6 + kNj; ++k) {
      b.frictionloss[k] = c.m.dof_frictionloss[k] * (k < 6 ? 1.0f : s.frictionloss_scale[k - 6]);
      b.armature[k] = c.m.dof_armature[k] * (k < 6 ? 1.0f : s.armature_scale[k - 6]);
    }
    for (int k = 0; k < kNumBodies; ++k) b.mass[k] = c.m.body_mass[k] * s.mass_scale[k];
    b.mass[kTorso] += s.torso_mass_add;
    for (int k = 0; k < 5 * kNumPairs; ++k) b.pair_friction[k] = c.m.pair_friction[k];
    for (int k = 0; k < 2; ++k) b.pair_friction[5 * k] = b.pair_friction[5 * k + 1] = s.floor_friction;
    b.m.dof_frictionloss = b.frictionloss;
    b.m.dof_armature = b.armature;
    b.m.body_mass = b.mass;
    b.m.pair_friction = b.pair_friction;
  }

  RLT_HD static float unit(Philox& rng) { return joystick::unit(rng); }
  RLT_HD static float uniform(Philox& rng, float lo, float hi) { return joystick::uniform(rng, lo, hi); }
  RLT_HD static void draw_noise(const Params& p, State& s, Philox& rng) {
    for (int k = 0; k < 9 + 2 * kNj; ++k) {
      const float scale = k < 3                 ? p.noise_linvel
                          : k < 6               ? p.noise_gyro
                          : k < 9               ? p.noise_gravity
                          : k < 9 + kNj         ? p.noise_joint_pos
                                                : p.noise_joint_vel;
      s.noise[k] = p.noise_level == 0.0f ? 0.0f : (2.0f * unit(rng) - 1.0f) * p.noise_level * scale;
    }
  }
  RLT_HD static const float* sensor(const RobotCtx& c, int id) { return c.d.sensordata + c.m.sensor_adr[id]; }
  RLT_HD static void gravity(const RobotCtx& c, float* g) { joystick::gravity_in_site(c.d, kPelvisImu, g); }
  RLT_HD static void sample_command(const Params& p, State& s, Philox& rng) {
    const float x = uniform(rng, p.lin_vel_x[0], p.lin_vel_x[1]);
    const float y = uniform(rng, p.lin_vel_y[0], p.lin_vel_y[1]);
    const float z = uniform(rng, p.ang_vel_yaw[0], p.ang_vel_yaw[1]);
    const bool zero = unit(rng) < p.cmd_zero_prob;
    s.command[0] = zero ? 0.0f : x, s.command[1] = zero ? 0.0f : y, s.command[2] = zero ? 0.0f : z;
  }
  // Playground's gait.get_rz: the foot height the clock asks for at phase phi (cubic Bezier up, then down)
  RLT_HD static float gait_rz(float phi, float h) {
    const float x = (phi + 3.14159265358979f) / (2.0f * 3.14159265358979f);
    auto bezier = [](float y0, float y1, float t) { return y0 + (y1 - y0) * (t * t * t + 3.0f * (t * t * (1.0f - t))); };
    return x <= 0.5f ? bezier(0.0f, h, 2.0f * x) : bezier(h, 0.0f, 2.0f * x - 1.0f);
  }
  RLT_HD static void soft_limits(const Params& p, const ModelView<float>& m, int j, float& lo, float& hi) {
    const float a = m.jnt_range[2 * (j + 1)], b = m.jnt_range[2 * (j + 1) + 1];
    const float mid = 0.5f * (a + b), half = 0.5f * (b - a) * p.soft_joint_pos_limit_factor;
    lo = mid - half, hi = mid + half;
  }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State& s, Philox& rng) {
    s = State{};
    float* q = c.d.qpos;
    joystick::planar_start(q, kHomeHeight, rng);
    float ctrl[kNj];
    for (int j = 0; j < kNj; ++j) q[7 + j] = ctrl[j] = default_pose(j) * uniform(rng, 0.5f, 1.5f);
    for (int k = 0; k < 6 + kNj; ++k) c.d.qvel[k] = k < 6 ? uniform(rng, -0.5f, 0.5f) : 0.0f;
    s.phase_dt = 2.0f * 3.14159265358979f * c.dt * uniform(rng, p.gait_freq_min, p.gait_freq_max);
    s.phase[0] = s.obs_phase[0] = 0.0f;
    s.phase[1] = s.obs_phase[1] = 3.14159265358979f;
    sample_command(p, s, rng);
    for (int k = 0; k < 3; ++k) s.obs_command[k] = s.command[k];
    s.push_interval_steps =
        static_cast<std::int32_t>(rintf(uniform(rng, p.push_interval_min, p.push_interval_max) / c.dt));
    // domain randomization (Playground's randomize.py, here per episode)
    s.floor_friction = uniform(rng, p.rand_floor_friction_min, p.rand_floor_friction_max);
    for (int j = 0; j < kNj; ++j)
      s.frictionloss_scale[j] = uniform(rng, p.rand_frictionloss_min, p.rand_frictionloss_max);
    for (int j = 0; j < kNj; ++j) s.armature_scale[j] = uniform(rng, p.rand_armature_min, p.rand_armature_max);
    for (int b = 0; b < kNumBodies; ++b) s.mass_scale[b] = uniform(rng, p.rand_mass_min, p.rand_mass_max);
    s.torso_mass_add = uniform(rng, -p.rand_torso_mass, p.rand_torso_mass);
    // mj_forward at the start state: sensors (contact, forces) for the first observation
    Bound b;
    bind(p, c, s, b);
    physics_forward(b.m, c.d, ctrl, b.m.implicit_damping ? b.m.timestep : 0.0f);
    compute_sensors(b.m, c.d);
    for (int f = 0; f < 2; ++f) s.contact[f] = sensor(c, kFootFloor + f)[0] > 0.0f ? 1.0f : 0.0f;
    draw_noise(p, s, rng);
  }

  RLT_HD static float norm3(const float* x) { return sqrtf(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); }

  RLT_HD static void step(const Params& p, const RobotCtx& c, State& s, const float* a, Philox& rng, float& reward,
                          bool& terminated) {
    // Playground's push: the pelvis's horizontal velocity kicked before the physics
    if (p.push_enable != 0.0f && s.push_interval_steps > 0 && (s.push_step + 1) % s.push_interval_steps == 0) {
      const float theta = uniform(rng, 0.0f, 2.0f * 3.14159265358979f);
      const float mag = uniform(rng, p.push_magnitude_min, p.push_magnitude_max);
      c.d.qvel[0] += mag * cosf(theta), c.d.qvel[1] += mag * sinf(theta);
    }
    Bound b;
    bind(p, c, s, b);
    float ctrl[kNj];
    for (int j = 0; j < kNj; ++j) ctrl[j] = default_pose(j) + p.action_scale * a[j];
    // x* (site_xpos, site_xmat) stay at the last substep's start, as after MuJoCo's mj_step
    physics_step(b.m, c.d, ctrl, c.frame_skip, static_cast<int*>(nullptr));
    s.t += 1;

    bool contact[2], first[2];
    for (int f = 0; f < 2; ++f) {
      contact[f] = sensor(c, kFootFloor + f)[0] > 0.0f;
      const bool filt = contact[f] || s.last_contact[f] > 0.0f;
      first[f] = s.air_time[f] > 0.0f && filt;
      s.air_time[f] += c.dt;
      s.swing_peak[f] = joystick::max_of(s.swing_peak[f], c.d.site_xpos[3 * foot_site(f) + 2]);
    }
    // what this step's observation shows (Playground builds it here, before the updates below)
    for (int j = 0; j < kNj; ++j) s.obs_last_act[j] = s.last_act[j];
    for (int k = 0; k < 3; ++k) s.obs_command[k] = s.command[k];
    for (int f = 0; f < 2; ++f) {
      s.obs_phase[f] = s.phase[f], s.obs_air_time[f] = s.air_time[f];
      s.contact[f] = contact[f] ? 1.0f : 0.0f;
    }
    draw_noise(p, s, rng);

    const float* up = sensor(c, kUpvectorTorso);
    const bool done = up[2] < 0.0f || sensor(c, kFootFoot)[0] > 0.0f || sensor(c, kLeftFootRightShin)[0] > 0.0f ||
                      sensor(c, kRightFootLeftShin)[0] > 0.0f;
    const float* v = sensor(c, kLocalLinvel);
    const float* w = sensor(c, kGyro);
    const float* gv = sensor(c, kGlobalLinvel);
    const float* gw = sensor(c, kGlobalAngvel);
    const float* gvt = sensor(c, kGlobalLinvelTorso);
    const float* gwt = sensor(c, kGlobalAngvelTorso);
    const float* qj = c.d.qpos + 7;
    const float* qd = c.d.qvel + 6;
    const float* tau = c.d.actuator_force;
    const float* cmd = s.command;
    const float cmd_norm = norm3(cmd);
    float* tm = s.terms;
    const float ex = cmd[0] - v[0], ey = cmd[1] - v[1], ez = cmd[2] - w[2];
    tm[kTrackingLinVel] = expf(-(ex * ex + ey * ey) / p.tracking_sigma);
    tm[kTrackingAngVel] = expf(-(ez * ez) / p.tracking_sigma);
    tm[kLinVelZ] = gv[2] * gv[2] + gvt[2] * gvt[2];
    tm[kAngVelXy] = gwt[0] * gwt[0] + gwt[1] * gwt[1];
    const float ox = up[0] - 0.073f, oz = up[2] - 1.0f;
    tm[kOrientation] = ox * ox + up[1] * up[1] + oz * oz;
    const float dz = c.d.qpos[2] - p.base_height_target;
    tm[kBaseHeight] = dz * dz;
    float dev = 0.0f, pose = 0.0f, limits = 0.0f, tau1 = 0.0f, energy = 0.0f, rate = 0.0f, acc = 0.0f;
    for (int j = 0; j < kNj; ++j) {
      const float e = qj[j] - default_pose(j);
      dev += fabsf(e);
      pose += e * e;
      float lo, hi;
      soft_limits(p, b.m, j, lo, hi);
      limits += -joystick::min_of(qj[j] - lo, 0.0f) + joystick::max_of(qj[j] - hi, 0.0f);
      tau1 += fabsf(tau[j]);
      energy += fabsf(qd[j]) * fabsf(tau[j]);
      const float da = a[j] - s.last_act[j];
      rate += da * da;
      acc += c.d.qacc[6 + j] * c.d.qacc[6 + j];
    }
    tm[kTorques] = tau1;
    tm[kActionRate] = rate;
    tm[kEnergy] = energy;
    tm[kDofAcc] = acc;
    const float vxy = sqrtf(gv[0] * gv[0] + gv[1] * gv[1]);
    float clearance = 0.0f, air = 0.0f, height = 0.0f, phase_err = 0.0f, force = 0.0f, in_contact = 0.0f;
    for (int f = 0; f < 2; ++f) {
      const float* fv = sensor(c, kFeetLinvel + f);
      const float fz = c.d.site_xpos[3 * foot_site(f) + 2];
      clearance += fabsf(fz - p.max_foot_height) * sqrtf(sqrtf(fv[0] * fv[0] + fv[1] * fv[1]));
      air += joystick::min_of(((s.air_time[f] - 0.2f) * (first[f] ? 1.0f : 0.0f)), 0.5f - 0.2f);
      const float e = s.swing_peak[f] / p.max_foot_height - 1.0f;
      if (first[f]) height += e * e;
      const float r = fz - gait_rz(s.phase[f], p.max_foot_height);
      phase_err += r * r;
      force += joystick::max_of(fabsf(sensor(c, kFootForce + f)[2]) - p.max_contact_force, 0.0f);
      in_contact += contact[f] ? 1.0f : 0.0f;
    }
    tm[kFeetClearance] = clearance;
    tm[kFeetAirTime] = air;
    tm[kFeetSlip] = vxy * in_contact;
    tm[kFeetHeight] = height;
    const bool moving = vxy > 0.1f || fabsf(gw[2]) > 0.1f || cmd_norm > 0.01f;
    tm[kFeetPhase] = moving ? expf(-phase_err / 0.01f) : 0.0f;
    tm[kAlive] = 1.0f;
    tm[kStandStill] = cmd_norm < 0.01f ? dev : 0.0f;
    tm[kTermination] = done ? 1.0f : 0.0f;
    tm[kCollision] = (sensor(c, kHandThigh)[0] > 0.0f || sensor(c, kHandThigh + 1)[0] > 0.0f) ? 1.0f : 0.0f;
    tm[kContactForce] = force;
    tm[kJointDeviationKnee] = fabsf(qj[3] - default_pose(3)) + fabsf(qj[9] - default_pose(9));
    const float roll_w = cmd[1] > 0.1f ? 0.0f : 1.0f;  // hip roll may deviate for a leftward command
    tm[kJointDeviationHip] = roll_w * (fabsf(qj[1] - default_pose(1)) + fabsf(qj[7] - default_pose(7))) +
                             fabsf(qj[2] - default_pose(2)) + fabsf(qj[8] - default_pose(8));
    tm[kDofPosLimits] = limits;
    tm[kPose] = pose;
    float r = 0.0f;
    for (int k = 0; k < kNumTerms; ++k) r += p.w[k] * tm[k];
    reward = r * c.dt;
    terminated = done;

    s.push_step += 1;
    for (int f = 0; f < 2; ++f) s.phase[f] = fmodf(s.phase[f] + s.phase_dt + 3.14159265358979f, 2.0f * 3.14159265358979f) - 3.14159265358979f;
    for (int j = 0; j < kNj; ++j) s.last_act[j] = a[j];
    s.cmd_steps += 1;
    if (static_cast<float>(s.cmd_steps) > p.cmd_resample_steps) {
      sample_command(p, s, rng);
      s.cmd_steps = 0;
    }
    joystick::end_swings<2>(contact, s.air_time, s.swing_peak, s.last_contact);
  }

  // The command this step used, the base's velocities the tracking rewards compare with it, and the
  // base's heading (Task contract, envs/robot_env.h).
  RLT_HD static void tracking(const Params&, const RobotCtx& c, const State& s, float* out) {
    joystick::tracking(s.obs_command, sensor(c, kLocalLinvel), sensor(c, kGyro), c.d, kPelvisImu, out);
  }

  RLT_HD static void observe(const Params&, const RobotCtx& c, const State& s, float* o, float* co) {
    float g[3];
    gravity(c, g);
    const float* v = sensor(c, kLocalLinvel);
    const float* w = sensor(c, kGyro);
    for (int k = 0; k < 3; ++k) {
      o[k] = v[k] + s.noise[k], o[3 + k] = w[k] + s.noise[3 + k], o[6 + k] = g[k] + s.noise[6 + k];
      o[9 + k] = s.obs_command[k];
    }
    for (int j = 0; j < kNj; ++j) {
      o[12 + j] = c.d.qpos[7 + j] + s.noise[9 + j] - default_pose(j);
      o[41 + j] = c.d.qvel[6 + j] + s.noise[9 + kNj + j];
      o[70 + j] = s.obs_last_act[j];
    }
    for (int f = 0; f < 2; ++f) o[99 + f] = cosf(s.obs_phase[f]), o[101 + f] = sinf(s.obs_phase[f]);
    if (co == nullptr) return;
    for (int k = 0; k < kObsDim; ++k) co[k] = o[k];
    const float* acc = sensor(c, kAccelerometer);
    const float* gw = sensor(c, kGlobalAngvel);
    for (int k = 0; k < 3; ++k)
      co[103 + k] = w[k], co[106 + k] = acc[k], co[109 + k] = g[k], co[112 + k] = v[k], co[115 + k] = gw[k];
    for (int j = 0; j < kNj; ++j) {
      co[118 + j] = c.d.qpos[7 + j] - default_pose(j);
      co[147 + j] = c.d.qvel[6 + j];
      co[177 + j] = c.d.actuator_force[j];
    }
    co[176] = c.d.qpos[2];
    for (int f = 0; f < 2; ++f) {
      co[206 + f] = s.contact[f];
      const float* fv = sensor(c, kFeetLinvel + f);
      for (int k = 0; k < 3; ++k) co[208 + 3 * f + k] = fv[k];
      co[214 + f] = s.obs_air_time[f];
    }
  }
};

using G1Joystick = G1JoystickT<false>;
using G1JoystickRough = G1JoystickT<true>;

}  // namespace rlt
