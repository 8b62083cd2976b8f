// Defines make_cpu_robot_env<Task> (envs/robot_registry.h); a .cpp instantiates it for its tasks:
//   #include "envs/robot_envs_cpu.h"
//   RLT_CPU_ROBOT_ENV(Ant)
#pragma once

#include "envs/all_envs.h"
#include "envs/robot_env.h"
#include "envs/robot_registry.h"

namespace rlt {
template <class Task>
std::unique_ptr<VecEnv> make_cpu_robot_env(i64 num_envs, const CpuExecutor& exec) {
  return std::make_unique<RobotVecEnvT<Task, CpuExecutor>>(exec, num_envs);
}
}  // namespace rlt

#define RLT_CPU_ROBOT_ENV(E) \
  template std::unique_ptr<rlt::VecEnv> rlt::make_cpu_robot_env<rlt::E>(rlt::i64, const rlt::CpuExecutor&);
