// Reacher: Gymnasium's Reacher-v4 (gymnasium/envs/mujoco/reacher_v4.py) on our own two-link arm
// (envs/assets/reacher.xml: links 0.10 m and 0.11 m, as Gymnasium's; motors gear 0.5 N m).
// Physics: timestep 0.01 s, frame_skip 2, dt = 0.02 s. Episode: 50 steps, never terminated.
//
// qpos = (joint0, joint1, target_x, target_y); target_x, target_y are the target's world (x, y)
// (slide refs 0.1, -0.1 at a body placed at (0.1, -0.1), as Gymnasium's model).
//
// Observation (Box(11), float32, unbounded)
// | idx  | meaning                                   | unit  |
// |------|-------------------------------------------|-------|
// | 0-1  | cos(joint0), cos(joint1)                  |       |
// | 2-3  | sin(joint0), sin(joint1)                  |       |
// | 4-5  | target_x, target_y (qpos[2:4])            | m     |
// | 6-7  | joint velocities (qvel[0:2])              | rad/s |
// | 8-10 | fingertip - target (body centres of mass) | m     |
// Action (Box(2), [-1, 1]): torque of joint0, joint1 (x gear 0.5 N m).
// Reward: -|fingertip - target| - sum(action^2), with the distance taken BEFORE the step (as
//   Gymnasium v4, which computes the reward before do_simulation).
// Reset: qpos = qpos0 + U(-0.1, 0.1) for every component, then (target_x, target_y) = a goal
//   uniform in [-0.2, 0.2]^2 with norm < 0.2 (rejection sampling, at most 16 tries, then the last
//   try scaled into the disc); qvel = U(-0.005, 0.005), target velocities 0.
// Deviations: fingertip and target positions are current after the step (see RobotCtx::simulate).
#pragma once

#include "envs/robot_env.h"

namespace rlt {

struct Reacher {
  static constexpr const char* kName = "reacher";
  static constexpr const char* kAsset = "reacher.xml";
  static constexpr int kObsDim = 11;
  static constexpr int kActDim = 2;
  static constexpr int kCriticObsDim = 0;
  static constexpr int kMaxEpisodeSteps = 50;
  static constexpr int kFrameSkip = 2;
  static constexpr double kTimestep = 0.0;           // the asset's 0.01 s
  static constexpr int kFingertip = 3, kTarget = 4;  // body ids

  struct Params {
    float ctrl_cost_weight = 1.0f;   // reward -= weight * sum(a^2)
    float dist_weight = 1.0f;        // reward -= weight * |fingertip - target|
    float reset_noise = 0.1f;        // joint angles ~ qpos0 + U(-reset_noise, reset_noise)
    float goal_radius = 0.2f;        // goal uniform in the disc of this radius
    float reset_vel_noise = 0.005f;  // joint velocities ~ U(-.., ..)
    template <class V>
    void visit(V&& v) {
      v("ctrl_cost_weight", ctrl_cost_weight, "weight of the control cost sum(a^2)");
      v("dist_weight", dist_weight, "weight of the fingertip-target distance");
      v("reset_noise", reset_noise, "joint angle reset noise half-width (rad)", kNonNegative);
      v("goal_radius", goal_radius, "goal drawn uniformly in a disc of this radius (m)", kNonNegative);
      v("reset_vel_noise", reset_vel_noise, "joint velocity reset noise half-width (rad/s)", kNonNegative);
    }
  };
  struct State {
    std::uint32_t unused;
  };

  static void check_model(const Model& m) {
    if (m.nq != 4 || m.nv != 4 || m.nu != 2 || m.body_name.size() < 5 || m.body_name[kFingertip] != "fingertip" ||
        m.body_name[kTarget] != "target" || m.qpos0[2] != m.body_pos[3 * kTarget] ||
        m.qpos0[3] != m.body_pos[3 * kTarget + 1])
      throw std::runtime_error("reacher: envs/assets/reacher.xml does not have the layout envs/reacher.h expects");
  }

  RLT_HD static void reset(const Params& p, const RobotCtx& c, State&, Philox& rng) {
    float u[4];
    uniform4(rng, -p.reset_noise, p.reset_noise, u, 4);
    for (int k = 0; k < 2; ++k) c.d.qpos[k] = c.m.qpos0[k] + u[k];
    float gx = 0.0f, gy = 0.0f;
    for (int t = 0; t < 8; ++t) {  // two candidates per draw
      uniform4(rng, -p.goal_radius, p.goal_radius, u, 4);
      gx = u[0], gy = u[1];
      if (gx * gx + gy * gy < p.goal_radius * p.goal_radius) break;
      gx = u[2], gy = u[3];
      if (gx * gx + gy * gy < p.goal_radius * p.goal_radius) break;
    }
    const float n2 = gx * gx + gy * gy;
    if (n2 > 0.0f && !(n2 < p.goal_radius * p.goal_radius)) {  // (goal_radius 0: the goal at the origin)
      const float s = 0.99f * p.goal_radius / sqrtf(n2);
      gx *= s, gy *= s;
    }
    c.d.qpos[2] = gx, c.d.qpos[3] = gy;
    uniform4(rng, -p.reset_vel_noise, p.reset_vel_noise, u, 2);
    c.d.qvel[0] = u[0], c.d.qvel[1] = u[1], c.d.qvel[2] = 0.0f, c.d.qvel[3] = 0.0f;
  }

  RLT_HD static float distance(const RobotCtx& c) {
    float s = 0.0f;
    for (int k = 0; k < 3; ++k) {
      const float v = c.d.xipos[3 * kFingertip + k] - c.d.xipos[3 * kTarget + k];
      s += v * v;
    }
    return sqrtf(s);
  }

  RLT_HD static void step(const Params& p, const RobotCtx& c, State&, const float* a, Philox&, float& reward,
                          bool& terminated) {
    const float dist = distance(c);
    reward = -p.dist_weight * dist - p.ctrl_cost_weight * (a[0] * a[0] + a[1] * a[1]);
    c.simulate(a);
    terminated = false;
  }

  RLT_HD static void observe(const Params&, const RobotCtx& c, const State&, float* o, float*) {
    o[0] = cosf(c.d.qpos[0]), o[1] = cosf(c.d.qpos[1]);
    o[2] = sinf(c.d.qpos[0]), o[3] = sinf(c.d.qpos[1]);
    o[4] = c.d.qpos[2], o[5] = c.d.qpos[3];
    o[6] = c.d.qvel[0], o[7] = c.d.qvel[1];
    for (int k = 0; k < 3; ++k) o[8 + k] = c.d.xipos[3 * kFingertip + k] - c.d.xipos[3 * kTarget + k];
  }
};

}  // namespace rlt
