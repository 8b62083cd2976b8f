#include "apps/rollout.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>

#include "apps/inspect.h"
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
      m_model_path(opts.model_path),
      m_host(m_model),
      m_row(static_cast<size_t>(data_size(m_host.view())), 0.0),
      m_data(data_view(m_host.view(), m_row.data())),
      m_ctrl(static_cast<size_t>(m_model.nu), 0.0),
      m_ctrl_range(ctrl_sample_range(m_model)),
      m_random(false),
      m_seed(opts.seed),
      m_substeps(opts.substeps) {
  if (opts.substeps < 1)
    throw ConfigError("--substeps: expected a positive integer, got " + std::to_string(opts.substeps));
  restart(opts.key, opts.ctrl);
}

void ModelRollout::restart(const std::string& key, const std::string& ctrl) {
  bool random = false;
  if (ctrl == "random") random = true;
  else if (ctrl != "zero") throw ConfigError("--ctrl: expected zero or random, got '" + ctrl + "'");
  int k = -1;
  if (!key.empty() && !(key == kQpos0Start && m_model.key_id(key) < 0)) {
    k = m_model.key_id(key);
    if (k < 0) {
      std::string known;
      for (const auto& n : m_model.key_name)
        known += (known.empty() ? "" : ", ") + (n.empty() ? std::string("(unnamed)") : n);
      throw ConfigError("--key: no keyframe '" + key + "' in " + m_model_path +
                        (known.empty() ? " (it has none" : " (it has: " + known) + "; " + kQpos0Start +
                        ": qpos0 at rest)");
    }
  }
  // Every value of the data row as a new ModelRollout has it (zero, then reset_data): a run after
  // a restart is bit for bit the run of a fresh one.
  std::fill(m_row.begin(), m_row.end(), 0.0);
  std::fill(m_ctrl.begin(), m_ctrl.end(), 0.0);
  reset_data(m_host.view(), m_data);
  m_random = random;
  m_time = 0;
  m_steps_done = 0;
  m_num_contacts = 0;
  if (k >= 0) {
    const size_t ks = static_cast<size_t>(k);
    for (int i = 0; i < m_model.nq; ++i) m_data.qpos[i] = m_model.key_qpos[ks * m_model.nq + i];
    for (int i = 0; i < m_model.nv; ++i) m_data.qvel[i] = m_model.key_qvel[ks * m_model.nv + i];
    for (int u = 0; u < m_model.nu; ++u) m_ctrl[static_cast<size_t>(u)] = m_model.key_ctrl[ks * m_model.nu + u];
    for (int u = 0; u < m_model.nu; ++u) m_data.act[u] = m_model.key_act[ks * m_model.nu + u];
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

namespace {

// path with every "{name}" replaced by value.
std::string fill(std::string path, const std::string& name, const std::string& value) {
  const std::string hole = "{" + name + "}";
  for (size_t at = path.find(hole); at != std::string::npos; at = path.find(hole, at + value.size()))
    path.replace(at, hole.size(), value);
  return path;
}

// Throws ConfigError unless `path` names each run apart: "{name}" in it when several values are run.
void check_pattern(const char* option, const std::string& path, const char* name, size_t count) {
  if (count > 1 && path.find(std::string("{") + name + "}") == std::string::npos)
    throw ConfigError(std::string(option) + ": " + std::to_string(count) + " " + name +
                      "s are run, so the file name needs {" + name + "} (got '" + path + "')");
}

// One run's CSV from the rollout's start: the header, the start row, then one row per control step.
void write_run(ModelRollout& rollout, std::int64_t steps, const std::string& out_path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  std::FILE* out = stdout;
  if (!out_path.empty()) {
    file.reset(std::fopen(out_path.c_str(), "w"));
    if (!file) throw ConfigError("--out: cannot write " + out_path);
    out = file.get();
  }
  const std::vector<std::string> cols = rollout_columns(rollout.model());
  for (size_t c = 0; c < cols.size(); ++c) std::fprintf(out, c == 0 ? "%s" : ",%s", cols[c].c_str());
  std::fprintf(out, "\n");
  rollout.write_row(out);
  std::int64_t first_bad = -1;
  for (std::int64_t t = 0; t < steps; ++t) {
    rollout.step();
    rollout.write_row(out);
    if (first_bad < 0 && !rollout.finite()) first_bad = t + 1;
  }
  if (std::fflush(out) != 0 || std::ferror(out))
    throw IoError((out_path.empty() ? std::string("standard output") : out_path) + ": write failed (" +
                  std::strerror(errno) + ")");
  if (first_bad >= 0)
    std::fprintf(stderr, "rltrain: warning: %s: the state became non-finite at control step %lld%s\n",
                 rollout.model_path().c_str(), static_cast<long long>(first_bad),
                 out_path.empty() ? "" : (" (" + out_path + ")").c_str());
}

}  // namespace

int run_rollout(const RolloutCommand& cmd) {
  const RolloutOptions& base = cmd.run;
  if (base.steps < 0) throw ConfigError("--steps: expected a non-negative integer, got " + std::to_string(base.steps));
  const std::vector<std::string> keys = cmd.keys.empty() ? std::vector<std::string>{""} : cmd.keys;
  const std::vector<std::string> ctrls = cmd.ctrls.empty() ? std::vector<std::string>{"zero"} : cmd.ctrls;
  for (const auto& c : ctrls)
    if (c != "zero" && c != "random") throw ConfigError("--ctrl: expected zero or random, got '" + c + "'");
  if (cmd.out.empty() && keys.size() * ctrls.size() > 1)
    throw ConfigError("--out: " + std::to_string(keys.size()) + " starts x " + std::to_string(ctrls.size()) +
                      " control modes need a file name" + (keys.size() > 1 ? " with {key}" : "") +
                      (keys.size() > 1 && ctrls.size() > 1 ? " and" : (ctrls.size() > 1 ? " with" : "")) +
                      (ctrls.size() > 1 ? " {ctrl}" : "") + " (standard output takes one run)");
  check_pattern("--out", cmd.out, "key", keys.size());
  check_pattern("--out", cmd.out, "ctrl", ctrls.size());
  if (!cmd.inspect.empty()) check_pattern("--inspect", cmd.inspect, "key", keys.size());
  if (!cmd.fields.empty() && cmd.inspect.empty()) throw ConfigError("--fields: only with --inspect");
  check_inspect_fields(cmd.fields);
  if (!cmd.inspect.empty() && base.timestep != 0)
    throw ConfigError("--inspect: not with --timestep (the JSON is the model as its file sets it, as rltrain inspect's)");
  // One compile and one rollout, restarted for each run (bit for bit a fresh one's).
  RolloutOptions first = base;
  first.key = keys.front();
  first.ctrl = ctrls.front();
  ModelRollout rollout(load_mjcf(base.model_path), first);
  for (const auto& k : keys) rollout.restart(k, ctrls.front());  // every start checked before a file is written
  const auto start_name = [](const std::string& k) { return k.empty() ? std::string(kQpos0Start) : k; };
  for (const auto& k : keys) {
    if (!cmd.inspect.empty()) {
      InspectOptions io;
      io.model_path = base.model_path;
      io.key = k;
      io.out_path = fill(cmd.inspect, "key", start_name(k));
      io.fields = cmd.fields;
      rollout.restart(k, "zero");
      write_inspect(rollout, io);
    }
    for (const auto& c : ctrls) {
      rollout.restart(k, c);
      write_run(rollout, base.steps, fill(fill(cmd.out, "key", start_name(k)), "ctrl", c));
    }
  }
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
