// VecEnvT<E, CudaExecutor> for every env (RLT_FOR_EACH_ENV): their reset and step kernels are
// instantiated here, from the same RLT_HD code as the CPU registry in envs/registry.cpp. Robot envs
// (RLT_FOR_EACH_ROBOT_ENV) are instantiated one per file in kernels/cuda_robot_<name>.cu.
#include "kernels/cuda_envs.h"

#include <stdexcept>

#include "envs/all_envs.h"
#include "envs/registry.h"
#include "kernels/cuda_executor.cuh"
#include "kernels/cuda_robot_envs.h"
#include "sim/vec_env_impl.h"

namespace rlt {

std::unique_ptr<VecEnv> make_cuda_vec_env(const std::string& name, i64 num_envs, const CudaExecutor& exec) {
#define RLT_ENV_MAKE_CUDA(E) \
  if (name == E::kName) return std::make_unique<VecEnvT<E, CudaExecutor>>(exec, num_envs);
  RLT_FOR_EACH_ENV(RLT_ENV_MAKE_CUDA)
#undef RLT_ENV_MAKE_CUDA
#define RLT_ROBOT_ENV_MAKE_CUDA(E) \
  if (name == E::kName) return make_cuda_robot_env<E>(num_envs, exec);
  RLT_FOR_EACH_ROBOT_ENV(RLT_ROBOT_ENV_MAKE_CUDA)
#undef RLT_ROBOT_ENV_MAKE_CUDA
  std::string known;
  for (const auto& n : env_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown env '" + name + "' (known: " + known + ")");
}

}  // namespace rlt
