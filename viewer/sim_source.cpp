#include "viewer/sim_source.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "envs/physics_batch.h"
#include "sim/dynamics.h"

namespace rlt::view {

// ---- EnvSim ---------------------------------------------------------------------------------------

EnvSim::EnvSim(std::unique_ptr<VecEnv> env, std::shared_ptr<const HostCopies> copies, std::unique_ptr<Policy> policy,
               bool policy_loaded, std::uint64_t seed)
    : m_env(std::move(env)),
      m_copies(std::move(copies)),
      m_policy(std::move(policy)),
      m_policy_loaded(policy_loaded && m_policy != nullptr),
      m_seed(seed) {
  m_env->reset(m_seed);
  const i64 n = m_env->num_envs();
  m_manual_host.assign(static_cast<size_t>(n * m_env->spec().action.dim), 0.0f);
}

EnvSim::~EnvSim() = default;

void EnvSim::load_policy(const Checkpoint& ckpt, const std::string& path) {
  if (!m_policy) throw std::logic_error("EnvSim::load_policy: made without a policy");
  check_checkpoint_env(ckpt, path, m_env->spec().name, "the viewer");
  restore_policy(ckpt, *m_policy);
  m_policy_loaded = true;
}

void EnvSim::step(ControlMode mode, bool deterministic, const std::vector<float>& manual) {
  const Space& act = m_env->spec().action;
  const i64 n = m_env->num_envs();
  const float* actions = nullptr;
  if (mode == ControlMode::kPolicy && has_policy()) {
    actions = m_policy->act(m_env->obs(), n, deterministic, m_step);
  } else if (mode == ControlMode::kRandom || mode == ControlMode::kPolicy) {
    actions = m_env->sample_actions(m_seed + 0x9E3779B97F4A7C15ull, m_step);
  } else {
    // Manual or zero: one host vector broadcast to every env. The env's sample_actions buffer is the
    // executor-memory array the actions go through (VecEnv offers no other scratch on its device).
    for (i64 i = 0; i < n; ++i)
      for (int k = 0; k < act.dim; ++k) {
        float v =
            mode == ControlMode::kManual && k < static_cast<int>(manual.size()) ? manual[static_cast<size_t>(k)] : 0.0f;
        if (act.discrete) v = std::floor(std::clamp(v, 0.0f, static_cast<float>(act.num_actions - 1)));
        else if (mode == ControlMode::kZero)
          v = std::clamp(0.0f, act.low[static_cast<size_t>(k)], act.high[static_cast<size_t>(k)]);
        m_manual_host[static_cast<size_t>(i * act.dim + k)] = v;
      }
    float* scratch = const_cast<float*>(m_env->sample_actions(m_seed, m_step));
    m_copies->from_host(scratch, m_manual_host.data(), n * act.dim);
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
  if (env < 0 || env >= m_env->num_envs()) return;
  m_env->reset_one(env);  // its next episode, as an auto-reset would start it; the others untouched
}

EnvInfo EnvSim::inspect(i64 env) {
  EnvInfo info;
  const i64 n = m_env->num_envs();
  if (env < 0 || env >= n) return info;
  const EnvSpec& s = m_env->spec();
  info.obs.resize(static_cast<size_t>(s.observation.dim));
  m_copies->to_host(info.obs.data(), m_env->obs() + env * s.observation.dim, s.observation.dim);
  info.action.assign(static_cast<size_t>(s.action.dim), 0.0f);
  if (m_last_actions) m_copies->to_host(info.action.data(), m_last_actions + env * s.action.dim, s.action.dim);
  m_copies->to_host(&info.reward, m_env->reward() + env, 1);
  std::uint8_t term = 0, trunc = 0;
  m_copies->to_host(&term, m_env->terminated() + env, 1);
  m_copies->to_host(&trunc, m_env->truncated() + env, 1);
  info.done = term || trunc;
  if (info.done) m_copies->to_host(&info.finished_return, m_env->ep_return() + env, 1);
  if (m_env->tracking()) {
    info.tracking.resize(kTrackingFloats);
    m_copies->to_host(info.tracking.data(), m_env->tracking() + env * kTrackingFloats, kTrackingFloats);
  }
  return info;
}

void EnvSim::finished(std::vector<std::pair<i64, float>>& out) {
  out.clear();
  const i64 n = m_env->num_envs();
  std::vector<std::uint8_t> term(static_cast<size_t>(n)), trunc(static_cast<size_t>(n));
  std::vector<float> ret(static_cast<size_t>(n));
  m_copies->to_host(term.data(), m_env->terminated(), n);
  m_copies->to_host(trunc.data(), m_env->truncated(), n);
  m_copies->to_host(ret.data(), m_env->ep_return(), n);
  for (i64 i = 0; i < n; ++i)
    if (term[static_cast<size_t>(i)] || trunc[static_cast<size_t>(i)]) out.push_back({i, ret[static_cast<size_t>(i)]});
}

// ---- ModelSim -------------------------------------------------------------------------------------

ModelSim::ModelSim(std::unique_ptr<PhysicsBatch> batch, std::string title)
    : m_batch(std::move(batch)), m_title(std::move(title)) {
  const std::vector<double> range = ctrl_sample_range(m_batch->model());
  m_space.dim = m_batch->model().nu;
  for (size_t u = 0; u < static_cast<size_t>(m_space.dim); ++u) {
    m_space.low.push_back(static_cast<float>(range[2 * u]));
    m_space.high.push_back(static_cast<float>(range[2 * u + 1]));
  }
  m_batch->reset();
}

ModelSim::~ModelSim() = default;

i64 ModelSim::num_envs() const { return m_batch->num_envs(); }
std::vector<DrawGeom> ModelSim::geoms() const { return m_batch->draw_geoms(); }
void ModelSim::request_poses(const std::vector<std::pair<i64, i64>>& ranges) { m_batch->request_draw_poses(ranges); }
const float* ModelSim::wait_poses() { return m_batch->wait_draw_poses(); }
void ModelSim::reset_all() { m_batch->reset(); }
std::string ModelSim::device() const { return device_name(m_batch->device()); }
const Model& ModelSim::model() const { return m_batch->model(); }
std::vector<float> ModelSim::data_row(i64 env) const { return m_batch->row(env); }
const DataLayout& ModelSim::layout() const { return m_batch->layout(); }

void ModelSim::poses(i64 first, i64 count, float* out) {
  m_batch->request_draw_poses({{first, count}});
  const float* p = m_batch->wait_draw_poses();
  const size_t n = static_cast<size_t>(count) * static_cast<size_t>(m_batch->model().ngeom) * 12;
  if (p && n > 0) std::memcpy(out, p, n * sizeof(float));
}

void ModelSim::step(ControlMode mode, bool, const std::vector<float>& manual) {
  // The policy mode has no policy here: random controls, as the panel shows.
  const CtrlMode c = mode == ControlMode::kManual ? CtrlMode::kManual
                     : mode == ControlMode::kZero ? CtrlMode::kZero
                                                  : CtrlMode::kRandom;
  if (c == CtrlMode::kManual) m_batch->set_manual_ctrl(manual);
  m_batch->control_step(c, m_step);
  m_batch->reset_nonfinite();  // D9: a non-finite env starts over
  ++m_step;
}

void ModelSim::reset_one(i64 env) {
  if (env < 0 || env >= m_batch->num_envs()) return;
  m_batch->reset_one(env);
}

EnvInfo ModelSim::inspect(i64 env) {
  EnvInfo info;
  if (env < 0 || env >= m_batch->num_envs()) return info;
  const DataLayout& l = m_batch->layout();
  const std::vector<float> row = m_batch->row(env);
  const Model& m = m_batch->model();
  info.obs.assign(row.begin() + l.qpos, row.begin() + l.qpos + m.nq);
  info.obs.insert(info.obs.end(), row.begin() + l.qvel, row.begin() + l.qvel + m.nv);
  info.action = m_batch->ctrl_row(env);
  return info;
}

}  // namespace rlt::view
