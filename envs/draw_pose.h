// Helpers for the envs' optional draw hooks (viewer/ draws what they describe, see DrawGeom in
// sim/vec_env.h): a geom pose is its position (3) then its row-major rotation matrix (9), whose
// columns are the geom's local axes in the world, as MuJoCo's geom_xpos / geom_xmat.
// The classic-control envs are planar: they live in the world's x-z plane (z up), at y = 0.
#pragma once

#include "sim/common.h"

namespace rlt {

// A geom at (x, y, z) whose local z axis points along the unit vector (dx, 0, dz) (a rotation about
// the world's y axis; local y stays the world's y).
RLT_HD inline void draw_pose_xz(float* pose, float x, float y, float z, float dx, float dz) {
  pose[0] = x, pose[1] = y, pose[2] = z;
  pose[3] = dz, pose[4] = 0.0f, pose[5] = dx;
  pose[6] = 0.0f, pose[7] = 1.0f, pose[8] = 0.0f;
  pose[9] = -dx, pose[10] = 0.0f, pose[11] = dz;
}

// An axis-aligned geom at (x, y, z).
RLT_HD inline void draw_pose_at(float* pose, float x, float y, float z) { draw_pose_xz(pose, x, y, z, 0.0f, 1.0f); }

}  // namespace rlt
