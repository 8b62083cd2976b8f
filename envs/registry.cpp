// The env registry on the CPU executor (envs/registry.h, envs/registry_impl.h).
#include "envs/registry_impl.h"

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

std::string unknown_env_message(const std::string& name) {
  std::string known;
  for (const auto& n : env_names()) known += (known.empty() ? "" : ", ") + n;
  return "unknown env '" + name + "' (known: " + known + ")";
}

}  // namespace rlt

// The robot tasks are compiled in envs/robot_envs_cpu_*.cpp.
#define RLT_CPU_ELSEWHERE(E) RLT_VEC_ENV_ELSEWHERE(E, rlt::CpuExecutor)
RLT_FOR_EACH_ROBOT_ENV(RLT_CPU_ELSEWHERE)
#undef RLT_CPU_ELSEWHERE

template std::unique_ptr<rlt::VecEnv> rlt::make_vec_env<rlt::CpuExecutor>(const std::string&, rlt::i64,
                                                                          const rlt::CpuExecutor&);
