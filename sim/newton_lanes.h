// MuJoCo's Newton solve on constraint rows in slots, written once for one env (F = float: the
// CUDA thread, the scalar reference) and for kLanes envs in SIMD lanes (F = LaneFloat): the CPU
// PhysicsBatch's physics in lanes (sim/slot_step.h; docs/ARCHITECTURE.md "Physics in lanes").
//
// Slots. Lanes step one instruction stream, so every lane must see the same rows: slot s holds the
// same constraint in every lane (an edge of a contact between the same two geoms, a joint's limit,
// a dof's friction loss), whose Jacobian is zero off one dof chain (deep up to top), or off two
// (a contact between two limbs: the second from deep_b up to top_b, below where it meets the
// first), that do not depend on the lane. A lane where that constraint is not active holds an
// inert row: J = 0, aref = -1, R = 1 and no friction-loss bound, so J a - aref = 1 whatever a: an
// inequality slot's row never pushes (force 0, h 0), a friction slot's sits on its constant side
// (force -0, h 0), an equality slot's reports force -1 with h 1; with J = 0 none of them reaches
// the gradient, H or the line search's cost. The robots MuJoCo Playground trains have only such rows (feet against the
// floor, joint limits, friction losses; the G1's hands against its thighs on two chains); a row over three branches (a
// tendon across three limbs) or an elliptic cone does not fit, and such models keep sim/constraints.h's newton_solve.
//
// The algorithm is newton_solve's under a model's iterations budget (m.newton_iterations, float):
// MuJoCo's warm start, then per iteration the rows' forces and h at a, g = M (a - a0) - J^T f,
// H = M + J^T h J: the one-chain slots' part on qM's tree pattern factored afresh (tree_ltdl_factor:
// no rank-one updates, whose choice is a branch per env), the two-chain slots' by Woodbury's
// identity at the solve (as newton_low_rank_solve), dir = -H^-1 g, MuJoCo's line search (mujoco_line_search's
// points and decisions, here a state machine per lane, LaneLineSearch: every lane asks for one
// point per round and all of them are evaluated by one pass over the slots), and MuJoCo's stopping
// tests (gradient, improvement, Newton decrement) with newton_solve's guards (a non-finite step,
// no descent, a step below rounding). Not newton_solve's refinement stop (no row changed piece since
// the last step, and the correction is below rounding or no longer shrinking): where that stops,
// this takes one more line search, whose step is of the rounding's size. What decides is scalar code per lane; what
// costs (rows, H, its factors, the products with M and J) runs in lanes. Each lane computes the bits that F = float
// computes for that env on the same slots (tests/sim/test_newton_lanes.cpp); against newton_solve the answers differ by
// float rounding (H's factors, the order of the sums).
#pragma once

#if !defined(__CUDACC__)
#include <array>
#include <map>
#include <string>
#include <vector>
#endif

#include "sim/constraints.h"
#include "sim/dynamics.h"
#include "sim/lanes.h"
#include "sim/model_view.h"

namespace rlt {

// Lanes of F, and one lane's value (float: the one env).
template <class F>
struct LaneCount {
  static constexpr int value = 1;
};
RLT_HD RLT_INLINE float lane_value(float x, int) { return x; }
RLT_HD RLT_INLINE void set_lane_value(float& x, int, float v) { x = v; }
#if defined(RLT_LANES)
template <>
struct LaneCount<LaneFloat> {
  static constexpr int value = kLanes;
};
RLT_LANES_INLINE float lane_value(const LaneFloat& x, int l) { return x.lane(l); }
RLT_LANES_INLINE void set_lane_value(LaneFloat& x, int l, float v) { x.set_lane(l, v); }
#endif

// The rows of a solve in slots (n slots, nv = the model's). Per slot, the same for every lane: the
// chain (J zero off the tree path from dof deep up to dof top, and where deep_b >= 0 off a second,
// deep_b up to top_b, disjoint from the first), the kind (ScalarRowKind). Per slot
// and lane: J (n x nv, zero off the chain), aref, R (the regularizer, > 0), fl (a friction loss's
// bound on |f|, else 0). On exit force holds each slot's force at the solve's acceleration.
template <class F>
struct SlotRows {
  int n = 0;
  const int* deep = nullptr;
  const int* top = nullptr;
  const int* deep_b = nullptr;
  const int* top_b = nullptr;
  const int* kind = nullptr;
  const F* J = nullptr;
  const F* aref = nullptr;
  const F* R = nullptr;
  const F* fl = nullptr;
  F* force = nullptr;
};

// The most two-chain slots a solve takes (their low-rank correction is a k x k system; SlotLayout
// and slot_rows_from_envs refuse a model or a group that could have more).
constexpr int kSlotMaxCross = 32;
// Scratch of slot_newton_solve: values of F.
RLT_HD RLT_INLINE int slot_newton_scratch(int nv, int n) {
  return 6 * n + 4 * nv + nv * nv + kSlotMaxCross * nv + kSlotMaxCross * kSlotMaxCross + kSlotMaxCross;
}

// What the solve did per lane (tests, the bench): Newton iterations (line searches) and line-search points.
struct SlotNewtonStats {
  int iterations[16];
  int points[16];
};

namespace slot_newton_detail {

using namespace constraint_detail;

template <class F>
RLT_HD RLT_INLINE F absf(F x) {
  return select(x < F(0), -x, x);
}

// scalar_row_force of a slot at x, lane by lane: force, h and the piece (RowState, as F).
template <class F>
RLT_HD RLT_INLINE void slot_force(int kind, F D, F R, F fl, F x, F* f, F* h, F* state) {
  *f = -D * x, *h = D, *state = F(float(kRowQuadratic));
  if (kind == kScalarFriction) {
    const auto pos = x <= -R * fl, neg = x >= R * fl;
    *f = select(pos, fl, select(neg, -fl, *f));
    *h = select(pos || neg, F(0), *h);
    *state = select(pos, F(float(kRowFrictionPos)), select(neg, F(float(kRowFrictionNeg)), *state));
  } else if (kind == kScalarInequality) {
    const auto idle = x >= F(0);
    *f = select(idle, F(0), *f);
    *h = select(idle, F(0), *h);
    *state = select(idle, F(float(kRowFree)), *state);
  }
}
// scalar_row_cost: a slot's cost on piece s at x.
template <class F>
RLT_HD RLT_INLINE F slot_cost(F D, F R, F fl, F x, F s) {
  const F lin = F(0.5f) * R * fl * fl;
  return select(s == F(float(kRowQuadratic)), F(0.5f) * D * x * x,
                select(s == F(float(kRowFrictionPos)), -fl * x - lin,
                       select(s == F(float(kRowFrictionNeg)), fl * x - lin, F(0))));
}
// scalar_row_cost_change: from piece s0 at x0 to piece s1 at x0 + dx.
template <class F>
RLT_HD RLT_INLINE F slot_cost_change(F D, F R, F fl, F x0, F dx, F s0, F s1) {
  const F across = slot_cost(D, R, fl, x0 + dx, s1) - slot_cost(D, R, fl, x0, s0);
  const F same =
      select(s0 == F(float(kRowQuadratic)), D * dx * (x0 + F(0.5f) * dx),
             select(s0 == F(float(kRowFrictionPos)), -fl * dx, select(s0 == F(float(kRowFrictionNeg)), fl * dx, F(0))));
  return select(s0 != s1, across, same);
}

// J x and x += c J^T for slot s: over its chain, and its second.
template <class F>
RLT_HD RLT_INLINE F slot_dot(const ModelView<F>& m, const SlotRows<F>& rows, int s, const F* x) {
  const F* J = rows.J + s * m.nv;
  F r = F(0);
  for (int i = rows.deep[s]; i >= rows.top[s]; i = m.dof_parentid[i]) r += J[i] * x[i];
  for (int i = rows.deep_b[s]; i >= 0 && i >= rows.top_b[s]; i = m.dof_parentid[i]) r += J[i] * x[i];
  return r;
}
template <class F>
RLT_HD RLT_INLINE void slot_axpy(const ModelView<F>& m, const SlotRows<F>& rows, int s, F c, F* x) {
  const F* J = rows.J + s * m.nv;
  for (int i = rows.deep[s]; i >= rows.top[s]; i = m.dof_parentid[i]) x[i] += c * J[i];
  for (int i = rows.deep_b[s]; i >= 0 && i >= rows.top_b[s]; i = m.dof_parentid[i]) x[i] += c * J[i];
}

// A point of the line search in lanes (line_point): each lane at its own alpha.
template <class F>
struct LanePoints {
  F alpha, cost, slope, curv, noise;
};
template <class F>
RLT_HD void slot_line_point(const ModelView<F>& m, const SlotRows<F>& rows, const F* D, const F* jar, const F* jv,
                            const F* state, F dMa, F dMd, LanePoints<F>* p) {
  const F alpha = p->alpha;
  F cost = alpha * dMa + F(0.5f) * alpha * alpha * dMd, slope = dMa + alpha * dMd, curv = dMd;
  F terms = absf(dMa) + absf(alpha * dMd);
  for (int s = 0; s < rows.n; ++s) {
    const F x0 = jar[s], dx = alpha * jv[s];
    F f, h, s1;
    slot_force(rows.kind[s], D[s], rows.R[s], rows.fl[s], x0 + dx, &f, &h, &s1);
    slope -= jv[s] * f, curv += jv[s] * h * jv[s], terms += absf(jv[s] * f);
    cost += slot_cost_change(D[s], rows.R[s], rows.fl[s], x0, dx, state[s], s1);
  }
  p->cost = cost, p->slope = slope;
  p->curv = select(curv > F(0), curv, F(float(kMinVal)));
  p->noise = F(1e-6f) * terms;
}

}  // namespace slot_newton_detail

// mujoco_line_search for one lane as a state machine: `want` is the step it asks to evaluate next,
// feed() takes that point and decides, until done. The same decisions on the same points as
// mujoco_line_search (tests/sim/test_newton_lanes.cpp runs both).
struct LaneLineSearch {
  struct Point {
    float alpha, cost, slope, curv, noise;
  };
  enum Step : int { kP0, kP1, kOneSided, kP1Next, kMid, kBracket1, kBracket2, kDone };
  int step = kDone, evals = 0, budget = 0;
  float gtol = 0, gain = 0, alpha = 0, want = 0, dir = 1;
  bool moved1 = false;
  Point p0{}, p1{}, p2{}, pmid{}, p1next{}, p2next{}, cand[3]{};

  RLT_HD void start(int ls_budget, float ls_gtol) {
    step = kP0, evals = 0, budget = ls_budget, gtol = ls_gtol, gain = 0, alpha = 0, want = 0;
  }
  RLT_HD bool done() const { return step == kDone; }
  RLT_HD float tol(const Point& p) const { return gtol > p.noise ? gtol : p.noise; }
  RLT_HD static float abs_f(float x) { return x < 0.0f ? -x : x; }
  RLT_HD void finish(float a) { alpha = a, step = kDone; }
  RLT_HD void ask(float a, Step s) { want = a, step = s; }
  RLT_HD void one_sided() {
    if (p1.slope * dir <= -tol(p1) && evals < budget) {
      p2 = p1;
      return ask(p1.alpha - p1.slope / p1.curv, kOneSided);
    }
    if (evals >= budget) return finish(p1.alpha);  // (MuJoCo: could not bracket)
    p2next = p1;
    ask(p1.alpha - p1.slope / p1.curv, kP1Next);
  }
  RLT_HD void round() {  // a bracket round: its midpoint, or the better end once the budget is spent
    if (evals < budget) return ask(0.5f * (p1.alpha + p2.alpha), kMid);
    const Point& end = p1.cost <= p2.cost ? p1 : p2;
    gain = end.cost < 0.0f ? -end.cost : 0.0f;
    finish(end.cost < 0.0f ? end.alpha : 0.0f);
  }
  RLT_HD bool move(Point* p) const {  // line_bracket's choice of the nearer candidate
    bool moved = false;
    for (int i = 0; i < 3; ++i) {
      const Point& c = cand[i];
      const bool nearer = (p->slope < 0.0f && c.slope < 0.0f && p->slope < c.slope) ||
                          (p->slope > 0.0f && c.slope > 0.0f && p->slope > c.slope);
      if (nearer) *p = c, moved = true;
    }
    return moved;
  }
  RLT_HD void second_end() {
    if (move(&p2)) return ask(p2.alpha - p2.slope / p2.curv, kBracket2);
    if (!moved1) {  // (the bracket is at rounding: its midpoint)
      gain = -pmid.cost;
      return finish(pmid.alpha);
    }
    round();
  }
  RLT_HD void feed(const Point& p) {
    switch (step) {
      case kP0:
        p0 = p;
        return ask(-p0.slope / p0.curv, kP1);
      case kP1:
        p1 = p, evals = 2, gain = -p1.cost;
        if (abs_f(p1.slope) < tol(p1) && (p1.alpha == 0.0f || p1.cost < 0.0f)) return finish(p1.alpha);
        dir = p1.slope < 0.0f ? 1.0f : -1.0f;
        p2 = p0;
        return one_sided();
      case kOneSided:
        p1 = p, ++evals, gain = -p1.cost;
        if (abs_f(p1.slope) < tol(p1) && p1.cost < 0.0f) return finish(p1.alpha);
        return one_sided();
      case kP1Next:
        p1next = p, ++evals;
        return round();
      case kMid: {
        pmid = p, ++evals;
        cand[0] = p1next, cand[1] = p2next, cand[2] = pmid;
        int best = -1;
        for (int i = 0; i < 3; ++i)
          if (abs_f(cand[i].slope) < tol(cand[i]) && (best < 0 || cand[i].cost < cand[best].cost)) best = i;
        if (best >= 0) {
          gain = -cand[best].cost;
          return finish(cand[best].alpha);
        }
        moved1 = move(&p1);
        if (moved1) return ask(p1.alpha - p1.slope / p1.curv, kBracket1);
        return second_end();
      }
      case kBracket1:
        p1next = p, ++evals;
        return second_end();
      case kBracket2:
        p2next = p, ++evals;
        return round();
      default:
        return;
    }
  }
};

// MuJoCo's Newton solve under the model's budget on rows in slots (see the top of this file), for
// every lane of F at once: d's qacc_smooth (a0), qM and (with m.newton_warmstart) qacc_warmstart in;
// d.qacc (the solver's acceleration), d.qfrc_constraint = J^T f and rows.force out. `scratch` holds
// slot_newton_scratch(nv, n) values of F. Returns the most iterations a lane took.
template <class F>
RLT_HD int slot_newton_solve(const ModelView<F>& m, const DataView<F>& d, const SlotRows<F>& rows, F* scratch,
                             SlotNewtonStats* stats = nullptr) {
  using namespace slot_newton_detail;  // (and constraint_detail's)
  constexpr int L = LaneCount<F>::value;
  const int nv = m.nv, n = rows.n;
  F* D = scratch;
  F* jar = D + n;    // J a - aref at a
  F* jv = jar + n;   // J dir
  F* h = jv + n;     // each slot's h at a
  F* state = h + n;  // each slot's piece at a
  F* grad = state + n;
  F* dir = grad + nv;
  F* Mdir = dir + nv;
  F* Ma = Mdir + nv;  // M (a - a0)
  F* H = Ma + nv;
  F* Z = H + nv * nv;             // per two-chain slot: H_tree^-1 u, u = sqrt(h) J
  F* S = Z + kSlotMaxCross * nv;  // I + U^T H_tree^-1 U, then its factors
  F* c = S + kSlotMaxCross * kSlotMaxCross;
  F* hprev = c + kSlotMaxCross;  // each slot's h where H was last factored
  int cross[kSlotMaxCross];
  int ncross = 0;
  for (int s = 0; s < n; ++s)
    if (rows.deep_b[s] >= 0 && ncross < kSlotMaxCross) cross[ncross++] = s;
  F* a = d.qacc;
  const F* a0 = d.qacc_smooth;
  const F eps = F(1e-6f);
  bool active[L];
  float improvement[L];
  for (int l = 0; l < L; ++l) {
    active[l] = true, improvement[l] = 0.0f;
    if (stats) stats->iterations[l] = stats->points[l] = 0;
  }
  for (int i = 0; i < nv; ++i) a[i] = a0[i], Ma[i] = F(0);
  for (int s = 0; s < n; ++s) {
    D[s] = F(1) / rows.R[s];
    jar[s] = slot_dot(m, rows, s, a0) - rows.aref[s];
    F f, hs;
    slot_force(rows.kind[s], D[s], rows.R[s], rows.fl[s], jar[s], &f, &hs, &state[s]);
  }
  // MuJoCo's warm start: aw where its cost is no more than a0's (per lane)
  if (m.newton_warmstart && n > 0) {
    const F* aw = d.qacc_warmstart;
    for (int i = 0; i < nv; ++i) dir[i] = aw[i] - a0[i];
    mass_product(m, d, dir, Mdir);
    F dcost = F(0);
    for (int i = 0; i < nv; ++i) dcost += F(0.5f) * dir[i] * Mdir[i];
    for (int s = 0; s < n; ++s) {
      jv[s] = slot_dot(m, rows, s, dir);
      F f, hs, s1;
      slot_force(rows.kind[s], D[s], rows.R[s], rows.fl[s], jar[s] + jv[s], &f, &hs, &s1);
      dcost += slot_cost_change(D[s], rows.R[s], rows.fl[s], jar[s], jv[s], state[s], s1);
    }
    const auto warm = dcost <= F(0);
    for (int i = 0; i < nv; ++i) a[i] = select(warm, aw[i], a[i]), Ma[i] = select(warm, Mdir[i], Ma[i]);
    for (int s = 0; s < n; ++s) jar[s] = select(warm, jar[s] + jv[s], jar[s]);
  }
  F trace_m = F(0);
  for (int i = 0; i < nv; ++i) trace_m += d.qM[i * nv + i];
  const F scale = F(1) / select(trace_m > F(float(kMinVal)), trace_m, F(float(kMinVal)));
  const float tol = static_cast<float>(m.tolerance);
  int iter = 0;
  for (;; ++iter) {
    // the forces, h and pieces at a
    for (int s = 0; s < n; ++s) {
      F f;
      slot_force(rows.kind[s], D[s], rows.R[s], rows.fl[s], jar[s], &f, &h[s], &state[s]);
      rows.force[s] = f;
    }
    if (n == 0 || iter >= m.newton_iterations) break;
    // g = M (a - a0) - J^T f, and MuJoCo's tests after a step
    for (int i = 0; i < nv; ++i) grad[i] = Ma[i];
    for (int s = 0; s < n; ++s) slot_axpy(m, rows, s, -rows.force[s], grad);
    F g2 = F(0);
    for (int i = 0; i < nv; ++i) g2 += grad[i] * grad[i];
    const F gradient = scale * m_sqrt(g2);
    bool any_active = false;
    for (int l = 0; l < L; ++l) {
      const float g2l = lane_value(g2, l), gl = lane_value(gradient, l);
      if (!(g2l > 0.0f)) active[l] = false;
      if (iter > 0 && ((improvement[l] > 0.0f && improvement[l] < tol) || gl < tol)) active[l] = false;
      any_active = any_active || active[l];
    }
    if (!any_active) break;
    // H = M + J^T h J on qM's pattern, factored (again only where some lane's h changed since: the
    // same H, the same factors); dir = -H^-1 g
    bool refactor = iter == 0;
    for (int s = 0; s < n && !refactor; ++s) refactor = any(h[s] != hprev[s]);
    if (refactor) {
      for (int s = 0; s < n; ++s) hprev[s] = h[s];
      for (int i = 0; i < nv; ++i)
        for (int j = m.dof_treestart[i]; j <= i; ++j) H[i * nv + j] = d.qM[i * nv + j];
      for (int s = 0; s < n; ++s) {
        if (rows.deep_b[s] >= 0) continue;  // (two chains: by Woodbury's identity below)
        const F* J = rows.J + s * nv;
        const F hs = h[s];
        for (int p = rows.deep[s]; p >= rows.top[s]; p = m.dof_parentid[p]) {
          const F v = hs * J[p];
          for (int q = p; q >= rows.top[s]; q = m.dof_parentid[q]) H[p * nv + q] += v * J[q];
        }
      }
      tree_ltdl_factor(m, H);
      // H = H_tree + U U^T, U's columns u_k = sqrt(h_k) J_k: H^-1 y = H_tree^-1 y - Z S^-1 U^T H_tree^-1 y
      // with Z = H_tree^-1 U and S = I + U^T Z (positive definite; a lane where a slot does not push
      // has u_k = 0 there, and that row and column of S are the identity's), S = L D L^T
      for (int k = 0; k < ncross; ++k) {
        F* z = Z + k * nv;
        for (int i = 0; i < nv; ++i) z[i] = F(0);
        slot_axpy(m, rows, cross[k], m_sqrt(h[cross[k]]), z);
        tree_ltdl_solve(m, static_cast<const F*>(H), z);
      }
      for (int k = 0; k < ncross; ++k) {
        const F r = m_sqrt(h[cross[k]]);
        for (int j = 0; j <= k; ++j)
          S[k * ncross + j] = r * slot_dot(m, rows, cross[k], Z + j * nv) + F(j == k ? 1.0f : 0.0f);
      }
      small_ldlt_factor(S, ncross);
    }
    for (int i = 0; i < nv; ++i) dir[i] = -grad[i];
    tree_ltdl_solve(m, static_cast<const F*>(H), dir);
    if (ncross > 0) {
      for (int k = 0; k < ncross; ++k) c[k] = m_sqrt(h[cross[k]]) * slot_dot(m, rows, cross[k], dir);
      small_ldlt_solve(static_cast<const F*>(S), ncross, c);
      for (int k = 0; k < ncross; ++k)
        for (int i = 0; i < nv; ++i) dir[i] -= c[k] * Z[k * nv + i];
    }
    F slope0 = F(0);
    for (int i = 0; i < nv; ++i) slope0 += dir[i] * grad[i];
    const F decrement = F(-0.5f) * scale * slope0;
    F amax = F(0), dmax = F(0);
    for (int i = 0; i < nv; ++i) {
      amax = select(absf(a[i]) > amax, absf(a[i]), amax);
      dmax = select(absf(dir[i]) > dmax, absf(dir[i]), dmax);
    }
    mass_product(m, d, dir, Mdir);
    F dMd = F(0), dMa = F(0);
    for (int i = 0; i < nv; ++i) dMd += dir[i] * Mdir[i], dMa += dir[i] * Ma[i];
    for (int s = 0; s < n; ++s) jv[s] = slot_dot(m, rows, s, dir);
    F snorm2 = F(0);
    for (int i = 0; i < nv; ++i) snorm2 += dir[i] * dir[i];
    const F gtol = F(static_cast<float>(m.newton_ls_tolerance)) * m_sqrt(snorm2) / scale;
    LaneLineSearch ls[L];
    for (int l = 0; l < L; ++l) {
      const float dec = lane_value(decrement, l), gl = lane_value(gradient, l), dMdl = lane_value(dMd, l);
      if ((0.0f > dec ? 0.0f : dec) < tol && (iter > 0 || gl < tol)) active[l] = false;
      if (!(dMdl > 0.0f) || !(dMdl < 1e30f)) active[l] = false;  // (a non-finite step: the forces so far)
      if (!(lane_value(slope0, l) < 0.0f)) active[l] = false;    // (no descent left: rounding)
      if (active[l]) ls[l].start(m.newton_ls_iterations, lane_value(gtol, l));
    }
    // the line search: every lane that searches asks for one point a round, all evaluated at once
    for (;;) {
      LanePoints<F> p;
      p.alpha = F(0);
      bool searching = false;
      for (int l = 0; l < L; ++l)
        if (!ls[l].done()) set_lane_value(p.alpha, l, ls[l].want), searching = true;
      if (!searching) break;
      slot_line_point(m, rows, D, jar, jv, state, dMa, dMd, &p);
      for (int l = 0; l < L; ++l) {
        if (ls[l].done()) continue;
        ls[l].feed({lane_value(p.alpha, l), lane_value(p.cost, l), lane_value(p.slope, l), lane_value(p.curv, l),
                    lane_value(p.noise, l)});
        if (stats) ++stats->points[l];
      }
    }
    // the step, in the lanes that took one
    F alpha = F(0);
    F moving = F(0);  // 1 in the lanes that step
    for (int l = 0; l < L; ++l) {
      if (!active[l]) continue;
      const float al = ls[l].alpha;
      if (!(al != 0.0f) || !(LaneLineSearch::abs_f(al) * lane_value(dmax, l) < 1e30f)) {
        active[l] = false;  // (MuJoCo: no improvement, done)
        continue;
      }
      improvement[l] = lane_value(scale, l) * ls[l].gain;
      set_lane_value(alpha, l, al), set_lane_value(moving, l, 1.0f);
      if (stats) ++stats->iterations[l];
    }
    const auto step = moving > F(0);
    for (int i = 0; i < nv; ++i)
      a[i] = select(step, a[i] + alpha * dir[i], a[i]), Ma[i] = select(step, Ma[i] + alpha * Mdir[i], Ma[i]);
    for (int s = 0; s < n; ++s) jar[s] = select(step, jar[s] + alpha * jv[s], jar[s]);
    // a step below rounding: the forces at a, then stop (newton_solve's `stalled`)
    const F last_step = absf(alpha) * dmax;
    for (int l = 0; l < L; ++l)
      if (active[l] && !(lane_value(last_step, l) > lane_value(eps * (F(1) + amax), l))) active[l] = false;
  }
  for (int i = 0; i < nv; ++i) d.qfrc_constraint[i] = F(0);
  for (int s = 0; s < n; ++s) slot_axpy(m, rows, s, rows.force[s], d.qfrc_constraint);
  return iter;
}

#if defined(RLT_LANES) && !defined(__CUDACC__)
// Host: the rows of kLanes envs (each after constraint_rows, nr[l] rows in its block) aligned into
// slots: each row keyed by what it constrains (a contact's two geoms, its rank among the env's
// contacts of those geoms and its edge; a limit by its first dof; else its owner code), and the
// rank among that owner's rows), slots in the order the keys first appear (lane 0's rows first, in
// their order). A slot's chains cover every dof where some lane's row is nonzero. False, with the
// reason in *why, when a row does not fit (J on three branches, an elliptic cone, more than
// kSlotMaxCross slots on two chains).
struct SlotRowsHost {
  int nv = 0;
  std::vector<int> deep, top, deep_b, top_b, kind;
  std::vector<LaneFloat> J, aref, R, fl, force;
  // one lane's rows as float, the same slots (the scalar reference)
  std::vector<float> lJ, laref, lR, lfl, lforce;

  SlotRows<LaneFloat> view() {
    SlotRows<LaneFloat> v;
    v.n = static_cast<int>(deep.size()), v.deep = deep.data(), v.top = top.data(), v.kind = kind.data();
    v.deep_b = deep_b.data(), v.top_b = top_b.data();
    v.J = J.data(), v.aref = aref.data(), v.R = R.data(), v.fl = fl.data(), v.force = force.data();
    return v;
  }
  SlotRows<float> lane_view(int l) {
    const size_t n = deep.size(), w = static_cast<size_t>(nv);
    lJ.assign(n * w, 0.0f), laref.assign(n, 0.0f), lR.assign(n, 0.0f), lfl.assign(n, 0.0f), lforce.assign(n, 0.0f);
    for (size_t s = 0; s < n; ++s) {
      for (size_t i = 0; i < w; ++i) lJ[s * w + i] = J[s * w + i].lane(l);
      laref[s] = aref[s].lane(l), lR[s] = R[s].lane(l), lfl[s] = fl[s].lane(l);
    }
    SlotRows<float> v;
    v.n = static_cast<int>(n), v.deep = deep.data(), v.top = top.data(), v.kind = kind.data();
    v.deep_b = deep_b.data(), v.top_b = top_b.data();
    v.J = lJ.data(), v.aref = laref.data(), v.R = lR.data(), v.fl = lfl.data(), v.force = lforce.data();
    return v;
  }
};

inline bool slot_rows_from_envs(const ModelView<float>& m, const DataView<float>* envs, const int* nr,
                                SlotRowsHost* out, std::string* why) {
  using namespace constraint_detail;
  const int nv = m.nv;
  *out = SlotRowsHost();
  out->nv = nv;
  std::map<std::array<long, 4>, int> slot_of;
  std::vector<std::vector<char>> dofs;  // per slot: the dofs where some lane's row is nonzero
  struct Row {
    int lane, row, slot;
  };
  std::vector<Row> placed;
  for (int l = 0; l < kLanes; ++l) {
    const DataView<float>& d = envs[l];
    std::map<std::array<long, 4>, int> seen;  // (per env) contacts so far of a pair of geoms
    std::vector<char> taken;                  // (per env) the slots its rows took
    int first_of_owner = 0;
    for (int r = 0; r < nr[l]; ++r) {
      const float* e = d.efc + r * kEfcStride;
      const float* J = d.efc_J + r * nv;
      const float owner = e[kEfcOwner];
      const bool new_owner = r == 0 || d.efc[(r - 1) * kEfcStride + kEfcOwner] != owner;
      if (new_owner) first_of_owner = r;
      std::array<long, 4> key{};
      if (owner >= 0.0f) {
        if (m.cone == kConeElliptic) return *why = "an elliptic cone's contact rows", false;
        const float* con = d.contact + kContactStride * static_cast<int>(owner);
        const long g1 = static_cast<long>(con[kConGeom1]), g2 = static_cast<long>(con[kConGeom2]);
        const long rank = new_owner ? seen[{0, g1, g2, 0}]++ : seen[{0, g1, g2, 0}] - 1;
        key = {1, g1 * 100000L + g2, rank, r - first_of_owner};
      } else if (owner == -1.0f) {  // limits share the owner -1: keyed by their Jacobian's first dof
        int lo = -1;
        for (int i = 0; i < nv && lo < 0; ++i)
          if (J[i] != 0.0f) lo = i;
        key = {3, lo, 0, r - first_of_owner};
      } else {
        key = {2, static_cast<long>(owner), 0, r - first_of_owner};
      }
      auto it = slot_of.find(key);
      int slot;
      if (it == slot_of.end()) {
        slot = static_cast<int>(out->kind.size());
        slot_of[key] = slot;
        dofs.emplace_back(static_cast<size_t>(nv), 0);
        const int fdof = friction_dof(static_cast<double>(owner)), ften = friction_tendon(static_cast<double>(owner));
        out->kind.push_back(fdof >= 0 || ften >= 0                     ? kScalarFriction
                            : equality_row(static_cast<double>(owner)) ? kScalarEquality
                                                                       : kScalarInequality);
      } else {
        slot = it->second;
      }
      if (taken.size() <= static_cast<size_t>(slot)) taken.resize(static_cast<size_t>(slot) + 1, 0);
      if (taken[static_cast<size_t>(slot)]) return *why = "two rows of one env with the same key", false;
      taken[static_cast<size_t>(slot)] = 1;
      for (int i = 0; i < nv; ++i)
        if (J[i] != 0.0f) dofs[static_cast<size_t>(slot)][static_cast<size_t>(i)] = 1;
      placed.push_back({l, r, slot});
    }
  }
  // each slot's chains: the first from its deepest dof up to the shallowest on that path; the rest,
  // if any, on one more path (a contact between two limbs), else refused
  const size_t n = out->kind.size();
  int ncross = 0;
  for (size_t s = 0; s < n; ++s) {
    std::vector<char>& set = dofs[s];
    int deep = -1, top = 0, deep_b = -1, top_b = 0;
    for (int i = nv - 1; i >= 0 && deep < 0; --i)
      if (set[static_cast<size_t>(i)]) deep = i;
    for (int i = deep; i >= 0; i = m.dof_parentid[i])
      if (set[static_cast<size_t>(i)]) top = i, set[static_cast<size_t>(i)] = 0;
    for (int i = nv - 1; i >= 0 && deep_b < 0; --i)
      if (set[static_cast<size_t>(i)]) deep_b = i;
    for (int i = deep_b; i >= 0; i = m.dof_parentid[i])
      if (set[static_cast<size_t>(i)]) top_b = i, set[static_cast<size_t>(i)] = 0;
    for (int i = 0; i < nv; ++i)
      if (set[static_cast<size_t>(i)]) return *why = "a row whose Jacobian spans three branches", false;
    if (deep_b >= 0 && ++ncross > kSlotMaxCross) return *why = "more slots on two chains than kSlotMaxCross", false;
    out->deep.push_back(deep), out->top.push_back(deep < 0 ? 0 : top);
    out->deep_b.push_back(deep_b), out->top_b.push_back(deep_b < 0 ? 0 : top_b);
  }
  out->J.assign(n * static_cast<size_t>(nv), LaneFloat(0.0f));
  out->aref.assign(n, LaneFloat(-1.0f)), out->R.assign(n, LaneFloat(1.0f)), out->fl.assign(n, LaneFloat(0.0f));
  out->force.assign(n, LaneFloat(0.0f));
  for (const Row& p : placed) {
    const DataView<float>& d = envs[p.lane];
    const float* e = d.efc + p.row * kEfcStride;
    const size_t s = static_cast<size_t>(p.slot);
    for (int i = 0; i < nv; ++i)
      out->J[s * static_cast<size_t>(nv) + static_cast<size_t>(i)].set_lane(p.lane, d.efc_J[p.row * nv + i]);
    out->aref[s].set_lane(p.lane, e[kEfcAref]);
    out->R[s].set_lane(p.lane, e[kEfcR]);
    const int fdof = friction_dof(static_cast<double>(e[kEfcOwner]));
    const int ften = friction_tendon(static_cast<double>(e[kEfcOwner]));
    out->fl[s].set_lane(p.lane, fdof >= 0 ? m.dof_frictionloss[fdof] : ften >= 0 ? m.tendon_frictionloss[ften] : 0.0f);
  }
  return true;
}
#endif

}  // namespace rlt
