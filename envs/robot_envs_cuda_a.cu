// VecEnvT<Task, CudaExecutor> of the robot tasks below: their reset and step kernels, from the same RLT_HD
// code as the CPU (envs/robot_envs_cpu_a.cpp); the others in robot_envs_cuda_b.cu and robot_envs_cuda_g1.cu;
// registered by envs/registry_cuda.cu. Grouped as the CPU files are: nvcc's cost of a file is mostly the
// physics step it compiles once, whatever the number of tasks (envs/CMakeLists.txt).
#include "envs/registry_impl.h"
#include "kernels/cuda_executor.cuh"  // parallel_for on the CUDA executor

RLT_VEC_ENV_INSTANCE(Reacher, rlt::CudaExecutor)
RLT_VEC_ENV_INSTANCE(Ant, rlt::CudaExecutor)
RLT_VEC_ENV_INSTANCE(HalfCheetah, rlt::CudaExecutor)
RLT_VEC_ENV_INSTANCE(Quadruped, rlt::CudaExecutor)
RLT_VEC_ENV_INSTANCE(Go1JoystickRough, rlt::CudaExecutor)
