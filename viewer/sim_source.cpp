#include "viewer/sim_source.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "rl/evaluate.h"   // check_checkpoint_env, make_acting_learner
#include "apps/rollout.h"  // random_ctrl, ctrl_sample_range: the same random controls as rollout and bench
#include "sim/dynamics.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"

namespace rlt::view {

// ---- EnvSim ---------------------------------------------------------------------------------------

EnvSim::EnvSim(const Config& cfg, const std::string& device, int threads, std::uint64_t seed)
    : m_cfg(cfg), m_rt(device, threads), m_seed(seed) {
  m_env = m_rt.make_env(m_cfg);
  m_env->reset(m_seed);
  const i64 n = m_env->num_envs();
  m_manual_host.assign(static_cast<size_t>(n * m_env->spec().action.dim), 0.0f);
}

EnvSim::~EnvSim() = default;

void EnvSim::load_policy(const Checkpoint& ckpt, const std::string& path) {
  check_checkpoint_env(ckpt, path, m_cfg.env.name, "the viewer");
  // Acting only, as `rltrain eval`: the checkpoint's policy shape.
  Config c = m_cfg;
  c.policy = ckpt.config.policy;
  c.ppo = ckpt.config.ppo;
  m_learner = make_acting_learner(m_rt, c, ckpt, *m_env);
}

void EnvSim::step(ControlMode mode, bool deterministic, const std::vector<float>& manual) {
  const Space& act = m_env->spec().action;
  const i64 n = m_env->num_envs();
  const float* actions = nullptr;
  if (mode == ControlMode::kPolicy && m_learner) {
    actions = m_learner->act(deterministic, m_step);
  } else if (mode == ControlMode::kRandom || mode == ControlMode::kPolicy) {
    actions = m_env->sample_actions(m_seed + 0x9E3779B97F4A7C15ull, m_step);
  } else {
    // Manual or zero: one host vector broadcast to every env. The env's sample_actions buffer is the
    // executor-memory array the actions go through (VecEnv offers no other scratch on its device).
    for (i64 i = 0; i < n; ++i)
      for (int k = 0; k < act.dim; ++k) {
        float v = mode == ControlMode::kManual && k < static_cast<int>(manual.size()) ? manual[static_cast<size_t>(k)] : 0.0f;
        if (act.discrete) v = std::floor(std::clamp(v, 0.0f, static_cast<float>(act.num_actions - 1)));
        else if (mode == ControlMode::kZero) v = std::clamp(0.0f, act.low[static_cast<size_t>(k)], act.high[static_cast<size_t>(k)]);
        m_manual_host[static_cast<size_t>(i * act.dim + k)] = v;
      }
    float* scratch = const_cast<float*>(m_env->sample_actions(m_seed, m_step));
    m_rt.from_host(scratch, m_manual_host.data(), n * act.dim);
    actions = scratch;
  }
  m_env->step(actions);
  m_last_actions = actions;
  ++m_step;
}

void EnvSim::reset_all() {
  m_env->reset(m_seed);
  m_last_actions = nullptr;
}

// VecEnv resets every env at once; one env is reset by splicing its rows of a freshly reset batch
// (another seed) into the saved state. Every per-env blob is (num_envs x row) bytes; others are kept.
void EnvSim::reset_one(i64 env) {
  const i64 n = m_env->num_envs();
  if (env < 0 || env >= n) return;
  std::vector<StateBlob> keep = m_env->save_state();
  m_env->reset(m_seed + 1000003ull * (++m_resets));
  const std::vector<StateBlob> fresh = m_env->save_state();
  for (auto& b : keep) {
    if (b.name == "seed") continue;
    for (const auto& f : fresh) {
      if (f.name != b.name || f.bytes.size() != b.bytes.size() || b.bytes.size() % static_cast<size_t>(n) != 0) continue;
      const size_t row = b.bytes.size() / static_cast<size_t>(n);
      std::memcpy(b.bytes.data() + row * static_cast<size_t>(env), f.bytes.data() + row * static_cast<size_t>(env), row);
    }
  }
  m_env->load_state(keep);
}

EnvInfo EnvSim::inspect(i64 env) {
  EnvInfo info;
  const i64 n = m_env->num_envs();
  if (env < 0 || env >= n) return info;
  const EnvSpec& s = m_env->spec();
  info.obs.resize(static_cast<size_t>(s.observation.dim));
  m_rt.to_host(info.obs.data(), m_env->obs() + env * s.observation.dim, s.observation.dim);
  info.action.assign(static_cast<size_t>(s.action.dim), 0.0f);
  if (m_last_actions) m_rt.to_host(info.action.data(), m_last_actions + env * s.action.dim, s.action.dim);
  m_rt.to_host(&info.reward, m_env->reward() + env, 1);
  std::uint8_t term = 0, trunc = 0;
  m_rt.to_host(&term, m_env->terminated() + env, 1);
  m_rt.to_host(&trunc, m_env->truncated() + env, 1);
  info.done = term || trunc;
  if (info.done) m_rt.to_host(&info.finished_return, m_env->ep_return() + env, 1);
  return info;
}

void EnvSim::finished(std::vector<std::pair<i64, float>>& out) {
  out.clear();
  const i64 n = m_env->num_envs();
  std::vector<std::uint8_t> term(static_cast<size_t>(n)), trunc(static_cast<size_t>(n));
  std::vector<float> ret(static_cast<size_t>(n));
  m_rt.to_host(term.data(), m_env->terminated(), n);
  m_rt.to_host(trunc.data(), m_env->truncated(), n);
  m_rt.to_host(ret.data(), m_env->ep_return(), n);
  for (i64 i = 0; i < n; ++i)
    if (term[static_cast<size_t>(i)] || trunc[static_cast<size_t>(i)]) out.push_back({i, ret[static_cast<size_t>(i)]});
}

std::string EnvSim::device() const { return device_name(m_rt.device()); }

// ---- ModelSim -------------------------------------------------------------------------------------

namespace {

struct ResetModelEnvs {
  ModelView<float> m;
  DataLayout layout;
  float* data;
  i64 first;
  RLT_HD void operator()(i64 k) const {
    const DataView<float> d = data_view<float>(layout, data + (first + k) * layout.size);
    reset_data(m, d);
    kinematics(m, d);  // geom poses for drawing before the first step
  }
};

struct ModelCtrl {
  float* ctrl;  // (num_envs x nu)
  const float* range;
  int nu;
  int mode;  // ControlMode
  const float* manual;
  std::uint64_t seed;
  u32 step;
  RLT_HD void operator()(i64 env) const {
    float* c = ctrl + env * nu;
    if (mode == static_cast<int>(ControlMode::kRandom) || mode == static_cast<int>(ControlMode::kPolicy))
      random_ctrl(range, nu, seed, static_cast<u32>(env), step, c);
    else
      for (int u = 0; u < nu; ++u) c[u] = mode == static_cast<int>(ControlMode::kManual) ? manual[u] : 0.0f;
  }
};

}  // namespace

ModelSim::ModelSim(const std::string& path, i64 num_envs, int threads, std::uint64_t seed, double control_dt)
    : m_path(path), m_model(load_mjcf(path)), m_exec(threads), m_num_envs(num_envs), m_seed(seed) {
  if (num_envs < 1) throw ConfigError("--num-envs: expected a positive integer, got " + std::to_string(num_envs));
  m_host = std::make_unique<HostModel<float>>(m_model);
  m_substeps = control_substeps(control_dt, m_model.timestep);
  const std::vector<double> range = ctrl_sample_range(m_model);
  m_range.assign(range.begin(), range.end());
  m_space.dim = m_model.nu;
  for (int u = 0; u < m_model.nu; ++u) {
    m_space.low.push_back(m_range[2 * static_cast<size_t>(u)]);
    m_space.high.push_back(m_range[2 * static_cast<size_t>(u) + 1]);
  }
  m_data.assign(static_cast<size_t>(num_envs * data_size()), 0.0f);
  m_ctrl.assign(static_cast<size_t>(num_envs * std::max(1, m_model.nu)), 0.0f);
  reset_all();
}

ModelSim::~ModelSim() = default;

int ModelSim::data_size() const { return data_layout(m_host->view()).size; }
int ModelSim::qpos_offset() const { return data_layout(m_host->view()).qpos; }
const float* ModelSim::data_row(i64 env) const { return m_data.data() + env * data_size(); }

std::vector<DrawGeom> ModelSim::geoms() const {
  std::vector<DrawGeom> out(static_cast<size_t>(m_model.ngeom));
  for (size_t g = 0; g < out.size(); ++g) {
    out[g].type = m_model.geom_type[g];
    for (int k = 0; k < 3; ++k) out[g].size[k] = static_cast<float>(m_model.geom_size[3 * g + static_cast<size_t>(k)]);
    for (int k = 0; k < 4; ++k) out[g].rgba[k] = m_model.geom_rgba[4 * g + static_cast<size_t>(k)];
  }
  return out;
}

void ModelSim::poses(i64 first, i64 count, float* out) {
  const DataLayout l = data_layout(m_host->view());
  const int ng = m_model.ngeom;
  for (i64 k = 0; k < count; ++k) {
    const float* row = m_data.data() + (first + k) * l.size;
    for (int g = 0; g < ng; ++g) {
      float* p = out + (k * ng + g) * 12;
      std::memcpy(p, row + l.geom_xpos + 3 * g, 3 * sizeof(float));
      std::memcpy(p + 3, row + l.geom_xmat + 9 * g, 9 * sizeof(float));
    }
  }
}

void ModelSim::request_poses(const std::vector<std::pair<i64, i64>>& ranges) {
  const size_t per_env = static_cast<size_t>(m_model.ngeom) * 12;
  size_t total = 0;
  for (const auto& [first, count] : ranges) {
    if (first < 0 || count < 0 || first + count > m_num_envs) throw std::out_of_range("ModelSim::request_poses: envs outside the batch");
    total += static_cast<size_t>(count);
  }
  m_pose_out.resize(total * per_env);
  float* out = m_pose_out.data();
  for (const auto& [first, count] : ranges) {
    poses(first, count, out);
    out += static_cast<size_t>(count) * per_env;
  }
}

void ModelSim::step(ControlMode mode, bool, const std::vector<float>& manual) {
  const ModelView<float>& mv = m_host->view();
  std::vector<float> man(static_cast<size_t>(std::max(1, m_model.nu)), 0.0f);
  for (size_t u = 0; u < man.size() && u < manual.size(); ++u) man[u] = manual[u];
  parallel_for(m_exec, m_num_envs,
               ModelCtrl{m_ctrl.data(), m_range.data(), m_model.nu, static_cast<int>(mode), man.data(), m_seed, m_step});
  parallel_for(m_exec, m_num_envs,
               PhysicsStepEnvs<float>{mv, data_layout(mv), m_data.data(), m_model.nu ? m_ctrl.data() : nullptr, m_substeps, nullptr});
  // Non-finite state (D9): that env starts over.
  const DataLayout l = data_layout(mv);
  for (i64 i = 0; i < m_num_envs; ++i) {
    const float* q = m_data.data() + i * l.size + l.qpos;
    bool ok = true;
    for (int k = 0; k < m_model.nq; ++k) ok = ok && std::isfinite(q[k]);
    if (!ok) reset_one(i);
  }
  ++m_step;
}

void ModelSim::reset_all() {
  const ModelView<float>& mv = m_host->view();
  parallel_for(m_exec, m_num_envs, ResetModelEnvs{mv, data_layout(mv), m_data.data(), 0});
}

void ModelSim::reset_one(i64 env) {
  if (env < 0 || env >= m_num_envs) return;
  const ModelView<float>& mv = m_host->view();
  ResetModelEnvs{mv, data_layout(mv), m_data.data(), env}(0);
}

EnvInfo ModelSim::inspect(i64 env) {
  EnvInfo info;
  if (env < 0 || env >= m_num_envs) return info;
  const DataLayout l = data_layout(m_host->view());
  const float* row = m_data.data() + env * l.size;
  info.obs.assign(row + l.qpos, row + l.qpos + m_model.nq);
  info.obs.insert(info.obs.end(), row + l.qvel, row + l.qvel + m_model.nv);
  info.action.assign(m_ctrl.begin() + env * m_model.nu, m_ctrl.begin() + (env + 1) * m_model.nu);
  return info;
}

}  // namespace rlt::view
