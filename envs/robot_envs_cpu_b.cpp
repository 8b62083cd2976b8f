// The CPU VecEnvT of the robot tasks below (envs/registry_impl.h); the others in robot_envs_cpu_a.cpp.
#include "envs/registry_impl.h"

RLT_VEC_ENV_INSTANCE(Hopper, rlt::CpuExecutor)
RLT_VEC_ENV_INSTANCE(Walker2d, rlt::CpuExecutor)
RLT_VEC_ENV_INSTANCE(Humanoid, rlt::CpuExecutor)
RLT_VEC_ENV_INSTANCE(Go1Joystick, rlt::CpuExecutor)
