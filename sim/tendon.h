// Tendons (MJCF <tendon>), as MuJoCo 3's mj_tendon and the tendon parts of mj_passive, single source
// (RLT_HD, no std::, no allocation; the per-env quantities live in the DataView: ten_length,
// ten_velocity, ten_J, wrap_xpos).
//
// A tendon is a scalar length L(q) with moment arms J = dL/dq (1 x nv):
//   fixed    L = sum_k coef_k qpos[joint_k] (raw qpos, as MuJoCo), J[dof of joint_k] += coef_k
//            (hinge and slide joints; the MJCF compiler refuses the others)
//   spatial  a path of sites, optionally split by pulleys: L = sum over consecutive points of
//            |p_(k+1) - p_k| / divisor (divisor: the last pulley's, 1 before the first); between two
//            points on different bodies J += (u^T (Jp(b_(k+1), p_(k+1)) - Jp(b_k, p_k))) / divisor,
//            u the unit vector from p_k to p_(k+1), Jp the point Jacobian (consecutive points on
//            one body add nothing: their distance cannot change). A sphere or cylinder geom between
//            two sites (MuJoCo's mju_wrap, wrap_geom): where the straight segment would cut it, the
//            path runs to a tangent point, along the surface (a great circle; on a cylinder a helix)
//            to a second tangent point, and on; a side site picks the side (inside the geom: the
//            path touches it at one point, wrap_inside). The tangent points move with the geom's
//            body.
//   velocity ten_velocity = J qvel
// What a tendon does with them (MuJoCo's semantics):
//   passive  spring -stiffness (L - hi) above hi, -stiffness (L - lo) below lo, 0 in between
//            ([lo, hi] = tendon_lengthspring, MuJoCo 3's deadband; both the length at qpos_spring by
//            default); damper -damping ten_velocity (explicit, also under Euler's eulerdamp, as
//            MuJoCo); qfrc_passive += J^T (spring + damper)
//   rows     friction loss and limits (sim/constraints.h, tendon_rows), tendon equality
//   actuators a tendon transmission: length gear L, velocity gear ten_velocity, qfrc += gear force J
//            (sim/actuators.h)
#pragma once

#include "sim/common.h"
#include "sim/dynamics.h"

namespace rlt {

namespace tendon_detail {

// ten_J[row] += scale * u^T (Jp(b1, p1) - Jp(b0, p0)) over both bodies' dof chains.
template <class T>
RLT_HD void add_segment_moment(const ModelView<T>& m, const DataView<T>& d, T* row, int b0, const Vec3<T>& p0, int b1,
                               const Vec3<T>& p1, const Vec3<T>& u, T scale) {
  for (int i = last_dof(m, b1); i >= 0; i = m.dof_parentid[i])
    row[i] += scale * dot(u, point_jacobian_col(m, d, b1, p1, i));
  for (int i = last_dof(m, b0); i >= 0; i = m.dof_parentid[i])
    row[i] -= scale * dot(u, point_jacobian_col(m, d, b0, p0, i));
}

RLT_HD RLT_INLINE float acos_(float x) { return acosf(x); }
RLT_HD RLT_INLINE double acos_(double x) { return ::acos(x); }
RLT_HD RLT_INLINE float asin_(float x) { return asinf(x); }
RLT_HD RLT_INLINE double asin_(double x) { return ::asin(x); }
template <class T>
RLT_HD RLT_INLINE T abs_(T x) {
  return x < T(0) ? -x : x;
}
constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL
constexpr double kPi = 3.14159265358979323846;

// MuJoCo's mju_normalize on 2 numbers: a vanishing vector becomes (1, 0); returns the norm.
template <class T>
RLT_HD RLT_INLINE T normalize2(T* v) {
  const T n = m_sqrt(v[0] * v[0] + v[1] * v[1]);
  if (n < T(kMinVal)) {
    v[0] = T(1), v[1] = T(0);
  } else {
    const T inv = T(1) / n;
    v[0] *= inv, v[1] *= inv;
  }
  return n;
}
// The same in 3D (mju_normalize3: (1, 0, 0)).
template <class T>
RLT_HD RLT_INLINE T normalize3(Vec3<T>* v) {
  const T n = m_sqrt(dot(*v, *v));
  if (n < T(kMinVal)) {
    *v = Vec3<T>{T(1), T(0), T(0)};
  } else {
    *v = (T(1) / n) * *v;
  }
  return n;
}

// Whether the 2D segments p1-p2 and p3-p4 cross.
template <class T>
RLT_HD bool segments_cross(const T* p1, const T* p2, const T* p3, const T* p4) {
  const T det = (p4[1] - p3[1]) * (p2[0] - p1[0]) - (p4[0] - p3[0]) * (p2[1] - p1[1]);
  if (abs_(det) < T(kMinVal)) return false;
  const T a = ((p4[0] - p3[0]) * (p1[1] - p3[1]) - (p4[1] - p3[1]) * (p1[0] - p3[0])) / det;
  const T b = ((p2[0] - p1[0]) * (p1[1] - p3[1]) - (p2[1] - p1[1]) * (p1[0] - p3[0])) / det;
  return a >= T(0) && a <= T(1) && b >= T(0) && b <= T(1);
}

// Arc length from p0 to p1 on the circle of `radius` about the origin, the way `ind` says.
template <class T>
RLT_HD T circle_arc(const T* p0, const T* p1, int ind, T radius) {
  T a[2] = {p0[0], p0[1]}, b[2] = {p1[0], p1[1]};
  normalize2(a), normalize2(b);
  T angle = acos_(a[0] * b[0] + a[1] * b[1]);
  const T cross = p0[1] * p1[0] - p0[0] * p1[1];
  if ((cross > T(0) && ind) || (cross < T(0) && !ind)) angle = T(2 * kPi) - angle;
  return radius * angle;
}

// MuJoCo's wrap_circle: the tangent points pnt (2 x 2D) of the path between end (2 x 2D) around
// the circle of `radius` about the origin, on the side of `side` (2D, may be null; else the shorter
// way); returns the arc length, or -1 when the straight segment clears the circle.
template <class T>
RLT_HD T wrap_circle(T pnt[4], const T end[4], const T* side, T radius) {
  const T sqlen0 = end[0] * end[0] + end[1] * end[1], sqlen1 = end[2] * end[2] + end[3] * end[3];
  const T sqrad = radius * radius;
  if (sqlen0 < sqrad || sqlen1 < sqrad || radius < T(kMinVal)) return T(-1);
  const T dif[2] = {end[2] - end[0], end[3] - end[1]};
  const T dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (dd < T(kMinVal)) return T(-1);
  T a = -(dif[0] * end[0] + dif[1] * end[1]) / dd;
  a = a < T(0) ? T(0) : a > T(1) ? T(1) : a;
  T tmp[2] = {a * dif[0] + end[0], a * dif[1] + end[1]};
  if (tmp[0] * tmp[0] + tmp[1] * tmp[1] > sqrad && (!side || side[0] * tmp[0] + side[1] * tmp[1] >= T(0))) return T(-1);
  const T sqrt0 = m_sqrt(sqlen0 - sqrad), sqrt1 = m_sqrt(sqlen1 - sqrad);
  T sol[2][4], good[2];
  for (int i = 0; i < 2; ++i) {
    const T sgn = i == 0 ? T(1) : T(-1);
    sol[i][0] = (end[0] * sqrad + sgn * radius * end[1] * sqrt0) / sqlen0;
    sol[i][1] = (end[1] * sqrad - sgn * radius * end[0] * sqrt0) / sqlen0;
    sol[i][2] = (end[2] * sqrad - sgn * radius * end[3] * sqrt1) / sqlen1;
    sol[i][3] = (end[3] * sqrad + sgn * radius * end[2] * sqrt1) / sqlen1;
    if (side) {
      tmp[0] = sol[i][0] + sol[i][2], tmp[1] = sol[i][1] + sol[i][3];
      normalize2(tmp);
      good[i] = tmp[0] * side[0] + tmp[1] * side[1];
    } else {
      tmp[0] = sol[i][0] - sol[i][2], tmp[1] = sol[i][1] - sol[i][3];
      good[i] = -(tmp[0] * tmp[0] + tmp[1] * tmp[1]);
    }
    if (segments_cross(end, sol[i], end + 2, sol[i] + 2)) good[i] = T(-10000);
  }
  const int i = good[0] > good[1] ? 0 : 1;
  for (int k = 0; k < 4; ++k) pnt[k] = sol[i][k];
  if (segments_cross(end, pnt, end + 2, pnt + 2)) return T(-1);
  return circle_arc(sol[i], sol[i] + 2, i, radius);
}

// MuJoCo's wrap_inside: a side site inside the circle; the path touches the circle at one point
// (pnt twice), found by Newton's method on asin(A z) + asin(B z) - 2 asin(z) + G = 0. Returns 0,
// or -1 when the ends are inside the circle or the segment crosses it.
template <class T>
RLT_HD T wrap_inside(T pnt[4], const T end[4], T radius) {
  const int maxiter = 20;
  const T zinit = T(1 - 1e-7), tolerance = T(1e-6);
  const T len0 = m_sqrt(end[0] * end[0] + end[1] * end[1]), len1 = m_sqrt(end[2] * end[2] + end[3] * end[3]);
  const T dif[2] = {end[2] - end[0], end[3] - end[1]};
  const T dd = dif[0] * dif[0] + dif[1] * dif[1];
  if (len0 <= radius || len1 <= radius || radius < T(kMinVal) || len0 < T(kMinVal) || len1 < T(kMinVal)) return T(-1);
  if (dd > T(kMinVal)) {
    const T a = -(dif[0] * end[0] + dif[1] * end[1]) / dd;
    if (a > T(0) && a < T(1)) {
      const T tmp[2] = {end[0] + a * dif[0], end[1] + a * dif[1]};
      if (m_sqrt(tmp[0] * tmp[0] + tmp[1] * tmp[1]) <= radius) return T(-1);
    }
  }
  // the default, should Newton's method fail: the ends' mean direction
  pnt[0] = T(0.5) * (end[0] + end[2]), pnt[1] = T(0.5) * (end[1] + end[3]);
  normalize2(pnt);
  pnt[0] *= radius, pnt[1] *= radius;
  pnt[2] = pnt[0], pnt[3] = pnt[1];
  const T A = radius / len0, B = radius / len1;
  const T cosG = (len0 * len0 + len1 * len1 - dd) / (T(2) * len0 * len1);
  if (cosG < T(-1) + T(kMinVal)) return T(-1);
  if (cosG > T(1) - T(kMinVal)) return T(0);
  const T G = acos_(cosG);
  T z = zinit;
  T f = asin_(A * z) + asin_(B * z) - T(2) * asin_(z) + G;
  if (f > T(0)) return T(0);
  int iter = 0;
  for (; iter < maxiter && abs_(f) > tolerance; ++iter) {
    const T mv = T(kMinVal);
    T s0 = m_sqrt(T(1) - z * z * A * A), s1 = m_sqrt(T(1) - z * z * B * B), s2 = m_sqrt(T(1) - z * z);
    s0 = s0 > mv ? s0 : mv, s1 = s1 > mv ? s1 : mv, s2 = s2 > mv ? s2 : mv;
    const T df = A / s0 + B / s1 - T(2) / s2;
    if (df > -mv) return T(0);
    const T z1 = z - f / df;
    if (z1 > z) return T(0);
    z = z1;
    f = asin_(A * z) + asin_(B * z) - T(2) * asin_(z) + G;
    if (f > tolerance) return T(0);
  }
  if (iter >= maxiter) return T(0);
  T vec[2];
  T ang;
  if (end[0] * end[3] - end[1] * end[2] > T(0)) {
    vec[0] = end[0], vec[1] = end[1];
    ang = asin_(z) - asin_(A * z);
  } else {
    vec[0] = end[2], vec[1] = end[3];
    ang = asin_(z) - asin_(B * z);
  }
  normalize2(vec);
  pnt[0] = radius * (m_cos(ang) * vec[0] - m_sin(ang) * vec[1]);
  pnt[1] = radius * (m_sin(ang) * vec[0] + m_cos(ang) * vec[1]);
  pnt[2] = pnt[0], pnt[3] = pnt[1];
  return T(0);
}

// MuJoCo's mju_wrap: the path from x0 to x1 around a sphere or (infinite) cylinder of `radius` at
// xpos, xmat (row-major), on the side of `side` (world; may be null). Returns the length on the
// surface and the two tangent points w0, w1 (world), or -1 when the straight segment clears it.
template <class T>
RLT_HD T wrap_geom(Vec3<T>* w0, Vec3<T>* w1, const Vec3<T>& x0, const Vec3<T>& x1, const T* xpos, const T* xmat,
                   T radius, int type, const Vec3<T>* side) {
  const Vec3<T> c = Vec3<T>::load(xpos);
  auto to_local = [&](const Vec3<T>& x) {  // xmat^T (x - c)
    const Vec3<T> v = x - c;
    return Vec3<T>{xmat[0] * v.x + xmat[3] * v.y + xmat[6] * v.z, xmat[1] * v.x + xmat[4] * v.y + xmat[7] * v.z,
                   xmat[2] * v.x + xmat[5] * v.y + xmat[8] * v.z};
  };
  const Vec3<T> p0 = to_local(x0), p1 = to_local(x1);
  if (m_sqrt(dot(p0, p0)) < T(kMinVal) || m_sqrt(dot(p1, p1)) < T(kMinVal)) return T(-1);
  Vec3<T> axis0, axis1;
  if (type == kWrapSphere) {
    axis0 = p0;
    normalize3(&axis0);
    Vec3<T> normal = cross(p0, p1);
    const T nrm = normalize3(&normal);
    if (nrm < T(kMinVal)) {  // p0, p1 parallel: another normal
      const T ax = abs_(axis0.x), ay = abs_(axis0.y), az = abs_(axis0.z);
      int i = 0;
      if (ay > ax && ay > az) i = 1;
      if (az > ax && az > ay) i = 2;
      const Vec3<T> a1{i == 0 ? T(0) : T(1), i == 1 ? T(0) : T(1), i == 2 ? T(0) : T(1)};
      normal = cross(axis0, a1);
      normalize3(&normal);
    }
    axis1 = cross(normal, axis0);
    normalize3(&axis1);
  } else {
    axis0 = Vec3<T>{T(1), T(0), T(0)}, axis1 = Vec3<T>{T(0), T(1), T(0)};
  }
  const T d[4] = {dot(p0, axis0), dot(p0, axis1), dot(p1, axis0), dot(p1, axis1)};
  T sd[2] = {T(0), T(0)};
  Vec3<T> s = Vec3<T>::zero();
  if (side) {
    s = to_local(*side);
    sd[0] = dot(s, axis0), sd[1] = dot(s, axis1);
    normalize2(sd);
    sd[0] *= radius, sd[1] *= radius;
  }
  T pnt[4];
  const T wlen0 = side && m_sqrt(dot(s, s)) < radius ? wrap_inside(pnt, d, radius)
                                                     : wrap_circle(pnt, d, side ? sd : nullptr, radius);
  if (wlen0 < T(0)) return T(-1);
  T wlen = wlen0;
  Vec3<T> r0 = pnt[0] * axis0 + pnt[1] * axis1, r1 = pnt[2] * axis0 + pnt[3] * axis1;
  if (type == kWrapCylinder) {  // the height along the axis, spread over the path's length
    const T L0 = m_sqrt((p0.x - r0.x) * (p0.x - r0.x) + (p0.y - r0.y) * (p0.y - r0.y));
    const T L1 = m_sqrt((p1.x - r1.x) * (p1.x - r1.x) + (p1.y - r1.y) * (p1.y - r1.y));
    r0.z = p0.z + (p1.z - p0.z) * L0 / (L0 + wlen + L1);
    r1.z = p0.z + (p1.z - p0.z) * (L0 + wlen) / (L0 + wlen + L1);
    const T height = abs_(r1.z - r0.z);
    wlen = m_sqrt(wlen * wlen + height * height);
  }
  auto to_world = [&](const Vec3<T>& r) {
    return Vec3<T>{xmat[0] * r.x + xmat[1] * r.y + xmat[2] * r.z, xmat[3] * r.x + xmat[4] * r.y + xmat[5] * r.z,
                   xmat[6] * r.x + xmat[7] * r.y + xmat[8] * r.z} +
           c;
  };
  *w0 = to_world(r0), *w1 = to_world(r1);
  return wlen;
}

}  // namespace tendon_detail

// ten_length, ten_J, ten_velocity and the spatial paths (wrap_xpos, ten_wrapnum) from the current
// kinematics (needs kinematics and com_position; qvel for the velocity).
template <class T>
RLT_HD void tendon_kinematics(const ModelView<T>& m, const DataView<T>& d) {
  const int nv = m.nv;
  for (int t = 0; t < m.ntendon; ++t) {
    T* J = d.ten_J + t * nv;
    for (int i = 0; i < nv; ++i) J[i] = T(0);
    T length = T(0);
    const int adr = m.tendon_adr[t], num = m.tendon_num[t];
    int npoint = 0;
    T* path = d.wrap_xpos + 6 * adr;
    if (m.wrap_type[adr] == kWrapJoint) {
      for (int k = 0; k < num; ++k) {
        const int j = m.wrap_objid[adr + k];
        const T coef = m.wrap_prm[adr + k];
        length += coef * d.qpos[m.jnt_qposadr[j]];
        J[m.jnt_dofadr[j]] += coef;
      }
    } else {
      // MuJoCo's loop: from each site to the next site, around the geom between them if any
      using namespace tendon_detail;
      T divisor = T(1);
      int k = 0;
      while (k < num - 1) {
        int type1 = m.wrap_type[adr + k + 1];
        int id1 = m.wrap_objid[adr + k + 1];
        const int type0 = m.wrap_type[adr + k], id0 = m.wrap_objid[adr + k];
        if (type0 == kWrapPulley || type1 == kWrapPulley) {
          if (type0 == kWrapPulley) {
            divisor = m.wrap_prm[adr + k];
            for (int c = 0; c < 3; ++c) path[3 * npoint + c] = T(0);
            ++npoint;
          }
          ++k;
          continue;
        }
        Vec3<T> w[4];
        int wbody[4];
        w[0] = Vec3<T>::load(d.site_xpos + 3 * id0);
        wbody[0] = m.site_bodyid[id0];
        T wlen = T(-1);
        int wrapid = -1;
        const bool geom = type1 == kWrapSphere || type1 == kWrapCylinder;
        if (geom) {
          wrapid = id1;
          const int side_site = static_cast<int>(m.wrap_prm[adr + k + 1]);
          type1 = m.wrap_type[adr + k + 2], id1 = m.wrap_objid[adr + k + 2];
          const Vec3<T> side = side_site >= 0 ? Vec3<T>::load(d.site_xpos + 3 * side_site) : Vec3<T>::zero();
          wlen = wrap_geom(&w[1], &w[2], w[0], Vec3<T>::load(d.site_xpos + 3 * id1), d.geom_xpos + 3 * wrapid,
                           d.geom_xmat + 9 * wrapid, m.geom_size[3 * wrapid], m.wrap_type[adr + k + 1],
                           side_site >= 0 ? &side : static_cast<const Vec3<T>*>(nullptr));
        }
        const int nseg = wlen < T(0) ? 1 : 3;
        if (wlen < T(0)) {
          w[1] = Vec3<T>::load(d.site_xpos + 3 * id1);
          wbody[1] = m.site_bodyid[id1];
          const Vec3<T> dif = w[1] - w[0];
          length += m_sqrt(dot(dif, dif)) / divisor;
        } else {
          w[3] = Vec3<T>::load(d.site_xpos + 3 * id1);
          wbody[1] = wbody[2] = m.geom_bodyid[wrapid];
          wbody[3] = m.site_bodyid[id1];
          const Vec3<T> a = w[1] - w[0], b = w[3] - w[2];
          length += (m_sqrt(dot(a, a)) + wlen + m_sqrt(dot(b, b))) / divisor;
        }
        // moments where consecutive points sit on different bodies (on one body their distance
        // cannot change)
        for (int s = 0; s < nseg; ++s) {
          if (wbody[s] == wbody[s + 1]) continue;
          Vec3<T> u = w[s + 1] - w[s];
          normalize3(&u);
          add_segment_moment(m, d, J, wbody[s], w[s], wbody[s + 1], w[s + 1], u, T(1) / divisor);
        }
        for (int s = 0; s < nseg; ++s) w[s].store(path + 3 * (npoint + s));
        npoint += nseg;
        k += geom ? 2 : 1;
        if (k == num - 1 || m.wrap_type[adr + k + 1] == kWrapPulley) {  // the last site before a pulley or the end
          Vec3<T>::load(d.site_xpos + 3 * id1).store(path + 3 * npoint);
          ++npoint;
        }
      }
    }
    d.ten_wrapnum[t] = T(npoint);
    d.ten_length[t] = length;
    T vel = T(0);
    for (int i = 0; i < nv; ++i) vel += J[i] * d.qvel[i];
    d.ten_velocity[t] = vel;
  }
}

// qfrc_passive += J^T (spring + damper) per tendon (see the header; after passive_forces and
// tendon_kinematics).
template <class T>
RLT_HD void tendon_passive_forces(const ModelView<T>& m, const DataView<T>& d) {
  const int nv = m.nv;
  for (int t = 0; t < m.ntendon; ++t) {
    const T k = m.tendon_stiffness[t], b = m.tendon_damping[t];
    if (k == T(0) && b == T(0)) continue;
    const T L = d.ten_length[t], lo = m.tendon_lengthspring[2 * t], hi = m.tendon_lengthspring[2 * t + 1];
    const T x = L > hi ? L - hi : L < lo ? L - lo : T(0);
    const T spring = -x * k, damper = -d.ten_velocity[t] * b;
    if (spring == T(0) && damper == T(0)) continue;
    const T* J = d.ten_J + t * nv;
    for (int i = 0; i < nv; ++i) d.qfrc_passive[i] += J[i] * spring + J[i] * damper;
  }
}

// The tendon stage of a forward pass (physics_forward, after smooth_forces): kinematics, then the
// passive forces. Nothing without tendons.
template <class T>
RLT_HD void tendon_forward(const ModelView<T>& m, const DataView<T>& d) {
  if (m.ntendon == 0) return;
  tendon_kinematics(m, d);
  tendon_passive_forces(m, d);
}

}  // namespace rlt
