// The rigid-body dynamics (sim/dynamics.h) on the CUDA executor: the single-source Euler step,
// instantiated for float through parallel_for, one thread per env. Compiling this file is the
// check that sim/dynamics.h, sim/spatial.h and sim/model_view.h stay device-clean (no std:: calls,
// no allocation, no exceptions in RLT_HD code): nvcc rejects them here, in CI, without a GPU.
#include "kernels/cuda_executor.cuh"
#include "sim/dynamics.h"

namespace rlt {

// Advances num_envs env rows of `data` (device memory, data_size(m) floats per env, one row after
// the other) by num_steps Euler steps. m points at device memory: HostModel<float>::reals() and
// ints() uploaded, and the view rebound to them with ModelView::bind.
void step_physics_cuda(const CudaExecutor& exec, const ModelView<float>& m, float* data, i64 num_envs,
                       int num_steps) {
  parallel_for(exec, num_envs, StepEulerEnvs<float>{m, data_layout(m), data, num_steps});
}

}  // namespace rlt
