#include "kernels/cuda_executor.cuh"
#include "kernels/cuda_gemm.h"
#include "kernels/cuda_ppo.h"
#include "rl/ppo_impl.h"

namespace rlt {

template class Ppo<CudaExecutor>;

std::unique_ptr<Learner> make_cuda_learner(const Config& cfg, VecEnv& env, const CudaExecutor& exec) {
  if (env.device() != Device::kCuda) throw std::invalid_argument("make_cuda_learner needs a CUDA VecEnv");
  return std::make_unique<Ppo<CudaExecutor>>(cfg, env, exec);
}

}  // namespace rlt
