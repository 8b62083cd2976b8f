#include "envs/registry.h"

#include <stdexcept>

#include "envs/all_envs.h"
#include "envs/robot_registry.h"
#include "sim/vec_env_impl.h"

namespace rlt {

std::vector<std::string> env_names() {
  std::vector<std::string> names;
#define RLT_ENV_NAME(E) names.push_back(E::kName);
  RLT_FOR_EACH_ENV(RLT_ENV_NAME)
  RLT_FOR_EACH_ROBOT_ENV(RLT_ENV_NAME)
#undef RLT_ENV_NAME
  return names;
}

bool env_exists(const std::string& name) {
  for (const auto& n : env_names())
    if (n == name) return true;
  return false;
}

std::unique_ptr<VecEnv> make_cpu_vec_env(const std::string& name, i64 num_envs, const CpuExecutor& exec) {
#define RLT_ENV_MAKE(E) \
  if (name == E::kName) return std::make_unique<VecEnvT<E, CpuExecutor>>(exec, num_envs);
  RLT_FOR_EACH_ENV(RLT_ENV_MAKE)
#undef RLT_ENV_MAKE
#define RLT_ROBOT_ENV_MAKE(E) \
  if (name == E::kName) return make_cpu_robot_env<E>(num_envs, exec);
  RLT_FOR_EACH_ROBOT_ENV(RLT_ROBOT_ENV_MAKE)
#undef RLT_ROBOT_ENV_MAKE
  std::string known;
  for (const auto& n : env_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown env '" + name + "' (known: " + known + ")");
}

}  // namespace rlt
