// Hopper: Gymnasium's Hopper-v4 (gymnasium/envs/mujoco/hopper_v4.py, defaults) on our own planar
// one-legged hopper (envs/assets/hopper.xml: torso, thigh, leg, foot, three motors of gear 150).
// Physics: timestep 0.004 s (the asset says 0.005), frame_skip 2, dt = 0.008 s as Gymnasium's
// (0.002 s x 4). Episode: 1000 steps.
//
// qpos (6) = rootx, rootz, rooty, thigh, leg, foot. Our rootz is the displacement from the initial
// torso height 1.25 m; Gymnasium's model gives rootz ref=1.25, so its qpos[1] is the height
// itself: here z = qpos[1] + 1.25 is what Gymnasium calls qpos[1] (observation 0, healthy range).
//
// Observation (Box(11), float32, unbounded)
// | idx  | meaning                                          | unit  |
// |------|--------------------------------------------------|-------|
// | 0    | torso height z = rootz + 1.25                    | m     |
// | 1    | torso pitch (rooty)                              | rad   |
// | 2-4  | thigh, leg, foot angles                          | rad   |
// | 5-10 | qvel (x, z velocity, pitch rate, 3 joint rates), each clipped to [-10, 10] | m/s, rad/s |
// Action (Box(3), [-1, 1]): motors thigh, leg, foot.
// Reward: forward_reward_weight * (rootx after - before) / dt + healthy_reward
//   - ctrl_cost_weight * sum(a^2); defaults 1, 1, 1e-3 (Gymnasium's).
// Terminated (unhealthy): any of qpos[2:], qvel outside (-100, 100), z <= 0.7, or |pitch| >= 0.2.
// Reset: qpos = qpos0 + U(-5e-3, 5e-3), qvel = U(-5e-3, 5e-3).
#pragma once

#include "envs/robot_env.h"

namespace rlt {

struct Hopper {
  static constexpr const char* kName = "hopper";
  static constexpr const char* kAsset = "hopper.xml";
  static constexpr int kObsDim = 11;
  static constexpr int kActDim = 3;
  static constexpr int kCriticObsDim = 0;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kFrameSkip = 2;
  static constexpr double kTimestep = 0.004;
  static constexpr float kRootZ0 = 1.25f;  // torso height at qpos0 (checked against the asset)

  struct Params {
    float forward_reward_weight = 1.0f;
    float ctrl_cost_weight = 1e-3f;
    float healthy_reward = 1.0f;
    float healthy_state_max = 100.0f;
    float healthy_z_min = 0.7f;
    float healthy_angle_max = 0.2f;
    float terminate_when_unhealthy = 1.0f;
    float reset_noise_scale = 5e-3f;
    template <class V>
    void visit(V&& v) {
      v("forward_reward_weight", forward_reward_weight, "weight of the forward (x) velocity");
      v("ctrl_cost_weight", ctrl_cost_weight, "weight of the control cost sum(a^2)");
      v("healthy_reward", healthy_reward, "reward per step while healthy");
      v("healthy_state_max", healthy_state_max, "healthy while every |qpos[2:]|, |qvel| < this", kPositive);
      v("healthy_z_min", healthy_z_min, "healthy while the torso height > this (m)");
      v("healthy_angle_max", healthy_angle_max, "healthy while |torso pitch| < this (rad)", kPositive);
      v("terminate_when_unhealthy", terminate_when_unhealthy,
        "1: end the episode when unhealthy; 0: only withhold healthy_reward");
      v("reset_noise_scale", reset_noise_scale, "qpos, qvel + U(-s, s) at reset", kNonNegative);
    }
  };
  struct State {
    std::uint32_t unused;
  };

  static void check_model(const Model& m) {
    if (m.nq != 6 || m.nv != 6 || m.nu != 3 || m.jnt_name[0] != "rootx" || m.jnt_name[1] != "rootz" ||
        m.jnt_name[2] != "rooty" || std::fabs(m.body_pos[3 * 1 + 2] - kRootZ0) > 1e-9)
      throw std::runtime_error("hopper: envs/assets/hopper.xml does not have the layout envs/hopper.h expects");
  }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State&, Philox& rng) {
    add_uniform_noise(rng, p.reset_noise_scale, c.d.qpos, c.m.nq);
    add_uniform_noise(rng, p.reset_noise_scale, c.d.qvel, c.m.nv);
  }

  RLT_HD static bool healthy(const Params& p, const RobotCtx& c) {
    bool ok = true;
    for (int k = 2; k < 6; ++k) ok = ok && fabsf(c.d.qpos[k]) < p.healthy_state_max;
    for (int k = 0; k < 6; ++k) ok = ok && fabsf(c.d.qvel[k]) < p.healthy_state_max;
    const float z = c.d.qpos[1] + kRootZ0, angle = c.d.qpos[2];
    return ok && z > p.healthy_z_min && angle > -p.healthy_angle_max && angle < p.healthy_angle_max;
  }

  // The x the reward's forward velocity differentiates (rootx); VecEnv::ep_forward_speed.
  RLT_HD static float forward_position(const Params&, const RobotCtx& c) { return c.d.qpos[0]; }

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
    o[0] = c.d.qpos[1] + kRootZ0;
    for (int k = 1; k < 5; ++k) o[k] = c.d.qpos[1 + k];
    for (int k = 0; k < 6; ++k) o[5 + k] = clamp(c.d.qvel[k], -10.0f, 10.0f);
  }
};

}  // namespace rlt
