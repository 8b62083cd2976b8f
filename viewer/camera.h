// The orbit camera (z up): yaw and pitch around a target, a distance; orbit, pan and zoom as the
// mouse asks. Plain C++: the tests rebuild the same matrices to project the state into the image.
#pragma once

#include "viewer/math3d.h"

namespace rlt::view {

struct OrbitCamera {
  Vec3 target{0, 0, 0.5f};
  float yaw = -1.5707963f;  // rad about z; -pi/2 looks along +y (the planar envs' x-z plane faces the camera)
  float pitch = 0.35f;      // rad above the horizon
  float distance = 8.0f;    // m from the target
  float fovy = 0.7853982f;  // rad (45 degrees)

  Vec3 eye() const {
    const float c = std::cos(pitch);
    return target + Vec3{c * std::cos(yaw), c * std::sin(yaw), std::sin(pitch)} * distance;
  }
  Mat4 view() const { return look_at(eye(), target, Vec3{0, 0, 1}); }
  Mat4 projection(float aspect) const { return perspective(fovy, aspect, 0.02f * distance, 50.0f * distance + 100.0f); }
  Mat4 view_proj(float aspect) const { return projection(aspect) * view(); }

  void orbit(float dx_pixels, float dy_pixels) {
    yaw -= 0.005f * dx_pixels;
    pitch += 0.005f * dy_pixels;
    if (pitch > 1.55f) pitch = 1.55f;
    if (pitch < -0.2f) pitch = -0.2f;
  }
  // Moves the target in the view plane by a screen-space drag (pixels of a viewport height_pixels tall).
  void pan(float dx_pixels, float dy_pixels, float height_pixels) {
    const float scale = 2.0f * distance * std::tan(0.5f * fovy) / height_pixels;
    const Vec3 f = normalize(target - eye());
    const Vec3 right = normalize(cross(f, Vec3{0, 0, 1}));
    const Vec3 up = cross(right, f);
    target = target - right * (dx_pixels * scale) + up * (dy_pixels * scale);
  }
  void zoom(float wheel_steps) {
    distance *= std::pow(0.88f, wheel_steps);
    if (distance < 0.2f) distance = 0.2f;
    if (distance > 5000.0f) distance = 5000.0f;
  }
};

}  // namespace rlt::view
