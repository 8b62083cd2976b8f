// The CPU VecEnvT of the robot tasks below (envs/registry_impl.h); the others in robot_envs_cpu_b.cpp.
#include "envs/registry_impl.h"

RLT_VEC_ENV_INSTANCE(Reacher, rlt::CpuExecutor)
RLT_VEC_ENV_INSTANCE(Ant, rlt::CpuExecutor)
RLT_VEC_ENV_INSTANCE(HalfCheetah, rlt::CpuExecutor)
RLT_VEC_ENV_INSTANCE(Quadruped, rlt::CpuExecutor)
RLT_VEC_ENV_INSTANCE(Go1JoystickRough, rlt::CpuExecutor)
