// Every env, listed once. Registries (CPU in envs/registry.cpp, CUDA in kernels/cuda_envs.cu)
// expand RLT_FOR_EACH_ENV to instantiate VecEnvT for each, and RLT_FOR_EACH_ROBOT_ENV (tasks over
// an MJCF model, envs/robot_env.h) to make RobotVecEnvT for each. A robot task's RobotVecEnvT is
// instantiated in its own translation unit per executor (envs/robot_envs_cpu.cpp lists the CPU
// ones, kernels/cuda_robot_<name>.cu the CUDA ones), so nvcc and the compiler work on them in
// parallel; a task missing from either fails to link.
#pragma once

#include "envs/acrobot.h"
#include "envs/cartpole.h"
#include "envs/mountain_car_continuous.h"
#include "envs/pendulum.h"
#include "envs/reacher.h"
#include "envs/ant.h"
#include "envs/halfcheetah.h"
#include "envs/hopper.h"
#include "envs/walker2d.h"
#include "envs/humanoid.h"
#include "envs/quadruped.h"

#define RLT_FOR_EACH_ENV(X) \
  X(CartPole)               \
  X(Pendulum)               \
  X(Acrobot)                \
  X(MountainCarContinuous)

#define RLT_FOR_EACH_ROBOT_ENV(X) \
  X(Reacher)                      \
  X(Ant)                          \
  X(HalfCheetah)                  \
  X(Hopper)                       \
  X(Walker2d)                     \
  X(Humanoid)                     \
  X(Quadruped)
