// joystick_trace: steps a joystick task (envs/go1_joystick.h, envs/g1_joystick.h) from a given start
// state with given commands and actions and prints what each step produced, so that
// tests/envs/go1_peer.py and tests/envs/g1_peer.py can compare it with MuJoCo 3 and EnvPool's
// Go1/G1 JoystickFlatTerrain-v1 / RoughTerrain-v1 (a C++ port of MuJoCo Playground's tasks).
//
// Request on stdin (JSON):
//   task                   "go1_joystick" (default), "go1_joystick_rough", "g1_joystick" or
//                          "g1_joystick_rough"
//   qpos, qvel             the start state (7 + nu, 6 + nu values; the task's other state as after a
//                          reset: no previous action, contact or air time)
//   qacc_warmstart         optional: the solver's warm start (6 + nu values, MuJoCo's qacc_warmstart;
//                          default 0, as after a reset)
//   converged              optional, default false: solve the constraints to convergence from
//                          qacc_smooth instead of the scene's iterations budget (MuJoCo's warm start)
//   ctrl0                  optional: the controls of the start state's forward pass (default: the
//                          default pose; Playground's G1 reset uses the start joint angles)
//   phase, phase_dt        G1 only: the gait clock at the start (2) and its advance per step
//   commands               one (vx, vy, yaw rate) per step: the command in effect for that step
//   actions                one nu-vector per step
// A JSON array of such requests is answered by an array of replies (one process for many runs).
// Reply on stdout (JSON), one entry per step: obs, critic, reward, terminated, terms (unweighted,
// the task header's order), and the start state's obs and critic. Runs through VecEnvT on the CPU
// executor with one env, observation noise, domain randomization and pushes off.
// The run stops after a step that terminates. Bad requests: one line on stderr, exit status 2.
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "envs/g1_joystick.h"
#include "envs/go1_joystick.h"
#include "envs/registry_impl.h"

namespace rlt {
namespace {
using json = nlohmann::json;

// G1's gait clock from the request (Go1 has none)
template <bool kRough>
void set_clock(typename G1JoystickT<kRough>::State& s, const json& req) {
  const auto phase = req.at("phase").get<std::vector<float>>();
  if (phase.size() != 2) throw std::runtime_error("phase needs 2 values");
  s.phase[0] = phase[0], s.phase[1] = phase[1];
  s.phase_dt = req.at("phase_dt").get<float>();
}

template <class Task>
json run(const json& req) {
  constexpr int nu = Task::kActDim, nq = 7 + nu, nv = 6 + nu;
  CpuExecutor exec{1};
  auto env = new_vec_env<Task, CpuExecutor>(1, exec);
  auto* v = dynamic_cast<VecEnvT<Task, CpuExecutor>*>(env.get());
  for (const char* k : {"noise_level", "rand_enable"})
    if (!env->set_param(k, 0.0)) throw std::runtime_error(std::string("no param ") + k);
  env->set_param("push_enable", 0.0);  // G1's pushes (Go1's kicks are off by default)
  env->reset(1);
  auto& world = v->world();
  if (req.value("converged", false)) world.solve_to_convergence();
  DataView<float> d = BatchRows<float>{world.layout(), world.physics_rows(), {}}.env(0);
  const auto qpos = req.at("qpos").get<std::vector<float>>();
  const auto qvel = req.at("qvel").get<std::vector<float>>();
  if (qpos.size() != nq || qvel.size() != nv)
    throw std::runtime_error("qpos needs " + std::to_string(nq) + " values, qvel " + std::to_string(nv));
  for (int k = 0; k < nq; ++k) d.qpos[k] = qpos[static_cast<size_t>(k)];
  for (int k = 0; k < nv; ++k) d.qvel[k] = qvel[static_cast<size_t>(k)];
  if (req.contains("qacc_warmstart")) {  // (else 0, as after a reset)
    const auto w = req.at("qacc_warmstart").get<std::vector<float>>();
    if (w.size() != nv || !world.model_view().newton_warmstart)
      throw std::runtime_error("qacc_warmstart needs " + std::to_string(nv) + " values and a scene with an iterations budget");
    for (int k = 0; k < nv; ++k) d.qacc_warmstart[k] = w[static_cast<size_t>(k)];
  }
  typename Task::State& s = v->states()[0];
  if constexpr (Task::kActDim == G1Joystick::kActDim) set_clock<Task::kIsRough>(s, req);
  const auto commands = req.at("commands").get<std::vector<std::vector<float>>>();
  const auto actions = req.at("actions").get<std::vector<std::vector<float>>>();
  if (commands.size() != actions.size()) throw std::runtime_error("one command per action");
  typename Task::Params p{};
  p.noise_level = 0.0f, p.rand_enable = 0.0f;
  // the start state's forward pass and observation (as the task's reset ends)
  RobotCtx c;
  c.m = world.model_view();
  c.d = d;
  c.frame_skip = world.frame_skip();
  c.dt = world.control_dt();
  c.dr = world.randomization_rows();
  {
    float ctrl[nu];
    for (int j = 0; j < nu; ++j) ctrl[j] = Task::default_pose(j);
    if (req.contains("ctrl0")) {
      const auto c0 = req.at("ctrl0").get<std::vector<float>>();
      if (c0.size() != nu) throw std::runtime_error("ctrl0 needs " + std::to_string(nu) + " values");
      for (int j = 0; j < nu; ++j) ctrl[j] = c0[static_cast<size_t>(j)];
    }
    typename Task::Bound b;
    Task::bind(p, c, s, b);
    physics_forward(b.m, d, ctrl, 0.0f);
    compute_sensors(b.m, d);
    kinematics(b.m, d);
  }
  if constexpr (Task::kActDim == G1Joystick::kActDim)
    for (int f = 0; f < 2; ++f) s.contact[f] = Task::sensor(c, Task::kFootFloor + f)[0] > 0.0f ? 1.0f : 0.0f;
  constexpr int no = Task::kObsDim, nc = Task::kCriticObsDim;
  json out = json::object();
  json steps = json::array();
  for (size_t t = 0; t < actions.size(); ++t) {
    for (int k = 0; k < 3; ++k) s.command[k] = commands[t].at(static_cast<size_t>(k));
    if constexpr (Task::kActDim == Go1Joystick::kActDim) s.steps_until_cmd = 1 << 30;  // the caller gives the commands
    if (t == 0) {
      for (int k = 0; k < 3; ++k) s.obs_command[k] = s.command[k];
      if constexpr (Task::kActDim == G1Joystick::kActDim) s.obs_phase[0] = s.phase[0], s.obs_phase[1] = s.phase[1];
      std::vector<float> o(no), co(nc);
      Task::observe(p, c, s, o.data(), co.data());
      out["obs0"] = o, out["critic0"] = co;
    }
    if (actions[t].size() != nu) throw std::runtime_error("an action needs " + std::to_string(nu) + " values");
    env->step(actions[t].data());
    const bool term = env->terminated()[0] != 0;
    json st;
    st["obs"] = std::vector<float>(term ? env->final_obs() : env->obs(), (term ? env->final_obs() : env->obs()) + no);
    st["critic"] = std::vector<float>(term ? env->final_critic_obs() : env->critic_obs(),
                                      (term ? env->final_critic_obs() : env->critic_obs()) + nc);
    st["reward"] = env->reward()[0];
    st["terminated"] = term;
    if (!term) st["terms"] = std::vector<float>(s.terms, s.terms + Task::kNumTerms);  // reset at an end
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
      if (task == "go1_joystick") return rlt::run<rlt::Go1Joystick>(req);
      if (task == "go1_joystick_rough") return rlt::run<rlt::Go1JoystickRough>(req);
      if (task == "g1_joystick") return rlt::run<rlt::G1Joystick>(req);
      if (task == "g1_joystick_rough") return rlt::run<rlt::G1JoystickRough>(req);
      throw std::runtime_error("task must be go1_joystick, go1_joystick_rough, g1_joystick or g1_joystick_rough, not " +
                               task);
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
    std::fprintf(stderr, "joystick_trace: %s\n", e.what());
    return 2;
  }
}
