// The env registry on the CUDA executor (envs/registry.h, envs/registry_impl.h): the classic envs'
// VecEnvT<E, CudaExecutor> are compiled here, from the same RLT_HD code as the CPU registry
// (envs/registry.cpp); the robot tasks' in envs/robot_envs_cuda_*.cu.
#include "envs/registry_impl.h"
#include "kernels/cuda_executor.cuh"  // parallel_for on the CUDA executor

#define RLT_CUDA_ELSEWHERE(E) RLT_VEC_ENV_ELSEWHERE(E, rlt::CudaExecutor)
RLT_FOR_EACH_ROBOT_ENV(RLT_CUDA_ELSEWHERE)
#undef RLT_CUDA_ELSEWHERE

template std::unique_ptr<rlt::VecEnv> rlt::make_vec_env<rlt::CudaExecutor>(const std::string&, rlt::i64,
                                                                           const rlt::CudaExecutor&);
