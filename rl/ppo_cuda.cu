#include "kernels/cuda_executor.cuh"
#include "kernels/cuda_gemm.h"
#include "rl/policy.h"
#include "rl/ppo_cuda.h"
#include "rl/ppo_impl.h"

namespace rlt {

template class Ppo<CudaExecutor>;
template class PolicyT<CudaExecutor>;

std::unique_ptr<Learner> make_cuda_learner(const Config& cfg, VecEnv& env, const CudaExecutor& exec) {
  if (env.device() != Device::kCuda) throw std::invalid_argument("make_cuda_learner needs a CUDA VecEnv");
  return std::make_unique<Ppo<CudaExecutor>>(cfg, env, exec);
}

std::unique_ptr<Policy> make_cuda_policy(const PolicySpec& spec, const ObsNormalization& norm,
                                         std::uint64_t sample_seed, i64 max_rows, const CudaExecutor& exec) {
  return std::make_unique<PolicyT<CudaExecutor>>(spec, norm, sample_seed, max_rows, exec);
}

}  // namespace rlt
