// Pendulum-v1, with Gymnasium's equations, constants and limits
// (gymnasium/envs/classic_control/pendulum.py).
//
// Observation (Box(3), float32)
// | idx | meaning                         | range      | unit  |
// |-----|---------------------------------|------------|-------|
// | 0   | cos(theta), theta = 0 upright   | [-1, 1]    |       |
// | 1   | sin(theta)                      | [-1, 1]    |       |
// | 2   | angular velocity theta_dot      | [-8, 8]    | rad/s |
// Action (Box(1), float32)
// | idx | meaning                         | range      | unit  |
// |-----|---------------------------------|------------|-------|
// | 0   | torque at the pivot             | [-2, 2]    | N m   |
// The torque is clipped to [-max_torque, max_torque] before it is used, in the dynamics and in
// the cost alike.
// Reward: -(angle_normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2), from the state before the
// step; in [-16.27, 0].
// Terminated: never. Truncated: 200 steps.
// Reset: theta uniform in [-pi, pi), theta_dot uniform in [-1, 1).
//
// One deliberate numeric difference: Gymnasium lets theta grow without bound as the pendulum
// spins; here it is wrapped to [-pi, pi] after each step. Observation and reward are 2*pi-periodic
// in theta, so nothing Gymnasium exposes changes, and float32 keeps its resolution on theta
// however long the episode runs.
#pragma once

#include <vector>

#include "envs/draw_pose.h"
#include "sim/lanes.h"
#include "sim/philox.h"
#include "sim/spaces.h"
#include "sim/vec_env.h"  // DrawGeom

namespace rlt {

struct Pendulum {
  static constexpr const char* kName = "pendulum";
  static constexpr int kObsDim = 3;
  static constexpr int kActDim = 1;
  static constexpr bool kDiscrete = false;
  static constexpr int kNumActions = 0;
  static constexpr int kMaxEpisodeSteps = 200;

  static constexpr float kPi = 3.14159265358979323846f;

  struct Params {
    float gravity = 10.0f;       // m/s^2 (Gymnasium's g)
    float mass = 1.0f;           // kg
    float length = 1.0f;         // m
    float dt = 0.05f;            // s per step (semi-implicit Euler)
    float max_speed = 8.0f;      // rad/s, theta_dot is clipped to +-max_speed
    float max_torque = 2.0f;     // N m, the action is clipped to +-max_torque
    float speed_cost = 0.1f;     // weight of theta_dot^2 in the cost
    float torque_cost = 0.001f;  // weight of u^2 in the cost
    float reset_angle = kPi;     // reset theta ~ U(-reset_angle, reset_angle) (Gymnasium's x_init)
    float reset_speed = 1.0f;    // reset theta_dot ~ U(-reset_speed, reset_speed) (y_init)
    template <class V>
    void visit(V&& v) {
      v("gravity", gravity, "gravitational acceleration (m/s^2)", kNonNegative);
      v("mass", mass, "pendulum mass (kg)", kPositive);
      v("length", length, "pendulum length (m)", kPositive);
      v("dt", dt, "time step (s)", kPositive);
      v("max_speed", max_speed, "angular velocity limit (rad/s)", kPositive);
      v("max_torque", max_torque, "torque limit; actions are clipped to it (N m)", kNonNegative);
      v("speed_cost", speed_cost, "cost weight of theta_dot^2");
      v("torque_cost", torque_cost, "cost weight of torque^2");
      v("reset_angle", reset_angle, "reset theta ~ U(-reset_angle, reset_angle) (rad)", kNonNegative);
      v("reset_speed", reset_speed, "reset theta_dot ~ U(-reset_speed, reset_speed) (rad/s)", kNonNegative);
    }
  };

  // Steps kLanes envs at once on the CPU (sim/lanes.h): StateT, step and observe are templates over
  // the float type F (float: one env; f32xL: a lane per env).
  static constexpr bool kStepsInLanes = true;
  // Gymnasium's `state` = [th, thdot], in that order.
  template <class F>
  struct StateT {
    F theta;      // rad, 0 upright, kept in [-pi, pi] after a step
    F theta_dot;  // rad/s
  };
  using State = StateT<float>;

  static void spaces(const Params& p, Space& obs, Space& act) {
    obs = Space{kObsDim, false, 0, {-1.0f, -1.0f, -p.max_speed}, {1.0f, 1.0f, p.max_speed}};
    act = Space{kActDim, false, 0, {-p.max_torque}, {p.max_torque}};
  }

  // Gymnasium's angle_normalize: ((x + pi) mod 2 pi) - pi with a floored modulo: [-pi, pi), where
  // float rounding may also land on +pi.
  template <class F>
  RLT_HD static F angle_normalize(F x) {
    const float two_pi = 2.0f * kPi;
    const F y = x + kPi;
    return y - two_pi * m_floor(y / two_pi) - kPi;
  }

  RLT_HD static void reset(const Params& p, State& s, Philox& rng) {
    float u[2];
    uniform4(rng, -1.0f, 1.0f, u, 2);
    s = State{p.reset_angle * u[0], p.reset_speed * u[1]};
  }

  template <class F, class Rng>
  RLT_HD static void step(const Params& p, StateT<F>& s, const F* action, Rng&, F& reward, MaskOf<F>& terminated) {
    const F u = clamp(action[0], -p.max_torque, p.max_torque);
    const F th = angle_normalize(s.theta);
    const F cost = th * th + p.speed_cost * s.theta_dot * s.theta_dot + p.torque_cost * u * u;
    F sin_theta, cos_theta;
    m_sincos(s.theta, sin_theta, cos_theta);
    F theta_dot = s.theta_dot +
                  (3.0f * p.gravity / (2.0f * p.length) * sin_theta + 3.0f / (p.mass * p.length * p.length) * u) * p.dt;
    theta_dot = clamp(theta_dot, -p.max_speed, p.max_speed);
    s.theta = angle_normalize(s.theta + theta_dot * p.dt);
    s.theta_dot = theta_dot;
    reward = -cost;
    terminated = MaskOf<F>{};
  }

  template <class F>
  RLT_HD static void observe(const Params&, const StateT<F>& s, F* obs) {
    F sin_theta, cos_theta;
    m_sincos(s.theta, sin_theta, cos_theta);
    obs[0] = cos_theta;
    obs[1] = sin_theta;
    obs[2] = s.theta_dot;
  }

  // Drawing (viewer/, optional hook; VecEnvT detects it): the pivot and the rod (Gymnasium's
  // rendering: theta = 0 up, positive counter-clockwise), in the x-z plane.
  static constexpr float kDrawPivotZ = 1.3f;  // pivot height (m)
  static std::vector<DrawGeom> draw_geoms(const Params& p) {
    return {DrawGeom{3, {0.06f, 0.5f * p.length, 0.0f}, {0.8f, 0.3f, 0.3f, 1.0f}},  // rod
            DrawGeom{2, {0.08f, 0.0f, 0.0f}, {0.1f, 0.1f, 0.1f, 1.0f}}};            // pivot
  }
  RLT_HD static void draw(const Params& p, const State& s, float* poses) {
    const float dx = -sinf(s.theta), dz = cosf(s.theta);
    draw_pose_xz(poses + 0, 0.5f * p.length * dx, 0.0f, kDrawPivotZ + 0.5f * p.length * dz, dx, dz);
    draw_pose_at(poses + 12, 0.0f, -0.07f, kDrawPivotZ);
  }
};

}  // namespace rlt
