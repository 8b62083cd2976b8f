// Every env, listed once. Registries (CPU in envs/registry.cpp, CUDA in kernels/cuda_envs.cu)
// expand RLT_FOR_EACH_ENV to instantiate VecEnvT for each.
#pragma once

#include "envs/cartpole.h"

#define RLT_FOR_EACH_ENV(X) \
  X(CartPole)
