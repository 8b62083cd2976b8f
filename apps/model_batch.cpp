#include "apps/model_batch.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/constraints.h"
#include "sim/cpu_executor.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"
#include "sim/sensors.h"

namespace rlt {

std::vector<int> stateful_actuators(const Model& model) {
  std::vector<int> out;
  for (size_t u = 0; u < model.actuator_dyntype.size() && u < static_cast<size_t>(model.nu); ++u)  // (optional)
    if (model.actuator_dyntype[u] != kDynNone) out.push_back(static_cast<int>(u));
  return out;
}

namespace {

// The per-env model parameters: X(name, count, width, non_negative, doc), count one of the model's
// sizes. Each is a ModelView array of count x width reals (sim/model_fields.h), rebound per env.
#define RLT_ENV_PARAMS(X)                                                                              \
  X(body_mass, nbody, 1, true, "kg")                                                                   \
  X(body_inertia, nbody, 3, true, "principal moments of inertia, kg m^2 (not scaled with body_mass)")  \
  X(geom_friction, ngeom, 3, true, "sliding, torsional, rolling friction")                             \
  X(geom_solref, ngeom, 2, false, "contact solref (mixed per pair as MuJoCo's mj_contactParam)")       \
  X(geom_solimp, ngeom, 5, false, "contact solimp")                                                    \
  X(dof_damping, nv, 1, true, "joint damping")                                                         \
  X(dof_armature, nv, 1, true, "armature (added diagonal inertia)")                                    \
  X(dof_frictionloss, nv, 1, true, "dry friction")                                                     \
  X(actuator_gear, nu, 1, false, "transmission gear (a joint or tendon transmission's scale)")         \
  X(actuator_kp, nu, 1, false, "<position> gain kp (MuJoCo's gainprm[0] = -biasprm[1])")               \
  X(actuator_kv, nu, 1, false, "<position> damping kv (-biasprm[2]), <velocity> gain kv (gainprm[0])") \
  X(actuator_gainprm, nu, kNumGainPrm, false, "<general> actuators' gain parameters")                  \
  X(actuator_biasprm, nu, kNumGainPrm, false, "<general> actuators' bias parameters")
// The constants derived from them (MuJoCo's mj_setConst), kept per env beside them.
#define RLT_ENV_PARAMS_DERIVED(X)  \
  X(body_invweight0, nbody, 1)     \
  X(body_invweight0_rot, nbody, 1) \
  X(dof_invweight0, nv, 1)         \
  X(tendon_invweight0, ntendon, 1)

// Offsets of those fields in one env's parameter row.
struct ParamLayout {
#define RLT_PARAM_OFFSET(name, count, width, ...) int name;
  RLT_ENV_PARAMS(RLT_PARAM_OFFSET)
  RLT_ENV_PARAMS_DERIVED(RLT_PARAM_OFFSET)
#undef RLT_PARAM_OFFSET
  int size;
};

template <class T>
ParamLayout param_layout(const ModelView<T>& m) {
  ParamLayout l{};
  int at = 0;
#define RLT_PARAM_PLACE(name, count, width, ...) l.name = at, at += m.count * (width);
  RLT_ENV_PARAMS(RLT_PARAM_PLACE)
  RLT_ENV_PARAMS_DERIVED(RLT_PARAM_PLACE)
#undef RLT_PARAM_PLACE
  l.size = (at + 3) / 4 * 4;
  return l;
}

// m's parameter fields (and their derived constants) pointed at an env's parameter row.
template <class T>
void bind_params(ModelView<T>& m, const ParamLayout& l, const T* row) {
#define RLT_PARAM_BIND(name, count, width, ...) m.name = row + l.name;
  RLT_ENV_PARAMS(RLT_PARAM_BIND)
  RLT_ENV_PARAMS_DERIVED(RLT_PARAM_BIND)
#undef RLT_PARAM_BIND
}

// Copies the parameter fields between a view's arrays and a parameter row: to the row, or from it
// into `reals`, the block `m` is bound to (model_offsets).
template <class T>
void params_to_row(const ModelView<T>& m, const ParamLayout& l, T* row) {
#define RLT_PARAM_TO_ROW(name, count, width, ...) std::copy_n(m.name, m.count*(width), row + l.name);
  RLT_ENV_PARAMS(RLT_PARAM_TO_ROW)
  RLT_ENV_PARAMS_DERIVED(RLT_PARAM_TO_ROW)
#undef RLT_PARAM_TO_ROW
}
template <class T>
void row_to_reals(const ModelView<T>& m, const ParamLayout& l, const T* row, std::vector<T>& reals) {
  const ModelOffsets o = model_offsets(m);
#define RLT_ROW_TO_REALS(name, count, width, ...) std::copy_n(row + l.name, m.count * (width), reals.begin() + o.name);
  RLT_ENV_PARAMS(RLT_ROW_TO_REALS)
#undef RLT_ROW_TO_REALS
}
template <class T>
void derived_to_row(const ModelView<T>& m, const ParamLayout& l, const std::vector<T>& reals, T* row) {
  const ModelOffsets o = model_offsets(m);
#define RLT_DERIVED_TO_ROW(name, count, width) std::copy_n(reals.begin() + o.name, m.count * (width), row + l.name);
  RLT_ENV_PARAMS_DERIVED(RLT_DERIVED_TO_ROW)
#undef RLT_DERIVED_TO_ROW
}

template <class T>
class ModelBatchT final : public ModelBatch {
 public:
  ModelBatchT(const Model& model, i64 num_envs, int num_threads)
      : m_model(model), m_host(model), m_exec(num_threads), m_num_envs(num_envs) {
    m_view = m_host.view();
    m_view.nbody_xfrc = m_view.nbody;  // body wrenches on (xfrc_applied)
    m_layout = data_layout(m_view);
    m_playout = param_layout(m_view);
#define RLT_PARAM_INFO(name, count, width, non_negative, doc) \
  m_fields.push_back({#name, m_view.count, width, non_negative, doc});
    RLT_ENV_PARAMS(RLT_PARAM_INFO)
#undef RLT_PARAM_INFO
    const auto n = static_cast<size_t>(num_envs);
    m_rows.assign(n * static_cast<size_t>(m_layout.row), T(0));
    m_ctrl.assign(std::max<size_t>(1, n * static_cast<size_t>(model.nu)), T(0));
    m_time.assign(n, 0.0);
    m_ncon.assign(n, 0);
    reset(-1, nullptr, 0);
  }

  const Model& model() const override { return m_model; }
  Precision precision() const override { return sizeof(T) == sizeof(double) ? Precision::kDouble : Precision::kFloat; }
  i64 num_envs() const override { return m_num_envs; }
  int num_threads() const override { return m_exec.num_threads(); }
  const DataLayout& layout() const override { return m_layout; }
  void* rows() override { return m_rows.data(); }
  void* ctrl() override { return m_ctrl.data(); }
  double* time() override { return m_time.data(); }
  int* ncon() override { return m_ncon.data(); }

  void step(i64 nsteps) override {
    if (nsteps < 0)
      throw std::invalid_argument("step: nsteps: expected a non-negative integer, got " + std::to_string(nsteps));
    if (nsteps == 0) return;
    const int substeps = static_cast<int>(std::min<i64>(nsteps, 1 << 30));
    const double h = m_model.timestep;
    for_envs(m_num_envs, [&](i64 env) {
      const ModelView<T> m = env_model(env);
      const DataView<T> d = view(env);
      if (m.nclock > 0) d.time[0] = T(m_time[static_cast<size_t>(env)]);  // a time the caller set reaches the clock
      for (i64 done = 0; done < nsteps; done += substeps)
        physics_step(m, d, ctrl_row(env), static_cast<int>(std::min<i64>(substeps, nsteps - done)),
                     &m_ncon[static_cast<size_t>(env)]);
      // d->time += timestep per step, as MuJoCo accumulates it
      for (i64 k = 0; k < nsteps; ++k) m_time[static_cast<size_t>(env)] += h;
    });
  }

  void forward() override {
    for_envs(m_num_envs, [&](i64 env) { forward_env(env); });
  }

  void reset(int key, const i64* envs, i64 count) override {
    if (key >= m_model.nkey)
      throw std::out_of_range("reset: key " + std::to_string(key) + " outside the model's " +
                              std::to_string(m_model.nkey) + " keyframes");
    if (envs)
      for (i64 k = 0; k < count; ++k)
        if (envs[k] < 0 || envs[k] >= m_num_envs)
          throw std::out_of_range("reset: env " + std::to_string(envs[k]) + " outside [0, " +
                                  std::to_string(m_num_envs) + ")");
    for_envs(envs ? count : m_num_envs, [&](i64 k) { reset_env(envs ? envs[k] : k, key); });
  }

  const std::vector<ParamField>& param_fields() const override { return m_fields; }

  void set_param(const std::string& name, const double* values, const i64* envs, i64 count) override {
    const int k = field_index(name);
    const ParamField& f = m_fields[static_cast<size_t>(k)];
    const i64 n = envs ? count : m_num_envs, size = static_cast<i64>(f.count) * f.width;
    for (i64 e = 0; envs && e < n; ++e)
      if (envs[e] < 0 || envs[e] >= m_num_envs)
        throw std::out_of_range("set_param: " + name + ": env " + std::to_string(envs[e]) + " outside [0, " +
                                std::to_string(m_num_envs) + ")");
    for (i64 j = 0; j < n * size; ++j) {
      const double v = values[j];
      if (!std::isfinite(v) || (f.non_negative && v < 0))
        throw std::invalid_argument("set_param: " + name + ": expected " +
                                    (f.non_negative ? "finite values >= 0" : "finite values") + ", got " +
                                    std::to_string(v) + " for env " + std::to_string(envs ? envs[j / size] : j / size) +
                                    ", element " + std::to_string(j % size));
    }
    if (m_params.empty()) {  // the first: every env gets its own copy of the model's values
      m_params.assign(static_cast<size_t>(m_num_envs * m_playout.size), T(0));
      for (i64 e = 0; e < m_num_envs; ++e) params_to_row(m_view, m_playout, param_row(e));
    }
    const int offset = field_offset(k);
    for (i64 e = 0; e < n; ++e) {
      T* row = param_row(envs ? envs[e] : e) + offset;
      for (i64 j = 0; j < size; ++j) row[j] = static_cast<T>(values[e * size + j]);
    }
    // mass, inertia and armature change M at qpos0: its inverse weights again, per env (mj_setConst)
    if (name != "body_mass" && name != "body_inertia" && name != "dof_armature") return;
    std::vector<T> reals = m_host.reals();
    ModelView<T> scratch = m_view;
    scratch.bind(reals.data(), m_host.ints().data());
    for (i64 e = 0; e < n; ++e) {
      T* row = param_row(envs ? envs[e] : e);
      row_to_reals(scratch, m_playout, row, reals);
      set_invweight0(scratch, reals);
      derived_to_row(scratch, m_playout, reals, row);
    }
  }

  void get_param(const std::string& name, double* out) const override {
    const int k = field_index(name);
    const ParamField& f = m_fields[static_cast<size_t>(k)];
    const i64 size = static_cast<i64>(f.count) * f.width;
    const int offset = field_offset(k);
    for (i64 e = 0; e < m_num_envs; ++e) {
      const T* src = m_params.empty() ? base_field(k) : m_params.data() + e * m_playout.size + offset;
      for (i64 j = 0; j < size; ++j) out[e * size + j] = static_cast<double>(src[j]);
    }
  }

 private:
  int field_index(const std::string& name) const {
    for (size_t k = 0; k < m_fields.size(); ++k)
      if (m_fields[k].name == name) return static_cast<int>(k);
    std::string known;
    for (const ParamField& f : m_fields) known += (known.empty() ? "" : ", ") + f.name;
    throw std::invalid_argument("model parameter '" + name +
                                "': not one that can differ between envs (those are: " + known + ")");
  }
  // Field k's offset in a parameter row, and its array in the shared model.
  int field_offset(int k) const {
    const int offsets[] = {
#define RLT_PARAM_OFFSET_OF(name, ...) m_playout.name,
        RLT_ENV_PARAMS(RLT_PARAM_OFFSET_OF)
#undef RLT_PARAM_OFFSET_OF
    };
    return offsets[k];
  }
  const T* base_field(int k) const {
    const T* arrays[] = {
#define RLT_PARAM_ARRAY_OF(name, ...) m_view.name,
        RLT_ENV_PARAMS(RLT_PARAM_ARRAY_OF)
#undef RLT_PARAM_ARRAY_OF
    };
    return arrays[k];
  }
  T* param_row(i64 env) { return m_params.data() + env * m_playout.size; }

  // The model env `env` steps with: the shared one, or with its parameter row bound.
  ModelView<T> env_model(i64 env) const {
    ModelView<T> m = m_view;
    if (!m_params.empty()) bind_params(m, m_playout, m_params.data() + env * m_playout.size);
    return m;
  }

  DataView<T> view(i64 env) { return BatchRows<T>{m_layout, m_rows.data(), {}}.env(env); }
  T* ctrl_row(i64 env) { return m_model.nu > 0 ? m_ctrl.data() + env * m_model.nu : nullptr; }

  template <class F>
  void for_envs(i64 n, const F& f) {
    m_exec.for_ranges(
        n, 1,
        [&](i64 b, i64 e) {
          for (i64 i = b; i < e; ++i) f(i);
        },
        CpuExecutor::kCostlyTasksPerThread);
  }

  void forward_env(i64 env) {
    const ModelView<T> m = env_model(env);
    const DataView<T> d = view(env);
    if (m.nclock > 0) d.time[0] = T(m_time[static_cast<size_t>(env)]);
    physics_forward(m, d, ctrl_row(env), T(0));  // MuJoCo's d->qacc: without the implicit damping
    if (m.nsensor > 0) compute_sensors(m, d);
  }

  // As ModelRollout::restart (apps/rollout.cpp), with the keyframe's time also on the clock.
  void reset_env(i64 env, int key) {
    const ModelView<T> m = env_model(env);
    const Model& mm = m_model;
    std::fill_n(m_rows.begin() + env * m_layout.row, m_layout.row, T(0));
    T* c = ctrl_row(env);
    for (int u = 0; u < mm.nu; ++u) c[u] = T(0);
    const DataView<T> d = view(env);
    reset_data(m, d);
    m_time[static_cast<size_t>(env)] = 0;
    m_ncon[static_cast<size_t>(env)] = 0;
    if (key >= 0) {
      const auto k = static_cast<size_t>(key);
      for (int i = 0; i < mm.nq; ++i) d.qpos[i] = T(mm.key_qpos[k * mm.nq + i]);
      for (int i = 0; i < mm.nv; ++i) d.qvel[i] = T(mm.key_qvel[k * mm.nv + i]);
      for (int u = 0; u < mm.nu; ++u) c[u] = T(mm.key_ctrl[k * mm.nu + u]);
      for (int u = 0; u < mm.nu; ++u) d.act[u] = T(mm.key_act[k * mm.nu + u]);
      const size_t np = 3 * static_cast<size_t>(mm.nmocap), nq = 4 * static_cast<size_t>(mm.nmocap);
      for (size_t i = 0; i < np; ++i) d.mocap_pos[i] = T(mm.key_mpos[k * np + i]);
      for (size_t i = 0; i < nq; ++i) d.mocap_quat[i] = T(mm.key_mquat[k * nq + i]);
      m_time[static_cast<size_t>(env)] = mm.key_time[k];
    }
    forward_env(env);
  }

  Model m_model;
  HostModel<T> m_host;
  ModelView<T> m_view;  // m_host's, with body wrenches on
  ParamLayout m_playout{};
  std::vector<ParamField> m_fields;  // RLT_ENV_PARAMS, this model's shapes
  std::vector<T> m_params;           // (num_envs x m_playout.size) from the first set_param; empty before
  CpuExecutor m_exec;
  i64 m_num_envs;
  DataLayout m_layout{};
  std::vector<T> m_rows;       // (num_envs x layout.row)
  std::vector<T> m_ctrl;       // (num_envs x nu), at least one scalar
  std::vector<double> m_time;  // (num_envs)
  std::vector<int> m_ncon;     // (num_envs)
};

}  // namespace

std::unique_ptr<ModelBatch> make_model_batch(const Model& model, i64 num_envs, int num_threads, Precision precision) {
  if (num_envs < 1) throw std::invalid_argument("num_envs: expected at least 1, got " + std::to_string(num_envs));
  if (num_threads < 0)
    throw std::invalid_argument("num_threads: expected 0 (one per core) or more, got " + std::to_string(num_threads));
  if (precision == Precision::kDouble) return std::make_unique<ModelBatchT<double>>(model, num_envs, num_threads);
  return std::make_unique<ModelBatchT<float>>(model, num_envs, num_threads);
}

}  // namespace rlt
