// Every env, listed once: the registry (envs/registry_impl.h, compiled for the CPU in
// envs/registry.cpp and for CUDA in envs/registry_cuda.cu) makes VecEnvT<E, Exec> for each env of
// RLT_FOR_EACH_ENV (classic control) and RLT_FOR_EACH_ROBOT_ENV (tasks over an MJCF model,
// envs/robot_env.h). A robot task's VecEnvT is compiled outside the registry's translation unit
// (envs/robot_envs_cpu_*.cpp, envs/robot_envs_cuda_*.cu, a few tasks per file), so the compilers
// work on them in parallel; a task missing from either fails to link.
#pragma once

#include "envs/acrobot.h"
#include "envs/ant.h"
#include "envs/cartpole.h"
#include "envs/g1_joystick.h"
#include "envs/go1_joystick.h"
#include "envs/halfcheetah.h"
#include "envs/hopper.h"
#include "envs/humanoid.h"
#include "envs/mountain_car_continuous.h"
#include "envs/pendulum.h"
#include "envs/quadruped.h"
#include "envs/reacher.h"
#include "envs/walker2d.h"

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
  X(Quadruped)                    \
  X(Go1Joystick)                  \
  X(Go1JoystickRough)             \
  X(G1Joystick)                   \
  X(G1JoystickRough)
