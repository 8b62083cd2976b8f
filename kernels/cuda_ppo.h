// The learner on the CUDA executor: the same Ppo<Exec> as the CPU (rl/ppo_impl.h), instantiated
// by nvcc in cuda_ppo.cu. GEMMs go to cuBLAS (kernels/cuda_gemm.cu), elementwise work to
// parallel_for kernels, reductions to CUB.
#pragma once

#include <memory>

#include "kernels/cuda_executor.h"
#include "rl/config.h"
#include "rl/ppo.h"

namespace rlt {

std::unique_ptr<Learner> make_cuda_learner(const Config& cfg, VecEnv& env, const CudaExecutor& exec);

}  // namespace rlt
