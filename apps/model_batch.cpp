#include "apps/model_batch.h"

#include <algorithm>
#include <stdexcept>

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

template <class T>
class ModelBatchT final : public ModelBatch {
 public:
  ModelBatchT(const Model& model, i64 num_envs, int num_threads)
      : m_model(model), m_host(model), m_exec(num_threads), m_num_envs(num_envs) {
    m_layout = data_layout(m_host.view());
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
    if (nsteps < 0) throw std::invalid_argument("step: nsteps: expected a non-negative integer, got " + std::to_string(nsteps));
    if (nsteps == 0) return;
    const int substeps = static_cast<int>(std::min<i64>(nsteps, 1 << 30));
    const ModelView<T>& m = m_host.view();
    const double h = m_model.timestep;
    for_envs(m_num_envs, [&](i64 env) {
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

 private:
  DataView<T> view(i64 env) { return BatchRows<T>{m_layout, m_rows.data(), {}}.env(env); }
  T* ctrl_row(i64 env) { return m_model.nu > 0 ? m_ctrl.data() + env * m_model.nu : nullptr; }

  template <class F>
  void for_envs(i64 n, const F& f) {
    m_exec.for_ranges(n, 1, [&](i64 b, i64 e) {
      for (i64 i = b; i < e; ++i) f(i);
    });
  }

  void forward_env(i64 env) {
    const ModelView<T>& m = m_host.view();
    const DataView<T> d = view(env);
    if (m.nclock > 0) d.time[0] = T(m_time[static_cast<size_t>(env)]);
    physics_forward(m, d, ctrl_row(env), T(0));  // MuJoCo's d->qacc: without the implicit damping
    if (m.nsensor > 0) compute_sensors(m, d);
  }

  // As ModelRollout::restart (apps/rollout.cpp), with the keyframe's time also on the clock.
  void reset_env(i64 env, int key) {
    const ModelView<T>& m = m_host.view();
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
