// Every env, listed once. Registries (CPU in envs/registry.cpp, CUDA in kernels/cuda_envs.cu)
// expand RLT_FOR_EACH_ENV to instantiate VecEnvT for each.
#pragma once

#include "envs/acrobot.h"
#include "envs/cartpole.h"
#include "envs/mountain_car_continuous.h"
#include "envs/pendulum.h"

#define RLT_FOR_EACH_ENV(X) \
  X(CartPole)               \
  X(Pendulum)               \
  X(Acrobot)                \
  X(MountainCarContinuous)
