// PhysicsBatch: N copies of any MJCF model stepped by the physics directly, with no task on top
// (no observation, reward or episode): what `rltrain bench --model` times and what
// `rltrain view --model` shows. Single source: PhysicsBatchT<Exec> runs the same per-env functors
// (sim/physics_step.h) under parallel_for on the CPU executor (envs/physics_batch.cpp) and, unchanged,
// on the CUDA executor (envs/physics_batch_cuda.cu); apps/ makes one through Runtime and never
// names a backend.
//
// Layout (executor memory): the model's two blocks (HostModel<float>, uploaded once, a ModelView
// bound to them), one physics row per env (DataLayout, sim/dynamics.h), one control row per env
// (nu floats), one contact count per env.
// Controls of a control step (CtrlMode): zero; random, uniform in each actuator's interval
// (ctrl_sample_range), keyed (seed, env, step) through sim/actuators.h random_ctrl, the same
// numbers `rltrain rollout --ctrl random` and tools/bench_mujoco draw; or manual, nu values set
// on the host and broadcast to every env.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/actuators.h"
#include "sim/dynamics.h"
#include "sim/model.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"
#include "sim/vec_env.h"  // DrawGeom, Device

namespace rlt {

class CudaExecutor;
class CpuExecutor;

// The CPU executor's batch physics in SIMD lanes (sim/slot_step.h; envs/physics_batch.cpp): groups
// of kLanes envs step every substep in lanes (the last one's sensors and Euler update alone), every
// substep's rows and solve in slots. make_physics_lanes: null, with the reason in *why, for a model
// the slots do not cover (sim/slot_rows.h, sim/slot_step.h). physics_lanes_step: a control step of
// every env of the batch (rows of layout.row floats, ctrl nu floats per env or null, ncon one int
// per env).
struct PhysicsLanes;
std::shared_ptr<PhysicsLanes> make_physics_lanes(const ModelView<float>& m, std::string* why);
void physics_lanes_step(const PhysicsLanes& lanes, const CpuExecutor& exec, const ModelView<float>& m,
                        const DataLayout& layout, float* data, const float* ctrl, int substeps, int* ncon,
                        i64 num_envs);

enum class CtrlMode : int { kZero = 0, kRandom = 1, kManual = 2 };

// The interval each actuator's random control is drawn from (nu x 2): its ctrlrange when
// ctrllimited, [-1, 1] otherwise.
inline std::vector<double> ctrl_sample_range(const Model& model) {
  std::vector<double> range(2 * static_cast<size_t>(model.nu));
  for (size_t u = 0; u < static_cast<size_t>(model.nu); ++u) {
    const bool limited = model.actuator_ctrllimited[u] != 0;
    range[2 * u] = limited ? model.actuator_ctrlrange[2 * u] : -1.0;
    range[2 * u + 1] = limited ? model.actuator_ctrlrange[2 * u + 1] : 1.0;
  }
  return range;
}

// ---- per-env functors (RLT_HD: both executors) ---------------------------------------------------

// Envs [first, first + n): the model's initial state (qpos0, at rest), then kinematics so that the
// geom poses are current before the first step.
struct ResetModelEnvs {
  ModelView<float> m;
  DataLayout layout;
  float* data;       // (num_envs x layout.row)
  Workspace<float> workspace;  // BatchRows
  i64 first;
  RLT_HD void operator()(i64 k) const {
    const DataView<float> d = BatchRows<float>{layout, data, workspace}.env(first + k);
    reset_data(m, d);
    kinematics(m, d);
  }
};

// Every env's controls for one control step (CtrlMode).
struct ModelCtrlEnvs {
  float* ctrl;          // (num_envs x nu)
  const float* range;   // (nu x 2) random intervals
  const float* manual;  // (nu) kManual's values
  int nu;
  int mode;  // CtrlMode
  std::uint64_t seed;
  u32 step;
  RLT_HD void operator()(i64 env) const {
    float* c = ctrl + env * nu;
    if (mode == static_cast<int>(CtrlMode::kRandom)) random_ctrl(range, nu, seed, static_cast<u32>(env), step, c);
    else
      for (int u = 0; u < nu; ++u) c[u] = mode == static_cast<int>(CtrlMode::kManual) ? manual[u] : 0.0f;
  }
};

// An env whose qpos or qvel is no longer finite starts over (DESIGN.md D9); counted per env.
struct ResetNonfiniteEnvs {
  ModelView<float> m;
  DataLayout layout;
  float* data;            // (num_envs x layout.row)
  Workspace<float> workspace;  // BatchRows
  std::uint32_t* resets;  // (num_envs)
  RLT_HD void operator()(i64 env) const {
    const DataView<float> d = BatchRows<float>{layout, data, workspace}.env(env);
    bool ok = true;
    for (int k = 0; k < m.nq; ++k) ok = ok && is_finite(d.qpos[k]);
    for (int k = 0; k < m.nv; ++k) ok = ok && is_finite(d.qvel[k]);
    if (ok) return;
    resets[env] += 1;
    reset_data(m, d);
    kinematics(m, d);
  }
};

// ---- the batch ------------------------------------------------------------------------------------

class PhysicsBatch {
 public:
  using DrawRange = VecEnv::DrawRange;  // (first, count)

  virtual ~PhysicsBatch() = default;
  virtual Device device() const = 0;
  virtual i64 num_envs() const = 0;
  virtual const Model& model() const = 0;        // host, double
  virtual const DataLayout& layout() const = 0;  // of each env's physics row (layout().row scalars)
  virtual int substeps() const = 0;              // physics steps per control step

  // Every env, or env i (std::out_of_range outside the batch), at the model's initial state.
  virtual void reset() = 0;
  virtual void reset_one(i64 env) = 0;
  // One control step: every env's controls (mode; manual: the values set_manual_ctrl gave), then
  // substeps() physics steps with them held. Queued on the executor.
  virtual void control_step(CtrlMode mode, std::uint32_t step) = 0;
  // The physics in SIMD lanes from the next control step on (on: make_physics_lanes' path, CPU only;
  // off: one env at a time, newton_solve). False, with the reason in *why, where lanes cannot run.
  virtual bool set_lanes(bool on, std::string* why) = 0;
  virtual void set_manual_ctrl(const std::vector<float>& ctrl) = 0;  // nu values (fewer: zeros)
  // Envs whose state went non-finite start over; reset_counts() says how often, per env.
  virtual void reset_nonfinite() = 0;
  virtual void synchronize() const = 0;

  // Host copies (waits for queued work): every env's physics row, contact count after the last
  // physics step, and non-finite resets; or one env's row and controls.
  virtual void download(std::vector<float>* data, std::vector<int>* ncon) const = 0;
  virtual std::vector<std::uint32_t> reset_counts() const = 0;
  virtual std::vector<float> row(i64 env) const = 0;
  virtual std::vector<float> ctrl_row(i64 env) const = 0;

  // Drawing: the pose pair of VecEnv (sim/vec_env.h), same layout and semantics.
  std::vector<DrawGeom> draw_geoms() const { return model_draw_geoms(model()); }
  virtual void request_draw_poses(const std::vector<DrawRange>& ranges) = 0;
  virtual const float* wait_draw_poses() = 0;
};

template <class Exec>
class PhysicsBatchT final : public PhysicsBatch {
 public:
  template <class T>
  using Buffer = typename Exec::template Buffer<T>;

  // ctrl_seed keys the random controls. Throws std::invalid_argument for num_envs < 1 or substeps < 1.
  PhysicsBatchT(const Model& model, i64 num_envs, int substeps, std::uint64_t ctrl_seed, const Exec& exec)
      : m_exec(exec), m_model(model), m_host(model), m_num_envs(num_envs), m_substeps(substeps), m_seed(ctrl_seed) {
    if (num_envs < 1) throw std::invalid_argument("a physics batch needs at least one env");
    if (substeps < 1) throw std::invalid_argument("a control step needs at least one physics step");
    m_reals.resize(static_cast<i64>(m_host.reals().size()));
    m_ints.resize(static_cast<i64>(m_host.ints().size()));
    m_exec.copy_from_host(m_reals.data(), m_host.reals().data(), m_reals.size());
    m_exec.copy_from_host(m_ints.data(), m_host.ints().data(), m_ints.size());
    m_view = m_host.view();
    m_view.bind(m_reals.data(), m_ints.data());
    m_layout = data_layout(m_host.view());
    const int nu = m_model.nu;
    const std::vector<double> range = ctrl_sample_range(m_model);
    const std::vector<float> range_f(range.begin(), range.end());
    m_range.resize(std::max<i64>(1, 2 * nu));
    m_manual.resize(std::max<i64>(1, nu));
    m_exec.fill(m_manual.data(), 0.0f, m_manual.size());
    if (nu > 0) m_exec.copy_from_host(m_range.data(), range_f.data(), 2 * nu);
    m_data.resize(num_envs * m_layout.row);
    m_slots = m_exec.workspace_slots(num_envs);
    m_workspace.resize(batch_workspace_scalars(m_layout, m_slots));
    m_ctrl.resize(std::max<i64>(1, num_envs * nu));
    m_ncon.resize(num_envs);
    m_resets.resize(num_envs);
    m_exec.fill(m_data.data(), 0.0f, m_data.size());
    m_exec.fill(m_ctrl.data(), 0.0f, m_ctrl.size());
    reset();
  }

  Device device() const override { return Exec::kDevice; }
  i64 num_envs() const override { return m_num_envs; }
  const Model& model() const override { return m_model; }
  const DataLayout& layout() const override { return m_layout; }
  int substeps() const override { return m_substeps; }

  void reset() override {
    m_exec.fill(m_ncon.data(), 0, m_num_envs);
    m_exec.fill(m_resets.data(), std::uint32_t{0}, m_num_envs);
    parallel_for(m_exec, m_num_envs, ResetModelEnvs{m_view, m_layout, m_data.data(), workspace(), 0}, Items::kCostly);
  }
  void reset_one(i64 env) override {
    check_env(env);
    parallel_for(m_exec, 1, ResetModelEnvs{m_view, m_layout, m_data.data(), workspace(), env});
  }
  void control_step(CtrlMode mode, std::uint32_t step) override {
    const int nu = m_model.nu;
    if (nu > 0)
      parallel_for(
          m_exec, m_num_envs,
          ModelCtrlEnvs{m_ctrl.data(), m_range.data(), m_manual.data(), nu, static_cast<int>(mode), m_seed, step});
    if constexpr (Exec::kDevice == Device::kCpu) {
      if (m_lanes) {
        physics_lanes_step(*m_lanes, m_exec, m_view, m_layout, m_data.data(), nu > 0 ? m_ctrl.data() : nullptr,
                           m_substeps, m_ncon.data(), m_num_envs);
        return;
      }
    }
    parallel_for(m_exec, m_num_envs,
                 PhysicsStepEnvs<float>{m_view, m_layout, m_data.data(), nu > 0 ? m_ctrl.data() : nullptr, m_substeps,
                                        m_ncon.data(), workspace()},
                 Items::kCostly);
  }
  bool set_lanes(bool on, std::string* why) override {
    m_lanes.reset();
    if (!on) return true;
    if constexpr (Exec::kDevice == Device::kCpu) {
      m_lanes = make_physics_lanes(m_view, why);
      return m_lanes != nullptr;
    } else {
      *why = "the physics in lanes is the CPU executor's";
      return false;
    }
  }
  void set_manual_ctrl(const std::vector<float>& ctrl) override {
    std::vector<float> c(static_cast<size_t>(m_manual.size()), 0.0f);
    for (size_t u = 0; u < c.size() && u < ctrl.size(); ++u) c[u] = ctrl[u];
    m_exec.copy_from_host(m_manual.data(), c.data(), m_manual.size());
  }
  void reset_nonfinite() override {
    parallel_for(m_exec, m_num_envs, ResetNonfiniteEnvs{m_view, m_layout, m_data.data(), workspace(), m_resets.data()},
                 Items::kCostly);
  }
  void synchronize() const override { m_exec.synchronize(); }

  void download(std::vector<float>* data, std::vector<int>* ncon) const override {
    data->resize(static_cast<size_t>(m_data.size()));
    ncon->resize(static_cast<size_t>(m_num_envs));
    m_exec.copy_to_host(data->data(), m_data.data(), m_data.size());
    m_exec.copy_to_host(ncon->data(), m_ncon.data(), m_num_envs);
  }
  std::vector<std::uint32_t> reset_counts() const override {
    std::vector<std::uint32_t> out(static_cast<size_t>(m_num_envs));
    m_exec.copy_to_host(out.data(), m_resets.data(), m_num_envs);
    return out;
  }
  std::vector<float> row(i64 env) const override {
    check_env(env);
    std::vector<float> out(static_cast<size_t>(m_layout.row));
    m_exec.copy_to_host(out.data(), m_data.data() + env * m_layout.row, m_layout.row);
    return out;
  }
  std::vector<float> ctrl_row(i64 env) const override {
    check_env(env);
    std::vector<float> out(static_cast<size_t>(m_model.nu));
    if (m_model.nu > 0) m_exec.copy_to_host(out.data(), m_ctrl.data() + env * m_model.nu, m_model.nu);
    return out;
  }

  void request_draw_poses(const std::vector<DrawRange>& ranges) override {
    const i64 total = draw_range_total(ranges, m_num_envs);
    const i64 per_env = static_cast<i64>(m_model.ngeom) * 12;
    float* out = m_pose_readback.target(total * per_env);
    for (const auto& [first, count] : ranges) {
      if (count > 0 && per_env > 0)
        parallel_for(m_exec, count, GatherGeomPoses{m_data.data(), m_layout, m_model.ngeom, first, out});
      out += count * per_env;
    }
    m_pose_readback.start(m_exec, total * per_env);
    m_pose_requested = true;
  }
  const float* wait_draw_poses() override { return m_pose_requested ? m_pose_readback.wait() : nullptr; }

 private:
  Workspace<float> workspace() { return {m_workspace.data(), m_slots}; }
  void check_env(i64 env) const {
    if (env < 0 || env >= m_num_envs)
      throw std::out_of_range("env " + std::to_string(env) + " outside [0, " + std::to_string(m_num_envs) + ")");
  }

  Exec m_exec;
  Model m_model;            // host, double
  HostModel<float> m_host;  // host float blocks
  ModelView<float> m_view;  // bound to the executor copy
  DataLayout m_layout;
  i64 m_num_envs;
  int m_substeps;
  std::uint64_t m_seed;
  Buffer<float> m_reals;           // HostModel<float>::reals() on the executor
  Buffer<int> m_ints;              // HostModel<float>::ints()
  Buffer<float> m_range;           // (nu x 2) random control intervals
  Buffer<float> m_manual;          // (nu) manual controls
  Buffer<float> m_data;            // (num_envs x layout.row) physics rows
  i64 m_slots = 0;                 // workspace blocks: Exec::workspace_slots (none on the host)
  Buffer<float> m_workspace;       // (m_slots x layout.workspace) on the device, empty on the host (BatchRows)
  Buffer<float> m_ctrl;            // (num_envs x nu)
  Buffer<int> m_ncon;              // (num_envs) contacts after the last physics step
  Buffer<std::uint32_t> m_resets;  // (num_envs) non-finite resets
  // set_lanes (CPU): the slots' layout of the model
  std::shared_ptr<PhysicsLanes> m_lanes;
  typename Exec::template Readback<float> m_pose_readback;
  bool m_pose_requested = false;
};

// What a PhysicsBatch of `model` allocates in executor memory (its constructor's buffers): the
// model's blocks and the control ranges once; per env its physics row, ctrl row, contact count and
// reset count.
inline EnvMemory physics_batch_memory(const Model& model) {
  const HostModel<float> host(model);
  const DataLayout l = data_layout(host.view());
  const i64 nu = model.nu;
  EnvMemory m;
  m.fixed = static_cast<i64>(sizeof(float) * host.reals().size() + sizeof(int) * host.ints().size()) +
            static_cast<i64>(sizeof(float)) * (std::max<i64>(1, 2 * nu) + std::max<i64>(1, nu) + 1);
  m.device_per_slot = static_cast<i64>(sizeof(float)) * l.workspace;  // (BatchRows)
  m.per_env = static_cast<i64>(sizeof(float)) * (l.row + nu) +
              static_cast<i64>(sizeof(int) + sizeof(std::uint32_t));
  return m;
}

// Instantiated for CpuExecutor (envs/physics_batch.cpp) and CudaExecutor (envs/physics_batch_cuda.cu).
template <class Exec>
std::unique_ptr<PhysicsBatch> make_physics_batch(const Model& model, i64 num_envs, int substeps,
                                                 std::uint64_t ctrl_seed, const Exec& exec);

}  // namespace rlt
