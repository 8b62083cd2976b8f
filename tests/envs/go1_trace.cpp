// go1_trace: steps a Go1 joystick task (envs/go1_joystick.h) from a given start state with given
// commands and actions and prints what each step produced, so that tests/envs/go1_peer.py can
// compare it with MuJoCo 3 and EnvPool's Go1JoystickFlatTerrain-v1 / Go1JoystickRoughTerrain-v1
// (a C++ port of MuJoCo Playground's tasks).
//
// Request on stdin (JSON):
//   qpos (19), qvel (18)   the start state (the task's other state as after a reset: no previous
//                          action, contact or air time)
//   commands               one (vx, vy, yaw rate) per step: the command in effect for that step
//   actions                one 12-vector per step
//   task                   optional: "go1_joystick" (default, flat) or "go1_joystick_rough"
// A JSON array of such requests is answered by an array of replies (one process for many runs).
// Reply on stdout (JSON), one entry per step: obs (48), critic (123), reward, terminated, terms (16,
// unweighted, envs/go1_joystick.h's order), and the start state's obs and critic. Runs through
// VecEnvT on the CPU executor with one env, observation noise and domain randomization off.
// The run stops after a step that terminates. Bad requests: one line on stderr, exit status 2.
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "envs/go1_joystick.h"
#include "envs/registry_impl.h"

namespace rlt {
namespace {
using json = nlohmann::json;

template <class Go1Trace>
json run(const json& req) {
  CpuExecutor exec{1};
  auto env = new_vec_env<Go1Trace, CpuExecutor>(1, exec);
  auto* v = dynamic_cast<VecEnvT<Go1Trace, CpuExecutor>*>(env.get());
  for (const char* k : {"noise_level", "rand_enable"})
    if (!env->set_param(k, 0.0)) throw std::runtime_error(std::string("no param ") + k);
  env->reset(1);
  auto& world = v->world();
  DataView<float> d = data_view<float>(world.layout(), world.physics_rows());
  const auto qpos = req.at("qpos").get<std::vector<float>>();
  const auto qvel = req.at("qvel").get<std::vector<float>>();
  if (qpos.size() != 19 || qvel.size() != 18) throw std::runtime_error("qpos needs 19 values, qvel 18");
  for (int k = 0; k < 19; ++k) d.qpos[k] = qpos[static_cast<size_t>(k)];
  for (int k = 0; k < 18; ++k) d.qvel[k] = qvel[static_cast<size_t>(k)];
  typename Go1Trace::State& s = v->states()[0];
  const auto commands = req.at("commands").get<std::vector<std::vector<float>>>();
  const auto actions = req.at("actions").get<std::vector<std::vector<float>>>();
  if (commands.size() != actions.size()) throw std::runtime_error("one command per action");
  typename Go1Trace::Params p{};
  p.noise_level = 0.0f, p.rand_enable = 0.0f;
  // the start state's forward pass and observation (as the task's reset ends)
  RobotCtx c;
  c.m = world.model_view();
  c.d = d;
  c.frame_skip = world.frame_skip();
  c.dt = world.control_dt();
  c.dr = world.randomization_rows();
  {
    float ctrl[12];
    for (int j = 0; j < 12; ++j) ctrl[j] = Go1Joystick::default_pose(j);
    typename Go1Trace::Bound b;
    Go1Trace::bind(p, c, s, b);
    physics_forward(b.m, d, ctrl, 0.0f);
    compute_sensors(b.m, d);
    kinematics(b.m, d);
  }
  json out = json::object();
  json steps = json::array();
  for (size_t t = 0; t < actions.size(); ++t) {
    for (int k = 0; k < 3; ++k) s.command[k] = commands[t].at(static_cast<size_t>(k));
    s.steps_until_cmd = 1 << 30;  // the caller gives the commands
    if (t == 0) {
      for (int k = 0; k < 3; ++k) s.obs_command[k] = s.command[k];
      std::vector<float> o(48), co(123);
      Go1Trace::observe(p, c, s, o.data(), co.data());
      out["obs0"] = o, out["critic0"] = co;
    }
    if (actions[t].size() != 12) throw std::runtime_error("an action needs 12 values");
    env->step(actions[t].data());
    const bool term = env->terminated()[0] != 0;
    json st;
    st["obs"] = std::vector<float>(term ? env->final_obs() : env->obs(), (term ? env->final_obs() : env->obs()) + 48);
    st["critic"] = std::vector<float>(term ? env->final_critic_obs() : env->critic_obs(),
                                      (term ? env->final_critic_obs() : env->critic_obs()) + 123);
    st["reward"] = env->reward()[0];
    st["terminated"] = term;
    if (!term) st["terms"] = std::vector<float>(s.terms, s.terms + Go1Joystick::kNumTerms);  // reset at an end
    steps.push_back(st);
    if (term) break;
  }
  out["steps"] = steps;
  return out;
}
}  // namespace
}  // namespace rlt

int main() {
  try {
    const nlohmann::json in = nlohmann::json::parse(std::cin);
    auto one = [](const nlohmann::json& req) {
      const std::string task = req.value("task", std::string("go1_joystick"));
      if (task != "go1_joystick" && task != "go1_joystick_rough")
        throw std::runtime_error("task must be go1_joystick or go1_joystick_rough, not " + task);
      return task == "go1_joystick" ? rlt::run<rlt::Go1Joystick>(req) : rlt::run<rlt::Go1JoystickRough>(req);
    };
    nlohmann::json out = nlohmann::json::array();
    if (in.is_array()) {
      for (const auto& req : in) out.push_back(one(req));
    } else {
      out = one(in);
    }
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "go1_trace: %s\n", e.what());
    return 2;
  }
}
