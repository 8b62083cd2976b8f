// Tendons (MJCF <tendon>), as MuJoCo 3's mj_tendon and the tendon parts of mj_passive, single source
// (RLT_HD, no std::, no allocation; the per-env quantities live in the DataView: ten_length,
// ten_velocity, ten_J, wrap_xpos).
//
// A tendon is a scalar length L(q) with moment arms J = dL/dq (1 x nv):
//   fixed    L = sum_k coef_k qpos[joint_k] (raw qpos, as MuJoCo), J[dof of joint_k] += coef_k
//            (hinge and slide joints; the MJCF compiler refuses the others)
//   spatial  a path of sites, optionally split by pulleys: L = sum over consecutive sites of
//            |p_(k+1) - p_k| / divisor (divisor: the last pulley's, 1 before the first); between two
//            points on different bodies J += (u^T (Jp(b_(k+1), p_(k+1)) - Jp(b_k, p_k))) / divisor,
//            u the unit vector from p_k to p_(k+1), Jp the point Jacobian (consecutive points on
//            one body add nothing: their distance cannot change). Geom wraps (sphere, cylinder)
//            are refused by the MJCF compiler for now.
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
      T divisor = T(1);
      for (int k = 0; k < num; ++k) {
        const int type = m.wrap_type[adr + k];
        if (type == kWrapPulley) {
          divisor = m.wrap_prm[adr + k];
          for (int c = 0; c < 3; ++c) path[3 * npoint + c] = T(0);
          ++npoint;
          continue;
        }
        // a site: record it, and join it to the previous one unless a pulley (or nothing) precedes it
        const int s = m.wrap_objid[adr + k];
        const Vec3<T> p1 = Vec3<T>::load(d.site_xpos + 3 * s);
        p1.store(path + 3 * npoint);
        ++npoint;
        if (k == 0 || m.wrap_type[adr + k - 1] != kWrapSite) continue;
        const int s0 = m.wrap_objid[adr + k - 1];
        const Vec3<T> p0 = Vec3<T>::load(d.site_xpos + 3 * s0);
        const Vec3<T> dif = p1 - p0;
        const T dist = m_sqrt(dot(dif, dif));
        length += dist / divisor;
        const int b0 = m.site_bodyid[s0], b1 = m.site_bodyid[s];
        if (b0 == b1) continue;
        // MuJoCo's mju_normalize3: a vanishing difference gives (1, 0, 0)
        const Vec3<T> u = dist < T(1e-15) ? Vec3<T>{T(1), T(0), T(0)} : (T(1) / dist) * dif;
        tendon_detail::add_segment_moment(m, d, J, b0, p0, b1, p1, u, T(1) / divisor);
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
