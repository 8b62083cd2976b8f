// MountainCarContinuous-v0, with Gymnasium's equations, constants and termination rule
// (gymnasium/envs/classic_control/continuous_mountain_car.py; Moore 1990).
//
// Observation (Box(2), float32)
// | idx | meaning                  | range          | unit                  |
// |-----|--------------------------|----------------|-----------------------|
// | 0   | car position x           | [-1.2, 0.6]    | position units        |
// | 1   | car velocity             | [-0.07, 0.07]  | position units / step |
// Action (Box(1), float32)
// | idx | meaning                  | range          | unit                  |
// |-----|--------------------------|----------------|-----------------------|
// | 0   | push force               | [-1, 1]        | scaled by power       |
// The force is clipped to [-1, 1] in the dynamics. The action cost uses the action as given, not
// clipped, exactly as Gymnasium does (reward -= pow(action[0], 2) * 0.1): a policy that asks for
// more than the car can deliver pays for it.
// Reward: -0.1 a^2 every step, +100 on the step that reaches the goal.
// Terminated: x >= 0.45 and velocity >= 0 (goal_velocity). Truncated: 999 steps.
// Reset: x uniform in [-0.6, -0.4), velocity 0.
// Dynamics (one step): v += force * power - 0.0025 cos(3x), clipped to +-0.07; x += v, clipped to
// [-1.2, 0.6]; at the left wall (x == -1.2) a negative velocity is set to 0 (inelastic).
#pragma once

#include <vector>

#include "envs/draw_pose.h"
#include "sim/lanes.h"
#include "sim/philox.h"
#include "sim/spaces.h"
#include "sim/vec_env.h"  // DrawGeom

namespace rlt {

struct MountainCarContinuous {
  static constexpr const char* kName = "mountaincar_continuous";
  static constexpr int kObsDim = 2;
  static constexpr int kActDim = 1;
  static constexpr bool kDiscrete = false;
  static constexpr int kNumActions = 0;
  static constexpr int kMaxEpisodeSteps = 999;

  struct Params {
    float min_action = -1.0f;  // the force is clipped to [min_action, max_action]
    float max_action = 1.0f;
    float min_position = -1.2f;   // left wall
    float max_position = 0.6f;    // right end of the track
    float max_speed = 0.07f;      // velocity is clipped to +-max_speed
    float goal_position = 0.45f;  // x >= goal_position (with velocity >= goal_velocity) terminates
    float goal_velocity = 0.0f;
    float power = 0.0015f;         // velocity change per unit force per step
    float hill_gravity = 0.0025f;  // velocity change from the slope: -hill_gravity * cos(hill_freq x)
    float hill_freq = 3.0f;        // the track's height is sin(hill_freq x)
    float goal_reward = 100.0f;    // reward added on the step that reaches the goal
    float action_cost = 0.1f;      // reward -= action_cost * action^2 every step
    float reset_low = -0.6f;       // reset x ~ U(reset_low, reset_high), velocity 0
    float reset_high = -0.4f;
    template <class V>
    void visit(V&& v) {
      v("min_action", min_action, "lower clip of the force");
      v("max_action", max_action, "upper clip of the force");
      v("min_position", min_position, "left wall position");
      v("max_position", max_position, "right end position");
      v("max_speed", max_speed, "velocity limit (per step)", kPositive);
      v("goal_position", goal_position, "position that terminates");
      v("goal_velocity", goal_velocity, "velocity needed at the goal to terminate");
      v("power", power, "velocity change per unit force per step", kNonNegative);
      v("hill_gravity", hill_gravity, "slope term: v -= hill_gravity * cos(hill_freq * x)");
      v("hill_freq", hill_freq, "track height is sin(hill_freq * x)");
      v("goal_reward", goal_reward, "reward for reaching the goal");
      v("action_cost", action_cost, "reward -= action_cost * action^2 (unclipped action)");
      v("reset_low", reset_low, "reset position ~ U(reset_low, reset_high)");
      v("reset_high", reset_high, "reset position ~ U(reset_low, reset_high)");
    }
  };

  // Steps kLanes envs at once on the CPU (sim/lanes.h): StateT, step and observe are templates over
  // the float type F (float: one env; f32xL: a lane per env).
  static constexpr bool kStepsInLanes = true;
  // Gymnasium's `state` = [position, velocity], in that order.
  template <class F>
  struct StateT {
    F position;
    F velocity;
  };
  using State = StateT<float>;

  static void spaces(const Params& p, Space& obs, Space& act) {
    obs = Space{kObsDim, false, 0, {p.min_position, -p.max_speed}, {p.max_position, p.max_speed}};
    act = Space{kActDim, false, 0, {p.min_action}, {p.max_action}};
  }

  RLT_HD static void reset(const Params& p, State& s, Philox& rng) {
    float u[1];
    uniform4(rng, p.reset_low, p.reset_high, u, 1);
    s = State{u[0], 0.0f};
  }

  template <class F, class Rng>
  RLT_HD static void step(const Params& p, StateT<F>& s, const F* action, Rng&, F& reward, MaskOf<F>& terminated) {
    const F force = clamp(action[0], p.min_action, p.max_action);
    F unused, cos_hill;
    m_sincos(p.hill_freq * s.position, unused, cos_hill);
    F velocity = s.velocity + force * p.power - p.hill_gravity * cos_hill;
    velocity = clamp(velocity, -p.max_speed, p.max_speed);
    const F position = clamp(s.position + velocity, p.min_position, p.max_position);
    velocity = position == p.min_position && velocity < 0.0f ? 0.0f : velocity;
    s.position = position;
    s.velocity = velocity;
    terminated = position >= p.goal_position && velocity >= p.goal_velocity;
    reward = (terminated ? p.goal_reward : 0.0f) - p.action_cost * action[0] * action[0];
  }

  template <class F>
  RLT_HD static void observe(const Params&, const StateT<F>& s, F* obs) {
    obs[0] = s.position;
    obs[1] = s.velocity;
  }

  // Drawing (viewer/, optional hook; VecEnvT detects it): the track y = 0.45 sin(hill_freq x) + 0.55
  // (Gymnasium's rendering) as kDrawSegments boxes, the car on it, and the goal flag, in the x-z plane.
  static constexpr int kDrawSegments = 24;
  RLT_HD static float draw_height(const Params& p, float x) { return 0.45f * sinf(p.hill_freq * x) + 0.55f; }
  static std::vector<DrawGeom> draw_geoms(const Params& p) {
    std::vector<DrawGeom> g;
    const float seg = (p.max_position - p.min_position) / kDrawSegments;
    for (int k = 0; k < kDrawSegments; ++k) {
      const float x0 = p.min_position + k * seg, x1 = x0 + seg;
      const float len =
          sqrtf(seg * seg + (draw_height(p, x1) - draw_height(p, x0)) * (draw_height(p, x1) - draw_height(p, x0)));
      g.push_back(DrawGeom{6, {0.02f, 0.12f, 0.5f * len + 0.005f}, {0.45f, 0.35f, 0.25f, 1.0f}});  // track
    }
    g.push_back(DrawGeom{6, {0.05f, 0.08f, 0.1f}, {0.85f, 0.15f, 0.15f, 1.0f}});  // car
    g.push_back(DrawGeom{3, {0.01f, 0.12f, 0.0f}, {0.2f, 0.2f, 0.2f, 1.0f}});     // flag pole
    g.push_back(DrawGeom{6, {0.005f, 0.06f, 0.04f}, {0.95f, 0.8f, 0.1f, 1.0f}});  // flag
    return g;
  }
  RLT_HD static void draw(const Params& p, const State& s, float* poses) {
    const float seg = (p.max_position - p.min_position) / kDrawSegments;
    for (int k = 0; k < kDrawSegments; ++k) {  // static, but drawn from the params every call
      const float x0 = p.min_position + k * seg, x1 = x0 + seg;
      const float h0 = draw_height(p, x0), h1 = draw_height(p, x1);
      const float inv = 1.0f / sqrtf(seg * seg + (h1 - h0) * (h1 - h0));
      draw_pose_xz(poses + 12 * k, 0.5f * (x0 + x1), 0.0f, 0.5f * (h0 + h1), seg * inv, (h1 - h0) * inv);
    }
    // The car sits on the track: tangent (tx, tz), normal (-tz, tx).
    const float slope = 0.45f * p.hill_freq * cosf(p.hill_freq * s.position);
    const float tinv = 1.0f / sqrtf(1.0f + slope * slope);
    const float tx = tinv, tz = slope * tinv;
    draw_pose_xz(poses + 12 * kDrawSegments, s.position - 0.07f * tz, 0.0f, draw_height(p, s.position) + 0.07f * tx, tx,
                 tz);
    const float gh = draw_height(p, p.goal_position);
    draw_pose_at(poses + 12 * (kDrawSegments + 1), p.goal_position, 0.0f, gh + 0.12f);
    draw_pose_at(poses + 12 * (kDrawSegments + 2), p.goal_position, 0.06f, gh + 0.2f);
  }
};

}  // namespace rlt
