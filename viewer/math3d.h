// Small 3-D math for the viewer: vectors, column-major 4x4 matrices (OpenGL's layout: m[col * 4 +
// row]), the camera and light transforms. Plain C++, no OpenGL: the tests project with it too.
#pragma once

#include <cmath>

namespace rlt::view {

struct Vec3 {
  float x = 0, y = 0, z = 0;
};
inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3 cross(Vec3 a, Vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
inline float length(Vec3 a) { return std::sqrt(dot(a, a)); }
inline Vec3 normalize(Vec3 a) {
  const float l = length(a);
  return l > 0 ? a * (1.0f / l) : a;
}

struct Mat4 {
  float m[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};  // column-major
  float& at(int row, int col) { return m[col * 4 + row]; }
  float at(int row, int col) const { return m[col * 4 + row]; }
};

inline Mat4 operator*(const Mat4& a, const Mat4& b) {
  Mat4 r;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      float s = 0;
      for (int k = 0; k < 4; ++k) s += a.at(i, k) * b.at(k, j);
      r.at(i, j) = s;
    }
  return r;
}

// Homogeneous transform of a point: (x, y, z, w) before the divide.
inline void transform(const Mat4& a, Vec3 p, float out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = a.at(i, 0) * p.x + a.at(i, 1) * p.y + a.at(i, 2) * p.z + a.at(i, 3);
}

inline Mat4 look_at(Vec3 eye, Vec3 target, Vec3 up) {
  const Vec3 f = normalize(target - eye);
  const Vec3 s = normalize(cross(f, up));
  const Vec3 u = cross(s, f);
  Mat4 r;
  r.at(0, 0) = s.x, r.at(0, 1) = s.y, r.at(0, 2) = s.z, r.at(0, 3) = -dot(s, eye);
  r.at(1, 0) = u.x, r.at(1, 1) = u.y, r.at(1, 2) = u.z, r.at(1, 3) = -dot(u, eye);
  r.at(2, 0) = -f.x, r.at(2, 1) = -f.y, r.at(2, 2) = -f.z, r.at(2, 3) = dot(f, eye);
  return r;
}

inline Mat4 perspective(float fovy_rad, float aspect, float znear, float zfar) {
  const float t = 1.0f / std::tan(0.5f * fovy_rad);
  Mat4 r;
  r.at(0, 0) = t / aspect;
  r.at(1, 1) = t;
  r.at(2, 2) = (zfar + znear) / (znear - zfar);
  r.at(2, 3) = 2.0f * zfar * znear / (znear - zfar);
  r.at(3, 2) = -1.0f;
  r.at(3, 3) = 0.0f;
  return r;
}

inline Mat4 ortho(float l, float r_, float b, float t, float n, float f) {
  Mat4 r;
  r.at(0, 0) = 2.0f / (r_ - l), r.at(0, 3) = -(r_ + l) / (r_ - l);
  r.at(1, 1) = 2.0f / (t - b), r.at(1, 3) = -(t + b) / (t - b);
  r.at(2, 2) = -2.0f / (f - n), r.at(2, 3) = -(f + n) / (f - n);
  return r;
}

// Pixel coordinates (x right, y down, origin at the image's top-left corner) of world point p
// under view_proj, in a width x height image; false when p is behind the camera.
inline bool project_to_pixel(const Mat4& view_proj, Vec3 p, int width, int height, float& px, float& py) {
  float c[4];
  transform(view_proj, p, c);
  if (c[3] <= 0) return false;
  px = (c[0] / c[3] * 0.5f + 0.5f) * static_cast<float>(width);
  py = (1.0f - (c[1] / c[3] * 0.5f + 0.5f)) * static_cast<float>(height);
  return true;
}

}  // namespace rlt::view
