// RobotVecEnvT<Humanoid, CudaExecutor>: its reset and step kernels, from the same RLT_HD code as the CPU.
#include "kernels/cuda_robot_env.cuh"

RLT_CUDA_ROBOT_ENV(Humanoid)
