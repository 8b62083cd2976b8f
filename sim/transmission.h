// Site, slider-crank, ball and free joint and body transmissions (MJCF actuator site, refsite,
// cranksite, slidersite, cranklength; joint or jointinparent on a ball or free joint; body, the
// <adhesion> element's), as MuJoCo 3's mj_transmission, single source (RLT_HD, no std::, no
// allocation). Hinge and slide joint and tendon transmissions keep their own formulas in
// sim/actuators.h; these fill DataView::actuator_length and actuator_moment (one dense row of nv per
// actuator; only models with such a transmission have the rows, ModelView::nmoment) from the current
// kinematics (and, for a body, the current contact list), and sim/actuators.h takes velocity =
// moment . qvel and qfrc_actuator += moment^T force from them.
//
// For actuator a on site s (body b, world position p, orientation R) with 6D gear g = (gt, gr):
//   site          length 0 (MuJoCo's: no meaningful length); moment = Jp(b, p)^T (R gt) + Jr(b)^T (R gr),
//                 Jp the point Jacobian, Jr the rotational one: the wrench g, given in the site's frame,
//                 applied at the site.
//   site+refsite  (Cartesian end-effector control) with reference site r (body br, position pr,
//                 orientation Rr): where gt != 0
//                   length += gt . Rr^T (p - pr)   (the site's position in the refsite's frame)
//                   moment += (Jp(b, p) - Jp(br, pr))^T (Rr gt)
//                 where gr != 0
//                   length += gr . quat_difference(q, qr)   (MuJoCo's mju_subQuat: the rotation from the
//                                                            refsite's orientation qr to the site's q)
//                   moment += (Jr(b) - Jr(br))^T (Rr gr)
//                 with the columns of the dofs both bodies hang from (their common ancestor dof and
//                 its chain up to the root) zeroed, as MuJoCo does: those dofs move both sites
//                 together. (Neither term differentiates the refsite frame's own rotation: MuJoCo's
//                 approximation, kept.) q = xquat(b) site_quat(s), likewise qr.
//   slider-crank  crank site c, slider site s with axis z = the slider site's z axis, rod length r,
//                 v = p_c - p_s: length = z.v - sqrt(det), det = (z.v)^2 + r^2 - v.v (the slider's
//                 travel that keeps the rod's length); moment = dl/dz Jz + dl/dv (Jp(b_c, p_c) -
//                 Jp(b_s, p_s)), Jz the Jacobian of the axis (columns Jr x z), with
//                 dl/dv = z (1 - z.v / sqrt(det)) + v / sqrt(det), dl/dz = v (1 - z.v / sqrt(det));
//                 where det <= 0 (the rod cannot reach): length = z.v, dl/dv = z, dl/dz = v. Length
//                 and moment times gear[0].
//   ball joint    (quaternion q, dofs i..i+2) with 3D gear g: MuJoCo's "gear axis" ga = g (joint), or g
//                 rotated by q^-1 (jointinparent: g given in the parent's frame); length = ga . r, r =
//                 quat_difference(q, 1) (the rotation vector of q: axis times angle in (-pi, pi]);
//                 moment = ga on the three dofs.
//   free joint    with 6D gear g: length 0 (none meaningful); moment = g[0:3] on the translation dofs
//                 (the world frame either way) and ga = g[3:6] (joint) or g[3:6] rotated by q^-1
//                 (jointinparent) on the rotation dofs.
//   body          (MuJoCo's mjTRN_BODY, adhesion) length 0; moment = -(1/n) sum over the n contacts
//                 that make constraint rows (depth > 0) with a geom of the body itself (not its
//                 children) of their normal Jacobian n . (Jp(b2, p) - Jp(b1, p)) (geom 2's body minus
//                 geom 1's, sim/constraints.h's contact rows; MuJoCo averages the rows' pyramid edges,
//                 which is this to rounding): a positive force pulls the body onto what it touches.
//                 The contacts are those of the current positions: detect_contacts runs before this
//                 (MuJoCo's mj_transmission follows mj_collision and mj_makeConstraint).
// A position-shaped servo (fixed gain, affine bias, gainprm[0] = -biasprm[1], dynamics none or
// integrator) on a rotational transmission, a ball joint or a site+refsite with a purely rotational
// gear, has a setpoint period 2 pi |gear's rotation| (setpoint_period, MuJoCo's wrapPeriod): its input
// is taken as the representative u - P round((u - length) / P) nearest the length (wrap_setpoint),
// and an integrator's activation is so wrapped after each step (sim/actuators.h).
#pragma once

#include "sim/common.h"
#include "sim/contact.h"  // last_dof, point_jacobian_col
#include "sim/dynamics.h"

namespace rlt {

namespace transmission_detail {

// row[i] += scale * (w . Jp(b, p)_i + wr . Jr(b)_i) over the dof chain of body b.
template <class T>
RLT_HD void add_wrench_moment(const ModelView<T>& m, const DataView<T>& d, T* row, int b, const Vec3<T>& p,
                              const Vec3<T>& w, const Vec3<T>& wr, T scale) {
  for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i])
    row[i] += scale * (dot(point_jacobian_col(m, d, b, p, i), w) + dot(Vec3<T>::load(d.cdof + 6 * i), wr));
}

// The deepest dof that both bodies hang from, -1 if none (MuJoCo's walk up the two dof chains).
template <class T>
RLT_HD int common_dof(const ModelView<T>& m, int b0, int b1) {
  int i0 = last_dof(m, b0), i1 = last_dof(m, b1);
  if (i0 < 0 || i1 < 0) return -1;
  while (i0 != i1 && i0 >= 0 && i1 >= 0) {
    if (i0 < i1) {
      i1 = m.dof_parentid[i1];
    } else {
      i0 = m.dof_parentid[i0];
    }
  }
  return i0 == i1 ? i0 : -1;
}

// The world orientation of site s (MuJoCo's xquat(body) site_quat).
template <class T>
RLT_HD Quat<T> site_xquat(const ModelView<T>& m, const DataView<T>& d, int s) {
  return quat_mul(Quat<T>::load(d.xquat + 4 * m.site_bodyid[s]), Quat<T>::load(m.site_quat + 4 * s));
}

// Actuator a on a ball or free joint (joint, or jointinparent: the gear in the parent's frame): its
// moment into row (zeroed), its length returned.
template <class T>
RLT_HD T joint_moment(const ModelView<T>& m, const DataView<T>& d, int a, T* row) {
  const int j = m.actuator_trnid[a], dof = m.jnt_dofadr[j];
  const bool ball = m.jnt_type[j] == kJointBall;
  const T* g = m.actuator_gear6 + 6 * a;
  const Quat<T> q = quat_normalize(Quat<T>::load(d.qpos + m.jnt_qposadr[j] + (ball ? 0 : 3)));
  const Vec3<T> gr = ball ? Vec3<T>{g[0], g[1], g[2]} : Vec3<T>{g[3], g[4], g[5]};
  const Vec3<T> axis = m.actuator_trntype[a] == kTrnJoint ? gr : quat_rotate(Quat<T>{q.w, -q.x, -q.y, -q.z}, gr);
  if (ball) {
    row[dof] = axis.x, row[dof + 1] = axis.y, row[dof + 2] = axis.z;
    return dot(quat_difference(q, Quat<T>::identity()), axis);
  }
  for (int k = 0; k < 3; ++k) row[dof + k] = g[k];
  row[dof + 3] = axis.x, row[dof + 4] = axis.y, row[dof + 5] = axis.z;
  return T(0);
}

// The body transmission's moment into row (zeroed): minus the mean normal Jacobian of the contacts
// with rows that touch a geom of body id (see the header).
template <class T>
RLT_HD void body_moment(const ModelView<T>& m, const DataView<T>& d, int id, T* row) {
  const int ncon = static_cast<int>(d.ncon[0]);
  int count = 0;
  for (int c = 0; c < ncon; ++c) {
    const T* con = d.contact + kContactStride * c;
    const int b1 = m.geom_bodyid[static_cast<int>(con[kConGeom1])];
    const int b2 = m.geom_bodyid[static_cast<int>(con[kConGeom2])];
    if ((b1 != id && b2 != id) || !(con[kConDepth] > T(0))) continue;  // (depth > 0: it has rows)
    ++count;
    const Vec3<T> p = Vec3<T>::load(con + kConPos), n = Vec3<T>::load(con + kConNormal);
    add_wrench_moment(m, d, row, b2, p, n, Vec3<T>::zero(), T(1));
    add_wrench_moment(m, d, row, b1, p, n, Vec3<T>::zero(), T(-1));
  }
  if (count == 0) return;
  const T scale = T(-1) / T(count);
  for (int i = 0; i < m.nv; ++i) row[i] *= scale;
}

}  // namespace transmission_detail

// Whether actuator a's length and moment come from transmission_kinematics: a site, a slider-crank,
// a ball or free joint or a body (not a hinge or slide joint, nor a tendon).
template <class T>
RLT_HD RLT_INLINE bool moment_transmission(const ModelView<T>& m, int a) {
  const int t = m.actuator_trntype[a];
  if (t == kTrnTendon) return false;
  if (t != kTrnJoint) return true;
  const int type = m.jnt_type[m.actuator_trnid[a]];
  return type == kJointBall || type == kJointFree;
}

// The period of actuator a's setpoint (MuJoCo's wrapPeriod): 2 pi |gear[3:6]| for a position-shaped
// servo on a site with a refsite and no translational gear, 2 pi |gear[0:3]| for one on a ball
// joint, 0 (no wrapping) otherwise. Position-shaped: fixed gain, affine bias, gainprm[0] =
// -biasprm[1], dynamics none or integrator.
template <class T>
RLT_HD T setpoint_period(const ModelView<T>& m, int a) {
  const int dyn = m.actuator_dyntype[a], t = m.actuator_trntype[a];
  if (m.actuator_gaintype[a] != kGainFixed || m.actuator_biastype[a] != kBiasAffine ||
      m.actuator_gainprm[kNumGainPrm * a] != -m.actuator_biasprm[kNumGainPrm * a + 1] || (dyn != kDynNone && dyn != kDynIntegrator))
    return T(0);
  const T* g = m.actuator_gear6 + 6 * a;
  const T two_pi = T(2 * 3.14159265358979323846);
  if (t == kTrnSite && m.actuator_trnid2[a] >= 0 && g[0] == T(0) && g[1] == T(0) && g[2] == T(0))
    return two_pi * m_sqrt(g[3] * g[3] + g[4] * g[4] + g[5] * g[5]);
  if ((t == kTrnJoint || t == kTrnJointInParent) && m.jnt_type[m.actuator_trnid[a]] == kJointBall)
    return two_pi * m_sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  return T(0);
}

// The representative of setpoint u nearest to length, given its period (MuJoCo's wrapSetpoint; its
// mju_round takes halves up).
template <class T>
RLT_HD RLT_INLINE T wrap_setpoint(T u, T length, T period) {
  return u - period * m_floor((u - length) / period + T(0.5));
}

// d.actuator_length and d.actuator_moment of every actuator with a moment_transmission (see the
// header; needs kinematics, com_position and, for a body transmission, detect_contacts). Nothing
// without them (m.nmoment == 0).
template <class T>
RLT_HD void transmission_kinematics(const ModelView<T>& m, const DataView<T>& d) {
  using namespace transmission_detail;
  if (m.nmoment == 0) return;
  const int nv = m.nv;
  for (int a = 0; a < m.nu; ++a) {
    if (!moment_transmission(m, a)) continue;
    T* row = d.actuator_moment + a * nv;
    for (int i = 0; i < nv; ++i) row[i] = T(0);
    const int trn = m.actuator_trntype[a];
    if (trn == kTrnJoint || trn == kTrnJointInParent) {
      d.actuator_length[a] = joint_moment(m, d, a, row);
      continue;
    }
    if (trn == kTrnBody) {
      d.actuator_length[a] = T(0);
      body_moment(m, d, m.actuator_trnid[a], row);
      continue;
    }
    const int s = m.actuator_trnid[a], s2 = m.actuator_trnid2[a], b = m.site_bodyid[s];
    const Vec3<T> p = Vec3<T>::load(d.site_xpos + 3 * s);
    T length = T(0);
    if (trn == kTrnSliderCrank) {
      const int bs = m.site_bodyid[s2];
      const Vec3<T> ps = Vec3<T>::load(d.site_xpos + 3 * s2);
      const Vec3<T> z = Mat3<T>::load(d.site_xmat + 9 * s2).col(2);
      const Vec3<T> v = p - ps;
      const T r = m.actuator_cranklength[a], av = dot(v, z);
      const T det = av * av + r * r - dot(v, v);
      Vec3<T> dldv = z, dlda = v;
      length = av;
      if (det > T(0)) {
        const T sdet = m_sqrt(det);
        length = av - sdet;
        dldv = (T(1) - av / sdet) * z + (T(1) / sdet) * v;
        dlda = (T(1) - av / sdet) * v;
      }
      // the axis turns with the slider's body (Jz = Jr x z), the crank site moves relative to the slider site
      for (int i = last_dof(m, bs); i >= 0; i = m.dof_parentid[i])
        row[i] += dot(dlda, cross(Vec3<T>::load(d.cdof + 6 * i), z)) - dot(dldv, point_jacobian_col(m, d, bs, ps, i));
      for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i])
        row[i] += dot(dldv, point_jacobian_col(m, d, b, p, i));
      const T gear = m.actuator_gear[a];
      length *= gear;
      for (int i = 0; i < nv; ++i) row[i] *= gear;
    } else {
      const T* g = m.actuator_gear6 + 6 * a;
      const Vec3<T> gt{g[0], g[1], g[2]}, gr{g[3], g[4], g[5]};
      if (s2 < 0) {  // the wrench g in the site's frame, applied at the site
        const Mat3<T> R = Mat3<T>::load(d.site_xmat + 9 * s);
        add_wrench_moment(m, d, row, b, p, R * gt, R * gr, T(1));
      } else {  // relative to the refsite, in its frame
        const int br = m.site_bodyid[s2];
        const Vec3<T> pr = Vec3<T>::load(d.site_xpos + 3 * s2);
        const Mat3<T> Rr = Mat3<T>::load(d.site_xmat + 9 * s2);
        const bool translate = gt.x != T(0) || gt.y != T(0) || gt.z != T(0);
        const bool rotate = gr.x != T(0) || gr.y != T(0) || gr.z != T(0);
        const Vec3<T> wt = translate ? Rr * gt : Vec3<T>::zero(), wr = rotate ? Rr * gr : Vec3<T>::zero();
        if (translate) {
          const Vec3<T> dp = p - pr;
          length += dot(Vec3<T>{dot(Rr.col(0), dp), dot(Rr.col(1), dp), dot(Rr.col(2), dp)}, gt);
        }
        if (rotate) length += dot(quat_difference(site_xquat(m, d, s), site_xquat(m, d, s2)), gr);
        add_wrench_moment(m, d, row, b, p, wt, wr, T(1));
        add_wrench_moment(m, d, row, br, pr, wt, wr, T(-1));
        for (int i = common_dof(m, b, br); i >= 0; i = m.dof_parentid[i]) row[i] = T(0);
      }
    }
    d.actuator_length[a] = length;
  }
}

// Actuator a's velocity, its moment row times qvel (after transmission_kinematics).
template <class T>
RLT_HD T moment_velocity(const ModelView<T>& m, const DataView<T>& d, int a) {
  const T* row = d.actuator_moment + a * m.nv;
  T v = T(0);
  for (int i = 0; i < m.nv; ++i) v += row[i] * d.qvel[i];
  return v;
}

// Actuator a's length and velocity as MuJoCo's actuator_length / actuator_velocity, for every
// transmission: hinge or slide joint (gear qpos, gear qvel; raw qpos as MuJoCo), tendon (gear
// ten_length, gear ten_velocity) or a moment row (site, slider-crank, ball or free joint, body). Read
// by the actuators and their sensors.
template <class T>
RLT_HD T actuator_length_of(const ModelView<T>& m, const DataView<T>& d, int a) {
  if (moment_transmission(m, a)) return d.actuator_length[a];
  const int j = m.actuator_trnid[a];
  return m.actuator_gear[a] * (m.actuator_trntype[a] == kTrnTendon ? d.ten_length[j] : d.qpos[m.jnt_qposadr[j]]);
}

template <class T>
RLT_HD T actuator_velocity_of(const ModelView<T>& m, const DataView<T>& d, int a) {
  if (moment_transmission(m, a)) return moment_velocity(m, d, a);
  const int j = m.actuator_trnid[a];
  return m.actuator_gear[a] * (m.actuator_trntype[a] == kTrnTendon ? d.ten_velocity[j] : d.qvel[m.jnt_dofadr[j]]);
}

}  // namespace rlt
