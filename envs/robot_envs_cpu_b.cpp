// The CPU RobotVecEnvT of the tasks below (see envs/robot_envs_cpu.h).
#include "envs/robot_envs_cpu.h"

RLT_CPU_ROBOT_ENV(Hopper)
RLT_CPU_ROBOT_ENV(Walker2d)
RLT_CPU_ROBOT_ENV(Humanoid)
