// Soft constraints (DESIGN.md D3), MuJoCo's law for contacts and joint limits: the only contact and
// limit law, for every model (the spring-damper law that came before it parted from MuJoCo by up to
// 30% in how far a gait carries and was removed; docs/ARCHITECTURE.md).
// Single source: RLT_HD, no std::, no allocation; the rows live in the env's DataView (efc_*).
//
// Rows (MuJoCo's order: equality, friction loss, limits, contacts), each a Jacobian J_r (1 x nv)
// and a distance r_r (< 0: violated):
//   equality a joint equality: J = e_dof1 - poly'(x) e_dof2, r = q1 - q1_0 - poly(x), x = q2 - q2_0,
//            force unbounded (equality_rows; connect rows too: 3, p1 - p2, aref less J' qvel)
//   friction a dof with frictionloss > 0: J = e_dof, r = 0, no stiffness (K = 0), the force bounded
//            by |f| <= frictionloss (dof_solref/dof_solimp: the joint's solreffriction/solimpfriction)
//   limit    a limited hinge or slide within jnt_margin of its range: J = +e_dof, r = q - lo - margin
//            (below), or J = -e_dof, r = hi - q - margin (above) (jnt_solref/jnt_solimp)
//   contact  a candidate within its active margin (depth > 0; sim/contact.h): r = -depth and, for a
//            pair of condim 3, the four edges of MuJoCo's pyramidal cone (mu at least 1e-5,
//            MuJoCo's mjMINMU, so friction 0 is an almost rigid pyramid there too),
//            J = (n +- mu t1)^T Jp, (n +- mu t2)^T Jp (Jp: the relative point Jacobian of geom 2's
//            body against geom 1's, t1, t2 MuJoCo's tangent frame for n, mju_makeFrame); without
//            friction (condim 1) the normal alone. condim 4 and 6 are refused (the MJCF compiler;
//            HostModel::check for models built in code).
// Solved (MuJoCo's forward dynamics; each row's solref/solimp from its object, a contact's mixed from
// its geoms as mj_contactParam, MuJoCo's defaults solref 0.02 1, solimp 0.9 0.95 0.001 0.5 2; the
// formulas below are for the default solimp shape, impedance() has MuJoCo's general one, and a
// direct solref (negative) gives K = -ref0 / dmax^2, B = -ref1 / dmax):
//   a0 = M^-1 f_smooth (the smooth acceleration, M without the implicit damping), then the forces
//   f >= 0 minimizing 1/2 f^T (A + R) f + f^T (J a0 - aref), A = J M^-1 J^T, with per row
//     impedance  d(|r|) = dmin + (dmax - dmin) y(|r| / width), y(x) = 2 x^2 below 1/2, 1 - 2 (1 - x)^2 above, 1 past 1
//     reference  aref = -B J v - K d r, K = 1 / (dmax^2 tc^2), B = 2 / (dmax tc), tc = max(0.02, 2 h)
//     regularizer R = (1 - d) / d * diagApprox, diagApprox MuJoCo's: dof_invweight0 for a limit or
//                 friction loss, 2 mu^2 (1 + mu^2) (body_invweight0[b1] + body_invweight0[b2]) /
//                 impratio for a pyramid edge
//                 (the normal's t alone without friction)
//   by projected Gauss-Seidel (each row in turn, f_r <- max(0, f_r - residual_r / (A_rr + R_r)), a
//   friction-loss row clamped to [-frictionloss, frictionloss] instead,
//   the acceleration a = a0 + M^-1 J^T f updated with it), from f = 0, until no row's force moves by
//   more than a tolerance (float 1e-5, double 1e-10) of the largest |J a0 - aref| in a sweep.
//   The problem is strictly convex (R > 0), so the answer is MuJoCo's (its Newton solver's) up to
//   the tolerance: tests/sim/test_constraints.cpp compares qfrc_constraint state by state.
//   qfrc_constraint = J^T f; then, as MuJoCo's Euler with eulerdamp, the step's acceleration
//   solves (M + h D) qacc = f_smooth + qfrc_constraint.
// Per contact it leaves its normal force (kConForce), whether that is positive (kConActive) and the
// friction force on geom 2's body (kConFriction, world), which contact_external_forces reads.
// Cost per substep: one extra factorization of M, one M^-1 solve per row, and per sweep two
// nv-vector products per row (ant on flat ground: ~16-20 rows, nv 14).
#pragma once

#include <vector>

#include "sim/common.h"
#include "sim/contact.h"
#include "sim/dynamics.h"

namespace rlt {

// Fields of a row in DataView::efc (kEfcStride scalars each).
enum EfcField : int { kEfcAref = 0, kEfcR = 1, kEfcDiag = 2, kEfcForce = 3, kEfcOwner = 4 };

namespace constraint_detail {

// MuJoCo's mjMINVAL, mjMINIMP, mjMAXIMP.
constexpr double kMinVal = 1e-15, kMinImp = 0.0001, kMaxImp = 0.9999;

template <class T>
RLT_HD RLT_INLINE T abs_(T x) {
  return x < T(0) ? -x : x;
}
template <class T>
RLT_HD RLT_INLINE T max_(T a, T b) {
  return a > b ? a : b;
}
template <class T>
RLT_HD RLT_INLINE T min_(T a, T b) {
  return a < b ? a : b;
}

// Largest force change per sweep, relative to the largest |J a0 - aref|, that ends the solve; and
// the most sweeps. float keeps ~7 digits, so it stops earlier (measured on the ant under random
// controls: 8.7 sweeps on average, at most 80; halfcheetah 39, at most 144); double, for the
// comparisons with MuJoCo, goes on to 1e-10 (ant 26 on average, halfcheetah 91, up to ~400).
template <class T>
RLT_HD RLT_INLINE T tolerance() {
  return sizeof(T) == sizeof(float) ? T(1e-5) : T(1e-10);
}
template <class T>
RLT_HD RLT_INLINE int max_sweeps() {
  return sizeof(T) == sizeof(float) ? 200 : 1000;
}

// A constraint's solver parameters, as MuJoCo's getsolparam leaves them: solref (standard:
// timeconst, dampratio; direct: -stiffness, -damping; a mixed pair is replaced by the default),
// the timeconst at least 2 timesteps (refsafe), solimp clamped to its valid ranges.
template <class T>
struct SolParams {
  T ref[2];
  T imp[5];
};
template <class T>
RLT_HD RLT_INLINE SolParams<T> sol_params(const ModelView<T>& m, const T* ref, const T* imp, T h) {
  SolParams<T> p;
  p.ref[0] = ref[0], p.ref[1] = ref[1];
  if ((p.ref[0] > T(0)) != (p.ref[1] > T(0))) p.ref[0] = T(0.02), p.ref[1] = T(1);
  if (m.refsafe && p.ref[0] > T(0)) p.ref[0] = max_(p.ref[0], T(2) * h);
  p.imp[0] = min_(T(kMaxImp), max_(T(kMinImp), imp[0]));
  p.imp[1] = min_(T(kMaxImp), max_(T(kMinImp), imp[1]));
  p.imp[2] = max_(T(0), imp[2]);
  p.imp[3] = min_(T(kMaxImp), max_(T(kMinImp), imp[3]));
  p.imp[4] = max_(T(1), imp[4]);
  return p;
}

RLT_HD RLT_INLINE float pow_(float a, float b) { return b == 1.0f ? a : b == 2.0f ? a * a : powf(a, b); }
RLT_HD RLT_INLINE double pow_(double a, double b) { return b == 1.0 ? a : b == 2.0 ? a * a : ::pow(a, b); }

// MuJoCo's getimpedance: d(x), x = |pos - margin| / width, rising from dmin to dmax with the
// solimp shape (power, midpoint); flat (the mean) when dmin = dmax or the width is 0.
template <class T>
RLT_HD RLT_INLINE T impedance(const T* imp, T dist) {
  if (imp[0] == imp[1] || imp[2] <= T(kMinVal)) return T(0.5) * (imp[0] + imp[1]);
  const T x = abs_(dist / imp[2]);
  if (x >= T(1) || x <= T(0)) return x >= T(1) ? imp[1] : imp[0];
  T y;
  if (imp[4] == T(1)) {
    y = x;
  } else if (x <= imp[3]) {
    y = T(1) / pow_(imp[3], imp[4] - T(1)) * pow_(x, imp[4]);
  } else {
    y = T(1) - T(1) / pow_(T(1) - imp[3], imp[4] - T(1)) * pow_(T(1) - x, imp[4]);
  }
  return imp[0] + y * (imp[1] - imp[0]);
}

// A contact's tangents t1, t2, as MuJoCo's collision functions leave them: a plane-capsule contact
// takes the capsule's axis for t1 (mjc_PlaneCapsule), every other pair none; then mju_makeFrame
// makes t1 orthogonal to the normal (with no t1, or one along the normal: (0, 1, 0), or (0, 0, 1)
// when n is within 60 degrees of y) and t2 = n x t1. The pyramid's edges follow these tangents.
template <class T>
RLT_HD void contact_frame(const ModelView<T>& m, const DataView<T>& d, const T* con, Vec3<T>* t1, Vec3<T>* t2) {
  const Vec3<T> n = Vec3<T>::load(con + kConNormal);
  const int g1 = static_cast<int>(con[kConGeom1]), g2 = static_cast<int>(con[kConGeom2]);
  Vec3<T> t = Vec3<T>::zero();
  if (m.geom_type[g1] == kGeomPlane && m.geom_type[g2] == kGeomCapsule) {
    const T* x = d.geom_xmat + 9 * g2;  // row-major: the axis (local z) is the third column
    const Vec3<T> axis{x[2], x[5], x[8]};
    t = axis - dot(axis, n) * n;
  }
  if (!(dot(t, t) > T(1e-12))) {
    const Vec3<T> a = abs_(n.y) < T(0.5) ? Vec3<T>{T(0), T(1), T(0)} : Vec3<T>{T(0), T(0), T(1)};
    t = a - dot(a, n) * n;
  }
  *t1 = (T(1) / m_sqrt(dot(t, t))) * t;
  *t2 = cross(n, *t1);
}

// A geom pair's contact parameters, MuJoCo's mj_contactParam: the geom of higher priority gives
// condim, sliding friction, solref and solimp; at equal priority condim and friction are the larger,
// solref and solimp mixed by solmix (a direct solref: the smaller of each). (gap: see constraint_rows.)
template <class T>
struct ContactParams {
  int condim;
  T mu_raw;  // sliding friction, 0 for condim 1
  T mu;      // the same, at least MuJoCo's mjMINMU 1e-5 where it acts
  T ref[2];
  T imp[5];
};
template <class T>
RLT_HD ContactParams<T> contact_params(const ModelView<T>& m, int g1, int g2) {
  ContactParams<T> p;
  if (const int q = m.npair > 0 ? explicit_pair(m, g1, g2) : -1; q >= 0) {  // an explicit pair's own
    p.condim = m.pair_condim[q];
    p.mu = m.pair_friction[5 * q];
    for (int i = 0; i < 2; ++i) p.ref[i] = m.pair_solref[2 * q + i];
    for (int i = 0; i < 5; ++i) p.imp[i] = m.pair_solimp[5 * q + i];
    p.mu_raw = p.condim >= 3 ? p.mu : T(0);
    p.mu = p.condim >= 3 ? max_(p.mu, T(1e-5)) : T(0);
    return p;
  }
  const int pr1 = m.geom_priority[g1], pr2 = m.geom_priority[g2];
  if (pr1 != pr2) {
    const int g = pr1 > pr2 ? g1 : g2;
    p.condim = m.geom_condim[g];
    p.mu = m.geom_friction[3 * g];
    for (int i = 0; i < 2; ++i) p.ref[i] = m.geom_solref[2 * g + i];
    for (int i = 0; i < 5; ++i) p.imp[i] = m.geom_solimp[5 * g + i];
  } else {
    const int c1 = m.geom_condim[g1], c2 = m.geom_condim[g2];
    p.condim = c1 > c2 ? c1 : c2;
    const T s1 = m.geom_solmix[g1], s2 = m.geom_solmix[g2], mv = T(kMinVal);
    const T mix = s1 >= mv && s2 >= mv ? s1 / (s1 + s2) : s1 < mv && s2 < mv ? T(0.5) : s1 < mv ? T(0) : T(1);
    const T* r1 = m.geom_solref + 2 * g1;
    const T* r2 = m.geom_solref + 2 * g2;
    for (int i = 0; i < 2; ++i)
      p.ref[i] = r1[0] > T(0) && r2[0] > T(0) ? mix * r1[i] + (T(1) - mix) * r2[i] : min_(r1[i], r2[i]);
    for (int i = 0; i < 5; ++i) p.imp[i] = mix * m.geom_solimp[5 * g1 + i] + (T(1) - mix) * m.geom_solimp[5 * g2 + i];
    p.mu = max_(m.geom_friction[3 * g1], m.geom_friction[3 * g2]);
  }
  p.mu_raw = p.condim >= 3 ? p.mu : T(0);
  p.mu = p.condim >= 3 ? max_(p.mu, T(1e-5)) : T(0);
  return p;
}

// Rows of a contact: 4 pyramid edges for condim 3, 1 for condim 1.
template <class T>
RLT_HD RLT_INLINE int contact_edges(const ContactParams<T>& p) {
  return p.condim >= 3 ? 4 : 1;
}

// Fills the row quantities of row r from its Jacobian (already in efc_J; M factored without the
// implicit damping): M^-1 J^T, A_rr, aref, R. dist = pos - margin (< 0: violated); friction: a
// friction-loss row (no stiffness).
template <class T>
RLT_HD void finish_row(const ModelView<T>& m, const DataView<T>& d, int r, T dist, T diag_approx, T owner,
                       const SolParams<T>& sp, bool friction, T imp_dist) {
  const int nv = m.nv;
  const T* J = d.efc_J + r * nv;
  T* MiJ = d.efc_MiJ + r * nv;
  for (int i = 0; i < nv; ++i) MiJ[i] = J[i];
  solve_mass(m, d, MiJ);
  T A = T(0), vel = T(0);
  for (int i = 0; i < nv; ++i) A += J[i] * MiJ[i], vel += J[i] * d.qvel[i];
  const T dimp = impedance(sp.imp, imp_dist);  // imp_dist: dist, or a connect's norm over its rows
  const T dmax = sp.imp[1];
  // standard: K = 1 / (dmax^2 tc^2 dampratio^2), B = 2 / (dmax tc); direct: K = -ref0 / dmax^2, B = -ref1 / dmax
  const T K = friction           ? T(0)
              : sp.ref[0] > T(0) ? T(1) / max_(T(kMinVal), dmax * dmax * sp.ref[0] * sp.ref[0] * sp.ref[1] * sp.ref[1])
                                 : -sp.ref[0] / max_(T(kMinVal), dmax * dmax);
  const T B = sp.ref[1] > T(0) ? T(2) / max_(T(kMinVal), dmax * sp.ref[0]) : -sp.ref[1] / max_(T(kMinVal), dmax);
  const T R = (T(1) - dimp) / dimp * diag_approx;
  T* e = d.efc + r * kEfcStride;
  e[kEfcAref] = -B * vel - K * dimp * dist;
  e[kEfcR] = R > T(1e-15) ? R : T(1e-15);
  e[kEfcDiag] = A + e[kEfcR];
  e[kEfcForce] = T(0);
  e[kEfcOwner] = owner;
}

// Owner codes of rows that are not contacts: a limit -1, a dof's friction loss -2 - dof, an
// equality constraint kEqOwner - eq (its force is not bounded).
constexpr double kEqOwner = -1e6;
RLT_HD RLT_INLINE int friction_dof(double owner) {
  return owner <= -2 && owner > kEqOwner + 0.5 ? static_cast<int>(-2 - owner) : -1;
}
RLT_HD RLT_INLINE bool equality_row(double owner) { return owner <= kEqOwner + 0.5; }

// World position of a point given in body b's frame.
template <class T>
RLT_HD RLT_INLINE Vec3<T> body_point(const DataView<T>& d, int b, const T* local) {
  const T* R = d.xmat + 9 * b;
  Vec3<T> p = Vec3<T>::load(d.xpos + 3 * b);
  p.x += R[0] * local[0] + R[1] * local[1] + R[2] * local[2];
  p.y += R[3] * local[0] + R[4] * local[1] + R[5] * local[2];
  p.z += R[6] * local[0] + R[7] * local[1] + R[8] * local[2];
  return p;
}

// MuJoCo's mj_jacDot(p, b) qvel: the time derivative of the translational Jacobian of world point p
// fixed to body b, times qvel: the point's acceleration from velocities alone,
// a_O + alpha x (p - O) + omega x v_p, (alpha, a_O) = sum over b's dof chain of cdof_dot qvel (about
// the tree's reference point O), omega and v_p from cvel (needs com_velocity). The sum over one
// rotation group does not depend on which velocity its cdof_dot was taken with (sim/dynamics.h), so
// this is MuJoCo's value for ball and free joints too. Zero for the world.
template <class T>
RLT_HD Vec3<T> point_jacdot_qvel(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& p) {
  SVec<T> acc = SVec<T>::zero();
  for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i]) acc += d.qvel[i] * SVec<T>::load(d.cdof_dot + 6 * i);
  if (b <= 0) return Vec3<T>::zero();
  const SVec<T> v = SVec<T>::load(d.cvel + 6 * b);
  const Vec3<T> r = p - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
  return acc.lin + cross(acc.ang, r) + cross(v.ang, v.lin + cross(v.ang, r));
}

// Equality rows (MuJoCo's mj_instantiateEquality, first of all rows): connect, 3 rows, the world
// anchors' difference p1 - p2 with J = Jp(b1, p1) - Jp(b2, p2), impedance from its norm,
// diagApprox body_invweight0[b1] + body_invweight0[b2], and aref less J' qvel (MuJoCo 3's
// mj_Jdotv: the anchors' velocity-product accelerations); joint, 1 row, q1 - q1_0 - poly(q2 - q2_0)
// with J = e_dof1 - poly'(q2 - q2_0) e_dof2, diagApprox the dofs' invweight0. Returns the rows.
template <class T>
RLT_HD int equality_rows(const ModelView<T>& m, const DataView<T>& d, T h, int nr) {
  const int nv = m.nv;
  const int start = nr;
  for (int e = 0; e < m.neq; ++e) {
    if (!m.eq_active[e]) continue;
    const T* data = m.eq_data + 11 * e;
    const SolParams<T> sp = sol_params(m, m.eq_solref + 2 * e, m.eq_solimp + 5 * e, h);
    const T owner = T(kEqOwner - e);
    if (m.eq_type[e] == kEqConnect) {
      if (nr + 3 > m.nefc_max) break;
      const int b1 = m.eq_obj1id[e], b2 = m.eq_obj2id[e];
      const Vec3<T> p1 = body_point(d, b1, data), p2 = body_point(d, b2, data + 3);
      const Vec3<T> dif = p1 - p2;
      for (int k = 0; k < 3 * nv; ++k) d.efc_J[nr * nv + k] = T(0);
      for (int side = 0; side < 2; ++side) {
        const int b = side == 0 ? b1 : b2;
        const Vec3<T> p = side == 0 ? p1 : p2;
        const T sign = side == 0 ? T(1) : T(-1);
        for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i]) {
          const Vec3<T> col = point_jacobian_col(m, d, b, p, i);
          d.efc_J[nr * nv + i] += sign * col.x;
          d.efc_J[(nr + 1) * nv + i] += sign * col.y;
          d.efc_J[(nr + 2) * nv + i] += sign * col.z;
        }
      }
      const T pos[3] = {dif.x, dif.y, dif.z};
      const T dist = m_sqrt(dot(dif, dif));
      const T dA = m.body_invweight0[b1] + m.body_invweight0[b2];
      for (int k = 0; k < 3; ++k) finish_row(m, d, nr + k, pos[k], dA, owner, sp, false, dist);
      const Vec3<T> jdv = point_jacdot_qvel(m, d, b1, p1) - point_jacdot_qvel(m, d, b2, p2);
      d.efc[nr * kEfcStride + kEfcAref] -= jdv.x;
      d.efc[(nr + 1) * kEfcStride + kEfcAref] -= jdv.y;
      d.efc[(nr + 2) * kEfcStride + kEfcAref] -= jdv.z;
      nr += 3;
    } else {
      if (nr + 1 > m.nefc_max) break;
      const int j1 = m.eq_obj1id[e], j2 = m.eq_obj2id[e];
      const int dof1 = m.jnt_dofadr[j1], q1 = m.jnt_qposadr[j1];
      T* J = d.efc_J + nr * nv;
      for (int i = 0; i < nv; ++i) J[i] = T(0);
      J[dof1] = T(1);
      T pos = d.qpos[q1] - m.qpos0[q1] - data[0];
      T dA = m.dof_invweight0[dof1];
      if (j2 >= 0) {
        const int dof2 = m.jnt_dofadr[j2], q2 = m.jnt_qposadr[j2];
        const T x = d.qpos[q2] - m.qpos0[q2];
        pos -= data[1] * x + data[2] * x * x + data[3] * x * x * x + data[4] * x * x * x * x;
        J[dof2] -= data[1] + T(2) * data[2] * x + T(3) * data[3] * x * x + T(4) * data[4] * x * x * x;
        dA += m.dof_invweight0[dof2];
      }
      finish_row(m, d, nr, pos, dA, owner, sp, false, pos);
      ++nr;
    }
  }
  return nr - start;
}

}  // namespace constraint_detail

// MuJoCo's joint-level actuator force limits (actuatorfrcrange): qfrc_actuator at the dofs of a
// joint with jnt_actfrclimited clamped to jnt_actfrcrange (after actuator_forces).
template <class T>
RLT_HD void clamp_joint_actuator_forces(const ModelView<T>& m, const DataView<T>& d) {
  for (int j = 0; j < m.njnt; ++j) {
    if (!m.jnt_actfrclimited[j]) continue;
    const int t = m.jnt_type[j], n = t == kJointFree ? 6 : t == kJointBall ? 3 : 1;
    const T lo = m.jnt_actfrcrange[2 * j], hi = m.jnt_actfrcrange[2 * j + 1];
    for (int k = 0; k < n; ++k) {
      T& f = d.qfrc_actuator[m.jnt_dofadr[j] + k];
      f = f < lo ? lo : f > hi ? hi : f;
    }
  }
}

// Builds the rows for the current state (needs kinematics, com quantities, the contact list and M
// factored without implicit damping); returns their number (also in d.nefc). MuJoCo's order:
// friction loss, limits, contacts.
template <class T>
RLT_HD int constraint_rows(const ModelView<T>& m, const DataView<T>& d, T h) {
  using namespace constraint_detail;
  const int nv = m.nv;
  int nr = 0;
  nr += equality_rows(m, d, h, nr);
  for (int dof = 0; dof < nv; ++dof) {
    if (!(m.dof_frictionloss[dof] > T(0)) || nr >= m.nefc_max) continue;
    T* J = d.efc_J + nr * nv;
    for (int i = 0; i < nv; ++i) J[i] = T(0);
    J[dof] = T(1);
    const SolParams<T> sp = sol_params(m, m.dof_solref + 2 * dof, m.dof_solimp + 5 * dof, h);
    finish_row(m, d, nr, T(0), m.dof_invweight0[dof], T(-2 - dof), sp, true, T(0));
    ++nr;
  }
  for (int j = 0; j < m.njnt; ++j) {
    if (!m.jnt_limited[j] || (m.jnt_type[j] != kJointHinge && m.jnt_type[j] != kJointSlide)) continue;
    const int dof = m.jnt_dofadr[j];
    const T q = d.qpos[m.jnt_qposadr[j]], lo = m.jnt_range[2 * j], hi = m.jnt_range[2 * j + 1];
    const T margin = m.jnt_margin[j];
    for (int side = 0; side < 2; ++side) {  // lower, then upper (MuJoCo's order)
      const T dist = side == 0 ? q - lo : hi - q;
      if (!(dist < margin) || nr >= m.nefc_max) continue;
      T* J = d.efc_J + nr * nv;
      for (int i = 0; i < nv; ++i) J[i] = T(0);
      J[dof] = side == 0 ? T(1) : T(-1);
      const SolParams<T> sp = sol_params(m, m.jnt_solref + 2 * j, m.jnt_solimp + 5 * j, h);
      const T r = margin == T(0) ? dist : dist - margin;
      finish_row(m, d, nr, r, m.dof_invweight0[dof], T(-1), sp, false, r);
      ++nr;
    }
  }
  const int ncon = static_cast<int>(d.ncon[0]);
  for (int c = 0; c < ncon; ++c) {
    T* con = d.contact + kContactStride * c;
    con[kConForce] = con[kConActive] = T(0);
    con[kConFriction] = con[kConFriction + 1] = con[kConFriction + 2] = T(0);
    const int g1 = static_cast<int>(con[kConGeom1]), g2 = static_cast<int>(con[kConGeom2]);
    const ContactParams<T> cp = contact_params(m, g1, g2);
    con[kConMu] = cp.mu_raw;
    // depth: how far inside the active margin (MuJoCo 3's includemargin is the margin itself: a
    // geom gap only lists contacts beyond it, excluded, which make no row here either)
    const T depth = con[kConDepth];
    const int edges = contact_edges(cp);
    const T mu = cp.mu;
    // (nr + edges never exceeds nefc_max: constraint_capacity counts 4 rows for every contact the
    // model's pairs can make; the check only keeps a broken invariant from writing out of bounds.)
    if (!(depth > T(0)) || nr + edges > m.nefc_max) continue;
    const int b1 = m.geom_bodyid[g1], b2 = m.geom_bodyid[g2];
    const Vec3<T> p = Vec3<T>::load(con + kConPos), n = Vec3<T>::load(con + kConNormal);
    Vec3<T> t1, t2;
    contact_frame(m, d, con, &t1, &t2);
    for (int k = 0; k < edges; ++k)
      for (int i = 0; i < nv; ++i) d.efc_J[(nr + k) * nv + i] = T(0);
    for (int side = 0; side < 2; ++side) {
      const int b = side == 0 ? b2 : b1;
      const T sign = side == 0 ? T(1) : T(-1);
      for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i]) {
        const Vec3<T> col = point_jacobian_col(m, d, b, p, i);
        const T jn = sign * dot(n, col);
        if (edges == 1) {
          d.efc_J[nr * nv + i] += jn;
          continue;
        }
        const T j1 = sign * mu * dot(t1, col), j2 = sign * mu * dot(t2, col);
        d.efc_J[nr * nv + i] += jn + j1;
        d.efc_J[(nr + 1) * nv + i] += jn - j1;
        d.efc_J[(nr + 2) * nv + i] += jn + j2;
        d.efc_J[(nr + 3) * nv + i] += jn - j2;
      }
    }
    // diagApprox: the normal's t = invweight(b1) + invweight(b2); a pyramid edge's MuJoCo's
    // 2 mu^2 (t + mu^2 t) / impratio (R of the friction directions = R of the normal / impratio)
    const T t = m.body_invweight0[b1] + m.body_invweight0[b2];
    T diag_approx = edges == 1 ? t : T(2) * mu * mu * (t + mu * mu * t);
    if (edges == 4 && m.impratio != T(1)) diag_approx = diag_approx / max_(T(kMinVal), m.impratio);
    const SolParams<T> sp = sol_params(m, cp.ref, cp.imp, h);
    for (int k = 0; k < edges; ++k) finish_row(m, d, nr + k, -depth, diag_approx, T(c), sp, false, -depth);
    nr += edges;
  }
  d.nefc[0] = T(nr);
  return nr;
}

// The constraint forces by projected Gauss-Seidel (see the header): on entry d.qacc_smooth holds
// M^-1 f_smooth; on exit each row's force, d.qacc = a0 + M^-1 J^T f and d.qfrc_constraint = J^T f.
// Returns the sweeps it took.
template <class T>
RLT_HD int constraint_solve(const ModelView<T>& m, const DataView<T>& d, int nr) {
  using namespace constraint_detail;
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i) d.qacc[i] = d.qacc_smooth[i], d.qfrc_constraint[i] = T(0);
  T scale = T(0);
  for (int r = 0; r < nr; ++r) {
    const T* J = d.efc_J + r * nv;
    T a0 = T(0);
    for (int i = 0; i < nv; ++i) a0 += J[i] * d.qacc_smooth[i];
    const T g = abs_(a0 - d.efc[r * kEfcStride + kEfcAref]);
    scale = g > scale ? g : scale;
  }
  // (floored at 1e-6 m/s^2, so rounding noise cannot keep a problem already solved at f = 0 going)
  const T stop = tolerance<T>() * (scale > T(1e-6) ? scale : T(1e-6));
  int sweep = 0;
  while (nr > 0 && sweep < max_sweeps<T>()) {
    ++sweep;
    T largest = T(0);
    for (int r = 0; r < nr; ++r) {
      const T* J = d.efc_J + r * nv;
      const T* MiJ = d.efc_MiJ + r * nv;
      T* e = d.efc + r * kEfcStride;
      T res = e[kEfcR] * e[kEfcForce] - e[kEfcAref];
      for (int i = 0; i < nv; ++i) res += J[i] * d.qacc[i];
      T f = e[kEfcForce] - res / e[kEfcDiag];
      const int fdof = friction_dof(static_cast<double>(e[kEfcOwner]));
      if (fdof >= 0) {  // friction loss: |f| <= frictionloss
        const T fl = m.dof_frictionloss[fdof];
        f = f > fl ? fl : f < -fl ? -fl : f;
      } else if (equality_row(static_cast<double>(e[kEfcOwner]))) {
        // equality: unbounded
      } else {
        f = f > T(0) ? f : T(0);
      }
      const T df = f - e[kEfcForce];
      if (df == T(0)) continue;
      e[kEfcForce] = f;
      for (int i = 0; i < nv; ++i) d.qacc[i] += df * MiJ[i];
      const T moved = abs_(df) * e[kEfcDiag];
      largest = moved > largest ? moved : largest;
    }
    if (!(largest > stop)) break;
  }
  // qacc afresh from the final forces (the sweeps' running updates accumulate rounding), so that it
  // pairs with qfrc_constraint = J^T f exactly as far as M^-1 J^T does.
  for (int i = 0; i < nv; ++i) d.qacc[i] = d.qacc_smooth[i];
  for (int r = 0; r < nr; ++r) {
    const T* J = d.efc_J + r * nv;
    const T* MiJ = d.efc_MiJ + r * nv;
    const T f = d.efc[r * kEfcStride + kEfcForce];
    if (f == T(0)) continue;
    for (int i = 0; i < nv; ++i) d.qfrc_constraint[i] += f * J[i], d.qacc[i] += f * MiJ[i];
  }
  return sweep;
}

// Per contact, from the rows' forces: the normal force, whether it pushes, the friction force.
template <class T>
RLT_HD void constraint_contact_forces(const ModelView<T>& m, const DataView<T>& d, int nr) {
  int r = 0;
  while (r < nr) {
    const T owner = d.efc[r * kEfcStride + kEfcOwner];
    if (owner < T(0)) {
      ++r;
      continue;
    }
    T* con = d.contact + kContactStride * static_cast<int>(owner);
    int edges = 0;
    while (r + edges < nr && d.efc[(r + edges) * kEfcStride + kEfcOwner] == owner) ++edges;
    const T* f = d.efc + r * kEfcStride + kEfcForce;
    const T mu =
        constraint_detail::contact_params(m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2])).mu;
    T fn = f[0];
    Vec3<T> ft = Vec3<T>::zero();
    if (edges == 4) {
      Vec3<T> t1, t2;
      constraint_detail::contact_frame(m, d, con, &t1, &t2);
      fn = f[0] + f[kEfcStride] + f[2 * kEfcStride] + f[3 * kEfcStride];
      ft = (mu * (f[0] - f[kEfcStride])) * t1 + (mu * (f[2 * kEfcStride] - f[3 * kEfcStride])) * t2;
    }
    con[kConForce] = fn;
    con[kConActive] = fn > T(0) ? T(1) : T(0);
    ft.store(con + kConFriction);
    r += edges;
  }
}

// The constrained acceleration of one substep (physics_substep with soft constraints; smooth
// forces, actuator forces and the contact list done): d.qacc for the Euler update.
template <class T>
RLT_HD void soft_constraint_acceleration(const ModelView<T>& m, const DataView<T>& d, T h, T hd) {
  factor_mass_load(m, d, T(0));
  factor_mass_eliminate(m, d);
  for (int i = 0; i < m.nv; ++i)
    d.qacc_smooth[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
  solve_mass(m, d, d.qacc_smooth);
  const int nr = constraint_rows(m, d, h);
  constraint_solve(m, d, nr);
  constraint_contact_forces(m, d, nr);
  bool damped = false;
  for (int i = 0; i < m.nv && hd > T(0); ++i) damped = damped || m.dof_damping[i] != T(0);
  if (!damped) return;  // qacc = a0 + M^-1 J^T f already
  factor_mass_load(m, d, hd);
  factor_mass_eliminate(m, d);
  for (int i = 0; i < m.nv; ++i)
    d.qacc[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] + d.qfrc_constraint[i] - d.qfrc_bias[i];
  solve_mass(m, d, d.qacc);
}

// MuJoCo's body_invweight0 (translational) and dof_invweight0 at qpos0 (see ModelView), into the
// view's own block `reals`. Host code. Computed once for the nominal model: domain randomization of
// masses (envs' dr_added_mass) leaves them as they are, as MuJoCo does without a new mj_setConst.
template <class T>
void set_invweight0(const ModelView<T>& view, std::vector<T>& reals) {
  const ModelOffsets o = model_offsets(view.nq, view.nv, view.nbody, view.njnt, view.ngeom, view.nsite, view.nu,
                                       view.neq, view.nsensor, view.npair);
  const int nv = view.nv;
  std::vector<T> row(static_cast<size_t>(data_size(view)), T(0));
  const DataView<T> d = data_view(view, row.data());
  reset_data(view, d);
  kinematics(view, d);
  com_position(view, d);
  mass_matrix(view, d);
  factor_mass_load(view, d, T(0));
  factor_mass_eliminate(view, d);
  std::vector<T> jr(static_cast<size_t>(nv)), x(static_cast<size_t>(nv));
  for (int b = 1; b < view.nbody; ++b) {
    const Vec3<T> com = Vec3<T>::load(d.xipos + 3 * b);
    T sum = T(0);
    for (int k = 0; k < 3; ++k) {
      const Vec3<T> axis{k == 0 ? T(1) : T(0), k == 1 ? T(1) : T(0), k == 2 ? T(1) : T(0)};
      for (int i = 0; i < nv; ++i) jr[static_cast<size_t>(i)] = T(0);
      for (int i = last_dof(view, b); i >= 0; i = view.dof_parentid[i])
        jr[static_cast<size_t>(i)] = dot(axis, point_jacobian_col(view, d, b, com, i));
      x = jr;
      solve_mass(view, d, x.data());
      for (int i = 0; i < nv; ++i) sum += jr[static_cast<size_t>(i)] * x[static_cast<size_t>(i)];
    }
    reals[static_cast<size_t>(o.body_invweight0 + b)] = sum / T(3);
  }
  for (int i = 0; i < nv; ++i) {
    for (int k = 0; k < nv; ++k) x[static_cast<size_t>(k)] = T(k == i ? 1 : 0);
    solve_mass(view, d, x.data());
    reals[static_cast<size_t>(o.dof_invweight0 + i)] = x[static_cast<size_t>(i)];
  }
  // As MuJoCo: a free joint's three translational and three rotational dofs each share their mean,
  // a ball's three dofs theirs.
  for (int j = 0; j < view.njnt; ++j) {
    const int type = view.jnt_type[j], adr = view.jnt_dofadr[j];
    for (int g = 0; g < (type == kJointFree ? 2 : type == kJointBall ? 1 : 0); ++g) {
      T* w = reals.data() + o.dof_invweight0 + adr + 3 * g;
      const T mean = (w[0] + w[1] + w[2]) / T(3);
      w[0] = w[1] = w[2] = mean;
    }
  }
}

}  // namespace rlt
