// Walker2d: Gymnasium's Walker2d-v4 (gymnasium/envs/mujoco/walker2d_v4.py, defaults) on our own
// planar biped (envs/assets/walker2d.xml: torso, two legs of thigh, leg, foot; six motors of gear
// 100). Physics: timestep 0.004 s (the asset says 0.005), frame_skip 2, dt = 0.008 s as Gymnasium's
// (0.002 s x 4). Episode: 1000 steps.
//
// qpos (9) = rootx, rootz, rooty, thigh_right, leg_right, foot_right, thigh_left, leg_left,
// foot_left. Our rootz is the displacement from the initial torso height 1.25 m; Gymnasium's model
// gives rootz ref=1.25, so here z = qpos[1] + 1.25 is what Gymnasium calls qpos[1].
//
// Observation (Box(17), float32, unbounded)
// | idx   | meaning                                         | unit  |
// |-------|-------------------------------------------------|-------|
// | 0     | torso height z = rootz + 1.25                   | m     |
// | 1     | torso pitch (rooty)                             | rad   |
// | 2-7   | joint angles (right thigh, leg, foot, left ...) | rad   |
// | 8-16  | qvel, each clipped to [-10, 10]                 | m/s, rad/s |
// Action (Box(6), [-1, 1]): motors in the joint order above.
// Reward: forward_reward_weight * (rootx after - before) / dt + healthy_reward
//   - ctrl_cost_weight * sum(a^2); defaults 1, 1, 1e-3 (Gymnasium's).
// Terminated (unhealthy): z outside (0.8, 2.0) or pitch outside (-1, 1).
// Reset: qpos = qpos0 + U(-5e-3, 5e-3), qvel = U(-5e-3, 5e-3).
#pragma once

#include "envs/robot_env.h"

namespace rlt {

struct Walker2d {
  static constexpr const char* kName = "walker2d";
  static constexpr const char* kAsset = "walker2d.xml";
  static constexpr int kObsDim = 17;
  static constexpr int kActDim = 6;
  static constexpr int kCriticObsDim = 0;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kFrameSkip = 2;
  static constexpr double kTimestep = 0.004;
  static constexpr float kRootZ0 = 1.25f;  // torso height at qpos0 (checked against the asset)

  struct Params {
    float forward_reward_weight = 1.0f;
    float ctrl_cost_weight = 1e-3f;
    float healthy_reward = 1.0f;
    float healthy_z_min = 0.8f;
    float healthy_z_max = 2.0f;
    float healthy_angle_max = 1.0f;
    float terminate_when_unhealthy = 1.0f;
    float reset_noise_scale = 5e-3f;
    template <class V>
    void visit(V&& v) {
      v("forward_reward_weight", forward_reward_weight, "weight of the forward (x) velocity");
      v("ctrl_cost_weight", ctrl_cost_weight, "weight of the control cost sum(a^2)");
      v("healthy_reward", healthy_reward, "reward per step while healthy");
      v("healthy_z_min", healthy_z_min, "healthy while the torso height > this (m)");
      v("healthy_z_max", healthy_z_max, "healthy while the torso height < this (m)");
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
    if (m.nq != 9 || m.nv != 9 || m.nu != 6 || m.jnt_name[0] != "rootx" || m.jnt_name[1] != "rootz" ||
        m.jnt_name[2] != "rooty" || std::fabs(m.body_pos[3 * 1 + 2] - kRootZ0) > 1e-9)
      throw std::runtime_error("walker2d: envs/assets/walker2d.xml does not have the layout envs/walker2d.h expects");
  }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State&, Philox& rng) {
    add_uniform_noise(rng, p.reset_noise_scale, c.d.qpos, c.m.nq);
    add_uniform_noise(rng, p.reset_noise_scale, c.d.qvel, c.m.nv);
  }

  RLT_HD static bool healthy(const Params& p, const RobotCtx& c) {
    const float z = c.d.qpos[1] + kRootZ0, angle = c.d.qpos[2];
    return z > p.healthy_z_min && z < p.healthy_z_max && angle > -p.healthy_angle_max && angle < p.healthy_angle_max;
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
    for (int k = 1; k < 8; ++k) o[k] = c.d.qpos[1 + k];
    for (int k = 0; k < 9; ++k) o[8 + k] = clamp(c.d.qvel[k], -10.0f, 10.0f);
  }
};

}  // namespace rlt
