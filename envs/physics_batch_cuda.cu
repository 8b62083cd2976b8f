// The rigid-body physics on the CUDA executor: PhysicsBatchT<CudaExecutor> (the twin of
// envs/physics_batch.cpp), and two entry points the GPU tests step rows with. Compiling this file is
// also the check that sim/dynamics.h, sim/physics_step.h and everything they include stay
// device-clean (no std:: calls, no allocation, no exceptions in RLT_HD code): nvcc rejects them
// here, in CI, without a GPU.
#include "envs/physics_batch.h"
#include "kernels/cuda_executor.cuh"

namespace rlt {

template <>
std::unique_ptr<PhysicsBatch> make_physics_batch<CudaExecutor>(const Model& model, i64 num_envs, int substeps,
                                                               std::uint64_t ctrl_seed, const CudaExecutor& exec) {
  return std::make_unique<PhysicsBatchT<CudaExecutor>>(model, num_envs, substeps, ctrl_seed, exec);
}

// Advances num_envs env rows of `data` (device memory, data_layout(m).row floats per env, one row
// after the other) by num_steps Euler steps. m points at device memory: HostModel<float>::reals()
// and ints() uploaded, and the view rebound to them with ModelView::bind. The rows' constraint
// workspace is allocated for the call. (tests/sim/test_contacts_cuda.cpp)
void step_physics_cuda(const CudaExecutor& exec, const ModelView<float>& m, float* data, i64 num_envs, int num_steps) {
  const DataLayout l = data_layout(m);
  const i64 slots = exec.workspace_slots(num_envs);
  DeviceBuffer<float> workspace(batch_workspace_scalars(l, slots));
  parallel_for(exec, num_envs, StepEulerEnvs<float>{m, l, data, num_steps, {workspace.data(), slots}});
  exec.synchronize();
}

// One control step (physics_step: `substeps` substeps, ctrl held) of num_envs env rows; ctrl is
// (num_envs x nu) device memory (null when nu == 0), num_contacts (device, may be null) gets one
// int per env.
void physics_step_cuda(const CudaExecutor& exec, const ModelView<float>& m, float* data, const float* ctrl,
                       i64 num_envs, int substeps, int* num_contacts) {
  const DataLayout l = data_layout(m);
  const i64 slots = exec.workspace_slots(num_envs);
  DeviceBuffer<float> workspace(batch_workspace_scalars(l, slots));
  parallel_for(exec, num_envs, PhysicsStepEnvs<float>{m, l, data, ctrl, substeps, num_contacts, {workspace.data(), slots}});
  exec.synchronize();
}

}  // namespace rlt
