// The rigid-body physics on the CUDA executor: the single-source Euler step (sim/dynamics.h) and the
// full control step with actuators, joint limits and contacts (sim/physics_step.h), instantiated for
// float through parallel_for, one thread per env. Compiling this file is the check that those
// headers (and sim/spatial.h, sim/model_view.h, sim/actuators.h, sim/limits.h, sim/contact.h) stay
// device-clean (no std:: calls, no allocation, no exceptions in RLT_HD code): nvcc rejects them
// here, in CI, without a GPU. Also CudaPhysicsBatch (kernels/cuda_physics.h), the batch that
// `rltrain bench --model --device cuda` times.
#include <algorithm>

#include "kernels/cuda_executor.cuh"
#include "kernels/cuda_physics.h"
#include "kernels/device_buffer.h"
#include "sim/actuators.h"
#include "sim/dynamics.h"
#include "sim/physics_step.h"

namespace rlt {

// Advances num_envs env rows of `data` (device memory, data_size(m) floats per env, one row after
// the other) by num_steps Euler steps. m points at device memory: HostModel<float>::reals() and
// ints() uploaded, and the view rebound to them with ModelView::bind.
void step_physics_cuda(const CudaExecutor& exec, const ModelView<float>& m, float* data, i64 num_envs,
                       int num_steps) {
  parallel_for(exec, num_envs, StepEulerEnvs<float>{m, data_layout(m), data, num_steps});
}

// One control step (physics_step: `substeps` substeps, ctrl held) of num_envs env rows; ctrl is
// (num_envs x nu) device memory (null when nu == 0), num_contacts (device, may be null) gets one
// int per env.
void physics_step_cuda(const CudaExecutor& exec, const ModelView<float>& m, float* data, const float* ctrl,
                       i64 num_envs, int substeps, int* num_contacts) {
  parallel_for(exec, num_envs, PhysicsStepEnvs<float>{m, data_layout(m), data, ctrl, substeps, num_contacts});
}

}  // namespace rlt

// ---- CudaPhysicsBatch (kernels/cuda_physics.h) -------------------------------------------------

namespace rlt {
namespace {

}  // namespace

struct CudaPhysicsBatch::Impl {
  CudaExecutor exec;
  DeviceBuffer<float> reals, range, data, ctrl;
  DeviceBuffer<int> ints, ncon;
  ModelView<float> m;  // bound to reals / ints
  DataLayout layout;
  i64 num_envs;
  int substeps;
  std::uint64_t seed;
};

CudaPhysicsBatch::CudaPhysicsBatch(const HostModel<float>& host, const std::vector<float>& ctrl_range, i64 num_envs,
                                   int substeps, std::uint64_t seed)
    : m_impl(new Impl{CudaExecutor(0), {}, {}, {}, {}, {}, {}, host.view(), {}, num_envs, substeps, seed}) {
  Impl& p = *m_impl;
  p.reals.resize(static_cast<i64>(host.reals().size()));
  p.ints.resize(static_cast<i64>(host.ints().size()));
  p.exec.copy_from_host(p.reals.data(), host.reals().data(), p.reals.size());
  p.exec.copy_from_host(p.ints.data(), host.ints().data(), p.ints.size());
  p.m.bind(p.reals.data(), p.ints.data());
  p.layout = data_layout(p.m);
  const int nu = p.m.nu;
  p.range.resize(std::max<i64>(1, 2 * nu));
  if (nu > 0) p.exec.copy_from_host(p.range.data(), ctrl_range.data(), 2 * nu);
  p.data.resize(num_envs * p.layout.size);
  p.ctrl.resize(std::max<i64>(1, num_envs * nu));
  p.ncon.resize(std::max<i64>(1, num_envs));
}

CudaPhysicsBatch::~CudaPhysicsBatch() = default;

void CudaPhysicsBatch::reset() {
  Impl& p = *m_impl;
  parallel_for(p.exec, p.num_envs, ResetEnvs<float>{p.m, p.layout, p.data.data()});
}

void CudaPhysicsBatch::control_step(u32 step) {
  Impl& p = *m_impl;
  const bool has_ctrl = p.m.nu > 0;
  if (has_ctrl) parallel_for(p.exec, p.num_envs, RandomCtrlEnvs<float>{p.ctrl.data(), p.range.data(), p.m.nu, p.seed, step});
  parallel_for(p.exec, p.num_envs,
               PhysicsStepEnvs<float>{p.m, p.layout, p.data.data(), has_ctrl ? p.ctrl.data() : nullptr, p.substeps,
                                      p.ncon.data()});
}

void CudaPhysicsBatch::synchronize() const { m_impl->exec.synchronize(); }

i64 CudaPhysicsBatch::num_envs() const { return m_impl->num_envs; }

void CudaPhysicsBatch::download(std::vector<float>* data, std::vector<int>* ncon) const {
  const Impl& p = *m_impl;
  data->resize(static_cast<size_t>(p.num_envs * p.layout.size));
  ncon->resize(static_cast<size_t>(p.num_envs));
  p.exec.copy_to_host(data->data(), p.data.data(), p.num_envs * p.layout.size);
  p.exec.copy_to_host(ncon->data(), p.ncon.data(), p.num_envs);
}

}  // namespace rlt
