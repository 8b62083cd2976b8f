// The CPU VecEnvT of the G1 joystick tasks (envs/registry_impl.h); the other robot tasks in
// robot_envs_cpu_a.cpp and robot_envs_cpu_b.cpp.
#include "envs/registry_impl.h"

RLT_VEC_ENV_INSTANCE(G1Joystick, rlt::CpuExecutor)
RLT_VEC_ENV_INSTANCE(G1JoystickRough, rlt::CpuExecutor)
