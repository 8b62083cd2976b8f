// What MuJoCo Playground's joystick tasks share (envs/go1_joystick.h, envs/g1_joystick.h): uniform
// draws, Playground's planar start pose, gravity in the imu frame, the feet's contact bookkeeping and
// the tracking values (the Task contract's tracking(), envs/robot_env.h). Single source (RLT_HD).
#pragma once

#include <cmath>

#include "sim/dynamics.h"
#include "sim/philox.h"

namespace rlt::joystick {

RLT_HD inline float unit(Philox& rng) {
  float u[4];
  uniform4(rng, 0.0f, 1.0f, u, 1);
  return u[0];
}
RLT_HD inline float uniform(Philox& rng, float lo, float hi) { return lo + (hi - lo) * unit(rng); }

// fmaxf and fminf with the values glibc's x86-64 versions give (maxss / minss: b when a == b, so
// max(-0, +0) = +0 and max(+0, -0) = -0; the other operand when one is NaN), inline on the host.
// GCC keeps fmaxf / fminf as calls into libm (it inlines them only under -ffinite-math-only, which
// the build does not use), and in the Go1's step, right after the physics, its ~30 calls took ~6% of the
// control step (perf: the calls and the instruction after each return; why they stall there was not
// found, a loop of the same calls costs 2 ns each). Inline: ~8% more Go1 steps per CPU-second, the
// same bits (tests/envs/test_go1_joystick.cpp). CUDA's fmaxf / fminf are single instructions already.
RLT_HD RLT_INLINE float max_of(float a, float b) {
#ifdef __CUDA_ARCH__
  return fmaxf(a, b);
#else
  return (a > b || b != b) ? a : b;
#endif
}
RLT_HD RLT_INLINE float min_of(float a, float b) {
#ifdef __CUDA_ARCH__
  return fminf(a, b);
#else
  return (a < b || b != b) ? a : b;
#endif
}

// Playground's reset of the floating base: x, y + U(-0.5, 0.5) m, the given height, turned by
// yaw ~ U(-3.14, 3.14) about z (qpos[0..6]: position, quaternion w x y z).
RLT_HD inline void planar_start(float* qpos, float height, Philox& rng) {
  qpos[0] = uniform(rng, -0.5f, 0.5f);
  qpos[1] = uniform(rng, -0.5f, 0.5f);
  qpos[2] = height;
  const float yaw = uniform(rng, -3.14f, 3.14f);
  qpos[3] = cosf(0.5f * yaw), qpos[4] = 0.0f, qpos[5] = 0.0f, qpos[6] = sinf(0.5f * yaw);
}

// The gravity direction in a site's frame: site_xmat^T (0, 0, -1).
RLT_HD inline void gravity_in_site(const DataView<float>& d, int site, float* g) {
  const float* r = d.site_xmat + 9 * site;
  for (int k = 0; k < 3; ++k) g[k] = -r[6 + k];
}

// The tracking values (VecEnv::tracking()): the command the step used, the base's local linear
// velocity (x, y) and yaw rate, and the heading of the imu site's x axis seen from above.
RLT_HD inline void tracking(const float* command, const float* linvel, const float* gyro, const DataView<float>& d,
                            int imu_site, float* out) {
  out[0] = command[0], out[1] = command[1], out[2] = command[2];
  out[3] = linvel[0], out[4] = linvel[1], out[5] = gyro[2];
  const float* r = d.site_xmat + 9 * imu_site;
  out[6] = atan2f(r[3], r[0]);
}

// After a step: a foot in contact ends its swing (air time and swing peak back to 0) and becomes the
// next step's last contact.
template <int kFeet>
RLT_HD inline void end_swings(const bool* contact, float* air_time, float* swing_peak, float* last_contact) {
  for (int f = 0; f < kFeet; ++f) {
    if (contact[f]) air_time[f] = 0.0f, swing_peak[f] = 0.0f;
    last_contact[f] = contact[f] ? 1.0f : 0.0f;
  }
}

}  // namespace rlt::joystick
