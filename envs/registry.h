// Env registry: names to VecEnv factories on each executor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/vec_env.h"

namespace rlt {

// Names of every registered env, in registration order.
std::vector<std::string> env_names();
bool env_exists(const std::string& name);

// A VecEnv on the CPU executor. Throws std::invalid_argument for an unknown name.
std::unique_ptr<VecEnv> make_cpu_vec_env(const std::string& name, i64 num_envs, const CpuExecutor& exec);

}  // namespace rlt
