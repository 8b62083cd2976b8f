// The registry's body (envs/registry.h), compiled once per executor: envs/registry.cpp (CPU) and
// envs/registry_cuda.cu (CUDA). The classic envs' VecEnvT are instantiated with the registry; each
// robot task's, whose physics takes the compiler far longer, in translation units of their own per
// executor (RLT_VEC_ENV_INSTANCE in envs/robot_envs_cpu_*.cpp and envs/robot_envs_cuda_*.cu),
// which the registry's translation unit declares with RLT_VEC_ENV_ELSEWHERE so it does not compile
// them again. So the compilers work on the tasks in parallel, and a task missing from an executor
// fails to link.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "envs/all_envs.h"
#include "envs/registry.h"
#include "sim/vec_env_impl.h"

namespace rlt {

// Env's VecEnvT on exec.
template <class Env, class Exec>
std::unique_ptr<VecEnv> new_vec_env(i64 num_envs, const Exec& exec) {
  return std::make_unique<VecEnvT<Env, Exec>>(exec, num_envs);
}

// "unknown env 'name' (known: ...)" (envs/registry.cpp).
std::string unknown_env_message(const std::string& name);

template <class Exec>
std::unique_ptr<VecEnv> make_vec_env(const std::string& name, i64 num_envs, const Exec& exec) {
#define RLT_NEW_IF_NAMED(E) \
  if (name == E::kName) return new_vec_env<E>(num_envs, exec);
  RLT_FOR_EACH_ENV(RLT_NEW_IF_NAMED)
  RLT_FOR_EACH_ROBOT_ENV(RLT_NEW_IF_NAMED)
#undef RLT_NEW_IF_NAMED
  throw std::invalid_argument(unknown_env_message(name));
}

}  // namespace rlt

// Compiles env E's VecEnvT on Exec here (at global scope; Exec fully qualified, rlt::CpuExecutor).
#define RLT_VEC_ENV_INSTANCE(E, Exec) \
  template std::unique_ptr<rlt::VecEnv> rlt::new_vec_env<rlt::E, Exec>(rlt::i64, const Exec&);
// Says that env E's VecEnvT on Exec is compiled in another translation unit.
#define RLT_VEC_ENV_ELSEWHERE(E, Exec) \
  extern template std::unique_ptr<rlt::VecEnv> rlt::new_vec_env<rlt::E, Exec>(rlt::i64, const Exec&);
