// Humanoid: Gymnasium's Humanoid-v4 (gymnasium/envs/mujoco/humanoid_v4.py, defaults) on our own
// biped (envs/assets/humanoid.xml: 11 bodies, 17 hinges with 17 motors, 41.2 kg; standing, the
// torso frame is at 1.29 m). Physics: timestep 0.005 s (the asset's), frame_skip 3, dt = 0.015 s as
// Gymnasium's (0.003 s x 5). Episode: 1000 steps.
//
// qpos (24) = torso position (3), quaternion (4), 17 joint angles; qvel (23) = torso linear
// velocity (world, 3), angular velocity (body frame, 3), 17 joint velocities. 12 bodies with the world.
//
// Observation (Box(332), float32, unbounded); Gymnasium v4's layout, with our 12 bodies (v4: 14)
// | idx     | meaning                                                 | unit      |
// |---------|---------------------------------------------------------|-----------|
// | 0-21    | qpos[2:]: torso z, quaternion, joint angles             | m, rad    |
// | 22-44   | qvel                                                    | m/s, rad/s|
// | 45-164  | cinert: 10 per body (world first)                       | kg, kg m, kg m^2 |
// | 165-236 | cvel: 6 per body (angular, linear)                      | rad/s, m/s|
// | 237-259 | qfrc_actuator (nv)                                      | N, N m    |
// | 260-331 | cfrc_ext: 6 per body (world first, always 0): the       | N m, N    |
// |         | contact torque (about the torso origin), then force     |           |
// Action (Box(17), [-1, 1]): motors in actuator order (abdomen y z x, right hip x z y, right knee,
//   left hip x z y, left knee, right shoulder 1 2, elbow, left shoulder 1 2, elbow).
// Reward: forward_reward_weight * x velocity of the centre of mass of all bodies ((after -
//   before) / dt) + healthy_reward - ctrl_cost_weight * sum(a^2); defaults 1.25, 5, 0.1 (v4's; v4
//   computes but does not subtract a contact cost).
// Terminated (unhealthy): torso z outside (1.0, 2.0).
// Reset: qpos = qpos0 + U(-0.01, 0.01) (quaternion renormalized), qvel = U(-0.01, 0.01).
// Deviations: cinert and cvel are ours (sim/dynamics.h): inertia and velocity about each kinematic
//   tree's root body origin, not MuJoCo's subtree centre of mass. cfrc_ext (d.cfrc_ext,
//   sim/contact.h: contact_external_forces) is the contact wrench on each body in the last physics
//   substep (MuJoCo: of the last mj_step), world frame, torque about the same point as cinert and
//   cvel (the torso origin for every body here; MuJoCo: the subtree centre of mass) taken at the
//   post-step state, as those are; the force is the one solved under MuJoCo's soft-constraint law
//   (sim/constraints.h, as MuJoCo's efc_force). Only the floor touches the body
//   (the body geoms have conaffinity 0), so a row is non-zero only for a body with a geom on the
//   floor. After a reset it is zeros (no step taken yet).
#pragma once

#include "envs/robot_env.h"

namespace rlt {

struct Humanoid {
  static constexpr const char* kName = "humanoid";
  static constexpr const char* kAsset = "humanoid.xml";
  static constexpr int kNumBodies = 12;
  static constexpr int kObsDim = 22 + 23 + 10 * kNumBodies + 6 * kNumBodies + 23 + 6 * kNumBodies;
  static constexpr int kActDim = 17;
  static constexpr int kCriticObsDim = 0;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kFrameSkip = 3;
  static constexpr double kTimestep = 0.0;  // the asset's 0.005 s

  struct Params {
    float forward_reward_weight = 1.25f;
    float ctrl_cost_weight = 0.1f;
    float healthy_reward = 5.0f;
    float healthy_z_min = 1.0f;
    float healthy_z_max = 2.0f;
    float terminate_when_unhealthy = 1.0f;
    float reset_noise_scale = 1e-2f;
    template <class V>
    void visit(V&& v) {
      v("forward_reward_weight", forward_reward_weight, "weight of the centre of mass's forward (x) velocity");
      v("ctrl_cost_weight", ctrl_cost_weight, "weight of the control cost sum(a^2)");
      v("healthy_reward", healthy_reward, "reward per step while healthy");
      v("healthy_z_min", healthy_z_min, "healthy while the torso height > this (m)");
      v("healthy_z_max", healthy_z_max, "healthy while the torso height < this (m)");
      v("terminate_when_unhealthy", terminate_when_unhealthy,
        "1: end the episode when unhealthy; 0: only withhold healthy_reward");
      v("reset_noise_scale", reset_noise_scale, "qpos, qvel + U(-s, s) at reset", kNonNegative);
    }
  };
  struct State {
    std::uint32_t unused;
  };

  static void check_model(const Model& m) {
    if (m.nq != 24 || m.nv != 23 || m.nu != 17 || m.nbody != kNumBodies || m.jnt_type[0] != kJointFree)
      throw std::runtime_error("humanoid: envs/assets/humanoid.xml does not have the layout envs/humanoid.h expects");
  }

  RLT_HD static float mass_center_x(const RobotCtx& c) {
    float mx = 0.0f, mass = 0.0f;
    for (int b = 1; b < kNumBodies; ++b) {
      mx += c.m.body_mass[b] * c.d.xipos[3 * b];
      mass += c.m.body_mass[b];
    }
    return mx / mass;
  }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State&, Philox& rng) {
    add_uniform_noise(rng, p.reset_noise_scale, c.d.qpos, c.m.nq);
    normalize_quat(c.d.qpos + 3);
    add_uniform_noise(rng, p.reset_noise_scale, c.d.qvel, c.m.nv);
  }

  RLT_HD static bool healthy(const Params& p, const RobotCtx& c) {
    const float z = c.d.qpos[2];
    return z > p.healthy_z_min && z < p.healthy_z_max;
  }

  // The x the reward's forward velocity differentiates (the centre of mass x); VecEnv::ep_forward_speed.
  RLT_HD static float forward_position(const Params&, const RobotCtx& c) { return mass_center_x(c); }

  RLT_HD static void step(const Params& p, const RobotCtx& c, State&, const float* a, Philox&, float& reward,
                          bool& terminated) {
    const float x_before = forward_position(p, c);
    c.simulate(a);
    const float x_velocity = (forward_position(p, c) - x_before) / c.dt;
    const bool ok = healthy(p, c);
    const bool terminate = p.terminate_when_unhealthy != 0.0f;
    reward = p.forward_reward_weight * x_velocity + ((ok || terminate) ? p.healthy_reward : 0.0f) -
             p.ctrl_cost_weight * sum_squares(a, kActDim);
    terminated = terminate && !ok;
  }

  RLT_HD static void observe(const Params&, const RobotCtx& c, const State&, float* o, float*) {
    c.com_quantities();  // cinert, cvel for the current state
    int at = 0;
    for (int k = 2; k < 24; ++k) o[at++] = c.d.qpos[k];
    for (int k = 0; k < 23; ++k) o[at++] = c.d.qvel[k];
    for (int k = 0; k < 10 * kNumBodies; ++k) o[at++] = c.d.cinert[k];
    for (int k = 0; k < 6 * kNumBodies; ++k) o[at++] = c.d.cvel[k];
    for (int k = 0; k < 23; ++k) o[at++] = c.d.qfrc_actuator[k];
    for (int k = 0; k < 6 * kNumBodies; ++k) o[at++] = c.d.cfrc_ext[k];  // from the last physics_step
  }
};

}  // namespace rlt
