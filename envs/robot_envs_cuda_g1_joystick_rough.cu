// VecEnvT<G1JoystickRough, CudaExecutor>: its reset and step kernels, from the same RLT_HD code as the CPU
// (envs/robot_envs_cpu_g1.cpp); registered by envs/registry_cuda.cu.
#include "envs/registry_impl.h"
#include "kernels/cuda_executor.cuh"  // parallel_for on the CUDA executor

RLT_VEC_ENV_INSTANCE(G1JoystickRough, rlt::CudaExecutor)
