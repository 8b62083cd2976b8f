// Env registry on the CUDA executor: the twin of make_cpu_vec_env (envs/registry.h).
// Plain C++: callable from host-only code.
#pragma once

#include <memory>
#include <string>

#include "kernels/cuda_executor.h"
#include "sim/vec_env.h"

namespace rlt {

// A VecEnv whose state and outputs live in device memory on exec's stream (obs(), reward(), ...
// return device pointers; step() takes device actions). Every env of RLT_FOR_EACH_ENV
// (envs/all_envs.h) is available. Throws std::invalid_argument for an unknown name.
std::unique_ptr<VecEnv> make_cuda_vec_env(const std::string& name, i64 num_envs, const CudaExecutor& exec);

}  // namespace rlt
