// MuJoCo as a test peer: RLT_TEST_MUJOCO is 1 (and <mujoco/mujoco.h> included) in a test target
// linked with rlt_mujoco (libmujoco-dev found), 0 otherwise; tests that need MuJoCo skip with the
// reason when it is 0.
#pragma once

#if defined(RLTRAIN_HAVE_MUJOCO) && RLTRAIN_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#define RLT_TEST_MUJOCO 1
#else
#define RLT_TEST_MUJOCO 0
#endif
