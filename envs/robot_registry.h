// Factories of the robot envs (envs/robot_env.h), one explicit instantiation per task and executor
// (envs/robot_envs_cpu_*.cpp; kernels/cuda_robot_*.cu), declared here so that a registry can name
// them without compiling their physics again.
#pragma once

#include <memory>

#include "sim/vec_env.h"

namespace rlt {

template <class Task>
std::unique_ptr<VecEnv> make_cpu_robot_env(i64 num_envs, const CpuExecutor& exec);

}  // namespace rlt
