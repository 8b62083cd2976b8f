// The rigid-body physics on the CUDA executor: the single-source Euler step (sim/dynamics.h) and the
// full control step with actuators, joint limits and contacts (sim/physics_step.h), instantiated for
// float through parallel_for, one thread per env. Compiling this file is the check that those
// headers (and sim/spatial.h, sim/model_view.h, sim/actuators.h, sim/limits.h, sim/contact.h) stay
// device-clean (no std:: calls, no allocation, no exceptions in RLT_HD code): nvcc rejects them
// here, in CI, without a GPU.
#include "kernels/cuda_executor.cuh"
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
