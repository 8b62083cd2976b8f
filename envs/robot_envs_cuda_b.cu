// VecEnvT<Task, CudaExecutor> of the robot tasks below: their reset and step kernels, from the same RLT_HD
// code as the CPU (envs/robot_envs_cpu_b.cpp); the others in robot_envs_cuda_a.cu and robot_envs_cuda_g1.cu;
// registered by envs/registry_cuda.cu. Grouped as the CPU files are: nvcc's cost of a file is mostly the
// physics step it compiles once, whatever the number of tasks (envs/CMakeLists.txt).
#include "envs/registry_impl.h"
#include "kernels/cuda_executor.cuh"  // parallel_for on the CUDA executor

RLT_VEC_ENV_INSTANCE(Hopper, rlt::CudaExecutor)
RLT_VEC_ENV_INSTANCE(Walker2d, rlt::CudaExecutor)
RLT_VEC_ENV_INSTANCE(Humanoid, rlt::CudaExecutor)
RLT_VEC_ENV_INSTANCE(Go1Joystick, rlt::CudaExecutor)
