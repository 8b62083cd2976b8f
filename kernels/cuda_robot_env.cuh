// Defines make_cuda_robot_env<Task> (kernels/cuda_robot_envs.h); a .cu instantiates it for its task:
//   #include "kernels/cuda_robot_env.cuh"
//   RLT_CUDA_ROBOT_ENV(Ant)
#pragma once

#include "envs/all_envs.h"
#include "envs/robot_env.h"
#include "kernels/cuda_executor.cuh"
#include "kernels/cuda_robot_envs.h"

namespace rlt {
template <class Task>
std::unique_ptr<VecEnv> make_cuda_robot_env(i64 num_envs, const CudaExecutor& exec) {
  return std::make_unique<RobotVecEnvT<Task, CudaExecutor>>(exec, num_envs);
}
}  // namespace rlt

#define RLT_CUDA_ROBOT_ENV(E) \
  template std::unique_ptr<rlt::VecEnv> rlt::make_cuda_robot_env<rlt::E>(rlt::i64, const rlt::CudaExecutor&);
