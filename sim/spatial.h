// Small fixed-size vectors, 3x3 matrices, quaternions and spatial algebra for the articulated-body
// dynamics (DESIGN.md D3), single source (RLT_HD: no std:: calls, no allocation, no exceptions),
// templated on the scalar (double in tests, float in envs).
//
// Conventions (MuJoCo's, so that quantities compare one to one):
//  * quaternions are (w, x, y, z); quat_mul(a, b) applies b first, then a (frames compose left to
//    right: a child's world orientation is parent * local).
//  * Mat3 is row-major, m[3*r + c]; MuJoCo's xmat has the same layout.
//  * spatial vectors are [angular(3); linear(3)], expressed in world orientation about a reference
//    point (see sim/dynamics.h): a motion vector (w; v) is an angular velocity and the linear
//    velocity of the body point at the reference; a force vector (n; f) is a moment about the
//    reference and a force.
//  * a rigid-body inertia about the reference is 10 numbers, MuJoCo's cinert layout:
//    (Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m*cx, m*cy, m*cz, m), with I the rotational inertia about the
//    reference point and c the center of mass relative to it.
#pragma once

#include "sim/common.h"

namespace rlt {

// ---- scalar math (host and device) ----------------------------------------------------------------

RLT_HD RLT_INLINE float m_sin(float x) { return sinf(x); }
RLT_HD RLT_INLINE double m_sin(double x) { return ::sin(x); }
RLT_HD RLT_INLINE float m_cos(float x) { return cosf(x); }
RLT_HD RLT_INLINE double m_cos(double x) { return ::cos(x); }
RLT_HD RLT_INLINE float m_ceil(float x) { return ceilf(x); }
RLT_HD RLT_INLINE double m_ceil(double x) { return ::ceil(x); }

// The scalar operand of the operators below is not deduced (T comes from the vector), so that a
// model's float scales a lane type's vector (sim/lanes.h LaneFloat: ModelView's reals stay float).
template <class T>
struct NonDeduced {
  using type = T;
};

// ---- 3-vectors ------------------------------------------------------------------------------------

template <class T>
struct Vec3 {
  T x, y, z;

  template <class S>  // T or the model's real (sim/model_view.h ModelReal)
  RLT_HD static Vec3 load(const S* p) {
    return {T(p[0]), T(p[1]), T(p[2])};
  }
  RLT_HD void store(T* p) const { p[0] = x, p[1] = y, p[2] = z; }
  RLT_HD static Vec3 zero() { return {T(0), T(0), T(0)}; }
};

template <class T>
RLT_HD RLT_INLINE Vec3<T> operator+(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
template <class T>
RLT_HD RLT_INLINE Vec3<T> operator-(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
template <class T>
RLT_HD RLT_INLINE Vec3<T> operator-(const Vec3<T>& a) {
  return {-a.x, -a.y, -a.z};
}
template <class T>
RLT_HD RLT_INLINE Vec3<T> operator*(typename NonDeduced<T>::type s, const Vec3<T>& a) {
  return {s * a.x, s * a.y, s * a.z};
}
template <class T>
RLT_HD RLT_INLINE Vec3<T>& operator+=(Vec3<T>& a, const Vec3<T>& b) {
  a.x += b.x, a.y += b.y, a.z += b.z;
  return a;
}
template <class T>
RLT_HD RLT_INLINE T dot(const Vec3<T>& a, const Vec3<T>& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
template <class T>
RLT_HD RLT_INLINE Vec3<T> cross(const Vec3<T>& a, const Vec3<T>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <class T>
RLT_HD RLT_INLINE T norm(const Vec3<T>& a) {
  return m_sqrt(dot(a, a));
}

// ---- 3x3 matrices (row-major) ---------------------------------------------------------------------

template <class T>
struct Mat3 {
  T m[9];

  template <class S>
  RLT_HD static Mat3 load(const S* p) {
    Mat3 r;
    for (int k = 0; k < 9; ++k) r.m[k] = T(p[k]);
    return r;
  }
  RLT_HD void store(T* p) const {
    for (int k = 0; k < 9; ++k) p[k] = m[k];
  }
  RLT_HD Vec3<T> col(int c) const { return {m[c], m[3 + c], m[6 + c]}; }
};

template <class T>
RLT_HD RLT_INLINE Vec3<T> operator*(const Mat3<T>& a, const Vec3<T>& v) {
  return {a.m[0] * v.x + a.m[1] * v.y + a.m[2] * v.z, a.m[3] * v.x + a.m[4] * v.y + a.m[5] * v.z,
          a.m[6] * v.x + a.m[7] * v.y + a.m[8] * v.z};
}

// ---- quaternions (w, x, y, z) ---------------------------------------------------------------------

template <class T>
struct Quat {
  T w, x, y, z;

  template <class S>
  RLT_HD static Quat load(const S* p) {
    return {T(p[0]), T(p[1]), T(p[2]), T(p[3])};
  }
  RLT_HD void store(T* p) const { p[0] = w, p[1] = x, p[2] = y, p[3] = z; }
  RLT_HD static Quat identity() { return {T(1), T(0), T(0), T(0)}; }
};

template <class T>
RLT_HD RLT_INLINE Quat<T> quat_mul(const Quat<T>& a, const Quat<T>& b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}

// c ? a : b, per lane for a lane type (common.h select).
template <class M, class T>
RLT_HD RLT_INLINE Vec3<T> select(M c, const Vec3<T>& a, const Vec3<T>& b) {
  return {select(c, a.x, b.x), select(c, a.y, b.y), select(c, a.z, b.z)};
}
template <class M, class T>
RLT_HD RLT_INLINE Quat<T> select(M c, const Quat<T>& a, const Quat<T>& b) {
  return {select(c, a.w, b.w), select(c, a.x, b.x), select(c, a.y, b.y), select(c, a.z, b.z)};
}

// Unit quaternion; the identity where q is (numerically) zero, as MuJoCo's mju_normalize4.
template <class T>
RLT_HD RLT_INLINE Quat<T> quat_normalize(const Quat<T>& q) {
  const T n = m_sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  const T s = T(1) / n;  // inf or NaN where n is zero or NaN: the identity is taken there
  return select(n > T(1e-15), Quat<T>{s * q.w, s * q.x, s * q.y, s * q.z}, Quat<T>::identity());
}

// Rotation by angle (rad) about a unit axis.
template <class T>
RLT_HD RLT_INLINE Quat<T> quat_from_axis_angle(const Vec3<T>& axis, T angle) {
  const T s = m_sin(T(0.5) * angle);
  return select(angle == T(0), Quat<T>::identity(), Quat<T>{m_cos(T(0.5) * angle), s * axis.x, s * axis.y, s * axis.z});
}

template <class T>
RLT_HD RLT_INLINE Mat3<T> quat_to_mat(const Quat<T>& q) {
  const T ww = q.w * q.w, xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  const T wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  const T xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  return {{ww + xx - yy - zz, T(2) * (xy - wz), T(2) * (xz + wy),  //
           T(2) * (xy + wz), ww - xx + yy - zz, T(2) * (yz - wx),  //
           T(2) * (xz - wy), T(2) * (yz + wx), ww - xx - yy + zz}};
}

// q (x) v (x) q*, for unit q.
template <class T>
RLT_HD RLT_INLINE Vec3<T> quat_rotate(const Quat<T>& q, const Vec3<T>& v) {
  const Vec3<T> u{q.x, q.y, q.z};
  const Vec3<T> t = T(2) * cross(u, v);
  return v + q.w * t + cross(u, t);
}

// q advanced by the angular velocity w (in q's own frame, i.e. body frame) over dt:
// q * exp(w dt / 2), MuJoCo's mju_quatIntegrate (q is normalized first, the result after).
template <class T>
RLT_HD RLT_INLINE Quat<T> quat_integrate(const Quat<T>& q, const Vec3<T>& w, T dt) {
  const T speed = norm(w);
  const Quat<T> r = quat_normalize(q);
  const Quat<T> turned = quat_mul(r, quat_from_axis_angle((T(1) / speed) * w, speed * dt));  // NaN at rest: not taken
  return quat_normalize(select(speed > T(1e-15), turned, r));
}

// ---- spatial vectors [angular; linear] ------------------------------------------------------------

template <class T>
struct SVec {
  Vec3<T> ang, lin;

  RLT_HD static SVec load(const T* p) { return {Vec3<T>::load(p), Vec3<T>::load(p + 3)}; }
  RLT_HD void store(T* p) const { ang.store(p), lin.store(p + 3); }
  RLT_HD static SVec zero() { return {Vec3<T>::zero(), Vec3<T>::zero()}; }
};

template <class T>
RLT_HD RLT_INLINE SVec<T> operator+(const SVec<T>& a, const SVec<T>& b) {
  return {a.ang + b.ang, a.lin + b.lin};
}
template <class T>
RLT_HD RLT_INLINE SVec<T> operator*(typename NonDeduced<T>::type s, const SVec<T>& a) {
  return {s * a.ang, s * a.lin};
}
template <class T>
RLT_HD RLT_INLINE SVec<T>& operator+=(SVec<T>& a, const SVec<T>& b) {
  a.ang += b.ang, a.lin += b.lin;
  return a;
}
// Pairing of a motion and a force vector (power), or the plain 6-D dot product.
template <class T>
RLT_HD RLT_INLINE T dot(const SVec<T>& a, const SVec<T>& b) {
  return dot(a.ang, b.ang) + dot(a.lin, b.lin);
}

// v x u for motion vectors (the derivative of u carried by the motion v).
template <class T>
RLT_HD RLT_INLINE SVec<T> cross_motion(const SVec<T>& v, const SVec<T>& u) {
  return {cross(v.ang, u.ang), cross(v.ang, u.lin) + cross(v.lin, u.ang)};
}

// v x* f for a motion v and a force f.
template <class T>
RLT_HD RLT_INLINE SVec<T> cross_force(const SVec<T>& v, const SVec<T>& f) {
  return {cross(v.ang, f.ang) + cross(v.lin, f.lin), cross(v.ang, f.lin)};
}

// Motion subspace of a rotation about the unit axis through `anchor`, both relative to the
// reference point: (axis; axis x (0 - anchor)).
template <class T>
RLT_HD RLT_INLINE SVec<T> rotation_dof(const Vec3<T>& axis, const Vec3<T>& anchor) {
  return {axis, cross(anchor, axis)};
}
// Motion subspace of a translation along the unit axis.
template <class T>
RLT_HD RLT_INLINE SVec<T> translation_dof(const Vec3<T>& axis) {
  return {Vec3<T>::zero(), axis};
}

// ---- rigid-body inertia (10 numbers, see the header) ---------------------------------------------

template <class T>
struct Inertia {
  T i[10];

  RLT_HD static Inertia load(const T* p) {
    Inertia r;
    for (int k = 0; k < 10; ++k) r.i[k] = p[k];
    return r;
  }
  RLT_HD void store(T* p) const {
    for (int k = 0; k < 10; ++k) p[k] = i[k];
  }
};

// The inertia of a body of mass m whose center of mass sits at c (relative to the reference
// point) and whose principal inertia `diag` is about axes rot (world columns): parallel-axis
// theorem, I_ref = R diag R^T + m (|c|^2 1 - c c^T).
template <class T>
RLT_HD RLT_INLINE Inertia<T> body_inertia(typename NonDeduced<T>::type mass, const Vec3<T>& c, const Mat3<T>& rot,
                                          const Vec3<T>& diag) {
  const T d[3] = {diag.x, diag.y, diag.z};
  T ic[6] = {T(0), T(0), T(0), T(0), T(0), T(0)};  // xx yy zz xy xz yz
  for (int k = 0; k < 3; ++k) {
    const T a = rot.m[k], b = rot.m[3 + k], e = rot.m[6 + k];  // column k
    ic[0] += d[k] * a * a, ic[1] += d[k] * b * b, ic[2] += d[k] * e * e;
    ic[3] += d[k] * a * b, ic[4] += d[k] * a * e, ic[5] += d[k] * b * e;
  }
  Inertia<T> r;
  r.i[0] = ic[0] + mass * (c.y * c.y + c.z * c.z);
  r.i[1] = ic[1] + mass * (c.x * c.x + c.z * c.z);
  r.i[2] = ic[2] + mass * (c.x * c.x + c.y * c.y);
  r.i[3] = ic[3] - mass * c.x * c.y;
  r.i[4] = ic[4] - mass * c.x * c.z;
  r.i[5] = ic[5] - mass * c.y * c.z;
  r.i[6] = mass * c.x, r.i[7] = mass * c.y, r.i[8] = mass * c.z;
  r.i[9] = mass;
  return r;
}

// Sum of two inertias about the same reference point.
template <class T>
RLT_HD RLT_INLINE void add_inertia(T* acc, const T* b) {
  for (int k = 0; k < 10; ++k) acc[k] += b[k];
}

// The momentum I v of a body with inertia I moving with the motion v:
// (I_ref w + m c x v_lin; m v_lin - m c x w).
template <class T>
RLT_HD RLT_INLINE SVec<T> operator*(const Inertia<T>& in, const SVec<T>& v) {
  const T* i = in.i;
  const Vec3<T> w = v.ang, u = v.lin;
  return {{i[0] * w.x + i[3] * w.y + i[4] * w.z - i[8] * u.y + i[7] * u.z,
           i[3] * w.x + i[1] * w.y + i[5] * w.z + i[8] * u.x - i[6] * u.z,
           i[4] * w.x + i[5] * w.y + i[2] * w.z - i[7] * u.x + i[6] * u.y},
          {i[8] * w.y - i[7] * w.z + i[9] * u.x,  //
           i[6] * w.z - i[8] * w.x + i[9] * u.y,  //
           i[7] * w.x - i[6] * w.y + i[9] * u.z}};
}

}  // namespace rlt
