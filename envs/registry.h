// Env registry: every env by name, as a VecEnv (sim/vec_env.h) on either executor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/vec_env.h"

namespace rlt {

// Names of every registered env, in registration order (envs/all_envs.h).
std::vector<std::string> env_names();
bool env_exists(const std::string& name);

// The VecEnvT (sim/vec_env_impl.h) of env `name` with num_envs envs on exec: its state and outputs
// live in exec's memory (device memory for CUDA: obs(), reward(), ... return device pointers and
// step() takes device actions). Throws std::invalid_argument for an unknown name.
// Instantiated for CpuExecutor (envs/registry.cpp) and, in a CUDA build, CudaExecutor
// (envs/registry_cuda.cu; include kernels/cuda_executor.h for the type).
template <class Exec>
std::unique_ptr<VecEnv> make_vec_env(const std::string& name, i64 num_envs, const Exec& exec);

}  // namespace rlt
