// Acrobot-v1, with Gymnasium's equations, constants and termination rule
// (gymnasium/envs/classic_control/acrobot.py: the "book" dynamics of Sutton & Barto 1998,
// integrated by one classical RK4 step over dt with the torque held constant).
//
// Observation (Box(6), float32)
// | idx | meaning                                      | range            | unit  |
// |-----|----------------------------------------------|------------------|-------|
// | 0   | cos(theta1), theta1 = 0 hanging down         | [-1, 1]          |       |
// | 1   | sin(theta1)                                  | [-1, 1]          |       |
// | 2   | cos(theta2), theta2 relative to link 1       | [-1, 1]          |       |
// | 3   | sin(theta2)                                  | [-1, 1]          |       |
// | 4   | angular velocity of link 1, dtheta1          | [-4 pi, 4 pi]    | rad/s |
// | 5   | angular velocity of link 2, dtheta2          | [-9 pi, 9 pi]    | rad/s |
// Action (Discrete(3)): torque on the joint between the links, 0 -> -1, 1 -> 0, 2 -> +1 (N m).
// Reward: -1 every step, 0 on the step that terminates.
// Terminated: the tip is more than one link length above the pivot,
//             -cos(theta1) - cos(theta2 + theta1) > 1. Truncated: 500 steps.
// Reset: theta1, theta2, dtheta1, dtheta2 each uniform in [-0.1, 0.1).
//
// After the RK4 step the angles are wrapped to [-pi, pi] (Gymnasium's wrap()) and the velocities
// clipped. Gymnasium's torque_noise_max is 0 in Acrobot-v1 and is not modelled; its LINK_LENGTH_2
// only affects rendering and is not a parameter here.
#pragma once

#include <vector>

#include "envs/draw_pose.h"
#include "sim/lanes.h"
#include "sim/philox.h"
#include "sim/spaces.h"
#include "sim/vec_env.h"  // DrawGeom

namespace rlt {

struct Acrobot {
  static constexpr const char* kName = "acrobot";
  static constexpr int kObsDim = 6;
  static constexpr int kActDim = 1;
  static constexpr bool kDiscrete = true;
  static constexpr int kNumActions = 3;
  static constexpr int kMaxEpisodeSteps = 500;

  static constexpr float kPi = 3.14159265358979323846f;

  struct Params {
    float dt = 0.2f;             // s per step (one RK4 step)
    float gravity = 9.8f;        // m/s^2
    float link_length_1 = 1.0f;  // m
    float link_mass_1 = 1.0f;    // kg
    float link_mass_2 = 1.0f;    // kg
    float link_com_1 = 0.5f;     // m, pivot to link 1's centre of mass
    float link_com_2 = 0.5f;     // m, joint to link 2's centre of mass
    float link_moi = 1.0f;       // kg m^2, moment of inertia of each link
    float max_vel_1 = 4 * kPi;   // rad/s, dtheta1 is clipped to +-max_vel_1
    float max_vel_2 = 9 * kPi;   // rad/s, dtheta2 is clipped to +-max_vel_2
    float torque = 1.0f;         // N m, magnitude of actions 0 and 2
    float goal_height = 1.0f;    // tip height (in link lengths, above the pivot) that terminates
    float reset_noise = 0.1f;    // half-width of the uniform reset distribution
    template <class V>
    void visit(V&& v) {
      v("dt", dt, "time step, integrated by one RK4 step (s)", kPositive);
      v("gravity", gravity, "gravitational acceleration (m/s^2)", kNonNegative);
      v("link_length_1", link_length_1, "length of link 1 (m)", kPositive);
      v("link_mass_1", link_mass_1, "mass of link 1 (kg)", kPositive);
      v("link_mass_2", link_mass_2, "mass of link 2 (kg)", kPositive);
      v("link_com_1", link_com_1, "pivot to link 1 centre of mass (m)", kNonNegative);
      v("link_com_2", link_com_2, "joint to link 2 centre of mass (m)", kNonNegative);
      v("link_moi", link_moi, "moment of inertia of each link (kg m^2)", kPositive);
      v("max_vel_1", max_vel_1, "dtheta1 limit (rad/s)", kPositive);
      v("max_vel_2", max_vel_2, "dtheta2 limit (rad/s)", kPositive);
      v("torque", torque, "joint torque of actions 0 (-) and 2 (+) (N m)", kNonNegative);
      v("goal_height", goal_height, "-cos(t1) - cos(t1 + t2) above this terminates");
      v("reset_noise", reset_noise, "reset state ~ U(-reset_noise, reset_noise)", kNonNegative);
    }
  };

  // Steps kLanes envs at once on the CPU (sim/lanes.h): StateT, step and observe are templates over
  // the float type F (float: one env; f32xL: a lane per env).
  static constexpr bool kStepsInLanes = true;
  // Gymnasium's `state` = [theta1, theta2, dtheta1, dtheta2], in that order.
  template <class F>
  struct StateT {
    F theta1, theta2;    // rad, wrapped to [-pi, pi]
    F dtheta1, dtheta2;  // rad/s
  };
  using State = StateT<float>;

  static void spaces(const Params& p, Space& obs, Space& act) {
    obs = Space{kObsDim,
                false,
                0,
                {-1.0f, -1.0f, -1.0f, -1.0f, -p.max_vel_1, -p.max_vel_2},
                {1.0f, 1.0f, 1.0f, 1.0f, p.max_vel_1, p.max_vel_2}};
    act = Space{1, true, kNumActions, {0.0f}, {static_cast<float>(kNumActions - 1)}};
  }

  // Gymnasium's _dsdt ("book" branch): d/dt of (theta1, theta2, dtheta1, dtheta2) under torque a.
  template <class F>
  RLT_HD static void derivs(const Params& p, const F* s, F a, F* ds) {
    const float m1 = p.link_mass_1, m2 = p.link_mass_2, l1 = p.link_length_1;
    const float lc1 = p.link_com_1, lc2 = p.link_com_2, i1 = p.link_moi, i2 = p.link_moi;
    const float g = p.gravity;
    const F theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
    F s2, c2, sin_theta12, sin_theta1, unused;
    m_sincos(theta2, s2, c2);
    m_sincos(theta1 + theta2, sin_theta12, unused);
    m_sincos(theta1, sin_theta1, unused);
    const F d1 = m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2) + i1 + i2;
    const F d2 = m2 * (lc2 * lc2 + l1 * lc2 * c2) + i2;
    // Gymnasium writes cos(x - pi/2); sin(x) is the same function without pi's rounding error.
    const F phi2 = m2 * lc2 * g * sin_theta12;
    const F phi1 = -m2 * l1 * lc2 * dtheta2 * dtheta2 * s2 - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * s2 +
                   (m1 * lc1 + m2 * l1) * g * sin_theta1 + phi2;
    const F ddtheta2 =
        (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1 * dtheta1 * s2 - phi2) / (m2 * lc2 * lc2 + i2 - d2 * d2 / d1);
    const F ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    ds[0] = dtheta1;
    ds[1] = dtheta2;
    ds[2] = ddtheta1;
    ds[3] = ddtheta2;
  }

  // Gymnasium's wrap(x, -pi, pi): shifts by 2 pi until x is in [-pi, pi]. The loop is what
  // Gymnasium does (one shift in practice); far-out values are first reduced in one go so that
  // the loop always ends, and a non-finite x is left for VecEnv's non-finite check. (In lanes, a
  // lane is shifted while it is out of range.)
  template <class F>
  RLT_HD static F wrap_angle(F x) {
    const float two_pi = 2.0f * kPi;
    const MaskOf<F> finite = is_finite(x);
    x = finite && (x > 4 * kPi || x < -4 * kPi) ? x - two_pi * m_floor((x + kPi) / two_pi) : x;
    for (MaskOf<F> m = finite && x > kPi; any(m); m = finite && x > kPi) x = m ? x - two_pi : x;
    for (MaskOf<F> m = finite && x < -kPi; any(m); m = finite && x < -kPi) x = m ? x + two_pi : x;
    return x;
  }

  RLT_HD static void reset(const Params& p, State& s, Philox& rng) {
    float u[4];
    uniform4(rng, -p.reset_noise, p.reset_noise, u, 4);
    s = State{u[0], u[1], u[2], u[3]};
  }

  template <class F, class Rng>
  RLT_HD static void step(const Params& p, StateT<F>& s, const F* action, Rng&, F& reward, MaskOf<F>& terminated) {
    // Discrete index 0, 1, 2 -> torque -1, 0, +1 (out-of-range values go to the nearest end).
    const F a = action[0] < 0.5f ? -p.torque : (action[0] < 1.5f ? 0.0f : p.torque);
    // rk4(_dsdt, [s, a], [0, dt]): one classical RK4 step; the torque's derivative is 0.
    const F y0[4] = {s.theta1, s.theta2, s.dtheta1, s.dtheta2};
    const float h = p.dt, h2 = p.dt / 2.0f;
    F k1[4], k2[4], k3[4], k4[4], y[4];
    derivs(p, y0, a, k1);
    for (int j = 0; j < 4; ++j) y[j] = y0[j] + h2 * k1[j];
    derivs(p, y, a, k2);
    for (int j = 0; j < 4; ++j) y[j] = y0[j] + h2 * k2[j];
    derivs(p, y, a, k3);
    for (int j = 0; j < 4; ++j) y[j] = y0[j] + h * k3[j];
    derivs(p, y, a, k4);
    for (int j = 0; j < 4; ++j) y[j] = y0[j] + h / 6.0f * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
    s.theta1 = wrap_angle(y[0]);
    s.theta2 = wrap_angle(y[1]);
    s.dtheta1 = clamp(y[2], -p.max_vel_1, p.max_vel_1);
    s.dtheta2 = clamp(y[3], -p.max_vel_2, p.max_vel_2);
    F unused, cos_theta1, cos_theta12;
    m_sincos(s.theta1, unused, cos_theta1);
    m_sincos(s.theta2 + s.theta1, unused, cos_theta12);
    terminated = -cos_theta1 - cos_theta12 > p.goal_height;
    reward = terminated ? 0.0f : -1.0f;
  }

  template <class F>
  RLT_HD static void observe(const Params&, const StateT<F>& s, F* obs) {
    F sin_theta1, cos_theta1, sin_theta2, cos_theta2;
    m_sincos(s.theta1, sin_theta1, cos_theta1);
    m_sincos(s.theta2, sin_theta2, cos_theta2);
    obs[0] = cos_theta1;
    obs[1] = sin_theta1;
    obs[2] = cos_theta2;
    obs[3] = sin_theta2;
    obs[4] = s.dtheta1;
    obs[5] = s.dtheta2;
  }

  // Drawing (viewer/, optional hook; VecEnvT detects it): two links hanging from a pivot
  // (Gymnasium's rendering: theta1 = 0 down), the joints, and the goal height bar, in the x-z plane.
  static constexpr float kDrawPivotZ = 2.3f;       // pivot height (m)
  static constexpr float kDrawLinkLength2 = 1.0f;  // Gymnasium's LINK_LENGTH_2 (rendering only)
  static std::vector<DrawGeom> draw_geoms(const Params& p) {
    return {DrawGeom{3, {0.06f, 0.5f * p.link_length_1, 0.0f}, {0.2f, 0.6f, 0.6f, 1.0f}},   // link 1
            DrawGeom{3, {0.06f, 0.5f * kDrawLinkLength2, 0.0f}, {0.2f, 0.6f, 0.6f, 1.0f}},  // link 2
            DrawGeom{2, {0.08f, 0.0f, 0.0f}, {0.8f, 0.8f, 0.0f, 1.0f}},                     // pivot
            DrawGeom{2, {0.08f, 0.0f, 0.0f}, {0.8f, 0.8f, 0.0f, 1.0f}},                     // joint
            DrawGeom{6, {1.2f, 0.01f, 0.01f}, {0.1f, 0.1f, 0.1f, 1.0f}}};                   // goal
  }
  RLT_HD static void draw(const Params& p, const State& s, float* poses) {
    const float l1 = p.link_length_1;
    const float d1x = sinf(s.theta1), d1z = -cosf(s.theta1);
    const float d2x = sinf(s.theta1 + s.theta2), d2z = -cosf(s.theta1 + s.theta2);
    const float jx = l1 * d1x, jz = kDrawPivotZ + l1 * d1z;
    draw_pose_xz(poses + 0, 0.5f * l1 * d1x, 0.0f, kDrawPivotZ + 0.5f * l1 * d1z, d1x, d1z);
    draw_pose_xz(poses + 12, jx + 0.5f * kDrawLinkLength2 * d2x, 0.0f, jz + 0.5f * kDrawLinkLength2 * d2z, d2x, d2z);
    draw_pose_at(poses + 24, 0.0f, 0.0f, kDrawPivotZ);
    draw_pose_at(poses + 36, jx, 0.0f, jz);
    draw_pose_at(poses + 48, 0.0f, 0.0f, kDrawPivotZ + p.goal_height);
  }
};

}  // namespace rlt
