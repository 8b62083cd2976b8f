// Ant: Gymnasium's Ant-v4 (gymnasium/envs/mujoco/ant_v4.py, defaults: use_contact_forces=False,
// exclude_current_positions_from_observation=True) on our own MJCF file with the proportions of
// Gymnasium's robot (envs/assets/ant.xml: a 0.25 m sphere torso, four three-segment legs of 0.08 m
// capsules, density 5, 0.91 kg; joints with armature 1 and damping 1; eight motors of gear 150;
// ankles limited to 30-70 degrees down). Physics: our semi-implicit Euler (Gymnasium's file asks
// for RK4), timestep 0.01 s, frame_skip 5, dt = 0.05 s. Episode: 1000 steps.
//
// qpos (15) = torso position (3), torso quaternion w x y z (4), 8 joint angles (hip, ankle per leg:
// front left, back left, back right, front right); qvel (14) = torso linear velocity (world, 3),
// angular velocity (body frame, 3), 8 joint velocities.
//
// Observation (Box(27), float32, unbounded)
// | idx   | meaning                                   | unit      |
// |-------|-------------------------------------------|-----------|
// | 0     | torso z (qpos[2])                         | m         |
// | 1-4   | torso orientation quaternion (qpos[3:7])  |           |
// | 5-12  | joint angles (qpos[7:15])                 | rad       |
// | 13-15 | torso linear velocity (qvel[0:3])         | m/s       |
// | 16-18 | torso angular velocity (qvel[3:6])        | rad/s     |
// | 19-26 | joint velocities (qvel[6:14])             | rad/s     |
// Action (Box(8), [-1, 1]): motor controls in actuator order (hip, ankle per leg).
// Reward: forward_reward_weight * x_velocity + healthy_reward - ctrl_cost_weight * sum(a^2), where
//   x_velocity = (torso centre of mass x after - before) / dt; healthy_reward is given every step
//   (terminate_when_unhealthy). Defaults 1, 1, 0.5 (Gymnasium's).
// Terminated: unhealthy, i.e. torso z outside [healthy_z_min, healthy_z_max] = [0.2, 1.0] (or a
//   non-finite state, which the framework handles).
// Reset: qpos = qpos0 + U(-0.1, 0.1) (torso quaternion renormalized), qvel = 0.1 N(0, 1).
//   qpos0 has the torso at z = 0.75 m with straight legs (ankles at 0, outside their limits, as in
//   Gymnasium), so an episode starts with the legs folding down and a short drop to ~0.6 m.
#pragma once

#include "envs/robot_env.h"

namespace rlt {

struct Ant {
  static constexpr const char* kName = "ant";
  static constexpr const char* kAsset = "ant.xml";
  static constexpr int kObsDim = 27;
  static constexpr int kActDim = 8;
  static constexpr int kCriticObsDim = 0;
  static constexpr int kMaxEpisodeSteps = 1000;
  static constexpr int kFrameSkip = 5;
  static constexpr double kTimestep = 0.0;  // the asset's 0.01 s
  static constexpr int kTorso = 1;          // body id

  struct Params {
    float forward_reward_weight = 1.0f;
    float ctrl_cost_weight = 0.5f;
    float healthy_reward = 1.0f;
    float healthy_z_min = 0.2f;
    float healthy_z_max = 1.0f;
    float terminate_when_unhealthy = 1.0f;
    float reset_noise_scale = 0.1f;
    template <class V>
    void visit(V&& v) {
      v("forward_reward_weight", forward_reward_weight, "weight of the torso's forward (x) velocity");
      v("ctrl_cost_weight", ctrl_cost_weight, "weight of the control cost sum(a^2)");
      v("healthy_reward", healthy_reward, "reward per step while healthy");
      v("healthy_z_min", healthy_z_min, "torso height below which the ant is unhealthy (m)");
      v("healthy_z_max", healthy_z_max, "torso height above which the ant is unhealthy (m)");
      v("terminate_when_unhealthy", terminate_when_unhealthy,
        "1: end the episode when unhealthy; 0: only withhold healthy_reward");
      v("reset_noise_scale", reset_noise_scale, "qpos + U(-s, s), qvel + s N(0, 1) at reset", kNonNegative);
    }
  };
  struct State {
    std::uint32_t unused;
  };

  static void check_model(const Model& m) {
    if (m.nq != 15 || m.nv != 14 || m.nu != 8 || m.njnt < 1 || m.jnt_type[0] != kJointFree ||
        m.body_name[kTorso] != "torso")
      throw std::runtime_error("ant: envs/assets/ant.xml does not have the layout envs/ant.h expects");
  }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State&, Philox& rng) {
    add_uniform_noise(rng, p.reset_noise_scale, c.d.qpos, c.m.nq);
    normalize_quat(c.d.qpos + 3);
    add_normal_noise(rng, p.reset_noise_scale, c.d.qvel, c.m.nv);
  }

  RLT_HD static bool healthy(const Params& p, const RobotCtx& c) {
    const float z = c.d.qpos[2];
    return z >= p.healthy_z_min && z <= p.healthy_z_max;
  }

  // The x the reward's forward velocity differentiates (the torso centre of mass x); VecEnv::ep_forward_speed.
  RLT_HD static float forward_position(const Params&, const RobotCtx& c) { return c.d.xipos[3 * kTorso]; }

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
    for (int k = 0; k < 13; ++k) o[k] = c.d.qpos[2 + k];
    for (int k = 0; k < 14; ++k) o[13 + k] = c.d.qvel[k];
  }
};

}  // namespace rlt
