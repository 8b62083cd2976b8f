// The learner and the policy on the CUDA executor: the same Ppo<Exec> (rl/ppo_impl.h) and
// PolicyT<Exec> (rl/policy.h) as the CPU's (rl/ppo_cpu.cpp), instantiated by nvcc in rl/ppo_cuda.cu.
// GEMMs go to cuBLAS (kernels/cuda_gemm.cu), elementwise work to parallel_for kernels, reductions to CUB.
// Plain C++: callable from host-only code.
#pragma once

#include <memory>

#include "kernels/cuda_executor.h"
#include "rl/config.h"
#include "rl/policy.h"
#include "rl/ppo.h"

namespace rlt {

std::unique_ptr<Learner> make_cuda_learner(const Config& cfg, VecEnv& env, const CudaExecutor& exec);
std::unique_ptr<Policy> make_cuda_policy(const PolicySpec& spec, const ObsNormalization& norm,
                                         std::uint64_t sample_seed, i64 max_rows, const CudaExecutor& exec);

}  // namespace rlt
