#include "apps/rollout.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
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
  for (const auto& c : mocap_columns(m)) cols.push_back(c);
  cols.push_back("ncon");
  return cols;
}

std::vector<std::string> mocap_columns(const Model& m) {
  std::vector<std::string> body(static_cast<size_t>(m.nmocap));
  for (int b = 0; b < m.nbody && m.nmocap > 0; ++b) {
    const int id = m.body_mocapid[static_cast<size_t>(b)];
    if (id < 0) continue;
    const std::string& name = m.body_name[static_cast<size_t>(b)];
    body[static_cast<size_t>(id)] = name.empty() ? "body" + std::to_string(b) : name;
  }
  std::vector<std::string> cols;
  for (const auto& n : body)
    for (const char* s : {"_x", "_y", "_z", "_qw", "_qx", "_qy", "_qz"}) cols.push_back("mocap_" + n + s);
  return cols;
}

MocapScript read_mocap_script(const Model& model, const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "r"), &std::fclose);
  if (!file) throw ConfigError("--mocap: cannot read " + path + " (" + std::strerror(errno) + ")");
  if (model.nmocap == 0) throw ConfigError("--mocap: " + path + ": the model has no mocap bodies");
  const std::vector<std::string> mocap = mocap_columns(model), all = rollout_columns(model);
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    size_t at = 0;
    for (size_t comma; (comma = line.find(',', at)) != std::string::npos; at = comma + 1)
      cells.push_back(line.substr(at, comma - at));
    cells.push_back(line.substr(at));
    for (auto& c : cells) {
      while (!c.empty() && std::isspace(static_cast<unsigned char>(c.back()))) c.pop_back();
      while (!c.empty() && std::isspace(static_cast<unsigned char>(c.front()))) c.erase(c.begin());
    }
    return cells;
  };
  MocapScript s;
  s.given.assign(mocap.size(), 0);
  std::vector<int> where;  // per file column: its entry of the 7 nmocap, -1 for an ignored rollout column
  std::string line;
  long line_no = 0;
  const auto read_line = [&]() {
    line.clear();
    int c;
    while ((c = std::fgetc(file.get())) != EOF && c != '\n') line += static_cast<char>(c);
    if (c == EOF && line.empty()) return false;
    ++line_no;
    return true;
  };
  const auto where_at = [&](const std::string& what) { return "--mocap: " + path + ":" + std::to_string(line_no) + ": " + what; };
  if (!read_line()) throw ConfigError("--mocap: " + path + ": empty (expected a header naming mocap columns)");
  for (const auto& name : split(line)) {
    const auto m_at = std::find(mocap.begin(), mocap.end(), name);
    if (m_at != mocap.end()) {
      const int k = static_cast<int>(m_at - mocap.begin());
      if (s.given[static_cast<size_t>(k)]) throw ConfigError(where_at("column '" + name + "' given twice"));
      s.given[static_cast<size_t>(k)] = 1;
      where.push_back(k);
    } else if (std::find(all.begin(), all.end(), name) != all.end()) {
      where.push_back(-1);
    } else {
      std::string known;
      for (const auto& c : mocap) known += (known.empty() ? "" : ", ") + c;
      throw ConfigError(where_at("unknown column '" + name + "' (this model's mocap columns: " + known + ")"));
    }
  }
  if (std::find(s.given.begin(), s.given.end(), 1) == s.given.end())
    throw ConfigError(where_at("no mocap column in the header"));
  std::vector<double> row(mocap.size(), 0.0);
  while (read_line()) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank line
    const auto cells = split(line);
    if (cells.size() != where.size())
      throw ConfigError(where_at(std::to_string(cells.size()) + " values, the header has " + std::to_string(where.size())));
    for (size_t c = 0; c < cells.size(); ++c) {
      if (where[c] < 0) continue;
      char* end = nullptr;
      const double v = std::strtod(cells[c].c_str(), &end);
      if (cells[c].empty() || *end != '\0' || !std::isfinite(v))
        throw ConfigError(where_at("column '" + mocap[static_cast<size_t>(where[c])] + "': '" + cells[c] +
                                   "' is not a finite number"));
      row[static_cast<size_t>(where[c])] = v;
    }
    s.values.insert(s.values.end(), row.begin(), row.end());
    ++s.rows;
  }
  if (s.rows == 0) throw ConfigError("--mocap: " + path + ": no rows after the header");
  return s;
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
  if (!opts.mocap.empty()) m_mocap = read_mocap_script(m_model, opts.mocap);
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
    const size_t np = 3 * static_cast<size_t>(m_model.nmocap), nq = 4 * static_cast<size_t>(m_model.nmocap);
    for (size_t i = 0; i < np; ++i) m_data.mocap_pos[i] = m_model.key_mpos[ks * np + i];  // mj_resetDataKeyframe
    for (size_t i = 0; i < nq; ++i) m_data.mocap_quat[i] = m_model.key_mquat[ks * nq + i];
  }
}

void ModelRollout::set_mocap(const double* pos, const double* quat) {
  for (int i = 0; i < 3 * m_model.nmocap; ++i) m_data.mocap_pos[i] = pos[i];
  for (int i = 0; i < 4 * m_model.nmocap; ++i) m_data.mocap_quat[i] = quat[i];
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
  if (m_mocap.rows > 0) {  // the script's row for this control step (its last one after it ends)
    const std::int64_t t = std::min(m_steps_done, m_mocap.rows - 1);
    const int n = 7 * m_model.nmocap;
    const double* row = m_mocap.values.data() + t * n;
    for (int k = 0; k < n; ++k) {
      if (!m_mocap.given[static_cast<size_t>(k)]) continue;
      const int body = k / 7, c = k % 7;
      (c < 3 ? m_data.mocap_pos[3 * body + c] : m_data.mocap_quat[4 * body + c - 3]) = row[k];
    }
  }
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
  for (int b = 0; b < m_model.nmocap; ++b) {
    for (int k = 0; k < 3; ++k) std::fprintf(out, ",%.17g", m_data.mocap_pos[3 * b + k]);
    for (int k = 0; k < 4; ++k) std::fprintf(out, ",%.17g", m_data.mocap_quat[4 * b + k]);
  }
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
