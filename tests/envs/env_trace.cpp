// env_trace: steps one rltrain env from a given state with given actions and prints what each
// step produced, so that tests/envs/gym_lockstep.py can compare it with Gymnasium.
//
// Request on stdin (JSON):
//   env                name of the env ("cartpole", "pendulum", "acrobot", "mountaincar_continuous")
//   state              initial state, in the order of Gymnasium's env.unwrapped.state
//   actions            one entry per step: a number (discrete index or the one continuous value)
//                      or an array of action-dim numbers
//   states             optional, one state per action: step k starts from states[k] (the env is
//                      re-synchronised before every step); "state" is then not needed
//   max_episode_steps  optional; defaults to the env's own truncation horizon
// Reply on stdout (JSON), one entry per action:
//   obs         observation the step produced (the final observation where it ended an episode)
//   reward, terminated, truncated
// The steps run through VecEnvT on the CPU executor with one env, as training does. After a step
// that ends an episode the env auto-resets; a caller that wants to go on from a state of its own
// passes "states". Bad requests print one line on stderr and exit with status 2.
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "envs/acrobot.h"
#include "envs/cartpole.h"
#include "envs/mountain_car_continuous.h"
#include "envs/pendulum.h"
#include "sim/vec_env_impl.h"

namespace rlt {
namespace {

using json = nlohmann::json;

// Gymnasium's state vector -> our State. Every field order below is Gymnasium's.
template <class Env>
struct GymState;

template <>
struct GymState<CartPole> {
  static constexpr int kDim = 4;  // x, x_dot, theta, theta_dot
  static CartPole::State make(const std::vector<float>& v) { return {v[0], v[1], v[2], v[3]}; }
};
template <>
struct GymState<Pendulum> {
  static constexpr int kDim = 2;  // th, thdot
  static Pendulum::State make(const std::vector<float>& v) { return {v[0], v[1]}; }
};
template <>
struct GymState<Acrobot> {
  static constexpr int kDim = 4;  // theta1, theta2, dtheta1, dtheta2
  static Acrobot::State make(const std::vector<float>& v) { return {v[0], v[1], v[2], v[3]}; }
};
template <>
struct GymState<MountainCarContinuous> {
  static constexpr int kDim = 2;  // position, velocity
  static MountainCarContinuous::State make(const std::vector<float>& v) { return {v[0], v[1]}; }
};

template <class Env>
typename Env::State parse_state(const json& j, const char* what) {
  if (!j.is_array() || static_cast<int>(j.size()) != GymState<Env>::kDim)
    throw std::invalid_argument(std::string(what) + ": expected an array of " + std::to_string(GymState<Env>::kDim) +
                                " numbers for " + Env::kName);
  std::vector<float> v;
  for (const auto& x : j) v.push_back(x.get<float>());
  return GymState<Env>::make(v);
}

template <class Env>
std::vector<float> parse_action(const json& j, size_t k) {
  std::vector<float> a;
  if (j.is_number()) a.push_back(j.get<float>());
  else if (j.is_array())
    for (const auto& x : j) a.push_back(x.get<float>());
  if (static_cast<int>(a.size()) != Env::kActDim)
    throw std::invalid_argument("actions[" + std::to_string(k) + "]: expected " + std::to_string(Env::kActDim) +
                                " number(s)");
  return a;
}

template <class Env>
json run(const json& req) {
  const json& actions = req.at("actions");
  const bool resync = req.contains("states");
  if (resync && req.at("states").size() != actions.size())
    throw std::invalid_argument("'states' and 'actions' must have the same length");
  CpuExecutor exec(1);
  VecEnvT<Env, CpuExecutor> env(exec, 1);
  if (req.contains("max_episode_steps")) env.set_param("max_episode_steps", req.at("max_episode_steps").get<double>());
  env.reset(0);
  if (!resync) env.states()[0] = parse_state<Env>(req.at("state"), "state");
  json obs = json::array(), reward = json::array(), terminated = json::array(), truncated = json::array();
  for (size_t k = 0; k < actions.size(); ++k) {
    if (resync) env.states()[0] = parse_state<Env>(req.at("states")[k], "states[k]");
    const std::vector<float> a = parse_action<Env>(actions[k], k);
    env.step(a.data());
    const bool done = env.terminated()[0] || env.truncated()[0];
    const float* o = done ? env.final_obs() : env.obs();
    obs.push_back(std::vector<float>(o, o + Env::kObsDim));
    reward.push_back(env.reward()[0]);
    terminated.push_back(static_cast<bool>(env.terminated()[0]));
    truncated.push_back(static_cast<bool>(env.truncated()[0]));
  }
  return json{{"obs", obs}, {"reward", reward}, {"terminated", terminated}, {"truncated", truncated}};
}

json dispatch(const json& req) {
  const std::string name = req.at("env").get<std::string>();
  if (name == CartPole::kName) return run<CartPole>(req);
  if (name == Pendulum::kName) return run<Pendulum>(req);
  if (name == Acrobot::kName) return run<Acrobot>(req);
  if (name == MountainCarContinuous::kName) return run<MountainCarContinuous>(req);
  throw std::invalid_argument("env '" + name +
                              "' is not traced (known: cartpole, pendulum, acrobot, mountaincar_continuous)");
}

}  // namespace
}  // namespace rlt

int main() {
  try {
    const nlohmann::json req = nlohmann::json::parse(std::cin);
    std::cout << rlt::dispatch(req).dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "env_trace: %s\n", e.what());
    return 2;
  }
}
