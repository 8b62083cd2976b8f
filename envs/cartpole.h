// CartPole-v1, with Gymnasium's equations, constants and termination rules
// (gymnasium/envs/classic_control/cartpole.py; Barto, Sutton & Anderson 1983).
//
// Observation (Box(4), float32)
// | idx | meaning                | range            | unit  |
// |-----|------------------------|------------------|-------|
// | 0   | cart position x        | [-4.8, 4.8]      | m     |
// | 1   | cart velocity          | unbounded        | m/s   |
// | 2   | pole angle theta       | [-0.419, 0.419]  | rad   |
// | 3   | pole angular velocity  | unbounded        | rad/s |
// Action (Discrete(2)): 0 push left, 1 push right, with force_mag newtons.
// Reward: +1 every step, including the terminating one.
// Terminated: |x| > 2.4 or |theta| > 12 degrees. Truncated: 500 steps.
// Reset: every state variable uniform in [-0.05, 0.05).
#pragma once

#include <vector>

#include "envs/draw_pose.h"
#include "sim/lanes.h"
#include "sim/philox.h"
#include "sim/spaces.h"
#include "sim/vec_env.h"  // DrawGeom

namespace rlt {

struct CartPole {
  static constexpr const char* kName = "cartpole";
  static constexpr int kObsDim = 4;
  static constexpr int kActDim = 1;
  static constexpr bool kDiscrete = true;
  static constexpr int kNumActions = 2;
  static constexpr int kMaxEpisodeSteps = 500;

  struct Params {
    float gravity = 9.8f;                                                     // m/s^2
    float mass_cart = 1.0f;                                                   // kg
    float mass_pole = 0.1f;                                                   // kg
    float half_length = 0.5f;                                                 // m, half the pole's length
    float force_mag = 10.0f;                                                  // N
    float tau = 0.02f;                                                        // s per step (explicit Euler)
    float theta_threshold = 12.0f * 2.0f * 3.14159265358979323846f / 360.0f;  // rad
    float x_threshold = 2.4f;                                                 // m
    float reset_noise = 0.05f;  // half-width of the uniform reset distribution
    template <class V>
    void visit(V&& v) {
      v("gravity", gravity, "gravitational acceleration (m/s^2)", kNonNegative);
      v("mass_cart", mass_cart, "cart mass (kg)", kPositive);
      v("mass_pole", mass_pole, "pole mass (kg)", kPositive);
      v("half_length", half_length, "half the pole length (m)", kPositive);
      v("force_mag", force_mag, "push force (N)", kNonNegative);
      v("tau", tau, "time step (s)", kPositive);
      v("theta_threshold", theta_threshold, "pole angle that terminates (rad)", kPositive);
      v("x_threshold", x_threshold, "cart position that terminates (m)", kPositive);
      v("reset_noise", reset_noise, "reset state ~ U(-reset_noise, reset_noise)", kNonNegative);
    }
  };

  // Steps kLanes envs at once on the CPU (sim/lanes.h): StateT, step and observe are templates over
  // the float type F (float: one env; f32xL: a lane per env).
  static constexpr bool kStepsInLanes = true;
  template <class F>
  struct StateT {
    F x, x_dot, theta, theta_dot;
  };
  using State = StateT<float>;

  static void spaces(const Params& p, Space& obs, Space& act) {
    const float inf = INFINITY;
    obs = Space{kObsDim,
                false,
                0,
                {-2 * p.x_threshold, -inf, -2 * p.theta_threshold, -inf},
                {2 * p.x_threshold, inf, 2 * p.theta_threshold, inf}};
    act = Space{1, true, kNumActions, {0.0f}, {1.0f}};
  }

  RLT_HD static void reset(const Params& p, State& s, Philox& rng) {
    float u[4];
    uniform4(rng, -p.reset_noise, p.reset_noise, u, 4);
    s = State{u[0], u[1], u[2], u[3]};
  }

  template <class F, class Rng>
  RLT_HD static void step(const Params& p, StateT<F>& s, const F* action, Rng&, F& reward, MaskOf<F>& terminated) {
    const F force = action[0] >= 0.5f ? p.force_mag : -p.force_mag;
    const float total_mass = p.mass_cart + p.mass_pole;
    const float polemass_length = p.mass_pole * p.half_length;
    F sn, c;
    m_sincos(s.theta, sn, c);
    const F temp = (force + polemass_length * s.theta_dot * s.theta_dot * sn) / total_mass;
    const F theta_acc =
        (p.gravity * sn - c * temp) / (p.half_length * (4.0f / 3.0f - p.mass_pole * c * c / total_mass));
    const F x_acc = temp - polemass_length * theta_acc * c / total_mass;
    s.x += p.tau * s.x_dot;
    s.x_dot += p.tau * x_acc;
    s.theta += p.tau * s.theta_dot;
    s.theta_dot += p.tau * theta_acc;
    terminated =
        s.x < -p.x_threshold || s.x > p.x_threshold || s.theta < -p.theta_threshold || s.theta > p.theta_threshold;
    reward = splat<F>(1.0f);
  }

  template <class F>
  RLT_HD static void observe(const Params&, const StateT<F>& s, F* obs) {
    obs[0] = s.x;
    obs[1] = s.x_dot;
    obs[2] = s.theta;
    obs[3] = s.theta_dot;
  }

  // Drawing (viewer/, optional hook; VecEnvT detects it): a rail, the cart, the pole and its axle,
  // in the x-z plane. draw() writes draw_geoms().size() poses (12 floats each, DrawGeom's layout).
  static constexpr float kDrawCartZ = 0.25f;   // cart centre height (m)
  static constexpr float kDrawPivotZ = 0.37f;  // pole pivot height: the cart's top
  static std::vector<DrawGeom> draw_geoms(const Params& p) {
    return {DrawGeom{6, {p.x_threshold + 0.3f, 0.03f, 0.03f}, {0.45f, 0.45f, 0.5f, 1.0f}},  // rail
            DrawGeom{6, {0.25f, 0.15f, 0.12f}, {0.15f, 0.35f, 0.85f, 1.0f}},                // cart
            DrawGeom{3, {0.05f, p.half_length, 0.0f}, {0.9f, 0.55f, 0.1f, 1.0f}},           // pole
            DrawGeom{2, {0.06f, 0.0f, 0.0f}, {0.1f, 0.1f, 0.1f, 1.0f}}};                    // axle
  }
  RLT_HD static void draw(const Params& p, const State& s, float* poses) {
    const float dx = sinf(s.theta), dz = cosf(s.theta);  // pole direction, tip right for theta > 0
    draw_pose_at(poses + 0, 0.0f, 0.0f, 0.1f);
    draw_pose_at(poses + 12, s.x, 0.0f, kDrawCartZ);
    draw_pose_xz(poses + 24, s.x + p.half_length * dx, 0.0f, kDrawPivotZ + p.half_length * dz, dx, dz);
    draw_pose_at(poses + 36, s.x, -0.16f, kDrawPivotZ);
  }
};

}  // namespace rlt
