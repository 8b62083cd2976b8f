// The CPU RobotVecEnvT of the tasks below (see envs/robot_envs_cpu.h).
#include "envs/robot_envs_cpu.h"

RLT_CPU_ROBOT_ENV(Reacher)
RLT_CPU_ROBOT_ENV(Ant)
RLT_CPU_ROBOT_ENV(HalfCheetah)
RLT_CPU_ROBOT_ENV(Quadruped)
