// HalfCheetah: Gymnasium's HalfCheetah-v4 (gymnasium/envs/mujoco/half_cheetah_v4.py, default
// exclude_current_positions_from_observation=True) on our own planar cheetah
// (envs/assets/halfcheetah.xml: a capsule torso and two three-hinge legs, six motors, 19.4 kg).
// The leg joints carry Gymnasium's springs (stiffness 240, 180, 120 back, 180, 120, 60 front, in
// N m/rad, resting at the initial pose) and dampings (6, 4.5, 3 back, 4.5, 3, 1.5 front, N m s/rad).
// Physics: timestep 0.01 s, frame_skip 5, dt = 0.05 s. Episode: 1000 steps, never terminated.
//
// qpos (9) = rootx, rootz (slide displacements from the initial pose, as Gymnasium's model), rooty
// (torso pitch), bthigh, bshin, bfoot, fthigh, fshin, ffoot; qvel (9) the same order.
//
// Observation (Box(17), float32, unbounded)
// | idx   | meaning                                       | unit      |
// |-------|-----------------------------------------------|-----------|
// | 0     | rootz (qpos[1])                               | m         |
// | 1     | rooty, torso pitch (qpos[2])                  | rad       |
// | 2-7   | joint angles (qpos[3:9])                      | rad       |
// | 8-9   | rootx, rootz velocity (qvel[0:2])             | m/s       |
// | 10    | torso pitch rate (qvel[2])                    | rad/s     |
// | 11-16 | joint velocities (qvel[3:9])                  | rad/s     |
// Action (Box(6), [-1, 1]): motors bthigh, bshin, bfoot, fthigh, fshin, ffoot.
// Reward: forward_reward_weight * (rootx after - before) / dt - ctrl_cost_weight * sum(a^2)
//   (defaults 1.0 and 0.1, Gymnasium's).
// Reset: qpos = qpos0 + U(-0.1, 0.1), qvel = 0.1 N(0, 1).
#pragma once

#include "envs/robot_env.h"

namespace rlt {

struct HalfCheetah {
  static constexpr const char* kName = "halfcheetah";
  static constexpr const char* kAsset = "halfcheetah.xml";
  static constexpr int kObsDim = 17;
  static constexpr int kActDim = 6;
  static constexpr int kCriticObsDim = 0;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kFrameSkip = 5;
  static constexpr double kTimestep = 0.0;  // the asset's 0.01 s

  struct Params {
    float forward_reward_weight = 1.0f;
    float ctrl_cost_weight = 0.1f;
    float reset_noise_scale = 0.1f;
    template <class V>
    void visit(V&& v) {
      v("forward_reward_weight", forward_reward_weight, "weight of the forward (x) velocity");
      v("ctrl_cost_weight", ctrl_cost_weight, "weight of the control cost sum(a^2)");
      v("reset_noise_scale", reset_noise_scale, "qpos + U(-s, s), qvel + s N(0, 1) at reset", kNonNegative);
    }
  };
  struct State {
    std::uint32_t unused;
  };

  static void check_model(const Model& m) {
    if (m.nq != 9 || m.nv != 9 || m.nu != 6 || m.jnt_type[0] != kJointSlide || m.jnt_name[0] != "rootx" ||
        m.jnt_name[1] != "rootz" || m.jnt_name[2] != "rooty")
      throw std::runtime_error(
          "halfcheetah: envs/assets/halfcheetah.xml does not have the layout envs/halfcheetah.h expects");
  }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State&, Philox& rng) {
    add_uniform_noise(rng, p.reset_noise_scale, c.d.qpos, c.m.nq);
    add_normal_noise(rng, p.reset_noise_scale, c.d.qvel, c.m.nv);
  }

  // The x the reward's forward velocity differentiates (rootx); VecEnv::ep_forward_speed.
  RLT_HD static float forward_position(const Params&, const RobotCtx& c) { return c.d.qpos[0]; }

  RLT_HD static void step(const Params& p, const RobotCtx& c, State&, const float* a, Philox&, float& reward,
                          bool& terminated) {
    const float x_before = forward_position(p, c);
    c.simulate(a);
    const float x_velocity = (forward_position(p, c) - x_before) / c.dt;
    reward = p.forward_reward_weight * x_velocity - p.ctrl_cost_weight * sum_squares(a, kActDim);
    terminated = false;
  }

  RLT_HD static void observe(const Params&, const RobotCtx& c, const State&, float* o, float*) {
    for (int k = 0; k < 8; ++k) o[k] = c.d.qpos[1 + k];
    for (int k = 0; k < 9; ++k) o[8 + k] = c.d.qvel[k];
  }
};

}  // namespace rlt
