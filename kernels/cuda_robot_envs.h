// Robot envs (envs/robot_env.h) on the CUDA executor: make_cuda_robot_env<Task> is instantiated
// once per task in its own kernels/cuda_robot_<name>.cu (nvcc compiles them in parallel), and
// kernels/cuda_envs.cu dispatches to them by name over RLT_FOR_EACH_ROBOT_ENV.
#pragma once

#include <memory>

#include "kernels/cuda_executor.h"
#include "sim/vec_env.h"

namespace rlt {

template <class Task>
std::unique_ptr<VecEnv> make_cuda_robot_env(i64 num_envs, const CudaExecutor& exec);

}  // namespace rlt
