// MuJoCo's noslip solver (engine_solver.c, mj_solNoSlip): a post-pass after the main constraint
// solve (sim/constraints.h, constraint_solve) when the model asks for it (MJCF option
// noslip_iterations > 0), which takes out the slip that the soft contacts' regularizer R allows.
// Single source: RLT_HD, no std::, no allocation; it works on the rows the main solve left in the
// env's DataView (efc_*).
//
// What it solves: Gauss-Seidel sweeps, in row order, over the friction rows only, each block
// minimizing 1/2 f^T A f + f^T b with every other force held, A = J M^-1 J^T WITHOUT R (MuJoCo's
// flg_subR: the diagonal A_rr = (A + R)_rr - R_r, at least mjMINVAL for a single row, 1e-10 in a
// block), b = J a0 - aref:
//   friction loss  (a dof's or a tendon's) one row, clamped to +-frictionloss
//   pyramidal      each pair of opposite edges (n + mu_k t_k, n - mu_k t_k) of a contact of
//                  condim >= 3, with their sum (the normal force they carry) held: f = mid +- y,
//                  y minimizing over [-mid, mid] (K1 = A00 + A11 - 2 A01 < mjMINVAL: both mid)
//   elliptic       the condim - 1 friction rows of a contact with its normal force fn held, in
//                  the ellipse sum_j (f_j / mu_j)^2 <= fn^2 (MuJoCo's mju_QCQP2/3/QCQP, then onto
//                  the ellipse when the bound is active); fn < mjMINVAL: no friction
// Equality, limit and normal (condim 1) rows keep the main solve's forces. A pyramid pair's or an
// elliptic block's step that raises the cost by more than 1e-10 is undone (MuJoCo's costChange).
// It stops after noslip_iterations sweeps, or when a sweep's improvement (the cost's decrease,
// the first sweep's plus 1/2 sum_r R_r f_r^2 over the island's rows, MuJoCo's correction for
// dropping R) over the island's sum of M's diagonal (at the current state) is below
// noslip_tolerance. Then, as MuJoCo's mj_dualFinish,
// qacc = a0 + M^-1 J^T f and qfrc_constraint = J^T f from the new forces.
// As MuJoCo 3 (islands on by default, mj_solNoSlip_island), each constraint island (kinematic trees
// joined by the rows that touch more than one) is swept with its own stopping test.
#pragma once

#include "sim/common.h"
#include "sim/constraints.h"

namespace rlt {

namespace noslip_detail {

using constraint_detail::abs_;
using constraint_detail::kMinVal;
using constraint_detail::max_;

// MuJoCo's noslip QCQP (mju_QCQP2, mju_QCQP3, mju_QCQP): v minimizing 1/2 v^T A v + b^T v with
// sum_j (v_j / mu_j)^2 <= r^2 (n <= 5) by Newton on |v(lambda)|^2 - r^2 in the scaled variables,
// from lambda = 0, at most 20 steps, stopping within 1e-10; A + lambda not positive definite
// (n <= 3: its determinant below 1e-10; else a Cholesky pivot below 1e-10): v = 0 and no bound.
// Returns whether the bound is active (lambda > 0); the caller then scales v onto the ellipse.
template <class T>
RLT_HD bool qcqp(const T* A_in, const T* b_in, const T* mu, T r, int n, T* v) {
  T A[25], H[25], b[5], tmp[5];
  for (int i = 0; i < n; ++i) {
    b[i] = b_in[i] * mu[i];
    for (int j = 0; j < n; ++j) A[i * n + j] = A_in[i * n + j] * mu[i] * mu[j];
  }
  T la = T(0);
  for (int iter = 0; iter < 20; ++iter) {
    for (int k = 0; k < n * n; ++k) H[k] = A[k];
    for (int i = 0; i < n; ++i) H[i * n + i] += la;
    // Cholesky H = L L^T with MuJoCo's positive-definiteness test
    T det = T(1);
    bool ok = true;
    for (int j = 0; j < n; ++j) {
      T s = H[j * n + j];
      for (int k = 0; k < j; ++k) s -= H[j * n + k] * H[j * n + k];
      det *= s;
      if (n > 3 && s < T(1e-10)) ok = false;
      const T ljj = m_sqrt(max_(s, T(1e-10)));
      H[j * n + j] = ljj;
      for (int i = j + 1; i < n; ++i) {
        T x = H[i * n + j];
        for (int k = 0; k < j; ++k) x -= H[i * n + k] * H[j * n + k];
        H[i * n + j] = x / ljj;
      }
    }
    if (n <= 3 && det < T(1e-10)) ok = false;
    if (!ok) {
      for (int i = 0; i < n; ++i) v[i] = T(0);
      return false;
    }
    for (int i = 0; i < n; ++i) v[i] = -b[i];
    constraint_detail::small_cholesky_solve(H, v, n, false);
    T val = -r * r;
    for (int i = 0; i < n; ++i) val += v[i] * v[i];
    if (val < T(1e-10)) break;  // converged, or the unconstrained minimum is inside
    for (int i = 0; i < n; ++i) tmp[i] = v[i];
    constraint_detail::small_cholesky_solve(H, tmp, n, false);
    T deriv = T(0);
    for (int i = 0; i < n; ++i) deriv += v[i] * tmp[i];
    deriv *= T(-2);
    const T delta = -val / deriv;
    if (!(delta >= T(1e-10))) break;
    la += delta;
  }
  for (int i = 0; i < n; ++i) v[i] *= mu[i];
  return la != T(0);
}

// MuJoCo's costChange: the cost change 1/2 df^T A df + df^T res of a block's step (res: its
// residual before the step, without R); a rise above 1e-10 restores the old forces and counts 0.
template <class T>
RLT_HD T cost_change(const T* A, T* f, const T* f_old, const T* res, int n) {
  T change = T(0);
  for (int j = 0; j < n; ++j) {
    const T dj = f[j] - f_old[j];
    T Ad = T(0);
    for (int k = 0; k < n; ++k) Ad += A[j * n + k] * (f[k] - f_old[k]);
    change += T(0.5) * dj * Ad + dj * res[j];
  }
  if (change > T(1e-10)) {
    for (int j = 0; j < n; ++j) f[j] = f_old[j];
    change = T(0);
  }
  return change;
}

// Rows [r, r + n)'s residuals without R (b + A f = Res0 + z . Zf), their forces, and their A block
// (the diagonal less R, at least 1e-10: MuJoCo's extractBlock).
template <class T>
RLT_HD void block(const DataView<T>& d, int nv, int r, int n, T* res, T* f, T* A) {
  for (int j = 0; j < n; ++j) {
    const T* e = d.efc + (r + j) * kEfcStride;
    res[j] = e[kEfcRes0] + constraint_detail::row_dot(d, nv, r + j, d.efc_Zf);
    f[j] = e[kEfcForce];
    for (int k = 0; k < n; ++k)
      A[j * n + k] = j == k ? max_(T(1e-10), e[kEfcDiag] - e[kEfcR]) : constraint_detail::rows_dot(d, nv, r + j, r + k);
  }
}

// Writes a block's new forces and carries their change into efc_Zf (= Z^T f).
template <class T>
RLT_HD void store(const DataView<T>& d, int nv, int r, int n, const T* f) {
  for (int j = 0; j < n; ++j) {
    T* e = d.efc + (r + j) * kEfcStride;
    const T df = f[j] - e[kEfcForce];
    if (df == T(0)) continue;
    e[kEfcForce] = f[j];
    constraint_detail::row_axpy(d, nv, r + j, df, d.efc_Zf);
  }
}


// The islands (MuJoCo's mj_island): kinematic trees (body_rootid) joined by the rows that touch
// more than one, kept as a union-find over the root bodies in d.noslip_tree (a processed island's
// root marked -1). A contact's trees are its two geoms' bodies' (those that move), whatever its
// rows' Jacobians (a contact row can be zero in every dof); another row's, those of its z's
// nonzero dofs (factor_row).
template <class T>
RLT_HD int island_find(const DataView<T>& d, int b) {
  int root = b;
  for (int p = static_cast<int>(d.noslip_tree[root]); p >= 0 && p != root; p = static_cast<int>(d.noslip_tree[root]))
    root = p;
  while (b != root) {  // path compression
    const int next = static_cast<int>(d.noslip_tree[b]);
    d.noslip_tree[b] = T(root);
    b = next;
  }
  return root;
}
// The tree of a contact's geom k (0, 1), -1 when its body does not move.
template <class T>
RLT_HD RLT_INLINE int contact_tree(const ModelView<T>& m, const DataView<T>& d, int r, int k) {
  const T* con = d.contact + kContactStride * static_cast<int>(d.efc[r * kEfcStride + kEfcOwner]);
  const int b = m.geom_bodyid[static_cast<int>(con[k == 0 ? kConGeom1 : kConGeom2])];
  return last_dof(m, b) >= 0 ? m.body_rootid[b] : -1;
}
// The tree of the k-th nonzero dof of row r's z.
template <class T>
RLT_HD RLT_INLINE int z_tree(const ModelView<T>& m, const DataView<T>& d, int r, int k) {
  return m.body_rootid[m.dof_bodyid[static_cast<int>(d.efc_Zind[r * m.nv + k])]];
}
// Row r's island (its root body), -1 for a row that touches no dof.
template <class T>
RLT_HD int row_island(const ModelView<T>& m, const DataView<T>& d, int r) {
  if (d.efc[r * kEfcStride + kEfcOwner] >= T(0)) {
    const int t = contact_tree(m, d, r, 0);
    const int u = t >= 0 ? t : contact_tree(m, d, r, 1);
    return u >= 0 ? island_find(d, u) : -1;
  }
  return d.efc[r * kEfcStride + kEfcNnz] > T(0) ? island_find(d, z_tree(m, d, r, 0)) : -1;
}
// Joins the trees row r touches.
template <class T>
RLT_HD void island_join(const ModelView<T>& m, const DataView<T>& d, int r) {
  const int n = static_cast<int>(d.efc[r * kEfcStride + kEfcNnz]);
  int a = row_island(m, d, r);
  if (a < 0) return;
  for (int k = 0; k < n + 2; ++k) {
    const int t = k < n ? z_tree(m, d, r, k) : d.efc[r * kEfcStride + kEfcOwner] >= T(0) ? contact_tree(m, d, r, k - n) : -1;
    if (t < 0) continue;
    const int b = island_find(d, t);
    if (b != a) d.noslip_tree[b] = T(a);
  }
}

// One sweep over the rows of one island from row `first` (see the header); returns the cost's
// decrease.
template <class T>
RLT_HD T sweep(const ModelView<T>& m, const DataView<T>& d, int nr, int island, int first) {
  const int nv = m.nv;
  const bool elliptic = m.cone == kConeElliptic;
  T A[25], res[5], f[5], f_old[5], bc[5], v[5], mu[5];
  T improvement = T(0);
  for (int r = first; r < nr; ++r) {
    T* e = d.efc + r * kEfcStride;
    const double owner = static_cast<double>(e[kEfcOwner]);
    const bool friction_loss =
        constraint_detail::friction_dof(owner) >= 0 || constraint_detail::friction_tendon(owner) >= 0;
    if (!friction_loss && owner < 0) continue;  // equality and limit rows keep their forces
    int n = 1;                                  // a contact's rows
    if (!friction_loss)
      while (r + n < nr && d.efc[(r + n) * kEfcStride + kEfcOwner] == e[kEfcOwner]) ++n;
    if (row_island(m, d, r) != island) {
      r += n - 1;
      continue;
    }
    if (friction_loss) {  // the row's own minimum without R, clamped to its bounds
      block(d, nv, r, 1, res, f, A);
      const T a = e[kEfcDiag] - e[kEfcR];
      const T ainv = T(1) / (a > T(kMinVal) ? a : T(kMinVal));
      T fr = f[0] - res[0] * ainv;
      fr = fr < e[kEfcLo] ? e[kEfcLo] : fr > e[kEfcHi] ? e[kEfcHi] : fr;
      const T delta = fr - f[0];
      improvement -= T(0.5) * delta * delta / ainv + delta * res[0];
      store(d, nv, r, 1, &fr);
      continue;
    }
    if (n == 1) continue;  // frictionless (condim 1)
    if (!elliptic) {
      for (int j = r; j < r + n; j += 2) {  // pairs of opposite edges, their sum held
        block(d, nv, j, 2, res, f, A);
        for (int k = 0; k < 2; ++k) f_old[k] = f[k], bc[k] = res[k] - (A[2 * k] * f[0] + A[2 * k + 1] * f[1]);
        const T mid = T(0.5) * (f[0] + f[1]);
        const T K1 = A[0] + A[3] - A[1] - A[2];
        const T K0 = mid * (A[0] - A[3]) + bc[0] - bc[1];
        if (K1 < T(kMinVal)) {
          f[0] = f[1] = mid;
        } else {
          const T y = -K0 / K1;
          if (y < -mid) f[0] = T(0), f[1] = T(2) * mid;
          else if (y > mid) f[0] = T(2) * mid, f[1] = T(0);
          else f[0] = mid + y, f[1] = mid - y;
        }
        improvement -= cost_change(A, f, f_old, res, 2);
        store(d, nv, j, 2, f);
      }
    } else {  // the friction rows after the normal, the normal force held
      const int nf = n - 1;
      const T* con = d.contact + kContactStride * static_cast<int>(e[kEfcOwner]);
      const constraint_detail::ContactParams<T> cp = constraint_detail::contact_params(
          m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2]));
      for (int k = 0; k < nf; ++k) mu[k] = cp.fr[k];
      block(d, nv, r + 1, nf, res, f, A);
      for (int j = 0; j < nf; ++j) {
        f_old[j] = f[j];
        bc[j] = res[j];
        for (int k = 0; k < nf; ++k) bc[j] -= A[j * nf + k] * f[k];
      }
      const T fn = e[kEfcForce];
      if (fn < T(kMinVal)) {
        for (int j = 0; j < nf; ++j) f[j] = T(0);
      } else {
        if (qcqp(A, bc, mu, fn, nf, v)) {  // on the bound: onto the ellipse exactly
          T s = T(0);
          for (int j = 0; j < nf; ++j) s += v[j] * v[j] / (mu[j] * mu[j]);
          const T scl = m_sqrt(fn * fn / max_(T(kMinVal), s));
          for (int j = 0; j < nf; ++j) v[j] *= scl;
        }
        for (int j = 0; j < nf; ++j) f[j] = v[j];
      }
      improvement -= cost_change(A, f, f_old, res, nf);
      store(d, nv, r + 1, nf, f);
    }
    r += n - 1;
  }
  return improvement;
}

}  // namespace noslip_detail

// The noslip post-pass (see the header) over the nr rows constraint_solve solved: on entry their
// forces, efc_Zf = Z^T f and d.qacc_smooth; on exit the new forces, d.qacc and
// d.qfrc_constraint. Each island (its rows in order) is swept until its own stopping test, as
// MuJoCo's mj_solNoSlip_island. Returns the most sweeps an island took (0 when the model has
// noslip_iterations 0).
template <class T>
RLT_HD int noslip_solve(const ModelView<T>& m, const DataView<T>& d, int nr) {
  using namespace noslip_detail;
  const int iters = m.noslip_iterations;
  if (iters <= 0 || nr <= 0) return 0;
  for (int b = 0; b < m.nbody; ++b) d.noslip_tree[b] = T(b);
  for (int r = 0; r < nr; ++r) island_join(m, d, r);
  int most = 0;
  for (int first = 0; first < nr; ++first) {
    const int island = row_island(m, d, first);
    if (island < 0 || d.noslip_tree[island] < T(0)) continue;  // no dofs, or an island done
    // the stopping test's scale: 1 / the island's sum of M's diagonal (measured on MuJoCo 3.17,
    // whose statistic meaninertia no longer enters; older sources: meaninertia * nv at qpos0)
    T trace = T(0);
    for (int i = 0; i < m.nv; ++i)
      if (island_find(d, m.body_rootid[m.dof_bodyid[i]]) == island) trace += d.qM[i * m.nv + i];
    const T scale = T(1) / max_(trace, T(kMinVal));
    int iter = 0;
    while (iter < iters) {
      T improvement = T(0);
      if (iter == 0)  // MuJoCo's correction for the cost without R
        for (int r = first; r < nr; ++r) {
          const T* e = d.efc + r * kEfcStride;
          if (row_island(m, d, r) == island) improvement += T(0.5) * e[kEfcForce] * e[kEfcForce] * e[kEfcR];
        }
      improvement += sweep(m, d, nr, island, first);
      ++iter;
      if (improvement * scale < m.noslip_tolerance) break;
    }
    most = iter > most ? iter : most;
    d.noslip_tree[island] = T(-1);  // done (island_find stops at a negative parent)
  }
  constraint_detail::constraint_acceleration(m, d, nr);
  return most;
}

}  // namespace rlt
