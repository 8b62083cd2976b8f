#include "apps/rollout.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>

#include "rl/config.h"
#include "rl/files.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"

namespace rlt {
namespace {

Model with_timestep(Model model, double timestep) {
  if (timestep < 0 || !std::isfinite(timestep))
    throw ConfigError("--timestep: expected a positive number of seconds, got " + std::to_string(timestep));
  if (timestep > 0) model.timestep = timestep;
  return model;
}

std::string joint_label(const Model& m, int j) {
  const std::string& name = m.jnt_name[static_cast<size_t>(j)];
  return name.empty() ? "joint" + std::to_string(j) : name;
}

}  // namespace

std::vector<std::string> rollout_columns(const Model& m) {
  std::vector<std::string> cols{"time"};
  for (int j = 0; j < m.njnt; ++j) {
    const std::string n = joint_label(m, j);
    switch (m.jnt_type[static_cast<size_t>(j)]) {
      case kJointFree:
        for (const char* s : {"_x", "_y", "_z", "_qw", "_qx", "_qy", "_qz"}) cols.push_back(n + s);
        break;
      case kJointBall:
        for (const char* s : {"_qw", "_qx", "_qy", "_qz"}) cols.push_back(n + s);
        break;
      default:
        cols.push_back(n);
    }
  }
  for (int j = 0; j < m.njnt; ++j) {
    const std::string n = joint_label(m, j);
    switch (m.jnt_type[static_cast<size_t>(j)]) {
      case kJointFree:
        for (const char* s : {"_vx", "_vy", "_vz", "_wx", "_wy", "_wz"}) cols.push_back(n + s);
        break;
      case kJointBall:
        for (const char* s : {"_wx", "_wy", "_wz"}) cols.push_back(n + s);
        break;
      default:
        cols.push_back(n + "_v");
    }
  }
  for (int u = 0; u < m.nu; ++u) {
    const std::string& name = m.actuator_name[static_cast<size_t>(u)];
    cols.push_back("ctrl_" + (name.empty() ? "actuator" + std::to_string(u) : name));
  }
  cols.push_back("ncon");
  return cols;
}

ModelRollout::ModelRollout(const Model& model, const RolloutOptions& opts)
    : m_model(with_timestep(model, opts.timestep)),
      m_host(m_model),
      m_row(static_cast<size_t>(data_size(m_host.view())), 0.0),
      m_data(data_view(m_host.view(), m_row.data())),
      m_ctrl(static_cast<size_t>(m_model.nu), 0.0),
      m_ctrl_range(ctrl_sample_range(m_model)),
      m_random(false),
      m_seed(opts.seed),
      m_substeps(opts.substeps) {
  if (opts.ctrl == "random") m_random = true;
  else if (opts.ctrl != "zero") throw ConfigError("--ctrl: expected zero or random, got '" + opts.ctrl + "'");
  if (opts.substeps < 1)
    throw ConfigError("--substeps: expected a positive integer, got " + std::to_string(opts.substeps));
  const ModelView<double>& m = m_host.view();
  reset_data(m, m_data);
  if (!opts.key.empty()) {
    const int k = m_model.key_id(opts.key);
    if (k < 0) {
      std::string known;
      for (const auto& n : m_model.key_name)
        known += (known.empty() ? "" : ", ") + (n.empty() ? std::string("(unnamed)") : n);
      throw ConfigError("--key: no keyframe '" + opts.key + "' in " + opts.model_path +
                        (known.empty() ? " (it has none)" : " (it has: " + known + ")"));
    }
    const size_t ks = static_cast<size_t>(k);
    for (int i = 0; i < m_model.nq; ++i) m_data.qpos[i] = m_model.key_qpos[ks * m_model.nq + i];
    for (int i = 0; i < m_model.nv; ++i) m_data.qvel[i] = m_model.key_qvel[ks * m_model.nv + i];
    for (int u = 0; u < m_model.nu; ++u) m_ctrl[static_cast<size_t>(u)] = m_model.key_ctrl[ks * m_model.nu + u];
    m_time = m_model.key_time[ks];
  }
}

void ModelRollout::step(const double* ctrl) {
  for (size_t u = 0; u < m_ctrl.size(); ++u) m_ctrl[u] = ctrl[u];
  advance();
}

void ModelRollout::step() {
  if (m_random) random_ctrl(m_ctrl_range.data(), m_model.nu, m_seed, 0u, static_cast<u32>(m_steps_done), m_ctrl.data());
  advance();
}

void ModelRollout::advance() {
  physics_step(m_host.view(), m_data, m_ctrl.data(), m_substeps, &m_num_contacts);
  ++m_steps_done;
  m_time += m_substeps * m_model.timestep;
}

void ModelRollout::forward() {
  const ModelView<double>& m = m_host.view();
  physics_forward(m, m_data, m_ctrl.data(), 0.0);
  if (m.nsensor > 0) compute_sensors(m, m_data);
}

bool ModelRollout::finite() const {
  for (int i = 0; i < m_model.nq; ++i)
    if (!std::isfinite(m_data.qpos[i])) return false;
  for (int i = 0; i < m_model.nv; ++i)
    if (!std::isfinite(m_data.qvel[i])) return false;
  return true;
}

double ModelRollout::kinetic_energy() {
  const ModelView<double>& m = m_host.view();
  kinematics(m, m_data);
  com_position(m, m_data);
  mass_matrix(m, m_data);
  return rlt::kinetic_energy(m, m_data);
}

void ModelRollout::write_row(std::FILE* out) const {
  // %.17g: every double round-trips, so a peer comparison is not limited by the text.
  std::fprintf(out, "%.17g", m_time);
  for (int i = 0; i < m_model.nq; ++i) std::fprintf(out, ",%.17g", m_data.qpos[i]);
  for (int i = 0; i < m_model.nv; ++i) std::fprintf(out, ",%.17g", m_data.qvel[i]);
  for (int u = 0; u < m_model.nu; ++u) std::fprintf(out, ",%.17g", m_ctrl[static_cast<size_t>(u)]);
  std::fprintf(out, ",%d\n", m_num_contacts);
}

int run_rollout(const RolloutOptions& opts) {
  if (opts.steps < 0) throw ConfigError("--steps: expected a non-negative integer, got " + std::to_string(opts.steps));
  const Model model = load_mjcf(opts.model_path);
  ModelRollout rollout(model, opts);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  std::FILE* out = stdout;
  if (!opts.out_path.empty()) {
    file.reset(std::fopen(opts.out_path.c_str(), "w"));
    if (!file) throw ConfigError("--out: cannot write " + opts.out_path);
    out = file.get();
  }
  const std::vector<std::string> cols = rollout_columns(rollout.model());
  for (size_t c = 0; c < cols.size(); ++c) std::fprintf(out, c == 0 ? "%s" : ",%s", cols[c].c_str());
  std::fprintf(out, "\n");
  rollout.write_row(out);
  std::int64_t first_bad = -1;
  for (std::int64_t t = 0; t < opts.steps; ++t) {
    rollout.step();
    rollout.write_row(out);
    if (first_bad < 0 && !rollout.finite()) first_bad = t + 1;
  }
  if (std::fflush(out) != 0 || std::ferror(out))
    throw IoError((opts.out_path.empty() ? std::string("standard output") : opts.out_path) + ": write failed (" +
                  std::strerror(errno) + ")");
  if (first_bad >= 0)
    std::fprintf(stderr, "rltrain: warning: %s: the state became non-finite at control step %lld\n",
                 opts.model_path.c_str(), static_cast<long long>(first_bad));
  return 0;
}

int control_substeps(double control_dt, double timestep) {
  if (!(control_dt > 0) || !std::isfinite(control_dt))
    throw ConfigError("--control-dt: expected a positive number of seconds, got " + std::to_string(control_dt));
  const double ratio = control_dt / timestep;
  const long k = std::lround(ratio);
  if (k < 1 || std::fabs(ratio - static_cast<double>(k)) > 1e-6 * ratio)
    throw ConfigError("--control-dt: " + std::to_string(control_dt) + " s is not a whole number of the model's " +
                      std::to_string(timestep) + " s physics steps");
  return static_cast<int>(k);
}

}  // namespace rlt
