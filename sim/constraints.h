// Soft constraints (DESIGN.md D3), MuJoCo's law for contacts and joint limits: the only contact and
// limit law, for every model (the spring-damper law that came before it parted from MuJoCo by up to
// 30% in how far a gait carries and was removed; docs/ARCHITECTURE.md).
// Single source: RLT_HD, no std::, no allocation; the rows live in the env's DataView (efc_*).
//
// Rows (MuJoCo's order: limits, then contacts), each a Jacobian J_r (1 x nv) and a distance r_r
// (< 0: violated):
//   limit    a limited hinge or slide beyond its range: J = +e_dof, r = q - lo (below), or
//            J = -e_dof, r = hi - q (above)
//   contact  a candidate within its active margin (depth > 0; sim/contact.h): r = -depth and, for a
//            pair of condim 3, the four edges of MuJoCo's pyramidal cone (mu at least 1e-5,
//            MuJoCo's mjMINMU, so friction 0 is an almost rigid pyramid there too),
//            J = (n +- mu t1)^T Jp, (n +- mu t2)^T Jp (Jp: the relative point Jacobian of geom 2's
//            body against geom 1's, t1, t2 MuJoCo's tangent frame for n, mju_makeFrame); without
//            friction (condim 1) the normal alone. condim 4 and 6 are refused (the MJCF compiler;
//            HostModel::check for models built in code).
// Solved (MuJoCo's forward dynamics with its default solref 0.02 1 and solimp 0.9 0.95 0.001 0.5 2):
//   a0 = M^-1 f_smooth (the smooth acceleration, M without the implicit damping), then the forces
//   f >= 0 minimizing 1/2 f^T (A + R) f + f^T (J a0 - aref), A = J M^-1 J^T, with per row
//     impedance  d(|r|) = dmin + (dmax - dmin) y(|r| / width), y(x) = 2 x^2 below 1/2, 1 - 2 (1 - x)^2 above, 1 past 1
//     reference  aref = -B J v - K d r, K = 1 / (dmax^2 tc^2), B = 2 / (dmax tc), tc = max(0.02, 2 h)
//     regularizer R = (1 - d) / d * diagApprox, diagApprox MuJoCo's: dof_invweight0 for a limit,
//                 2 mu^2 (1 + mu^2) (body_invweight0[b1] + body_invweight0[b2]) for a pyramid edge
//                 (the normal's t alone without friction)
//   by projected Gauss-Seidel (each row in turn, f_r <- max(0, f_r - residual_r / (A_rr + R_r)),
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

// MuJoCo's defaults: solref (timeconst, dampratio) and solimp (dmin, dmax, width, midpoint, power).
constexpr double kTimeconst = 0.02, kDampratio = 1.0;
constexpr double kDmin = 0.9, kDmax = 0.95, kWidth = 0.001;  // midpoint 0.5, power 2

template <class T>
RLT_HD RLT_INLINE T abs_(T x) { return x < T(0) ? -x : x; }

// Largest force change per sweep, relative to the largest |J a0 - aref|, that ends the solve; and
// the most sweeps. float keeps ~7 digits, so it stops earlier (measured on the ant under random
// controls: 8.7 sweeps on average, at most 80; halfcheetah 39, at most 144); double, for the
// comparisons with MuJoCo, goes on to 1e-10 (ant 26 on average, halfcheetah 91, up to ~400).
template <class T>
RLT_HD RLT_INLINE T tolerance() { return sizeof(T) == sizeof(float) ? T(1e-5) : T(1e-10); }
template <class T>
RLT_HD RLT_INLINE int max_sweeps() { return sizeof(T) == sizeof(float) ? 200 : 1000; }

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

// Rows of a contact: 4 pyramid edges for a pair of condim 3 (the larger of the two geoms'), 1 for
// condim 1; and the friction coefficient of the edges, at least MuJoCo's mjMINMU.
template <class T>
RLT_HD RLT_INLINE int contact_edges(const ModelView<T>& m, const T* con) {
  const int c1 = m.geom_condim[static_cast<int>(con[kConGeom1])], c2 = m.geom_condim[static_cast<int>(con[kConGeom2])];
  return (c1 > c2 ? c1 : c2) >= 3 ? 4 : 1;
}
template <class T>
RLT_HD RLT_INLINE T pyramid_mu(const T* con) { return con[kConMu] > T(1e-5) ? con[kConMu] : T(1e-5); }

// Fills the row quantities of row r from its Jacobian (already in efc_J; M factored without the
// implicit damping): M^-1 J^T, A_rr, aref, R.
template <class T>
RLT_HD void finish_row(const ModelView<T>& m, const DataView<T>& d, int r, T dist, T diag_approx, T owner, T h) {
  const int nv = m.nv;
  const T* J = d.efc_J + r * nv;
  T* MiJ = d.efc_MiJ + r * nv;
  for (int i = 0; i < nv; ++i) MiJ[i] = J[i];
  solve_mass(m, d, MiJ);
  T A = T(0), vel = T(0);
  for (int i = 0; i < nv; ++i) A += J[i] * MiJ[i], vel += J[i] * d.qvel[i];
  const T x0 = abs_(dist) / T(kWidth), x = x0 < T(1) ? x0 : T(1);
  const T y = x <= T(0.5) ? T(2) * x * x : T(1) - T(2) * (T(1) - x) * (T(1) - x);
  const T dimp = T(kDmin) + y * T(kDmax - kDmin);
  const T tc = T(kTimeconst) > T(2) * h ? T(kTimeconst) : T(2) * h;
  const T K = T(1) / (T(kDmax) * T(kDmax) * tc * tc * T(kDampratio) * T(kDampratio)), B = T(2) / (T(kDmax) * tc);
  const T R = (T(1) - dimp) / dimp * diag_approx;
  T* e = d.efc + r * kEfcStride;
  e[kEfcAref] = -B * vel - K * dimp * dist;
  e[kEfcR] = R > T(1e-15) ? R : T(1e-15);
  e[kEfcDiag] = A + e[kEfcR];
  e[kEfcForce] = T(0);
  e[kEfcOwner] = owner;
}

}  // namespace constraint_detail

// Builds the rows for the current state (needs kinematics, com quantities, the contact list and M
// factored without implicit damping); returns their number (also in d.nefc).
template <class T>
RLT_HD int constraint_rows(const ModelView<T>& m, const DataView<T>& d, T h) {
  using namespace constraint_detail;
  const int nv = m.nv;
  int nr = 0;
  for (int j = 0; j < m.njnt; ++j) {
    if (!m.jnt_limited[j] || (m.jnt_type[j] != kJointHinge && m.jnt_type[j] != kJointSlide)) continue;
    const int dof = m.jnt_dofadr[j];
    const T q = d.qpos[m.jnt_qposadr[j]], lo = m.jnt_range[2 * j], hi = m.jnt_range[2 * j + 1];
    if (!(q < lo) && !(q > hi)) continue;
    if (nr >= m.nefc_max) break;
    T* J = d.efc_J + nr * nv;
    for (int i = 0; i < nv; ++i) J[i] = T(0);
    J[dof] = q < lo ? T(1) : T(-1);
    finish_row(m, d, nr, q < lo ? q - lo : hi - q, m.dof_invweight0[dof], T(-1), h);
    ++nr;
  }
  const int ncon = static_cast<int>(d.ncon[0]);
  for (int c = 0; c < ncon; ++c) {
    T* con = d.contact + kContactStride * c;
    con[kConForce] = con[kConActive] = T(0);
    con[kConFriction] = con[kConFriction + 1] = con[kConFriction + 2] = T(0);
    const T depth = con[kConDepth];
    const int edges = contact_edges(m, con);
    const T mu = edges == 4 ? pyramid_mu(con) : T(0);
    // (nr + edges never exceeds nefc_max: constraint_capacity counts 4 rows for every contact the
    // model's pairs can make; the check only keeps a broken invariant from writing out of bounds.)
    if (!(depth > T(0)) || nr + edges > m.nefc_max) continue;
    const int b1 = m.geom_bodyid[static_cast<int>(con[kConGeom1])], b2 = m.geom_bodyid[static_cast<int>(con[kConGeom2])];
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
    const T t = m.body_invweight0[b1] + m.body_invweight0[b2];
    const T diag_approx = edges == 1 ? t : T(2) * mu * mu * (t + mu * mu * t);
    for (int k = 0; k < edges; ++k) finish_row(m, d, nr + k, -depth, diag_approx, T(c), h);
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
      f = f > T(0) ? f : T(0);
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
    const T mu = constraint_detail::pyramid_mu(con);
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
  const ModelOffsets o = model_offsets(view.nq, view.nv, view.nbody, view.njnt, view.ngeom, view.nsite, view.nu, view.nsensor);
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
