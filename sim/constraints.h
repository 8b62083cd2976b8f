// Soft constraints (DESIGN.md D3), MuJoCo's law for contacts and joint limits: the only contact and
// limit law, for every model (the spring-damper law that came before it parted from MuJoCo by up to
// 30% in how far a gait carries and was removed; docs/ARCHITECTURE.md).
// Single source: RLT_HD, no std::, no allocation; the rows live in the env's DataView (efc_*).
//
// Rows (MuJoCo's order: equality, friction loss, limits, contacts), each a Jacobian J_r (1 x nv)
// and a distance r_r (< 0: violated):
//   equality a joint equality: J = e_dof1 - poly'(x) e_dof2, r = q1 - q1_0 - poly(x), x = q2 - q2_0,
//            force unbounded (equality_rows; connect rows too: 3, p1 - p2, aref less J' qvel; weld
//            rows 6, those 3 and 3 of the frames' relative rotation (weld_rows); a tendon equality
//            the same as a joint's with tendon lengths L - tendon_length0 and J = ten_J, sim/tendon.h)
//   friction a dof with frictionloss > 0: J = e_dof, r = 0, no stiffness (K = 0), the force bounded
//            by |f| <= frictionloss (dof_solref/dof_solimp: the joint's solreffriction/solimpfriction)
//   limit    a limited hinge or slide within jnt_margin of its range: J = +e_dof, r = q - lo - margin
//            (below), or J = -e_dof, r = hi - q - margin (above) (jnt_solref/jnt_solimp); a limited
//            tendon the same with its length and J = +-ten_J (tendon_solref_lim/_solimp_lim); a
//            tendon's friction loss J = ten_J, bounded by tendon_frictionloss
//   contact  a candidate within its active margin (depth > 0; sim/contact.h): r = -depth and, for a
//            pair of condim 3, the four edges of MuJoCo's pyramidal cone (mu at least 1e-5,
//            MuJoCo's mjMINMU, so friction 0 is an almost rigid pyramid there too),
//            J = (n +- mu t1)^T Jp, (n +- mu t2)^T Jp (Jp: the relative point Jacobian of geom 2's
//            body against geom 1's, t1, t2 MuJoCo's tangent frame for n, mju_makeFrame); without
//            friction (condim 1) the normal alone. condim 4 adds the pair n +- mu_torsion (n^T Jr),
//            condim 6 also n +- mu_roll (t1^T Jr), (t2^T Jr) (Jr: the relative angular Jacobian),
//            2 (condim - 1) edges in all. With <option cone="elliptic"> (m.cone) a contact has
//            condim rows instead, the frame's own: n^T Jp, t1^T Jp, t2^T Jp, then n, t1, t2 on Jr,
//            its forces in the cone f_n >= |(f_j / mu_j)| (MuJoCo's mjCNSTR_CONTACT_ELLIPTIC).
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
//                 impratio for a pyramid edge whatever its condim (the normal's t alone without
//                 friction); elliptic: t for the normal, t / impratio for the sliding rows and
//                 mu_1^2 / mu_j^2 times that for torsion and rolling; the friction rows without
//                 stiffness (K = 0, aref = -B J v)
//   by one of two solvers of the same strictly convex problem (R > 0), so the answer is MuJoCo's
//   (its Newton solver's) up to the tolerance (tests/sim/test_constraints.cpp compares
//   qfrc_constraint state by state; SoftConstraintsNewton compares the two solvers):
//   * Newton (newton_solve, MuJoCo's mj_solNewton), in double for every model (the MuJoCo
//     comparisons) and in float where ModelView::use_newton says (sim/model_view.h: every model
//     whose tree factorization is cheap, which is every shipped robot, and every model with
//     elliptic cones, condim 4/6 or a weld): on the primal problem, the acceleration a minimizing
//     1/2 (a - a0)^T M (a - a0) + sum_r s_r(J_r a - aref_r) (s_r the row's soft cost: 1/2 x^2 / R
//     where it pushes, linear past a friction loss's bound, MuJoCo's three zones of an elliptic
//     cone), from a0: steps -H^-1 g with H = M + J^T D J over the rows that push and an exact line
//     search, until no row changes piece (the last step was then exact: float stops there or on
//     MuJoCo's tolerance test, double refines with the same factors until rounding). H keeps qM's sparsity (a row's J is nonzero on its bodies'
//     chains to the root, one path for a contact with the world, a limit or a friction loss) and
//     factors by the tree's LTDL, and J's products run over each row's chain; while a row that
//     couples two branches pushes (a contact between two free bodies or two limbs, a connect, a
//     tendon across them) that iteration's H fills in outside qM's pattern and factors within its
//     envelope (envelope_ltdl_factor: a pile of boxes' band), its rows' products and J^T D J over
//     their two paths (row_support). H's tree factors follow the rows that change piece by
//     rank-one updates along their chains (tree_ltdl_update), the first from M's (qLD), while that
//     costs less than factoring afresh. G1: ~2.6 line searches, 0.02 fresh factorizations per substep.
//     qacc is Newton's iterate (MuJoCo's), qfrc_constraint = J^T f(J qacc - aref).
//   * projected Gauss-Seidel on the dual (each row in turn, f_r <- max(0, f_r - residual_r /
//     (A_rr + R_r)), a friction-loss row clamped to [-frictionloss, frictionloss] instead, the
//     acceleration a = a0 + M^-1 J^T f updated with it), from f = 0, until no row's force moves by
//     more than a tolerance (float 1e-5) of the largest |J a0 - aref| in a sweep. An elliptic
//     contact's rows are one block (elliptic_update: a step along its force, or from rest along the
//     projected steepest descent, then the friction with the normal held, MuJoCo's QCQP).
//     qfrc_constraint = J^T f.
//   Then, as MuJoCo's Euler with eulerdamp, the step's acceleration solves (M + h D) qacc =
//   f_smooth + qfrc_constraint.
// Per contact it leaves its normal force (kConForce), whether that is positive (kConActive) and the
// friction force on geom 2's body (kConFriction, world), which contact_external_forces reads (with
// contact_torque's torsional and rolling torque for condim 4 and 6, from kConTorqueRow).
// Cost per substep: one extra factorization of M; Newton per iteration a solve with H's factors,
// rank-one updates of them for the rows that changed piece (or, rarely, a fresh factorization) and
// products over the rows' chains; Gauss-Seidel per row z = D^-1/2 L^-T J^T (factor_row: nonzero
// only on the dof chains the row touches, so A = Z Z^T and the acceleration never need M^-1 J^T),
// and per sweep two products over each row's nonzero entries of z (G1: ~41 rows of ~11 entries of
// nv 35, ~60 sweeps).
#pragma once

#include <cmath>
#include <vector>

#include "sim/common.h"
#include "sim/contact.h"
#include "sim/dynamics.h"
#include "sim/tendon.h"

namespace rlt {

// Fields of a row in DataView::efc (kEfcStride scalars each): aref, R, A_rr + R, the force, its
// owner (a contact's index, or a code: see kEqOwner); the nonzero entries of its z (efc_Z); and for
// the solve, the bounds on its force and its residual J a0 - aref at f = 0 (constraint_solve).
enum EfcField : int {
  kEfcAref = 0,
  kEfcR = 1,
  kEfcDiag = 2,
  kEfcForce = 3,
  kEfcOwner = 4,
  kEfcNnz = 5,
  kEfcLo = 6,
  kEfcHi = 7,
  kEfcRes0 = 8
};

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
// condim, friction, solref and solimp; at equal priority condim and each friction coefficient are
// the larger, solref and solimp mixed by solmix (a direct solref: the smaller of each). (gap: see
// constraint_rows.)
template <class T>
struct ContactParams {
  int condim;
  T mu_raw;  // sliding friction, 0 for condim 1
  T mu;      // the same, at least MuJoCo's mjMINMU 1e-5 where it acts
  // MuJoCo's 5 friction coefficients of a contact, each at least mjMINMU: sliding (twice, t1 and t2),
  // torsional (about n; condim 4 and 6), rolling (twice, about t1 and t2; condim 6)
  T fr[5];
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
    for (int i = 0; i < 5; ++i) p.fr[i] = max_(m.pair_friction[5 * q + i], T(1e-5));  // its 5 coefficients
    return p;
  }
  T f3[3];
  const int pr1 = m.geom_priority[g1], pr2 = m.geom_priority[g2];
  if (pr1 != pr2) {
    const int g = pr1 > pr2 ? g1 : g2;
    p.condim = m.geom_condim[g];
    p.mu = m.geom_friction[3 * g];
    for (int i = 0; i < 3; ++i) f3[i] = m.geom_friction[3 * g + i];
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
    for (int i = 0; i < 3; ++i) f3[i] = max_(m.geom_friction[3 * g1 + i], m.geom_friction[3 * g2 + i]);
  }
  p.mu_raw = p.condim >= 3 ? p.mu : T(0);
  p.mu = p.condim >= 3 ? max_(p.mu, T(1e-5)) : T(0);
  p.fr[0] = p.fr[1] = max_(f3[0], T(1e-5));
  p.fr[2] = max_(f3[1], T(1e-5));
  p.fr[3] = p.fr[4] = max_(f3[2], T(1e-5));
  return p;
}

// A contact's dimension (condim 1, 3, 4 or 6) and its rows: the normal alone for condim 1; else the
// pyramid's 2 (condim - 1) edges, or the elliptic cone's condim rows (m.cone).
template <class T>
RLT_HD RLT_INLINE int contact_dim(const ContactParams<T>& p) {
  return p.condim >= 3 ? p.condim : 1;
}
template <class T>
RLT_HD RLT_INLINE int contact_row_count(const ModelView<T>& m, int dim) {
  return dim == 1 ? 1 : m.cone == kConeElliptic ? dim : 2 * (dim - 1);
}

// A small symmetric positive definite system (n <= 6, row-major): H = L L^T in place (lower
// triangle), then x <- H^-1 x, or x <- L^-1 x (half).
template <class T>
RLT_HD void small_cholesky(T* H, int n) {
  for (int j = 0; j < n; ++j) {
    T s = H[j * n + j];
    for (int k = 0; k < j; ++k) s -= H[j * n + k] * H[j * n + k];
    const T ljj = m_sqrt(max_(s, T(kMinVal)));
    H[j * n + j] = ljj;
    for (int i = j + 1; i < n; ++i) {
      T v = H[i * n + j];
      for (int k = 0; k < j; ++k) v -= H[i * n + k] * H[j * n + k];
      H[i * n + j] = v / ljj;
    }
  }
}
template <class T>
RLT_HD void small_cholesky_solve(const T* L, T* x, int n, bool half) {
  for (int i = 0; i < n; ++i) {
    T v = x[i];
    for (int k = 0; k < i; ++k) v -= L[i * n + k] * x[k];
    x[i] = v / L[i * n + i];
  }
  if (half) return;
  for (int i = n - 1; i >= 0; --i) {
    T v = x[i];
    for (int k = i + 1; k < n; ++k) v -= L[k * n + i] * x[k];
    x[i] = v / L[i * n + i];
  }
}

// The friction forces of an elliptic contact with its normal force fn fixed (MuJoCo's mju_QCQP):
// y minimizing 1/2 y^T A y + b^T y with sum_j (y_j / mu_j)^2 <= fn^2 (A n x n, n <= 5, symmetric
// positive definite). In z = y / mu the bound is a ball of radius fn: the unconstrained minimum
// if inside, else the point on the sphere where (A' + lambda I) z = -b', lambda > 0 found by Newton
// on 1/|z(lambda)| - 1/fn (Mor\'e and Sorensen's trust-region iteration, monotone from lambda = 0).
template <class T>
RLT_HD void friction_qcqp(const T* A, const T* b, const T* mu, T fn, int n, T* y) {
  T As[25], bs[5], H[25], z[5], q[5];
  for (int i = 0; i < n; ++i) {
    bs[i] = mu[i] * b[i];
    for (int j = 0; j < n; ++j) As[i * n + j] = mu[i] * A[i * n + j] * mu[j];
  }
  const T eps = sizeof(T) == sizeof(float) ? T(1e-6) : T(1e-14);
  T lambda = T(0), norm = T(0);
  for (int iter = 0; iter < 60; ++iter) {
    for (int k = 0; k < n * n; ++k) H[k] = As[k];
    for (int i = 0; i < n; ++i) H[i * n + i] += lambda, z[i] = -bs[i];
    small_cholesky(H, n);
    small_cholesky_solve(H, z, n, false);
    T z2 = T(0);
    for (int i = 0; i < n; ++i) z2 += z[i] * z[i];
    norm = m_sqrt(z2);
    if (!(norm > fn * (T(1) + eps))) break;  // inside (lambda = 0), or on the sphere
    for (int i = 0; i < n; ++i) q[i] = z[i];
    small_cholesky_solve(H, q, n, true);
    T q2 = T(0);
    for (int i = 0; i < n; ++i) q2 += q[i] * q[i];
    lambda += z2 / max_(q2, T(kMinVal)) * (norm - fn) / max_(fn, T(kMinVal));
  }
  const T scale = norm > fn && norm > T(0) ? fn / norm : T(1);  // on the sphere exactly
  for (int i = 0; i < n; ++i) y[i] = mu[i] * (scale * z[i]);
}

// One block update of an elliptic contact's rows (n = condim rows from row r; MuJoCo's mj_solPGS
// elliptic branch): its forces f minimizing the problem with every other row held, subject to
// fn >= 0 and sum_j (f_j / mu_j)^2 <= fn^2, by alternating a step along the force itself (the
// normal alone from fn = 0) and the friction forces with the normal held (friction_qcqp), a few
// passes. res: J a - aref + R f of the rows at the current a and f; A: their A + R block. Writes
// the new forces to f.
template <class T>
RLT_HD void elliptic_block(const T* A, const T* res_in, const T* mu, int n, T* f) {
  T res[6], f0[6], v[6], Av[6], Att[25], bt[5], ft[5];
  for (int j = 0; j < n; ++j) res[j] = res_in[j];
  const int m1 = n - 1;
  for (int pass = 0; pass < 4; ++pass) {
    for (int j = 0; j < n; ++j) f0[j] = f[j];
    if (f[0] < T(kMinVal)) {
      // From rest: along the steepest feasible descent, -res projected onto the cone in coordinates
      // where it is the round one (f_j / mu_j); zero when res is in the dual cone (rest optimal).
      // (The normal alone, MuJoCo's PGS step here, would stay at rest whenever res_n > 0.)
      T vt2 = T(0);
      for (int j = 1; j < n; ++j) v[j] = -mu[j - 1] * res[j], vt2 += v[j] * v[j];
      const T v0 = -res[0], vt = m_sqrt(vt2);
      T d0 = v0, b = T(1);  // the projection (d0, b v_t) in the round coordinates
      if (vt <= -v0) {
        d0 = b = T(0);
      } else if (vt > v0) {
        d0 = T(0.5) * (v0 + vt);
        b = d0 / vt;
      }
      v[0] = d0;
      for (int j = 1; j < n; ++j) v[j] = mu[j - 1] * (b * v[j]);
      T denom = T(0), num = T(0);
      for (int j = 0; j < n; ++j) {
        Av[j] = T(0);
        for (int k = 0; k < n; ++k) Av[j] += A[j * n + k] * v[k];
      }
      for (int j = 0; j < n; ++j) denom += v[j] * Av[j], num += v[j] * res[j];
      const T x = denom >= T(kMinVal) && num < T(0) ? -num / denom : T(0);
      for (int j = 0; j < n; ++j) f[j] = x * v[j];
    } else {  // along the ray f
      T denom = T(0), num = T(0);
      for (int j = 0; j < n; ++j) {
        v[j] = f[j];
        Av[j] = T(0);
        for (int k = 0; k < n; ++k) Av[j] += A[j * n + k] * f[k];
      }
      for (int j = 0; j < n; ++j) denom += v[j] * Av[j], num += v[j] * res[j];
      if (denom >= T(kMinVal)) {
        T x = -num / denom;
        if (f[0] + x * v[0] < T(0)) x = T(-1);
        for (int j = 0; j < n; ++j) f[j] += x * v[j];
      }
    }
    // the friction forces with the normal held: b = res_t + A_tn dfn - A_tt f_t(old)
    if (f[0] < T(kMinVal)) {
      for (int j = 1; j < n; ++j) f[j] = T(0);
    } else {
      for (int j = 0; j < m1; ++j) {
        bt[j] = res[j + 1] + A[(j + 1) * n] * (f[0] - f0[0]);
        for (int k = 0; k < m1; ++k) {
          Att[j * m1 + k] = A[(j + 1) * n + k + 1];
          bt[j] -= Att[j * m1 + k] * f0[k + 1];
        }
      }
      friction_qcqp(Att, bt, mu, f[0], m1, ft);
      for (int j = 0; j < m1; ++j) f[j + 1] = ft[j];
    }
    T change = T(0);
    for (int j = 0; j < n; ++j) {
      const T df = f[j] - f0[j];
      change = max_(change, abs_(df) * A[j * n + j]);
      for (int k = 0; k < n; ++k) res[k] += A[k * n + j] * df;
    }
    if (!(change > T(kMinVal) * (T(1) + abs_(res[0])))) break;
  }
}

// (solves_by_newton and needs_z, which pick the solver and its workspace: sim/model_view.h)

// Row r's z = D^-1/2 L^-T J_r^T (qLD = L^T D L, the factors of M without the implicit damping), kept
// sparse. M^-1 = L^-1 D^-1 L^-T, so J_r M^-1 J_s^T = z_r . z_s: A = J M^-1 J^T = Z Z^T without forming
// M^-1 J^T. L^-T (the first pass of solve_mass) only carries a dof's entry to its ancestors, so z is
// zero off the ancestor chains of J's dofs (a contact's: the chains of its two bodies, ~12 of the
// G1's 35 dofs; a joint limit's or friction loss's: the dof's), and M^-1 J^T, dense, is never
// needed. The nonzero entries go to the front of efc_Z, their dofs (ascending) to efc_Zind, their
// count to kEfcNnz. Returns A_rr = |z|^2.
template <class T>
RLT_HD T factor_row(const ModelView<T>& m, const DataView<T>& d, int r) {
  const int nv = m.nv;
  const T* ld = d.qLD;
  T* z = d.efc_Z + r * nv;
  T* ind = d.efc_Zind + r * nv;
  for (int i = 0; i < nv; ++i) z[i] = d.efc_J[r * nv + i];
  for (int i = nv - 1; i >= 0; --i) {  // L^T y = J^T, from the leaves up, skipping zeros
    const T x = z[i];
    if (x == T(0)) continue;
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) z[j] -= ld[i * nv + j] * x;
  }
  int n = 0;
  T A = T(0);
  for (int i = 0; i < nv; ++i) {  // z = D^-1/2 y, compacted in place (n <= i)
    if (z[i] == T(0)) continue;
    const T v = z[i] * d.qLDiagSqrtInv[i];
    z[n] = v, ind[n] = T(i), A += v * v, ++n;
  }
  d.efc[r * kEfcStride + kEfcNnz] = T(n);
  return A;
}

// z_r . x for a dense nv-vector x (the sparse rows of factor_row), and x += a z_r.
template <class T>
RLT_HD RLT_INLINE T row_dot(const DataView<T>& d, int nv, int r, const T* x) {
  const T* z = d.efc_Z + r * nv;
  const T* ind = d.efc_Zind + r * nv;
  const int n = static_cast<int>(d.efc[r * kEfcStride + kEfcNnz]);
  T s = T(0);
  for (int k = 0; k < n; ++k) s += z[k] * x[static_cast<int>(ind[k])];
  return s;
}
template <class T>
RLT_HD RLT_INLINE void row_axpy(const DataView<T>& d, int nv, int r, T a, T* x) {
  const T* z = d.efc_Z + r * nv;
  const T* ind = d.efc_Zind + r * nv;
  const int n = static_cast<int>(d.efc[r * kEfcStride + kEfcNnz]);
  for (int k = 0; k < n; ++k) x[static_cast<int>(ind[k])] += a * z[k];
}
// z_r . z_s = (J M^-1 J^T)_rs, merging the two rows' dof lists.
template <class T>
RLT_HD T rows_dot(const DataView<T>& d, int nv, int r, int s) {
  const T *zr = d.efc_Z + r * nv, *zs = d.efc_Z + s * nv;
  const T *ir = d.efc_Zind + r * nv, *is = d.efc_Zind + s * nv;
  const int nr = static_cast<int>(d.efc[r * kEfcStride + kEfcNnz]);
  const int ns = static_cast<int>(d.efc[s * kEfcStride + kEfcNnz]);
  T sum = T(0);
  for (int a = 0, b = 0; a < nr && b < ns;) {
    if (ir[a] < is[b]) {
      ++a;
    } else if (is[b] < ir[a]) {
      ++b;
    } else {
      sum += zr[a++] * zs[b++];
    }
  }
  return sum;
}

// Fills the row quantities of row r from its Jacobian (already in efc_J; M factored without the
// implicit damping, qLDiagSqrtInv set): z (factor_row), A_rr, aref, R. dist = pos - margin (< 0:
// violated); friction: a friction-loss row (no stiffness). unit_dof >= 0: J is +-e_unit_dof (a dof's
// friction loss, a joint's limit), and J qvel is that entry's term alone: the sum over every dof
// from +0 adds the others' terms, zeros (for a finite qvel), which leave it as it is (the running
// sum is never -0), so the bits are the same, without 2 nv loads and a chain of nv additions per row.
template <class T>
RLT_HD void finish_row(const ModelView<T>& m, const DataView<T>& d, int r, T dist, T diag_approx, T owner,
                       const SolParams<T>& sp, bool friction, T imp_dist, int unit_dof = -1) {
  const int nv = m.nv;
  const T* J = d.efc_J + r * nv;
  T A = T(0);  // (z only for Gauss-Seidel and noslip)
  if (needs_z(m)) A = factor_row(m, d, r);
  else d.efc[r * kEfcStride + kEfcNnz] = T(0);
  T vel = T(0);
  if (unit_dof >= 0) vel += J[unit_dof] * d.qvel[unit_dof];
  else
    for (int i = 0; i < nv; ++i) vel += J[i] * d.qvel[i];
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
// equality constraint kEqOwner - eq (its force is not bounded), a tendon's friction loss
// kTenFrictionOwner - tendon.
constexpr double kEqOwner = -1e6, kTenFrictionOwner = -2e6;
RLT_HD RLT_INLINE int friction_dof(double owner) {
  return owner <= -2 && owner > kEqOwner + 0.5 ? static_cast<int>(-2 - owner) : -1;
}
RLT_HD RLT_INLINE bool equality_row(double owner) { return owner <= kEqOwner + 0.5 && owner > kTenFrictionOwner + 0.5; }
RLT_HD RLT_INLINE int friction_tendon(double owner) {
  return owner <= kTenFrictionOwner + 0.5 ? static_cast<int>(kTenFrictionOwner - owner) : -1;
}

// A row's force bounds (kEfcLo, kEfcHi; Gauss-Seidel's projection and noslip's): a friction loss
// within +-frictionloss, an equality unbounded, else >= 0.
template <class T>
RLT_HD RLT_INLINE void set_force_bounds(const ModelView<T>& m, T* e) {
  const int fdof = friction_dof(static_cast<double>(e[kEfcOwner]));
  const int ften = friction_tendon(static_cast<double>(e[kEfcOwner]));
  const T fl = fdof >= 0 ? m.dof_frictionloss[fdof] : ften >= 0 ? m.tendon_frictionloss[ften] : T(0);
  const bool eq = equality_row(static_cast<double>(e[kEfcOwner]));
  e[kEfcLo] = fdof >= 0 || ften >= 0 ? -fl : eq ? -T(HUGE_VAL) : T(0);
  e[kEfcHi] = fdof >= 0 || ften >= 0 ? fl : T(HUGE_VAL);
}

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

// The angular part of sum over body b's dof chain of cdof_dot qvel: MuJoCo's mj_jacDot rotational
// Jacobian times qvel (zero for the world).
template <class T>
RLT_HD Vec3<T> body_jacrdot_qvel(const ModelView<T>& m, const DataView<T>& d, int b) {
  Vec3<T> acc = Vec3<T>::zero();
  for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i]) acc += d.qvel[i] * Vec3<T>::load(d.cdof_dot + 6 * i);
  return acc;
}

// MuJoCo's mju_mulQuatAxis (q (0, v)) and mju_derivQuat (0.5 (0, v) q).
template <class T>
RLT_HD RLT_INLINE Quat<T> quat_mul_axis(const Quat<T>& q, const Vec3<T>& v) {
  return quat_mul(q, Quat<T>{T(0), v.x, v.y, v.z});
}
template <class T>
RLT_HD RLT_INLINE Quat<T> quat_deriv(const Quat<T>& q, const Vec3<T>& v) {
  const Quat<T> r = quat_mul(Quat<T>{T(0), v.x, v.y, v.z}, q);
  return {T(0.5) * r.w, T(0.5) * r.x, T(0.5) * r.y, T(0.5) * r.z};
}
template <class T>
RLT_HD RLT_INLINE Quat<T> quat_conj(const Quat<T>& q) {
  return {q.w, -q.x, -q.y, -q.z};
}

// The 3 rows J = Jp(b1, p1) - Jp(b2, p2) of two body points (nv columns each, written from zero),
// and with Jr the 3 rows Jr(b1) - Jr(b2) of the bodies' rotations: connect's and weld's Jacobians.
template <class T>
RLT_HD void point_pair_jacobian(const ModelView<T>& m, const DataView<T>& d, int b1, const Vec3<T>& p1, int b2,
                                const Vec3<T>& p2, T* J, T* Jr) {
  const int nv = m.nv;
  for (int k = 0; k < 3 * nv; ++k) J[k] = T(0);
  if (Jr)
    for (int k = 0; k < 3 * nv; ++k) Jr[k] = T(0);
  for (int side = 0; side < 2; ++side) {
    const int b = side == 0 ? b1 : b2;
    const Vec3<T> p = side == 0 ? p1 : p2;
    const T sign = side == 0 ? T(1) : T(-1);
    for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i]) {
      const Vec3<T> col = point_jacobian_col(m, d, b, p, i);
      J[i] += sign * col.x;
      J[nv + i] += sign * col.y;
      J[2 * nv + i] += sign * col.z;
      if (Jr) {
        Jr[i] += sign * d.cdof[6 * i];
        Jr[nv + i] += sign * d.cdof[6 * i + 1];
        Jr[2 * nv + i] += sign * d.cdof[6 * i + 2];
      }
    }
  }
}

// A weld's 6 rows (MuJoCo's mj_instantiateEquality and mj_Jdotv). Its two frames: body semantics
// (eq_objtype kEqObjBody), eq_data = anchor in body 2's frame (0-2), the point of body 1 kept on it
// (3-5), relpose (6-9: body 2's orientation in body 1's frame), torquescale (10), frame 1 = body 1's
// turned by relpose, frame 2 = body 2's; site semantics (kEqObjSite: eq_obj1id/2id are sites, only
// torquescale read), the sites' frames. Rows 0-2 p1 - p2 with J = Jp(b1, p1) - Jp(b2, p2); rows 3-5
// torquescale times the vector part of conj(q2) q1 (q1, q2 the frames' world quaternions), J column
// 0.5 torquescale vec(conj(q2) (0, Jr1 - Jr2) q1); impedance from the 6 rows' norm; diagApprox the
// two bodies' translational, then rotational invweight0; aref less J' qvel (mj_Jdotv: the anchors'
// velocity-product accelerations, the rotational rows' by the product rule on conj(q2) w q1).
template <class T>
RLT_HD void weld_rows(const ModelView<T>& m, const DataView<T>& d, int e, int nr, const SolParams<T>& sp, T owner) {
  const int nv = m.nv;
  const T* data = m.eq_data + 11 * e;
  const bool sites = m.eq_objtype[e] == kEqObjSite;
  const int o1 = m.eq_obj1id[e], o2 = m.eq_obj2id[e];
  const int b1 = sites ? m.site_bodyid[o1] : o1, b2 = sites ? m.site_bodyid[o2] : o2;
  const Vec3<T> p1 = sites ? Vec3<T>::load(d.site_xpos + 3 * o1) : body_point(d, b1, data + 3);
  const Vec3<T> p2 = sites ? Vec3<T>::load(d.site_xpos + 3 * o2) : body_point(d, b2, data);
  // the frames' orientations q1 = xquat1 r1, q2 = xquat2 r2
  const Quat<T> r1 = Quat<T>::load(sites ? m.site_quat + 4 * o1 : data + 6);
  const Quat<T> xq1 = Quat<T>::load(d.xquat + 4 * b1), xq2 = Quat<T>::load(d.xquat + 4 * b2);
  const Quat<T> q1 = quat_mul(xq1, r1);
  const Quat<T> q2 = sites ? quat_mul(xq2, Quat<T>::load(m.site_quat + 4 * o2)) : xq2;
  const Quat<T> negq2 = quat_conj(q2);
  const Quat<T> err = quat_mul(negq2, q1);
  const T ts = data[10];
  const T pos[6] = {p1.x - p2.x, p1.y - p2.y, p1.z - p2.z, ts * err.x, ts * err.y, ts * err.z};
  T* Jr = d.efc_J + (nr + 3) * nv;  // rows 3-5 hold Jr1 - Jr2 first, then the corrected rows
  point_pair_jacobian(m, d, b1, p1, b2, p2, d.efc_J + nr * nv, Jr);
  for (int i = 0; i < nv; ++i) {
    const Quat<T> q3 = quat_mul(quat_mul_axis(negq2, Vec3<T>{Jr[i], Jr[nv + i], Jr[2 * nv + i]}), q1);
    Jr[i] = T(0.5) * q3.x * ts;
    Jr[nv + i] = T(0.5) * q3.y * ts;
    Jr[2 * nv + i] = T(0.5) * q3.z * ts;
  }
  T norm2 = T(0);
  for (int k = 0; k < 6; ++k) norm2 += pos[k] * pos[k];
  const T dist = m_sqrt(norm2);
  const T dA_t = m.body_invweight0[b1] + m.body_invweight0[b2];
  const T dA_r = m.body_invweight0_rot[b1] + m.body_invweight0_rot[b2];
  for (int k = 0; k < 6; ++k) finish_row(m, d, nr + k, pos[k], k < 3 ? dA_t : dA_r, owner, sp, false, dist);
  // aref less J' qvel: d/dt of J qvel's rotational part 0.5 vec(conj(q2) (w1 - w2) q1) at fixed qvel
  const Vec3<T> jdv = point_jacdot_qvel(m, d, b1, p1) - point_jacdot_qvel(m, d, b2, p2);
  const Vec3<T> w1 = b1 > 0 ? Vec3<T>::load(d.cvel + 6 * b1) : Vec3<T>::zero();
  const Vec3<T> w2 = b2 > 0 ? Vec3<T>::load(d.cvel + 6 * b2) : Vec3<T>::zero();
  const Vec3<T> dw = w1 - w2, djr = body_jacrdot_qvel(m, d, b1) - body_jacrdot_qvel(m, d, b2);
  const Quat<T> q1dot = quat_deriv(q1, w1), negq2dot = quat_conj(quat_deriv(q2, w2));
  const Quat<T> t1 = quat_mul(quat_mul_axis(negq2dot, dw), q1), t2 = quat_mul(quat_mul_axis(negq2, djr), q1);
  const Quat<T> t3 = quat_mul(quat_mul_axis(negq2, dw), q1dot);
  const T jd[6] = {jdv.x,
                   jdv.y,
                   jdv.z,
                   T(0.5) * (t1.x + t2.x + t3.x) * ts,
                   T(0.5) * (t1.y + t2.y + t3.y) * ts,
                   T(0.5) * (t1.z + t2.z + t3.z) * ts};
  for (int k = 0; k < 6; ++k) d.efc[(nr + k) * kEfcStride + kEfcAref] -= jd[k];
}

// Equality rows (MuJoCo's mj_instantiateEquality, first of all rows): connect, 3 rows, the world
// anchors' difference p1 - p2 with J = Jp(b1, p1) - Jp(b2, p2), impedance from its norm,
// diagApprox body_invweight0[b1] + body_invweight0[b2], and aref less J' qvel (MuJoCo 3's
// mj_Jdotv: the anchors' velocity-product accelerations); weld, 6 rows (weld_rows); joint, 1 row,
// q1 - q1_0 - poly(q2 - q2_0) with J = e_dof1 - poly'(q2 - q2_0) e_dof2, diagApprox the dofs'
// invweight0; tendon, the same with tendon lengths. Returns the rows.
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
      point_pair_jacobian(m, d, b1, p1, b2, p2, d.efc_J + nr * nv, static_cast<T*>(nullptr));
      const T pos[3] = {dif.x, dif.y, dif.z};
      const T dist = m_sqrt(dot(dif, dif));
      const T dA = m.body_invweight0[b1] + m.body_invweight0[b2];
      for (int k = 0; k < 3; ++k) finish_row(m, d, nr + k, pos[k], dA, owner, sp, false, dist);
      const Vec3<T> jdv = point_jacdot_qvel(m, d, b1, p1) - point_jacdot_qvel(m, d, b2, p2);
      d.efc[nr * kEfcStride + kEfcAref] -= jdv.x;
      d.efc[(nr + 1) * kEfcStride + kEfcAref] -= jdv.y;
      d.efc[(nr + 2) * kEfcStride + kEfcAref] -= jdv.z;
      nr += 3;
    } else if (m.eq_type[e] == kEqTendon) {
      // tendon: L1 - L1_0 - poly(L2 - L2_0), J = J1 - poly'(L2 - L2_0) J2 (sim/tendon.h)
      if (nr + 1 > m.nefc_max) break;
      const int t1 = m.eq_obj1id[e], t2 = m.eq_obj2id[e];
      T* J = d.efc_J + nr * nv;
      for (int i = 0; i < nv; ++i) J[i] = d.ten_J[t1 * nv + i];
      T pos = d.ten_length[t1] - m.tendon_length0[t1] - data[0];
      T dA = m.tendon_invweight0[t1];
      if (t2 >= 0) {
        const T x = d.ten_length[t2] - m.tendon_length0[t2];
        pos -= data[1] * x + data[2] * x * x + data[3] * x * x * x + data[4] * x * x * x * x;
        const T deriv = data[1] + T(2) * data[2] * x + T(3) * data[3] * x * x + T(4) * data[4] * x * x * x;
        for (int i = 0; i < nv; ++i) J[i] -= deriv * d.ten_J[t2 * nv + i];
        dA += m.tendon_invweight0[t2];
      }
      finish_row(m, d, nr, pos, dA, owner, sp, false, pos);
      ++nr;
    } else if (m.eq_type[e] == kEqWeld) {
      if (nr + 6 > m.nefc_max) break;
      weld_rows(m, d, e, nr, sp, owner);
      nr += 6;
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

// Builds the rows for the current state (needs kinematics, com quantities, tendon_kinematics, the
// contact list and M factored without implicit damping); returns their number (also in d.nefc).
// MuJoCo's order: equality, friction loss (dofs, then tendons), limits (joints, then tendons),
// contacts. A tendon's rows take J = +-ten_J and diagApprox tendon_invweight0.
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
    finish_row(m, d, nr, T(0), m.dof_invweight0[dof], T(-2 - dof), sp, true, T(0), dof);
    ++nr;
  }
  for (int t = 0; t < m.ntendon; ++t) {  // tendon friction loss (after the dofs', as MuJoCo)
    if (!(m.tendon_frictionloss[t] > T(0)) || nr >= m.nefc_max) continue;
    T* J = d.efc_J + nr * nv;
    for (int i = 0; i < nv; ++i) J[i] = d.ten_J[t * nv + i];
    const SolParams<T> sp = sol_params(m, m.tendon_solref_fri + 2 * t, m.tendon_solimp_fri + 5 * t, h);
    finish_row(m, d, nr, T(0), m.tendon_invweight0[t], T(kTenFrictionOwner - t), sp, true, T(0));
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
      finish_row(m, d, nr, r, m.dof_invweight0[dof], T(-1), sp, false, r, dof);
      ++nr;
    }
  }
  for (int t = 0; t < m.ntendon; ++t) {  // tendon limits (after the joints', as MuJoCo)
    if (!m.tendon_limited[t]) continue;
    const T L = d.ten_length[t], lo = m.tendon_range[2 * t], hi = m.tendon_range[2 * t + 1];
    const T margin = m.tendon_margin[t];
    for (int side = 0; side < 2; ++side) {  // lower (J = +ten_J), then upper (J = -ten_J)
      const T dist = side == 0 ? L - lo : hi - L;
      if (!(dist < margin) || nr >= m.nefc_max) continue;
      T* J = d.efc_J + nr * nv;
      for (int i = 0; i < nv; ++i) J[i] = side == 0 ? d.ten_J[t * nv + i] : -d.ten_J[t * nv + i];
      const SolParams<T> sp = sol_params(m, m.tendon_solref_lim + 2 * t, m.tendon_solimp_lim + 5 * t, h);
      const T r = margin == T(0) ? dist : dist - margin;
      finish_row(m, d, nr, r, m.tendon_invweight0[t], T(-1), sp, false, r);
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
    con[kConTorqueRow] = T(0);
    // depth: how far inside the active margin (MuJoCo 3's includemargin is the margin itself: a
    // geom gap only lists contacts beyond it, excluded, which make no row here either)
    const T depth = con[kConDepth];
    const int dim = contact_dim(cp);
    const bool elliptic = dim > 1 && m.cone == kConeElliptic;
    const int edges = contact_row_count(m, dim);
    const T mu = cp.mu;
    // (nr + edges never exceeds nefc_max: constraint_capacity counts the rows of the model's largest
    // condim for every contact its pairs can make; the check only keeps a broken invariant from
    // writing out of bounds.)
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
        // the relative velocity along n, t1, t2, then the relative angular velocity about n, t1, t2
        const Vec3<T> ang = dim > 3 ? Vec3<T>::load(d.cdof + 6 * i) : Vec3<T>::zero();
        if (elliptic) {  // the contact frame's rows themselves (MuJoCo's mjCNSTR_CONTACT_ELLIPTIC)
          d.efc_J[nr * nv + i] += jn;
          d.efc_J[(nr + 1) * nv + i] += sign * dot(t1, col);
          d.efc_J[(nr + 2) * nv + i] += sign * dot(t2, col);
          if (dim > 3) d.efc_J[(nr + 3) * nv + i] += sign * dot(n, ang);
          if (dim > 4) d.efc_J[(nr + 4) * nv + i] += sign * dot(t1, ang);
          if (dim > 4) d.efc_J[(nr + 5) * nv + i] += sign * dot(t2, ang);
          continue;
        }
        // pyramid edges in pairs n +- fr_k e_k (e_k: t1, t2 on velocity; n, t1, t2 on angular velocity)
        for (int k = 1; k < dim; ++k) {
          const Vec3<T> axis = k == 1 || k == 4 ? t1 : k == 2 || k == 5 ? t2 : n;
          const T jk = sign * cp.fr[k - 1] * dot(axis, k < 3 ? col : ang);
          d.efc_J[(nr + 2 * k - 2) * nv + i] += jn + jk;
          d.efc_J[(nr + 2 * k - 1) * nv + i] += jn - jk;
        }
      }
    }
    // diagApprox: the normal's t = invweight(b1) + invweight(b2); a pyramid edge's MuJoCo's
    // 2 mu^2 (t + mu^2 t) / impratio (R of the friction directions = R of the normal / impratio),
    // for every edge whatever the condim (MuJoCo's mj_makeImpedance: one R from the sliding mu);
    // elliptic: t for the normal, t / impratio for the sliding rows and mu_slide^2 / mu_j^2 times
    // that for the torsional and rolling ones (R_j mu_j^2 the same for every friction row)
    const T t = m.body_invweight0[b1] + m.body_invweight0[b2];
    const SolParams<T> sp = sol_params(m, cp.ref, cp.imp, h);
    if (dim > 3) con[kConTorqueRow] = T(nr + 1);
    if (elliptic) {
      const T tf = t / max_(T(kMinVal), m.impratio);
      finish_row(m, d, nr, -depth, t, T(c), sp, false, -depth);
      for (int k = 1; k < dim; ++k) {
        const T dA = k < 3 ? tf : tf * (cp.fr[0] * cp.fr[0]) / (cp.fr[k - 1] * cp.fr[k - 1]);
        finish_row(m, d, nr + k, T(0), dA, T(c), sp, true, -depth);  // friction rows: no stiffness
      }
      nr += edges;
      continue;
    }
    T diag_approx = edges == 1 ? t : T(2) * mu * mu * (t + mu * mu * t);
    if (edges > 1 && m.impratio != T(1)) diag_approx = diag_approx / max_(T(kMinVal), m.impratio);
    for (int k = 0; k < edges; ++k) finish_row(m, d, nr + k, -depth, diag_approx, T(c), sp, false, -depth);
    nr += edges;
  }
  d.nefc[0] = T(nr);
  return nr;
}

namespace constraint_detail {
// The block update of the elliptic contact whose n rows start at row r (elliptic_block), applied:
// the rows' forces and d.efc_Zf; returns the largest force change times A_rr + R_r.
template <class T>
RLT_HD T elliptic_update(const ModelView<T>& m, const DataView<T>& d, int r, int n) {
  const int nv = m.nv;
  T A[36], res[6], f[6], fold[6];
  for (int j = 0; j < n; ++j) {
    const T* e = d.efc + (r + j) * kEfcStride;
    res[j] = e[kEfcRes0] + e[kEfcR] * e[kEfcForce] + row_dot(d, nv, r + j, d.efc_Zf);
    f[j] = fold[j] = e[kEfcForce];
    A[j * n + j] = e[kEfcDiag];
    for (int k = 0; k < j; ++k) A[j * n + k] = A[k * n + j] = rows_dot(d, nv, r + j, r + k);
  }
  const T* con = d.contact + kContactStride * static_cast<int>(d.efc[r * kEfcStride + kEfcOwner]);
  const ContactParams<T> cp = contact_params(m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2]));
  elliptic_block(A, res, cp.fr, n, f);
  T moved = T(0);
  for (int j = 0; j < n; ++j) {
    const T df = f[j] - fold[j];
    if (df == T(0)) continue;
    d.efc[(r + j) * kEfcStride + kEfcForce] = f[j];
    row_axpy(d, nv, r + j, df, d.efc_Zf);
    moved = max_(moved, abs_(df) * A[j * n + j]);
  }
  return moved;
}
}  // namespace constraint_detail

namespace constraint_detail {
// MuJoCo's primal soft-constraint cost of one row, or of an elliptic contact's n rows, at x = J a -
// aref (its mj_constraintUpdate): the force f(x) and h = -d f / d x (n x n, row-major), and which
// piece of the cost holds (RowState). A contact, limit or pyramid edge pushes (f = -x / R) while x
// < 0; an equality always; a friction loss is quadratic within R |f| <= frictionloss and linear
// beyond. An elliptic contact's rows take MuJoCo's three zones (with mu = mu_1 sqrt(R_1 / R_0) its
// regularized cone): no force above the cone, f = -x / R below the dual cone, between them the
// quadratic in N - mu T (kRowCone: not a quadratic in a, the only piece that is not).
enum RowState : int { kRowFree = 0, kRowQuadratic = 1, kRowFrictionPos = 2, kRowFrictionNeg = 3, kRowCone = 4 };

template <class T>
RLT_HD int row_forces(const ModelView<T>& m, const DataView<T>& d, int r, int n, const T* x, T* f, T* h) {
  const T* e = d.efc + r * kEfcStride;
  const T owner = e[kEfcOwner];
  if (n == 1) {
    const T R = e[kEfcR], D = T(1) / R;
    const int fdof = friction_dof(static_cast<double>(owner));
    const int ften = friction_tendon(static_cast<double>(owner));
    f[0] = -D * x[0], h[0] = D;
    if (fdof >= 0 || ften >= 0) {  // friction loss: quadratic within R |f| <= frictionloss, linear beyond
      const T fl = fdof >= 0 ? m.dof_frictionloss[fdof] : m.tendon_frictionloss[ften];
      if (x[0] <= -R * fl) {
        f[0] = fl, h[0] = T(0);
        return kRowFrictionPos;
      }
      if (x[0] >= R * fl) {
        f[0] = -fl, h[0] = T(0);
        return kRowFrictionNeg;
      }
    } else if (!equality_row(static_cast<double>(owner)) && x[0] >= T(0)) {
      f[0] = h[0] = T(0);
      return kRowFree;
    }
    return kRowQuadratic;
  }
  for (int k = 0; k < n * n; ++k) h[k] = T(0);
  const T* con = d.contact + kContactStride * static_cast<int>(owner);
  const ContactParams<T> cp = contact_params(m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2]));
  const T R0 = e[kEfcR], R1 = d.efc[(r + 1) * kEfcStride + kEfcR];
  const T mu = cp.fr[0] * m_sqrt(R1 / R0);
  T U[6] = {}, w[6], tt = T(0);  // zeroed: GCC cannot see that n >= 1 sets U[0] (-Wmaybe-uninitialized)
  w[0] = mu;
  for (int j = 1; j < n; ++j) w[j] = cp.fr[j - 1];
  for (int j = 0; j < n; ++j) U[j] = x[j] * w[j];
  for (int j = 1; j < n; ++j) tt += U[j] * U[j];
  const T N = U[0], Tn = m_sqrt(tt);
  if (N >= mu * Tn || (Tn <= T(0) && N >= T(0))) {  // above the cone: no force
    for (int j = 0; j < n; ++j) f[j] = T(0);
    return kRowFree;
  }
  if (mu * N + Tn <= T(0) || (Tn <= T(0) && N < T(0))) {  // below: every row quadratic
    for (int j = 0; j < n; ++j) {
      const T D = T(1) / d.efc[(r + j) * kEfcStride + kEfcR];
      f[j] = -D * x[j], h[j * n + j] = D;
    }
    return kRowQuadratic;
  }
  // the cone's side: cost Dm/2 (N - mu T)^2
  const T Dm = T(1) / R0 / (mu * mu * (T(1) + mu * mu));
  const T NmT = N - mu * Tn;
  f[0] = -Dm * NmT * mu;
  for (int j = 1; j < n; ++j) f[j] = -f[0] / Tn * U[j] * cp.fr[j - 1];
  h[0] = T(1);
  for (int j = 1; j < n; ++j) h[j] = h[j * n] = -mu / Tn * U[j];
  for (int k = 1; k < n; ++k)
    for (int j = 1; j < n; ++j) h[k * n + j] = mu * N / (Tn * Tn * Tn) * U[j] * U[k] + (j == k ? mu * mu - mu * N / Tn : T(0));
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j) h[k * n + j] *= Dm * w[k] * w[j];
  return kRowCone;
}

// The cost row_forces' force is minus the slope of, for row r's block (n rows) at x = J a - aref: 1/2
// x^2 / R where it pushes, past a friction loss's bound the line that continues the quadratic
// (-fl x - R fl^2 / 2 on the positive force's side), Dm/2 (N - mu T)^2 on an elliptic cone's side
// (MuJoCo's mj_constraintUpdate). *state: the piece (RowState), as row_forces gives it.
template <class T>
RLT_HD T row_cost(const ModelView<T>& m, const DataView<T>& d, int r, int n, const T* x, int* state) {
  const T* e = d.efc + r * kEfcStride;
  const T owner = e[kEfcOwner];
  if (n == 1) {
    const T R = e[kEfcR];
    const int fdof = friction_dof(static_cast<double>(owner));
    const int ften = friction_tendon(static_cast<double>(owner));
    if (fdof >= 0 || ften >= 0) {
      const T fl = fdof >= 0 ? m.dof_frictionloss[fdof] : m.tendon_frictionloss[ften];
      if (x[0] <= -R * fl) {
        *state = kRowFrictionPos;
        return -fl * x[0] - T(0.5) * R * fl * fl;
      }
      if (x[0] >= R * fl) {
        *state = kRowFrictionNeg;
        return fl * x[0] - T(0.5) * R * fl * fl;
      }
    } else if (!equality_row(static_cast<double>(owner)) && x[0] >= T(0)) {
      *state = kRowFree;
      return T(0);
    }
    *state = kRowQuadratic;
    return T(0.5) * x[0] * x[0] / R;
  }
  const T* con = d.contact + kContactStride * static_cast<int>(owner);
  const ContactParams<T> cp = contact_params(m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2]));
  const T R0 = e[kEfcR], R1 = d.efc[(r + 1) * kEfcStride + kEfcR];
  const T mu = cp.fr[0] * m_sqrt(R1 / R0);
  T tt = T(0);
  for (int j = 1; j < n; ++j) tt += (x[j] * cp.fr[j - 1]) * (x[j] * cp.fr[j - 1]);
  const T N = x[0] * mu, Tn = m_sqrt(tt);
  if (N >= mu * Tn || (Tn <= T(0) && N >= T(0))) {
    *state = kRowFree;
    return T(0);
  }
  if (mu * N + Tn <= T(0) || (Tn <= T(0) && N < T(0))) {
    *state = kRowQuadratic;
    T c = T(0);
    for (int j = 0; j < n; ++j) c += T(0.5) * x[j] * x[j] / d.efc[(r + j) * kEfcStride + kEfcR];
    return c;
  }
  *state = kRowCone;
  const T Dm = T(1) / R0 / (mu * mu * (T(1) + mu * mu));
  const T NmT = N - mu * Tn;
  return T(0.5) * Dm * NmT * NmT;
}

// row_cost at x0 + dx less row_cost at x0: on one quadratic or linear piece as the change itself
// (no cancellation of two large costs), else the difference.
template <class T>
RLT_HD T row_cost_change(const ModelView<T>& m, const DataView<T>& d, int r, int n, const T* x0, const T* dx) {
  T x1[6];
  for (int j = 0; j < n; ++j) x1[j] = x0[j] + dx[j];
  int s0, s1;
  const T c0 = row_cost(m, d, r, n, x0, &s0), c1 = row_cost(m, d, r, n, x1, &s1);
  if (s0 != s1 || s0 == kRowCone || s0 == kRowFree) return c1 - c0;
  if (s0 == kRowQuadratic) {
    T c = T(0);
    for (int j = 0; j < n; ++j) c += T(0.5) * dx[j] * (x0[j] + x1[j]) / d.efc[(r + j) * kEfcStride + kEfcR];
    return c;
  }
  const T owner = d.efc[r * kEfcStride + kEfcOwner];  // a friction loss past its bound: linear
  const int fdof = friction_dof(static_cast<double>(owner));
  const T fl = fdof >= 0 ? m.dof_frictionloss[fdof] : m.tendon_frictionloss[friction_tendon(static_cast<double>(owner))];
  return s0 == kRowFrictionPos ? -fl * dx[0] : fl * dx[0];
}

// Fields of a row in DataView::efc_newton (kNewtonStride scalars each; newton_solve).
enum NewtonField : int {
  kNewtonJar = 0,    // J a - aref at the current acceleration a
  kNewtonJv = 1,     // J dir, along the search direction
  kNewtonDeep = 2,   // the row's dof chain: J is zero off the tree path from this dof up to kNewtonTop;
  kNewtonTop = 3,    //   kNewtonDeep -1 when J is zero, kCrossBranch when J couples two branches
  kNewtonState = 4,  // the piece of the row's cost at a (RowState)
  kNewtonH = 5,      // a single row's h = -d f / d(J a): 1 / R where quadratic, else 0
  kNewtonLs = 6,     // the row's piece at the line search's last point
  kNewtonDeepA = 7,  // kCrossBranch rows: J is zero off two disjoint tree paths, kNewtonDeepA up to
  kNewtonDeepB = 8,  //   kNewtonTop and kNewtonDeepB up to kNewtonTopB (A's holds the deepest
  kNewtonTopB = 9,   //   nonzero); kNewtonDeepA -1 when it takes more than two (every dof then)
  // a single row's constants for the line search (scalar_row_force; set once per solve):
  kNewtonD = 10,     //   1 / R
  kNewtonKind = 11,  //   ScalarRowKind
  kNewtonFl = 12     //   a friction loss's bound on |f| (frictionloss), else 0
};
// What decides a single row's piece (row_forces): an inequality (a limit, a contact's pyramid edge or
// normal) pushes while J a - aref < 0, an equality always, a friction loss is quadratic within
// R |f| <= frictionloss.
enum ScalarRowKind : int { kScalarInequality = 0, kScalarEquality = 1, kScalarFriction = 2 };

// row_forces of a single row (n == 1) at x from its constants in efc_newton (w: the row's fields;
// kNewtonD, kNewtonKind, kNewtonFl from scalar_row_constants): the same arithmetic and the same
// bits, without decoding the row's owner or dividing by R at every point the line search tries.
template <class T>
RLT_HD RLT_INLINE int scalar_row_force(const T* w, T R, T x, T* f, T* h) {
  const T D = w[kNewtonD];
  const T kind = w[kNewtonKind];
  *f = -D * x, *h = D;
  if (kind == T(kScalarFriction)) {
    const T fl = w[kNewtonFl];
    if (x <= -R * fl) {
      *f = fl, *h = T(0);
      return kRowFrictionPos;
    }
    if (x >= R * fl) {
      *f = -fl, *h = T(0);
      return kRowFrictionNeg;
    }
  } else if (kind == T(kScalarInequality) && x >= T(0)) {
    *f = *h = T(0);
    return kRowFree;
  }
  return kRowQuadratic;
}
// Row r's constants for scalar_row_force (1 / R, the kind, the friction loss) into its efc_newton fields.
template <class T>
RLT_HD void scalar_row_constants(const ModelView<T>& m, const DataView<T>& d, int r) {
  const T* e = d.efc + r * kEfcStride;
  T* w = d.efc_newton + r * kNewtonStride;
  const T owner = e[kEfcOwner];
  const int fdof = friction_dof(static_cast<double>(owner));
  const int ften = friction_tendon(static_cast<double>(owner));
  w[kNewtonD] = T(1) / e[kEfcR];
  w[kNewtonFl] = T(0);
  if (fdof >= 0 || ften >= 0) {
    w[kNewtonKind] = T(kScalarFriction);
    w[kNewtonFl] = fdof >= 0 ? m.dof_frictionloss[fdof] : m.tendon_frictionloss[ften];
  } else {
    w[kNewtonKind] = T(equality_row(static_cast<double>(owner)) ? kScalarEquality : kScalarInequality);
  }
}
constexpr int kCrossBranch = -2;

// Where the Jacobian of a block of n rows (dense, nv each; an elliptic contact's rows share theirs)
// is nonzero, into its efc_newton fields w: kNewtonDeep its deepest nonzero dof and kNewtonTop its
// shallowest when every nonzero lies on the tree path between them (dof_parentid: a parent's index
// is below its child's), so J^T J has qM's sparsity (ancestor pairs); kNewtonDeep = kCrossBranch
// when two nonzeros are on different branches (a contact between two moving bodies whose chains
// part, a connect or weld, a tendon or joint equality across limbs): J^T J fills in outside qM's
// pattern. A cross-branch J's nonzeros usually lie on two paths (two bodies' chains): path A from
// the deepest nonzero (kNewtonDeepA) up to kNewtonTop, path B from the deepest nonzero off A
// (kNewtonDeepB) up to kNewtonTopB, below where B's chain meets A's; the products run over those
// two paths alone. kNewtonDeepA -1 when a third branch is needed (a tendon over three limbs).
// A contact's rows (end1, end2 >= -1: the last dofs of its bodies' chains, last_dof) are zero off
// those two chains, so only their dofs are tested (not all nv of a row: ~12 of a pile's 162); other
// rows (end1 = -2: limits, friction losses, equalities, a few) test every dof.
template <class T>
RLT_HD void row_support(const ModelView<T>& m, const T* J, int n, int end1, int end2, T* w) {
  const int nv = m.nv;
  auto nonzero = [&](int k) {
    for (int j = 0; j < n; ++j)
      if (J[j * nv + k] != T(0)) return true;
    return false;
  };
  // the next nonzero dof, descending (-1: none left): along the two chains, or dof by dof
  int cursor = nv - 1;
  auto next = [&]() {
    if (end1 >= -1) {
      for (;;) {
        const int k = end1 > end2 ? end1 : end2;
        if (k < 0) return -1;
        if (end1 == k) end1 = m.dof_parentid[end1];
        if (end2 == k) end2 = m.dof_parentid[end2];
        if (nonzero(k)) return k;
      }
    }
    if (n == 1)  // (a scalar row: the plain loop, which the compiler keeps tight)
      while (cursor >= 0 && J[cursor] == T(0)) --cursor;
    else
      while (cursor >= 0 && !nonzero(cursor)) --cursor;
    return cursor >= 0 ? cursor-- : -1;
  };
  const int i = next();
  int top = i < 0 ? 0 : i, deep_b = -1, top_b = -1;
  bool more = false;
  for (int pa = i, pb = -1, k = i < 0 ? -1 : next(); k >= 0; k = next()) {
    while (pa > k) pa = m.dof_parentid[pa];
    if (pa == k) {
      top = k;
      continue;
    }
    if (deep_b < 0) {
      deep_b = top_b = pb = k;
      continue;
    }
    while (pb > k) pb = m.dof_parentid[pb];
    if (pb != k) {
      more = true;
      break;
    }
    top_b = k;
  }
  w[kNewtonDeep] = T(deep_b < 0 ? i : kCrossBranch), w[kNewtonTop] = T(top);
  w[kNewtonDeepA] = T(deep_b < 0 || more ? -1 : i), w[kNewtonDeepB] = T(deep_b), w[kNewtonTopB] = T(top_b);
}
// Whether dof `anc` is on the tree path from dof `from` to the root.
template <class T>
RLT_HD RLT_INLINE bool on_path(const ModelView<T>& m, int from, int anc) {
  while (from > anc) from = m.dof_parentid[from];
  return from == anc;
}

// J x for a row of chain (deep, top), and x += s J^T.
template <class T>
RLT_HD RLT_INLINE T chain_dot(const ModelView<T>& m, const T* J, int deep, int top, const T* x) {
  T s = T(0);
  if (deep == kCrossBranch) {
    for (int i = 0; i < m.nv; ++i) s += J[i] * x[i];
  } else {
    for (int i = deep; i >= 0 && i >= top; i = m.dof_parentid[i]) s += J[i] * x[i];
  }
  return s;
}
template <class T>
RLT_HD RLT_INLINE void chain_axpy(const ModelView<T>& m, const T* J, int deep, int top, T s, T* x) {
  if (deep == kCrossBranch) {
    for (int i = 0; i < m.nv; ++i) x[i] += s * J[i];
  } else {
    for (int i = deep; i >= 0 && i >= top; i = m.dof_parentid[i]) x[i] += s * J[i];
  }
}
// J x and x += s J^T for a row with efc_newton fields w (row_support): over its chain, its two
// paths, or (a cross-branch row on more) every dof.
template <class T>
RLT_HD RLT_INLINE T support_dot(const ModelView<T>& m, const T* J, const T* w, const T* x) {
  const int deep = static_cast<int>(w[kNewtonDeep]), top = static_cast<int>(w[kNewtonTop]);
  if (deep != kCrossBranch || w[kNewtonDeepA] < T(0)) return chain_dot(m, J, deep, top, x);
  T s = T(0);
  for (int i = static_cast<int>(w[kNewtonDeepA]); i >= top; i = m.dof_parentid[i]) s += J[i] * x[i];
  for (int i = static_cast<int>(w[kNewtonDeepB]), t = static_cast<int>(w[kNewtonTopB]); i >= t; i = m.dof_parentid[i])
    s += J[i] * x[i];
  return s;
}
template <class T>
RLT_HD RLT_INLINE void support_axpy(const ModelView<T>& m, const T* J, const T* w, T s, T* x) {
  const int deep = static_cast<int>(w[kNewtonDeep]), top = static_cast<int>(w[kNewtonTop]);
  if (deep != kCrossBranch || w[kNewtonDeepA] < T(0)) return chain_axpy(m, J, deep, top, s, x);
  for (int i = static_cast<int>(w[kNewtonDeepA]); i >= top; i = m.dof_parentid[i]) x[i] += s * J[i];
  for (int i = static_cast<int>(w[kNewtonDeepB]), t = static_cast<int>(w[kNewtonTopB]); i >= t; i = m.dof_parentid[i])
    x[i] += s * J[i];
}
// y = qM x over qM's pattern (the ancestor pairs, mirrored). Row i's own sum runs along its parent
// links; its mirror, M_ij x_i into each ancestor's y_j, over the span dof_treestart[i]..i-1
// (contiguous, so vectorized; qM is zero between the ancestors, so the others take y_j + 0, the
// same but for the sign of a zero): every y_j gets the same terms in the same order as along the links.
template <class T>
RLT_HD void mass_product(const ModelView<T>& m, const DataView<T>& d, const T* x, T* y) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i) y[i] = T(0);
  for (int i = 0; i < nv; ++i) {
    const T* mi = d.qM + i * nv;
    const T xi = x[i];
    T yi = y[i] + mi[i] * xi;
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) yi += mi[j] * x[j];
    y[i] = yi;
    const int first = m.dof_treestart[i];
    if (first == i) continue;
    if (first == 0) {  // (as in tree_ltdl_factor: GCC's vector loop from a literal 0)
      for (int j = 0; j < i; ++j) y[j] += mi[j] * xi;
    } else {
      for (int j = first; j < i; ++j) y[j] += mi[j] * xi;
    }
  }
}

// The lower triangle (H[p nv + q], q <= p) of H += c J_a^T J_b for rows with efc_newton fields w
// (row_support): on the chain's ancestor pairs, which are qM's pattern; a cross-branch row's pairs
// of dofs on its two paths; or (a cross-branch row on more) every pair. (J_a^T J_b alone is not
// symmetric; an elliptic block adds every ordered pair (a, b) with h_ab = h_ba, whose sum is.)
template <class T>
RLT_HD void hessian_add(const ModelView<T>& m, T* H, const T* Ja, const T* Jb, const T* w, T c) {
  const int nv = m.nv;
  const int deep = static_cast<int>(w[kNewtonDeep]), top = static_cast<int>(w[kNewtonTop]);
  if (deep == kCrossBranch && w[kNewtonDeepA] < T(0)) {
    for (int p = 0; p < nv; ++p) {
      const T v = c * Ja[p];
      if (v == T(0)) continue;
      for (int q = 0; q <= p; ++q) H[p * nv + q] += v * Jb[q];
    }
    return;
  }
  if (deep == kCrossBranch) {  // two paths: every pair (p, q) of their dofs, q <= p
    // their dofs merged, descending (up to kMaxPaths of them; more, far from the piles and limbs
    // this is for, take the walk along the paths for every entry)
    constexpr int kMaxPaths = 64;
    int idx[kMaxPaths];
    int count = 0;
    const int top_b = static_cast<int>(w[kNewtonTopB]);
    for (int a = static_cast<int>(w[kNewtonDeepA]), b = static_cast<int>(w[kNewtonDeepB]);
         (a >= top || b >= top_b) && count < kMaxPaths;) {
      if (a >= top && (b < top_b || a > b)) {
        idx[count++] = a, a = m.dof_parentid[a];
        if (a < top) a = -1;
      } else {
        idx[count++] = b, b = m.dof_parentid[b];
        if (b < top_b) b = -1;
      }
      if (count == kMaxPaths && (a >= top || b >= top_b)) count = kMaxPaths + 1;
    }
    if (count <= kMaxPaths) {
      for (int x = 0; x < count; ++x) {
        const int p = idx[x];
        const T v = c * Ja[p];
        if (v == T(0)) continue;
        T* hp = H + p * nv;
        for (int y = x; y < count; ++y) hp[idx[y]] += v * Jb[idx[y]];
      }
      return;
    }
    const int ends[2][2] = {{static_cast<int>(w[kNewtonDeepA]), top}, {static_cast<int>(w[kNewtonDeepB]), top_b}};
    for (int a = 0; a < 2; ++a)
      for (int p = ends[a][0]; p >= ends[a][1]; p = m.dof_parentid[p]) {
        const T v = c * Ja[p];
        if (v == T(0)) continue;
        for (int b = 0; b < 2; ++b)
          for (int q = ends[b][0]; q >= ends[b][1]; q = m.dof_parentid[q])
            if (q <= p) H[p * nv + q] += v * Jb[q];
      }
    return;
  }
  for (int p = deep; p >= 0 && p >= top; p = m.dof_parentid[p]) {
    const T v = c * Ja[p];
    if (v == T(0)) continue;
    for (int q = p; q >= 0 && q >= top; q = m.dof_parentid[q]) H[p * nv + q] += v * Jb[q];
  }
}

// H = L^T D L (L unit lower triangular, D diagonal, in H's lower triangle as tree_ltdl_factor
// leaves them) for a symmetric positive definite H of any pattern, eliminating the last dof first
// as tree_ltdl_factor does, within each row's envelope: first[k] is row k's first nonzero column
// (written here), and eliminating k updates each row i < k with L_ki != 0 over the columns
// [first[k], i] (contiguous, vectorized), the only ones where its fill can fall; first[i] follows.
// With qM's pattern plus two bodies' couplings this is the sparse elimination that MuJoCo's
// mju_cholFactorSparse does on H's pattern and fill-in, without a symbolic pass: a zero L_ki skips
// its row, and the envelope of a pile of boxes is its band (the couplings to the boxes below a box
// and their fill), ~1/3 of the dense triangle's work at 27 boxes. The entries above the diagonal
// are not read; the pivots are floored at kMinVal (small_cholesky's floor).
template <class T>
RLT_HD void envelope_ltdl_factor(T* H, int n, T* first) {
  for (int k = 0; k < n; ++k) {
    const T* hk = H + k * n;
    int f = 0;
    while (f < k && hk[f] == T(0)) ++f;
    first[k] = T(f);
  }
  for (int k = n - 1; k >= 0; --k) {
    T* lk = H + k * n;
    const int f = static_cast<int>(first[k]);
    lk[k] = max_(lk[k], T(kMinVal));
    const T inv_dkk = T(1) / lk[k];
    for (int i = k - 1; i >= f; --i) {
      if (lk[i] == T(0)) continue;
      const T a = lk[i] * inv_dkk;
      T* li = H + i * n;
      for (int j = f; j <= i; ++j) li[j] -= lk[j] * a;
      lk[i] = a;
      if (T(f) < first[i]) first[i] = T(f);
    }
  }
}
// x <- (L^T D L)^-1 x with the factors and envelope of envelope_ltdl_factor.
template <class T>
RLT_HD void envelope_ltdl_solve(const T* ld, int n, const T* first, T* x) {
  for (int i = n - 1; i >= 0; --i) {  // L^T y = x
    const T* li = ld + i * n;
    const T xi = x[i];
    for (int j = static_cast<int>(first[i]); j < i; ++j) x[j] -= li[j] * xi;
  }
  for (int i = 0; i < n; ++i) x[i] /= ld[i * n + i];  // z = D^-1 y
  for (int i = 0; i < n; ++i) {                          // L x = z
    const T* li = ld + i * n;
    T v = x[i];
    for (int j = static_cast<int>(first[i]); j < i; ++j) v -= li[j] * x[j];
    x[i] = v;
  }
}

// The rows of an elliptic contact from row r (their count), else 1.
template <class T>
RLT_HD RLT_INLINE int row_block(const ModelView<T>& m, const DataView<T>& d, int r, int nr) {
  int n = 1;
  const T owner = d.efc[r * kEfcStride + kEfcOwner];
  if (m.cone == kConeElliptic && owner >= T(0))
    while (r + n < nr && d.efc[(r + n) * kEfcStride + kEfcOwner] == owner) ++n;
  return n;
}

// The lower triangle of the Hessian H = M + J^T h J at the rows' pieces (kNewtonState, kNewtonH;
// an elliptic contact on the cone's side its n x n block): qM's ancestor entries (H[i nv + j], j an
// ancestor-or-self of i) with qM's zeros between them (j from i's tree's first dof: the span
// tree_ltdl_factor runs over; the others are not written), or with `dense` (a cross-branch row
// pushes) every entry j <= i.
template <class T>
RLT_HD void newton_hessian(const ModelView<T>& m, const DataView<T>& d, int nr, bool dense, T* H) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i) {
    if (dense)
      for (int j = 0; j <= i; ++j) H[i * nv + j] = d.qM[i * nv + j];
    else  // the ancestor entries, and qM's zeros between them (tree_ltdl_factor's span)
      for (int j = m.dof_treestart[i]; j <= i; ++j) H[i * nv + j] = d.qM[i * nv + j];
  }
  for (int r = 0; r < nr;) {
    const int n = row_block(m, d, r, nr);
    const T* w = d.efc_newton + r * kNewtonStride;
    const int state = static_cast<int>(w[kNewtonState]);
    if (state == kRowCone) {  // the block's n x n h, recomputed
      T x[6], f[6], h[36];
      for (int j = 0; j < n; ++j) x[j] = d.efc_newton[(r + j) * kNewtonStride + kNewtonJar];
      row_forces(m, d, r, n, x, f, h);
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k)
          if (h[j * n + k] != T(0))
            hessian_add(m, H, d.efc_J + (r + j) * nv, d.efc_J + (r + k) * nv, w, h[j * n + k]);
    } else if (dense || w[kNewtonDeep] != T(kCrossBranch)) {  // (not dense: those in newton_low_rank_solve)
      for (int j = 0; j < n; ++j) {
        const T hj = d.efc_newton[(r + j) * kNewtonStride + kNewtonH];
        if (hj != T(0)) hessian_add(m, H, d.efc_J + (r + j) * nv, d.efc_J + (r + j) * nv, w, hj);
      }
    }
    r += n;
  }
}

// The most cross-branch rows newton_solve takes by Woodbury's identity (newton_low_rank_solve)
// rather than H's envelope.
constexpr int kNewtonLowRank = 4;

// A small symmetric positive definite k x k matrix C (row-major; its lower triangle is read) as
// L D L^T in place: unit L below the diagonal, D on it (the Woodbury systems of newton_low_rank_solve
// and sim/newton_lanes.h); then t <- C^-1 t with those factors.
template <class T>
RLT_HD void small_ldlt_factor(T* C, int k) {
  for (int x = 0; x < k; ++x) {
    for (int y = 0; y < x; ++y) {
      T v = C[x * k + y];
      for (int q = 0; q < y; ++q) v -= C[x * k + q] * C[q * k + q] * C[y * k + q];
      C[x * k + y] = v / C[y * k + y];
    }
    T v = C[x * k + x];
    for (int q = 0; q < x; ++q) v -= C[x * k + q] * C[x * k + q] * C[q * k + q];
    C[x * k + x] = v;
  }
}
template <class T>
RLT_HD void small_ldlt_solve(const T* C, int k, T* t) {
  for (int x = 0; x < k; ++x)
    for (int q = 0; q < x; ++q) t[x] -= C[x * k + q] * t[q];
  for (int x = 0; x < k; ++x) t[x] /= C[x * k + x];
  for (int x = k - 1; x >= 0; --x)
    for (int q = x + 1; q < k; ++q) t[x] -= C[q * k + x] * t[q];
}

// dir <- (H_tree + sum_x h_x J_x^T J_x)^-1 (H_tree dir) for the k scalar rows x in `rows` (their h in
// kNewtonH, > 0), given dir = H_tree^-1 b and H_tree's tree factors in ld (Woodbury's identity):
// z_x = H_tree^-1 J_x^T, C = diag(1 / h_x) + J Z (k x k, symmetric positive definite), C t = J dir,
// dir -= Z t. scratch: k nv scalars (the z_x).
template <class T>
RLT_HD void newton_low_rank_solve(const ModelView<T>& m, const DataView<T>& d, const T* ld, const int* rows, int k,
                                  T* dir, T* scratch) {
  const int nv = m.nv;
  T C[kNewtonLowRank * kNewtonLowRank], t[kNewtonLowRank];
  for (int x = 0; x < k; ++x) {
    const T* J = d.efc_J + rows[x] * nv;
    T* z = scratch + x * nv;
    for (int i = 0; i < nv; ++i) z[i] = J[i];
    tree_ltdl_solve(m, ld, z);
    T jd = T(0);
    for (int i = 0; i < nv; ++i) jd += J[i] * dir[i];
    t[x] = jd;
  }
  for (int x = 0; x < k; ++x) {
    const T* J = d.efc_J + rows[x] * nv;
    for (int y = 0; y <= x; ++y) {
      const T* z = scratch + y * nv;
      T c = T(0);
      for (int i = 0; i < nv; ++i) c += J[i] * z[i];
      C[x * k + y] = C[y * k + x] = c;
    }
    C[x * k + x] += T(1) / d.efc_newton[rows[x] * kNewtonStride + kNewtonH];
  }
  // C = L D L^T in place (k <= kNewtonLowRank; C is positive definite), then t <- C^-1 t
  small_ldlt_factor(C, k);
  small_ldlt_solve(static_cast<const T*>(C), k, t);
  for (int x = 0; x < k; ++x) {
    const T* z = scratch + x * nv;
    for (int i = 0; i < nv; ++i) dir[i] -= t[x] * z[i];
  }
}

// newton_solve's record of its passes, for measuring stopping rules (tools/stage_times
// --newton-stops; null in the pipeline). Pass k is the iterate after k line searches, where the
// solver computes the forces and the gradient and tests whether to stop.
template <class T>
struct NewtonTrace {
  static constexpr int kPasses = kNewtonMaxIter + 1;
  int passes;                 // recorded
  T* qacc;                    // (kPasses x nv, the caller's) the iterate at each pass
  T gradient[kPasses];        // scale |g| there (-1: the solver stopped there without it, kStopExact)
  T decrement[kPasses];       // scale g^T H^-1 g / 2 there (-1: the pass stopped before the solve)
  T improvement[kPasses];     // scale (cost before - cost after) of the line search that led there
  int exact[kPasses];         // that line search ended at its first point, the Newton step, every row
                              // on the piece it started on (the step was exact on that quadratic)
  int refine[kPasses];        // no row changed piece since the last pass: the step from here refines
  int stopped_by;             // NewtonStop: the test that ended the solve
};
enum NewtonStop : int {
  kStopGradient = 0,     // scale |g| < tolerance
  kStopImprovement = 1,  // the last step improved the cost by less than the tolerance (scaled)
  kStopDecrement = 2,    // the Newton decrement below the tolerance
  kStopRounding = 3,     // rounding: a refinement below it or no longer shrinking, a step below it,
                         // no descent left, g = 0, or a non-finite step
  kStopMaxIter = 4,
  kStopNoRows = 5,
  kStopExact = 6         // float: the last step was an exact Newton step (NewtonTrace::exact)
};

// A point of MuJoCo's line search: the step alpha along newton_solve's direction, the change of the
// cost there since alpha = 0, and its first two derivatives (MuJoCo's mjPrimalPnt); `noise` bounds
// the rounding of the slope (eps times the sum of its terms' magnitudes).
template <class T>
struct LinePoint {
  T alpha, cost, slope, curv, noise;
};

// A single row's cost on piece s at x (row_cost's, from the constants scalar_row_force reads).
template <class T>
RLT_HD RLT_INLINE T scalar_row_cost(const T* w, T R, T x, int s) {
  const T fl = w[kNewtonFl];
  if (s == kRowQuadratic) return T(0.5) * w[kNewtonD] * x * x;
  if (s == kRowFrictionPos) return -fl * x - T(0.5) * R * fl * fl;
  if (s == kRowFrictionNeg) return fl * x - T(0.5) * R * fl * fl;
  return T(0);
}

// row_cost_change of a single row going from piece s0 at x0 to piece s1 at x0 + dx: on one piece the
// change itself, else the difference.
template <class T>
RLT_HD RLT_INLINE T scalar_row_cost_change(const T* w, T R, T x0, T dx, int s0, int s1) {
  if (s0 != s1) return scalar_row_cost(w, R, x0 + dx, s1) - scalar_row_cost(w, R, x0, s0);
  if (s0 == kRowQuadratic) return w[kNewtonD] * dx * (x0 + T(0.5) * dx);
  if (s0 == kRowFrictionPos) return -w[kNewtonFl] * dx;
  if (s0 == kRowFrictionNeg) return w[kNewtonFl] * dx;
  return T(0);
}

// The cost along the direction at p->alpha (MuJoCo's PrimalEval): the quadratic's change, alpha dMa +
// alpha^2 dMd / 2 with dMa = dir^T M (a - a0) and dMd = dir^T M dir, plus each row's from J a - aref
// (kNewtonJar) along J dir (kNewtonJv); the slope less J dir . f, the curvature plus J dir . h J dir.
template <class T>
RLT_HD void line_point(const ModelView<T>& m, const DataView<T>& d, int nr, T dMa, T dMd, LinePoint<T>* p) {
  const T alpha = p->alpha;
  T cost = alpha * dMa + T(0.5) * alpha * alpha * dMd, slope = dMa + alpha * dMd, curv = dMd;
  T terms = abs_(dMa) + abs_(alpha * dMd);
  for (int r = 0; r < nr;) {
    const int n = row_block(m, d, r, nr);
    if (n == 1) {  // (from the row's constants, as the exact search)
      const T* w = d.efc_newton + r * kNewtonStride;
      const T R = d.efc[r * kEfcStride + kEfcR], jv = w[kNewtonJv], x0 = w[kNewtonJar], dx = alpha * jv;
      T f, h;
      const int state = scalar_row_force(w, R, x0 + dx, &f, &h);
      slope -= jv * f, curv += jv * h * jv, terms += abs_(jv * f);
      cost += scalar_row_cost_change(w, R, x0, dx, static_cast<int>(w[kNewtonState]), state);
      ++r;
      continue;
    }
    T x0[6], dx[6], x[6], jv[6], f[6], h[36];
    for (int j = 0; j < n; ++j) {
      const T* w = d.efc_newton + (r + j) * kNewtonStride;
      jv[j] = w[kNewtonJv], x0[j] = w[kNewtonJar], dx[j] = alpha * jv[j], x[j] = x0[j] + dx[j];
    }
    row_forces(m, d, r, n, x, f, h);
    for (int j = 0; j < n; ++j) {
      slope -= jv[j] * f[j], terms += abs_(jv[j] * f[j]);
      for (int k = 0; k < n; ++k) curv += jv[j] * h[j * n + k] * jv[k];
    }
    cost += row_cost_change(m, d, r, n, x0, dx);
    r += n;
  }
  p->cost = cost, p->slope = slope;
  p->curv = curv > T(0) ? curv : T(kMinVal);  // (MuJoCo's guard; the cost is convex)
  p->noise = (sizeof(T) == sizeof(float) ? T(1e-6) : T(1e-15)) * terms;
}

// MuJoCo's bracket update (updateBracket): p moves to the candidate nearest the root on its side of it
// (a smaller negative slope, or a smaller positive one); then the Newton point from there, evaluated.
template <class T>
RLT_HD bool line_bracket(const ModelView<T>& m, const DataView<T>& d, int nr, T dMa, T dMd, LinePoint<T>* p,
                         const LinePoint<T>* candidates, LinePoint<T>* next, int* evals) {
  bool moved = false;
  for (int i = 0; i < 3; ++i) {
    const LinePoint<T>& c = candidates[i];
    const bool nearer = (p->slope < T(0) && c.slope < T(0) && p->slope < c.slope) ||
                        (p->slope > T(0) && c.slope > T(0) && p->slope > c.slope);
    if (nearer) *p = c, moved = true;
  }
  if (moved) {
    next->alpha = p->alpha - p->slope / p->curv;
    line_point(m, d, nr, dMa, dMd, next);
    ++*evals;
  }
  return moved;
}

// MuJoCo's line search (engine_solver.c PrimalSearch), for a solve under the model's iterations budget,
// whose answer depends on where each search stops: from alpha = 0 a Newton step on the cost (alpha ~ 1,
// the step H was made for), then Newton steps while the slope keeps its sign, then a bracket of the
// root shrunk by Newton points and midpoints; each stops where |slope| < gtol (and the cost went
// down), or after ls_iterations evaluations of the cost (the first two included) with the last point
// or the better end of the bracket. gtol = tolerance ls_tolerance |dir| / scale as MuJoCo's (scale =
// 1 / trace(M)), or at a point the rounding of its slope where that is larger (LinePoint::noise:
// float's slope at the minimum is rounding, ~1e-7 of its terms, far above MuJoCo's double gtol, and
// MuJoCo's search stops at the first point within gtol: float's would go on to the last evaluation,
// measured 2x the solver's time on the Go1). Returns alpha (0: no improvement; MuJoCo's solve then
// ends) and *gain = cost(0) - cost(alpha).
template <class T>
RLT_HD T mujoco_line_search(const ModelView<T>& m, const DataView<T>& d, int nr, T dMa, T dMd, T gtol,
                            T* gain) {
  const int budget = m.newton_ls_iterations;
  LinePoint<T> p0{}, p1{}, p2{}, pmid{}, p1next{}, p2next{};
  line_point(m, d, nr, dMa, dMd, &p0);
  p1.alpha = -p0.slope / p0.curv;
  line_point(m, d, nr, dMa, dMd, &p1);
  int evals = 2;
  *gain = -p1.cost;
  if (abs_(p1.slope) < max_(gtol, p1.noise) && (p1.alpha == T(0) || p1.cost < T(0))) return p1.alpha;
  // one-sided: Newton steps while the slope keeps the sign it has at the first one
  const T dir = p1.slope < T(0) ? T(1) : T(-1);
  p2 = p0;
  while (p1.slope * dir <= -max_(gtol, p1.noise) && evals < budget) {
    p2 = p1;
    p1.alpha -= p1.slope / p1.curv;
    line_point(m, d, nr, dMa, dMd, &p1);
    ++evals;
    *gain = -p1.cost;
    if (abs_(p1.slope) < max_(gtol, p1.noise) && p1.cost < T(0)) return p1.alpha;
  }
  if (evals >= budget) return p1.alpha;  // (MuJoCo: could not bracket)
  // bracketed by p1 and p2: each round a midpoint and the two ends' Newton points
  p2next = p1;
  p1next.alpha = p1.alpha - p1.slope / p1.curv;
  line_point(m, d, nr, dMa, dMd, &p1next);
  ++evals;
  while (evals < budget) {
    pmid.alpha = T(0.5) * (p1.alpha + p2.alpha);
    line_point(m, d, nr, dMa, dMd, &pmid);
    ++evals;
    const LinePoint<T> candidates[3] = {p1next, p2next, pmid};
    int best = -1;
    for (int i = 0; i < 3; ++i)
      if (abs_(candidates[i].slope) < max_(gtol, candidates[i].noise) &&
          (best < 0 || candidates[i].cost < candidates[best].cost))
        best = i;
    if (best >= 0) {
      *gain = -candidates[best].cost;
      return candidates[best].alpha;
    }
    const bool b1 = line_bracket(m, d, nr, dMa, dMd, &p1, candidates, &p1next, &evals);
    const bool b2 = line_bracket(m, d, nr, dMa, dMd, &p2, candidates, &p2next, &evals);
    if (!b1 && !b2) {  // (the bracket is at rounding: its midpoint)
      *gain = -pmid.cost;
      return pmid.alpha;
    }
  }
  const LinePoint<T>& end = p1.cost <= p2.cost ? p1 : p2;  // the better end, where it improved
  *gain = end.cost < T(0) ? -end.cost : T(0);
  return end.cost < T(0) ? end.alpha : T(0);
}

// MuJoCo's Newton solver (mj_solNewton) on its primal problem: the acceleration a minimizing
// 1/2 (a - a0)^T M (a - a0) + sum_r cost_r(J_r a - aref_r), from a = a0 (qacc_smooth). Each
// iteration: the rows' forces f and h at a (row_forces), the gradient g = M (a - a0) - J^T f, the
// Hessian H = M + J^T h J, a step dir = -H^-1 g and an exact line search along it (under the model's
// iterations budget, where the answer depends on where each search stops, MuJoCo's own:
// mujoco_line_search, with the file's ls_iterations and ls_tolerance).
// Stopping (MuJoCo 3.17's test, mj_solNewton; scale = 1 / trace(M), the sum of M's diagonal at the
// current state, which is MuJoCo 3.17's per island, measured on its stats: its older
// 1 / (meaninertia nv) no longer enters): after a line search, when scale (cost before - cost
// after) is in (0, tolerance) or scale |g| < tolerance; then, the new direction solved, when the
// Newton decrement scale g^T H^-1 g / 2 (the next step's predicted improvement) < tolerance; before
// the first step, when both scale |g| and the decrement are below it. tolerance is the model's
// (MJCF option tolerance, 1e-8 by default) in float, the training path; double, the MuJoCo
// comparisons' path, takes 0 (MuJoCo's tests never pass) and runs until rounding stops it, as the
// peers run MuJoCo converged. The cost is piecewise quadratic (but for an elliptic cone's side), so
// once no row changes piece the last step was Newton's exact step on the right quadratic, up to
// rounding: in float, whose gradient's rounding (~1e-7 |J^T f|) is above the tolerance, the solver
// stops right there (kStopExact) rather than confirm it by another solve. Where the tests do not
// stop it (double, or rounding in an ill-conditioned H, stiff rows on a light body, leaving more
// than the tolerance), the next steps reuse H's factors (refinement, cheap) until the step is
// below rounding or stops shrinking. Measured under random controls on the robots
// (tools/stage_times --newton-stops): float's answer is as far from the converged one as float's
// rounding leaves it (docs/ARCHITECTURE.md, Solver). H changes only where a
// row's h does (a row starts or stops pushing; a friction loss going from one linear side to the
// other keeps H): as MuJoCo's HessianIncremental, H's factors then follow by a rank-one update or
// downdate along each such row's chain (tree_ltdl_update, ~depth^2 multiply-adds a row), and the
// first H's from M's factors (qLD, the forward pass's) by the rows that push at a0, where that costs
// less than assembling and factoring H afresh (measured under random controls, per substep: the G1
// 3.2 fresh factorizations -> 0.02, humanoid 2.4 -> 0.02, Go1 2.8 -> 0.05), and H afresh when a
// downdate cancels a pivot to under `keep` of itself (none seen on the robots). `incremental` false
// factors afresh every time (the tests' reference).
// Sparse (as MuJoCo's with its sparse Jacobian): a row's J is nonzero on its bodies' dof chains, so
// its J^T J lies on qM's ancestor pairs when those chains are one path to the root (a contact with
// the world, a limit, a friction loss): then H keeps qM's pattern and factors by the tree's LTDL
// (tree_ltdl_factor: no fill-in), and every product with J runs over the row's chain alone. While a
// row whose J couples two branches pushes (a contact between two free bodies or two limbs, a
// connect, a tendon across them; kCrossBranch) H fills in outside the pattern: that iteration
// assembles H in full storage, each such row's J^T h J over the pairs of its two paths (row_support:
// the bodies' chains below where they meet), and factors it within its envelope, skipping zeros
// (envelope_ltdl_factor, the same elimination order; on a pile of boxes the couplings to the boxes
// below and their fill: a band). The products with those rows run over their two paths too (a row
// over more than two branches, a tendon across three limbs, over every dof). Measured on a 3x3x3
// pile of boxes (tools/stage_times, float): 1407 -> 400 us a substep (MuJoCo 3.17: 406-431), where
// the dense Cholesky had been 40% of the time, the dense J^T h J 22%, the rows' nv-long products 20%.
// On entry d.qLD holds M's factors (soft_constraint_acceleration's factor_mass with h = 0). On exit
// each row's force f(J a - aref) at the final a; returns the iterations (line searches).
template <class T>
RLT_HD int newton_solve(const ModelView<T>& m, const DataView<T>& d, int nr, bool incremental = true,
                        NewtonTrace<T>* trace = nullptr) {
  const int nv = m.nv;
  T* H = d.newton_H;
  T* grad = d.newton_vec;
  T* dir = grad + nv;
  T* Mdir = dir + nv;
  T* Ma = Mdir + nv;  // M (a - a0)
  T* first = Ma + nv;  // the envelope's first column per row of H's factors (envelope_ltdl_factor)
  int cross[kNewtonLowRank];  // the cross-branch rows newton_low_rank_solve takes
  T* a = d.qacc;
  const T* a0 = d.qacc_smooth;
  const T eps = sizeof(T) == sizeof(float) ? T(1e-6) : T(1e-15);
  // The start: a0, or with m.newton_warmstart (a float model with an iterations budget) MuJoCo's warm
  // start below. (Where the solve runs to convergence the warm start was measured twice and is slower
  // on the five robots: docs/ARCHITECTURE.md, Solver.)
  for (int i = 0; i < nv; ++i) a[i] = a0[i], Ma[i] = T(0);
  // each row's chain or paths (an elliptic contact's rows share their block's), and J a0 - aref
  for (int r = 0; r < nr;) {
    const int n = row_block(m, d, r, nr);
    T* w0 = d.efc_newton + r * kNewtonStride;
    const int owner = static_cast<int>(d.efc[r * kEfcStride + kEfcOwner]);
    if (owner >= 0) {  // a contact: its bodies' chains
      const T* con = d.contact + kContactStride * owner;
      row_support(m, d.efc_J + r * nv, n, last_dof(m, m.geom_bodyid[static_cast<int>(con[kConGeom1])]),
                  last_dof(m, m.geom_bodyid[static_cast<int>(con[kConGeom2])]), w0);
    } else if (friction_dof(static_cast<double>(owner)) >= 0) {  // J = e_dof: row_support's answer
      const T dof = T(friction_dof(static_cast<double>(owner)));
      w0[kNewtonDeep] = w0[kNewtonTop] = dof;
      w0[kNewtonDeepA] = w0[kNewtonDeepB] = w0[kNewtonTopB] = T(-1);
    } else {
      row_support(m, d.efc_J + r * nv, n, -2, -2, w0);
    }
    for (int j = 0; j < n; ++j) {
      T* w = d.efc_newton + (r + j) * kNewtonStride;
      T* e = d.efc + (r + j) * kEfcStride;
      w[kNewtonDeep] = w0[kNewtonDeep], w[kNewtonTop] = w0[kNewtonTop];
      w[kNewtonDeepA] = w0[kNewtonDeepA], w[kNewtonDeepB] = w0[kNewtonDeepB], w[kNewtonTopB] = w0[kNewtonTopB];
      w[kNewtonState] = T(-1), w[kNewtonH] = T(0);
      e[kEfcRes0] = w[kNewtonJar] = support_dot(m, d.efc_J + (r + j) * nv, w, a0) - e[kEfcAref];
    }
    if (n == 1) scalar_row_constants(m, d, r);  // (the line search's)
    r += n;
  }
  // MuJoCo's warm start (warmstart() in its engine_forward.c): the last substep's acceleration aw
  // unless its cost, 1/2 (aw - a0)^T M (aw - a0) + sum_r cost_r(J_r aw - aref_r), is above a0's.
  if (m.newton_warmstart && nr > 0) {
    const T* aw = d.qacc_warmstart;
    for (int i = 0; i < nv; ++i) dir[i] = aw[i] - a0[i];
    mass_product(m, d, dir, Mdir);
    T dcost = T(0);
    for (int i = 0; i < nv; ++i) dcost += T(0.5) * dir[i] * Mdir[i];
    for (int r = 0; r < nr;) {
      const int n = row_block(m, d, r, nr);
      T x0[6], dx[6];
      for (int j = 0; j < n; ++j) {
        T* w = d.efc_newton + (r + j) * kNewtonStride;
        x0[j] = w[kNewtonJar];
        dx[j] = w[kNewtonJv] = support_dot(m, d.efc_J + (r + j) * nv, w, dir);
      }
      dcost += row_cost_change(m, d, r, n, x0, dx);
      r += n;
    }
    if (dcost <= T(0)) {
      for (int i = 0; i < nv; ++i) a[i] = aw[i], Ma[i] = Mdir[i];
      for (int r = 0; r < nr; ++r) d.efc_newton[r * kNewtonStride + kNewtonJar] += d.efc_newton[r * kNewtonStride + kNewtonJv];
    }
  }
  // the stopping test's scale (MuJoCo 3.17's, per island; here the one problem's: every dof)
  T trace_m = T(0);
  for (int i = 0; i < nv; ++i) trace_m += d.qM[i * nv + i];
  // Double (the MuJoCo comparisons) runs until rounding stops it: tools/mujoco_peer.py compares with
  // MuJoCo converged (tolerance 1e-14), and stopping at the model's 1e-8 put 20 of the corpus's files
  // outside their bound (docs/ARCHITECTURE.md, Solver).
  constexpr bool is_float = sizeof(T) == sizeof(float);
  const T scale = T(1) / max_(trace_m, T(kMinVal)), tol = is_float ? m.tolerance : T(0);
  if (trace) trace->passes = 0, trace->stopped_by = kStopRounding;
  int iter = 0;  // line searches
  bool stalled = false, was_dense = false, exact = false;
  T last_step = T(0), improvement = T(0);
  long factor_cost = -1;  // tree_ltdl_factor's multiply-adds (the first time an update is weighed)
  for (;;) {
    // the forces, their pieces and h at a; each row's change of h since the last iteration's H
    // (in kNewtonJv, which the line search sets later), and whether rank-one updates of H's factors
    // can make the new H (update_cost: their multiply-adds; -1 when they cannot: a cone's side)
    bool changed = false, dense = false, cone = false, h_changed = false;
    int ncross = 0;           // cross-branch rows pushing on a quadratic piece (scalar rows)
    bool cross_cone = false;  // a cross-branch block on its cone's side
    long update_cost = 0;
    for (int r = 0; r < nr;) {
      const int n = row_block(m, d, r, nr);
      T x[6], f[6], h[36];
      for (int j = 0; j < n; ++j) x[j] = d.efc_newton[(r + j) * kNewtonStride + kNewtonJar];
      T* w = d.efc_newton + r * kNewtonStride;
      const int state = n == 1 ? scalar_row_force(w, d.efc[r * kEfcStride + kEfcR], x[0], f, h)
                               : row_forces(m, d, r, n, x, f, h);
      if (w[kNewtonState] != T(state) || state == kRowCone) {
        bool moved = state == kRowCone || w[kNewtonState] == T(kRowCone);
        for (int j = 0; j < n; ++j) {
          T* wj = d.efc_newton + (r + j) * kNewtonStride;
          wj[kNewtonJv] = h[j * n + j] - wj[kNewtonH];
          moved = moved || wj[kNewtonJv] != T(0);
        }
        if (moved && update_cost >= 0) {
          if (state == kRowCone || w[kNewtonState] == T(kRowCone)) {
            update_cost = -1;
          } else if (w[kNewtonDeep] >= T(0)) {  // (kCrossBranch rows change h only across a dense H)
            const long depth = m.dof_depth[static_cast<int>(w[kNewtonDeep])];
            update_cost += n * depth * depth;
          }
        }
        h_changed = h_changed || moved;
      } else {
        for (int j = 0; j < n; ++j) d.efc_newton[(r + j) * kNewtonStride + kNewtonJv] = T(0);
      }
      changed = changed || w[kNewtonState] != T(state);
      cone = cone || state == kRowCone;
      dense = dense || (w[kNewtonDeep] == T(kCrossBranch) && (state == kRowQuadratic || state == kRowCone));
      if (w[kNewtonDeep] == T(kCrossBranch) && (state == kRowQuadratic || state == kRowCone)) {
        if (n == 1 && state == kRowQuadratic && ncross < kNewtonLowRank) cross[ncross] = r;
        cross_cone = cross_cone || n > 1 || state == kRowCone;
        ++ncross;
      }
      for (int j = 0; j < n; ++j) {
        d.efc[(r + j) * kEfcStride + kEfcForce] = f[j];
        d.efc_newton[(r + j) * kNewtonStride + kNewtonState] = T(state);
        d.efc_newton[(r + j) * kNewtonStride + kNewtonH] = h[j * n + j];
      }
      r += n;
    }
    if (nr == 0 || stalled || iter >= m.newton_iterations) {
      if (trace) trace->stopped_by = nr == 0 ? kStopNoRows : stalled ? kStopRounding : kStopMaxIter;
      break;
    }
    // The last step was Newton's exact step on the quadratic of these pieces: a is the minimizer to
    // rounding, where float's gradient cannot reach the tolerance (its rounding of J^T f alone is
    // ~1e-7 |f|), and the decrement test would only confirm it after another solve.
    if (exact && tol > T(0)) {
      if (trace) {  // (the last pass, without its gradient)
        const int pass = trace->passes++;
        for (int i = 0; i < nv; ++i) trace->qacc[pass * nv + i] = a[i];
        trace->gradient[pass] = trace->decrement[pass] = T(-1);
        trace->improvement[pass] = improvement, trace->exact[pass] = 1, trace->refine[pass] = 0;
        trace->stopped_by = kStopExact;
      }
      break;
    }
    // No row changed its h (none changed piece, or a friction loss went from one linear side to the
    // other): H is the last iteration's and its factors serve again. With no row changing piece the
    // step is a refinement of the last one, which rounding in an ill-conditioned H (stiff rows on a
    // light body) can leave off by far more than the tolerance.
    // A few scalar cross-branch rows pushing (a hand on a thigh): H = H_tree + sum_x h_x J_x^T J_x,
    // H_tree (every other row) on qM's pattern, kept by the tree factors and their rank-one updates,
    // and the cross rows by Woodbury's identity at the solve (newton_low_rank_solve) instead of H's
    // envelope factored afresh (G1 standing: ~2.9 us a dense iteration against ~1 us). Not with
    // `incremental` false (the tests' reference: the envelope), an elliptic block or more rows.
    const int nlow = incremental && dense && !cross_cone && ncross <= kNewtonLowRank ? ncross : 0;
    if (nlow > 0) dense = false;
    const bool same_h = iter > 0 && !h_changed && !cone && dense == was_dense;
    const bool refine = same_h && !changed;
    // g = M (a - a0) - J^T f
    for (int i = 0; i < nv; ++i) grad[i] = Ma[i];
    for (int r = 0; r < nr; ++r) {
      const T* w = d.efc_newton + r * kNewtonStride;
      const T f = d.efc[r * kEfcStride + kEfcForce];
      if (f != T(0)) support_axpy(m, d.efc_J + r * nv, w, -f, grad);
    }
    T g2 = T(0);
    for (int i = 0; i < nv; ++i) g2 += grad[i] * grad[i];
    const T gradient = scale * m_sqrt(g2);
    const int pass = trace ? trace->passes++ : 0;
    if (trace) {
      for (int i = 0; i < nv; ++i) trace->qacc[pass * nv + i] = a[i];
      trace->gradient[pass] = gradient, trace->decrement[pass] = T(-1);
      trace->improvement[pass] = improvement, trace->exact[pass] = exact, trace->refine[pass] = refine;
    }
    if (!(g2 > T(0))) {
      if (trace) trace->stopped_by = g2 == T(0) ? kStopGradient : kStopRounding;
      break;
    }
    // MuJoCo's test after a step: too little improvement, or a small gradient
    if (iter > 0 && ((improvement > T(0) && improvement < tol) || gradient < tol)) {
      if (trace) trace->stopped_by = gradient < tol ? kStopGradient : kStopImprovement;
      break;
    }
    // A few rows changed h on a sparse H: rank-one updates of its factors along their chains
    // (tree_ltdl_update, each ~depth^2) where they cost less than a factorization, else (or when a
    // downdate cancels too much: a stiff row leaving a light body) H afresh. The first H is M's
    // (qLD, the forward pass's factors) updated by the rows that push at a0.
    bool factored = same_h;
    if (incremental && !factored && !dense && !was_dense && update_cost >= 0) {
      if (factor_cost < 0) {
        factor_cost = 0;
        for (int i = 0; i < nv; ++i) {
          const long a = m.dof_depth[i] - 1;  // (ancestors)
          factor_cost += a * (a + 1) / 2;
        }
      }
      if (update_cost <= 2 * factor_cost) {
        factored = true;
        if (iter == 0)  // (with the zeros between the ancestor entries, as newton_hessian)
          for (int i = 0; i < nv; ++i)
            for (int j = m.dof_treestart[i]; j <= i; ++j) H[i * nv + j] = d.qLD[i * nv + j];
        const T keep = sizeof(T) == sizeof(float) ? T(1e-3) : T(1e-10);
        for (int r = 0; r < nr && factored; ++r) {
          const T* w = d.efc_newton + r * kNewtonStride;
          const int deep = static_cast<int>(w[kNewtonDeep]);
          if (w[kNewtonJv] == T(0) || deep < 0) continue;
          const T* J = d.efc_J + r * nv;
          for (int k = deep; k >= 0; k = m.dof_parentid[k]) Mdir[k] = J[k];  // (Mdir: scratch here)
          factored = tree_ltdl_update(m, H, Mdir, deep, w[kNewtonJv], keep);
        }
      }
    }
    if (!factored) newton_hessian(m, d, nr, dense, H);
    for (int i = 0; i < nv; ++i) dir[i] = -grad[i];
    if (dense) {
      if (!factored) envelope_ltdl_factor(H, nv, first);
      envelope_ltdl_solve(static_cast<const T*>(H), nv, static_cast<const T*>(first), dir);
    } else {
      if (!factored) tree_ltdl_factor(m, H);
      tree_ltdl_solve(m, static_cast<const T*>(H), dir);
      if (nlow > 0) newton_low_rank_solve(m, d, H, cross, nlow, dir, first + nv);
    }
    was_dense = dense;
    // the Newton decrement, g^T H^-1 g / 2 scaled: MuJoCo's third test (before the first step
    // together with the gradient's)
    T slope0 = T(0);
    for (int i = 0; i < nv; ++i) slope0 += dir[i] * grad[i];
    const T decrement = max_(T(0), T(-0.5) * scale * slope0);
    if (trace) trace->decrement[pass] = decrement;
    if (decrement < tol && (iter > 0 || gradient < tol)) {
      if (trace) trace->stopped_by = kStopDecrement;
      break;
    }
    // exact line search on phi(alpha) = cost(a + alpha dir): phi' = dir^T M (a + alpha dir - a0) -
    // sum_r jv_r f_r(jar_r + alpha jv_r), each row's jar and jv computed once
    T amax = T(0), dmax = T(0);
    for (int i = 0; i < nv; ++i) amax = max_(amax, abs_(a[i])), dmax = max_(dmax, abs_(dir[i]));
    // converged: the correction is below rounding, or no smaller than the last step (rounding's floor)
    if (refine && (!(dmax > eps * (T(1) + amax)) || !(dmax < T(0.5) * last_step))) break;
    mass_product(m, d, dir, Mdir);
    T dMd = T(0), dMa = T(0);
    for (int i = 0; i < nv; ++i) dMd += dir[i] * Mdir[i], dMa += dir[i] * Ma[i];
    if (!(dMd > T(0)) || !(dMd < T(1e30))) break;  // (a non-finite step: keep the forces so far)
    for (int r = 0; r < nr; ++r) {
      T* w = d.efc_newton + r * kNewtonStride;
      w[kNewtonJv] = support_dot(m, d.efc_J + r * nv, w, dir);
    }
    if (!(slope0 < T(0))) break;  // (no descent left: rounding)
    T alpha = T(1);
    if (m.newton_ls_iterations >= 0) {  // under the model's budget: MuJoCo's search, where it stops
      T snorm2 = T(0);
      for (int i = 0; i < nv; ++i) snorm2 += dir[i] * dir[i];
      const T gtol = m.newton_ls_tolerance * m_sqrt(snorm2) / scale;
      T gain = T(0);
      alpha = mujoco_line_search(m, d, nr, dMa, dMd, gtol, &gain);
      if (!(alpha != T(0)) || !(abs_(alpha) * dmax < T(1e30))) break;  // (MuJoCo: no improvement, done)
      improvement = scale * gain;
      exact = false;
    } else {
      // phi' is piecewise linear (but on a cone's side), increasing: Newton's iteration on it from
      // alpha = 1 (the Newton step), bracketed. A point reached by a Newton step from a point on the
      // same pieces is the root (alpha = 1 itself when no row changes piece: the quadratic H was made
      // for), so most searches take one or two evaluations; else until |phi'| is below rounding.
      for (int r = 0; r < nr; ++r)
        d.efc_newton[r * kNewtonStride + kNewtonLs] = d.efc_newton[r * kNewtonStride + kNewtonState];
      T lo = T(0), hi = T(-1);
      bool newton_step = !cone;
      exact = false;
      bool kept = false;  // the last point's rows all on their pieces at a (phi' linear up to it)
      bool ended = false;  // the search stopped at a point it evaluated (kNewtonLs: the pieces there)
      T slope_end = T(0);
      for (int ls = 0; ls < 50; ++ls) {
        T slope = dMa + alpha * dMd, curv = dMd;
        bool same = true, kept_here = !cone;
        for (int r = 0; r < nr;) {
          const int n = m.cone == kConeElliptic ? row_block(m, d, r, nr) : 1;
          if (n == 1) {  // (the same arithmetic as the block's below, from the row's constants)
            T* w = d.efc_newton + r * kNewtonStride;
            const T jv = w[kNewtonJv];
            T f, h;
            const int state = scalar_row_force(w, d.efc[r * kEfcStride + kEfcR], w[kNewtonJar] + alpha * jv, &f, &h);
            kept_here = kept_here && w[kNewtonState] == T(state);
            if (w[kNewtonLs] != T(state)) same = false, w[kNewtonLs] = T(state);
            slope -= jv * f;
            curv += jv * h * jv;
            ++r;
            continue;
          }
          T x[6], jv[6], f[6], h[36];
          for (int j = 0; j < n; ++j) {
            const T* w = d.efc_newton + (r + j) * kNewtonStride;
            jv[j] = w[kNewtonJv], x[j] = w[kNewtonJar] + alpha * jv[j];
          }
          const int state = row_forces(m, d, r, n, x, f, h);
          T* w = d.efc_newton + r * kNewtonStride;
          kept_here = kept_here && w[kNewtonState] == T(state);
          if (w[kNewtonLs] != T(state) || state == kRowCone) {
            same = false;
            for (int j = 0; j < n; ++j) w[j * kNewtonStride + kNewtonLs] = T(state);
          }
          for (int j = 0; j < n; ++j) {
            slope -= jv[j] * f[j];
            for (int k = 0; k < n; ++k) curv += jv[j] * h[j * n + k] * jv[k];
          }
          r += n;
        }
        exact = ls == 0 && same && newton_step;
        if ((same && newton_step) || abs_(slope) <= eps * abs_(slope0)) {
          kept = kept_here, slope_end = slope, ended = true;
          break;
        }
        if (slope < T(0)) lo = alpha;
        else hi = alpha;
        T next = alpha - slope / curv;
        newton_step = true;
        if (hi < T(0)) {
          if (!(next > alpha)) next = T(2) * alpha, newton_step = false;
        } else if (!(next > lo && next < hi)) {
          next = T(0.5) * (lo + hi), newton_step = false;
        }
        alpha = next;
      }
      if (!(abs_(alpha) * dmax < T(1e30))) break;
      // the step's improvement, -(phi(alpha) - phi(0)): where no row left its piece (scalar rows' pieces
      // are intervals of J a, so none left it in between) phi' is linear and the trapezoid is exact;
      // else the quadratic's change and each row's, -dx (f0 - h dx / 2) on the piece it started on
      // (f linear there, f0 and h at a), row_cost_change where it moved to another
      if (kept) {
        improvement = T(-0.5) * scale * alpha * (slope0 + slope_end);
      } else if (tol > T(0) || trace) {
        T dcost = alpha * dMa + T(0.5) * alpha * alpha * dMd;
        for (int r = 0; r < nr;) {
          const int n = row_block(m, d, r, nr);
          const T* w = d.efc_newton + r * kNewtonStride;
          if (ended && w[kNewtonLs] == w[kNewtonState] && w[kNewtonState] != T(kRowCone)) {
            for (int j = 0; j < n; ++j) {
              const T* wj = d.efc_newton + (r + j) * kNewtonStride;
              const T dx = alpha * wj[kNewtonJv];
              dcost -= dx * (d.efc[(r + j) * kEfcStride + kEfcForce] - T(0.5) * wj[kNewtonH] * dx);
            }
          } else {
            T x0[6], dx[6];
            for (int j = 0; j < n; ++j) {
              const T* wj = d.efc_newton + (r + j) * kNewtonStride;
              x0[j] = wj[kNewtonJar], dx[j] = alpha * wj[kNewtonJv];
            }
            dcost += row_cost_change(m, d, r, n, x0, dx);
          }
          r += n;
        }
        improvement = -scale * dcost;
      }
    }
    ++iter;
    for (int i = 0; i < nv; ++i) a[i] += alpha * dir[i], Ma[i] += alpha * Mdir[i];
    for (int r = 0; r < nr; ++r) {
      T* w = d.efc_newton + r * kNewtonStride;
      w[kNewtonJar] += alpha * w[kNewtonJv];
    }
    last_step = abs_(alpha) * dmax;
    stalled = !(last_step > eps * (T(1) + amax));  // (the forces at a, then stop)
  }
  return iter;
}

// qfrc_constraint = J^T f over the rows' chains; qacc stays Newton's iterate, as MuJoCo's (with stiff
// rows, R ~ 1e-11 on a nearly frictionless pyramid, f = -(J a - aref) / R carries the rounding of J a
// times 1 / R, and a0 + M^-1 J^T f would be off by far more than a).
template <class T>
RLT_HD void newton_constraint_force(const ModelView<T>& m, const DataView<T>& d, int nr) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i) d.qfrc_constraint[i] = T(0);
  for (int r = 0; r < nr; ++r) {
    const T* w = d.efc_newton + r * kNewtonStride;
    const T f = d.efc[r * kEfcStride + kEfcForce];
    if (f != T(0)) support_axpy(m, d.efc_J + r * nv, w, f, d.qfrc_constraint);
  }
}
}  // namespace constraint_detail

namespace constraint_detail {
// d.efc_Zf = sum_r f_r z_r afresh from the rows' forces, then d.qacc = a0 + M^-1 J^T f = qacc_smooth +
// L^-1 D^-1/2 efc_Zf (the last pass of solve_mass) and d.qfrc_constraint = J^T f.
template <class T>
RLT_HD void constraint_acceleration(const ModelView<T>& m, const DataView<T>& d, int nr) {
  const int nv = m.nv;
  const T* ld = d.qLD;
  for (int i = 0; i < nv; ++i) d.efc_Zf[i] = d.qfrc_constraint[i] = T(0);
  for (int r = 0; r < nr; ++r) {
    const T f = d.efc[r * kEfcStride + kEfcForce];
    if (f == T(0)) continue;
    row_axpy(d, nv, r, f, d.efc_Zf);
    const T* J = d.efc_J + r * nv;
    for (int i = 0; i < nv; ++i) d.qfrc_constraint[i] += f * J[i];
  }
  T* x = d.qacc;
  for (int i = 0; i < nv; ++i) x[i] = d.efc_Zf[i] * d.qLDiagSqrtInv[i];
  for (int i = 0; i < nv; ++i)  // L x = D^-1/2 Zf
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) x[i] -= ld[i * nv + j] * x[j];
  for (int i = 0; i < nv; ++i) x[i] += d.qacc_smooth[i];
}
}  // namespace constraint_detail

// The constraint forces (see the header): on entry d.qacc_smooth holds M^-1 f_smooth; on exit each
// row's force, d.qacc = a0 + M^-1 J^T f and d.qfrc_constraint = J^T f. Returns the Gauss-Seidel
// sweeps, or the Newton iterations (solves_by_newton). The sweeps keep the acceleration as
// efc_Zf = Z^T f (factor_row): J_r a = J_r a0 + z_r . Zf, so a row's update reads and writes only
// its z's few nonzero entries.
template <class T>
RLT_HD int constraint_solve(const ModelView<T>& m, const DataView<T>& d, int nr) {
  using namespace constraint_detail;
  const int nv = m.nv;
  if (solves_by_newton(m)) {
    const int iter = newton_solve(m, d, nr);
    if (needs_z(m)) {  // noslip follows: it reads the force bounds and efc_Zf
      for (int r = 0; r < nr; ++r) set_force_bounds(m, d.efc + r * kEfcStride);
      constraint_acceleration(m, d, nr);
    } else {
      newton_constraint_force(m, d, nr);
    }
    return iter;
  }
  for (int i = 0; i < nv; ++i) d.efc_Zf[i] = T(0);
  T scale = T(0);
  for (int r = 0; r < nr; ++r) {
    const T* J = d.efc_J + r * nv;
    T* e = d.efc + r * kEfcStride;
    T a0 = T(0);
    for (int i = 0; i < nv; ++i) a0 += J[i] * d.qacc_smooth[i];
    e[kEfcRes0] = a0 - e[kEfcAref];
    const T g = abs_(e[kEfcRes0]);
    scale = g > scale ? g : scale;
    set_force_bounds(m, e);
  }
  // (No warm start: MuJoCo's, the forces f(J qacc - aref) of the last acceleration when their dual
  // cost is below zero's, was measured, docs/RESULTS.md "Tenth session": 3-25% fewer sweeps on the
  // robots, and no faster on the CPU, the start costing what the sweeps saved.)
  // (floored at 1e-6 m/s^2, so rounding noise cannot keep a problem already solved at f = 0 going)
  const T stop = tolerance<T>() * (scale > T(1e-6) ? scale : T(1e-6));
  const bool elliptic = m.cone == kConeElliptic;
  int sweep = 0;
  const int sweeps = max_sweeps<T>();
  while (nr > 0 && sweep < sweeps) {
    ++sweep;
    T largest = T(0);
    for (int r = 0; r < nr; ++r) {
      T* e = d.efc + r * kEfcStride;
      if (elliptic && e[kEfcOwner] >= T(0)) {  // an elliptic contact's rows as one block
        int n = 1;
        while (r + n < nr && d.efc[(r + n) * kEfcStride + kEfcOwner] == e[kEfcOwner]) ++n;
        if (n > 1) {
          const T moved = elliptic_update(m, d, r, n);
          largest = moved > largest ? moved : largest;
          r += n - 1;
          continue;
        }
      }
      // residual J a - aref + R f, a = a0 + M^-1 J^T f; the new force clamped to the row's bounds
      const T res = e[kEfcRes0] + e[kEfcR] * e[kEfcForce] + row_dot(d, nv, r, d.efc_Zf);
      T f = e[kEfcForce] - res / e[kEfcDiag];
      f = f > e[kEfcLo] ? f : e[kEfcLo];  // (NaN: the lower bound, as f > 0 ? f : 0 left it)
      f = f < e[kEfcHi] ? f : e[kEfcHi];
      const T df = f - e[kEfcForce];
      if (df == T(0)) continue;
      e[kEfcForce] = f;
      row_axpy(d, nv, r, df, d.efc_Zf);
      const T moved = abs_(df) * e[kEfcDiag];
      largest = moved > largest ? moved : largest;
    }
    if (!(largest > stop)) break;
  }
  // qacc afresh from the final forces (the sweeps' running updates accumulate rounding), so that it
  // pairs with qfrc_constraint = J^T f.
  constraint_acceleration(m, d, nr);
  return sweep;
}

// Per contact, from the rows' forces: the normal force, whether it pushes, the friction force
// (MuJoCo's mj_contactForce: a pyramid's normal is the sum of its edges, friction component k
// mu_k (f_k+ - f_k-); an elliptic cone's rows are the components themselves).
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
    if (edges > 1) {
      Vec3<T> t1, t2;
      constraint_detail::contact_frame(m, d, con, &t1, &t2);
      if (m.cone == kConeElliptic) {
        ft = f[kEfcStride] * t1 + f[2 * kEfcStride] * t2;
      } else {
        for (int k = 1; k < edges; ++k) fn += f[k * kEfcStride];
        ft = (mu * (f[0] - f[kEfcStride])) * t1 + (mu * (f[2 * kEfcStride] - f[3 * kEfcStride])) * t2;
      }
    }
    con[kConForce] = fn;
    con[kConActive] = fn > T(0) ? T(1) : T(0);
    ft.store(con + kConFriction);
    r += edges;
  }
}

// The torsional and rolling friction torque of a contact of condim 4 or 6 on geom 2's body (world;
// its efc rows from kConTorqueRow, as constraint_contact_forces): components about n (torsion), t1
// and t2 (rolling). Zero for condim 1 and 3.
template <class T>
RLT_HD Vec3<T> contact_torque(const ModelView<T>& m, const DataView<T>& d, const T* con) {
  const int row = static_cast<int>(con[kConTorqueRow]) - 1;
  if (row < 0) return Vec3<T>::zero();
  const constraint_detail::ContactParams<T> cp =
      constraint_detail::contact_params(m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2]));
  const int dim = constraint_detail::contact_dim(cp);
  Vec3<T> t1, t2;
  constraint_detail::contact_frame(m, d, con, &t1, &t2);
  const Vec3<T> n = Vec3<T>::load(con + kConNormal);
  const T* f = d.efc + row * kEfcStride + kEfcForce;
  Vec3<T> tq = Vec3<T>::zero();
  for (int k = 3; k < dim; ++k) {
    const T c = m.cone == kConeElliptic ? f[k * kEfcStride]
                                        : cp.fr[k - 1] * (f[(2 * k - 2) * kEfcStride] - f[(2 * k - 1) * kEfcStride]);
    tq += c * (k == 3 ? n : k == 4 ? t1 : t2);
  }
  return tq;
}

// MuJoCo's noslip post-pass on the friction rows (m.noslip_iterations > 0), defined in sim/noslip.h
// (which sim/physics_step.h includes).
template <class T>
RLT_HD int noslip_solve(const ModelView<T>& m, const DataView<T>& d, int nr);

// The constrained acceleration of one substep (physics_substep with soft constraints; smooth
// forces, actuator forces and the contact list done): d.qacc for the Euler update.
template <class T>
RLT_HD void soft_constraint_acceleration(const ModelView<T>& m, const DataView<T>& d, T h, T hd) {
  factor_mass_load(m, d, T(0));
  factor_mass_eliminate(m, d);
  for (int i = 0; i < m.nv; ++i) d.qLDiagSqrtInv[i] = T(1) / m_sqrt(d.qLD[i * m.nv + i]);
  for (int i = 0; i < m.nv; ++i)
    d.qacc_smooth[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
  solve_mass(m, d, d.qacc_smooth);
  const int nr = constraint_rows(m, d, h);
  d.solver_niter[0] = T(constraint_solve(m, d, nr));
  if (m.noslip_iterations > 0) noslip_solve(m, d, nr);
  constraint_contact_forces(m, d, nr);
  // The solver's answer, before the implicit damping below: a step (physics_substep) keeps it as the
  // next substep's warm start, as MuJoCo's mj_advance keeps d->qacc; a forward pass alone does not.
  for (int i = 0; i < (m.newton_warmstart ? m.nv : 0); ++i) d.qacc_solver[i] = d.qacc[i];
  // The acceleration sensors read this qacc (MuJoCo's d->qacc: the solver's, without the implicit
  // damping below), kept before the damped solve replaces d.qacc (sim/sensors.h rne_post_constraint).
  for (int i = 0; i < m.nv && m.nbody_acc > 0; ++i) d.sensor_qacc[i] = d.qacc[i];
  bool damped = false;
  for (int i = 0; i < m.nv && hd > T(0); ++i) damped = damped || m.dof_damping[i] != T(0);
  if (!damped) return;  // qacc = a0 + M^-1 J^T f already
  factor_mass_load(m, d, hd);
  factor_mass_eliminate(m, d);
  for (int i = 0; i < m.nv; ++i)
    d.qacc[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] + d.qfrc_constraint[i] - d.qfrc_bias[i];
  solve_mass(m, d, d.qacc);
}

// Host code. MuJoCo's body_simple == 2 (model_body_simple, sim/model_view.h): a simple body moved by
// axis-aligned slides only.
template <class T>
bool slide_only_simple_body(const ModelView<T>& m, int b) {
  return model_body_simple(m, b) == 2;
}

// MuJoCo's body_invweight0 (translational; body_invweight0_rot the rotational) and dof_invweight0
// at qpos0 (see ModelView), into the view's own block `reals`. Host code. Computed once for the
// nominal model: domain randomization of masses (envs' dr_added_mass) leaves them as they are, as
// MuJoCo does without a new mj_setConst.
template <class T>
void set_invweight0(const ModelView<T>& view, std::vector<T>& reals) {
  const ModelOffsets o = model_offsets(view);
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
    // rotational (MuJoCo's body_invweight0[2b+1]): the same with the angular Jacobian, cdof's axes
    T rot = T(0);
    for (int k = 0; k < 3; ++k) {
      for (int i = 0; i < nv; ++i) jr[static_cast<size_t>(i)] = T(0);
      for (int i = last_dof(view, b); i >= 0; i = view.dof_parentid[i]) jr[static_cast<size_t>(i)] = d.cdof[6 * i + k];
      x = jr;
      solve_mass(view, d, x.data());
      for (int i = 0; i < nv; ++i) rot += jr[static_cast<size_t>(i)] * x[static_cast<size_t>(i)];
    }
    reals[static_cast<size_t>(o.body_invweight0_rot + b)] = rot / T(3);
  }
  for (int i = 0; i < nv; ++i) {
    for (int k = 0; k < nv; ++k) x[static_cast<size_t>(k)] = T(k == i ? 1 : 0);
    solve_mass(view, d, x.data());
    reals[static_cast<size_t>(o.dof_invweight0 + i)] = x[static_cast<size_t>(i)];
  }
  // Tendons (sim/tendon.h), as MuJoCo's mj_setConst: the length at qpos0 and J M^-1 J^T there; then
  // a spring length left at -1 -1 becomes the length at qpos_spring.
  if (view.ntendon > 0) {
    tendon_kinematics(view, d);
    for (int t = 0; t < view.ntendon; ++t) {
      for (int k = 0; k < nv; ++k) x[static_cast<size_t>(k)] = d.ten_J[t * nv + k];
      solve_mass(view, d, x.data());
      T w = T(0);
      for (int k = 0; k < nv; ++k) w += d.ten_J[t * nv + k] * x[static_cast<size_t>(k)];
      reals[static_cast<size_t>(o.tendon_invweight0 + t)] = w;
      reals[static_cast<size_t>(o.tendon_length0 + t)] = d.ten_length[t];
    }
    for (int i = 0; i < view.nq; ++i) d.qpos[i] = view.qpos_spring[i];
    kinematics(view, d);
    com_position(view, d);
    tendon_kinematics(view, d);
    for (int t = 0; t < view.ntendon; ++t) {
      T* spring = reals.data() + o.tendon_lengthspring + 2 * t;
      if (spring[0] == T(-1) && spring[1] == T(-1)) spring[0] = spring[1] = d.ten_length[t];
    }
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
  // MuJoCo's "simple" bodies moved by axis-aligned slides only (body_simple 2: e.g. a target on
  // x and y slides) take 1/mass for the body and for each of their dofs, whatever the other axes
  // and the armature (mj_setConst).
  for (int b = 1; b < view.nbody; ++b) {
    if (!slide_only_simple_body(view, b)) continue;
    const T inv = T(1) / (view.body_mass[b] > T(1e-15) ? view.body_mass[b] : T(1e-15));
    reals[static_cast<size_t>(o.body_invweight0 + b)] = inv;
    for (int k = 0; k < view.body_jntnum[b]; ++k)
      reals[static_cast<size_t>(o.dof_invweight0 + view.jnt_dofadr[view.body_jntadr[b] + k])] = inv;
  }
}

#ifndef __CUDACC__
// Compiled once for the host, in sim/physics_instances.cpp (nvcc's translation units make their own).
extern template void soft_constraint_acceleration<float>(const ModelView<float>&, const DataView<float>&, float, float);
extern template void set_invweight0<float>(const ModelView<float>&, std::vector<float>&);
extern template void soft_constraint_acceleration<double>(const ModelView<double>&, const DataView<double>&, double, double);
extern template void set_invweight0<double>(const ModelView<double>&, std::vector<double>&);
#endif

}  // namespace rlt
