// Soft joint limits (DESIGN.md D3) for limited hinge and slide joints: a stiff spring-damper that
// acts only beyond the range [lo, hi] (jnt_range, in qpos units) and only pushes back in:
//   q < lo:  f = max(0,  k (lo - q) - c qdot)
//   q > hi:  f = min(0, -k (q - hi) - c qdot)
// with k = limit_stiffness, c = limit_damping (Model; defaults 1e4 N m/rad and 1e2 N m s/rad).
// The step treats the force implicitly (sim/physics_step.h): evaluated at the end of the step,
// q' = q + h qdot', it is f' = k (lo - q) - (c + h k) qdot', i.e. the explicit part
// f0 = k (lo - q) - (c + h k) qdot plus -(c + h k) (qdot' - qdot); the second term becomes
// h (c + h k) on the dof's diagonal of the factored matrix (the backward-Euler linearization).
// A limit acts in a step when the joint would end it beyond the range without limits and contacts
// (so a joint about to cross is caught in the step it would cross, not one step late), and while the
// force pushes back in at the end of the step (physics_step solves once more without a limit that
// would pull). Inside the range nothing acts, so the limit never holds a joint back early. That is unconditionally stable, so the
// defaults hold at any step size; the steady violation under a constant push tau is tau / k
// (1e-3 rad for 10 N m). Ball-joint limits are not implemented (jnt_limited is ignored for balls).
#pragma once

#include "sim/common.h"
#include "sim/dynamics.h"

namespace rlt {

// The limit force of joint j as f0 (explicit part, with ceff = c + h k): 0 when inactive. Active
// when the joint ends the step beyond the range at the velocity it would have without limits and
// contacts, q + h (qdot + h qacc_smooth) (so a joint about to cross is caught in the step it would
// cross, as speculative contacts are), and, with qacc_prev (the previous solve of this step), only
// while the force at the end of the step, f0 - ceff h qacc_prev, still pushes back in.
template <class T>
RLT_HD T joint_limit_force(const ModelView<T>& m, const DataView<T>& d, T h, int j, const T* qacc_prev) {
  if (!m.jnt_limited[j]) return T(0);
  const int type = m.jnt_type[j];
  if (type != kJointHinge && type != kJointSlide) return T(0);
  const T k = m.limit_stiffness, ceff = m.limit_damping + h * m.limit_stiffness;
  const T q = d.qpos[m.jnt_qposadr[j]];
  const int dof = m.jnt_dofadr[j];
  const T qdot = d.qvel[dof];
  const T lo = m.jnt_range[2 * j], hi = m.jnt_range[2 * j + 1];
  const T q_end = q + h * (qdot + h * d.qacc_smooth[dof]);
  T f = T(0);
  if (q_end < lo) {
    f = k * (lo - q) - ceff * qdot;
    if (qacc_prev && f - ceff * h * qacc_prev[dof] < T(0)) f = T(0);
  } else if (q_end > hi) {
    f = -k * (q - hi) - ceff * qdot;
    if (qacc_prev && f - ceff * h * qacc_prev[dof] > T(0)) f = T(0);
  }
  return f;
}

// Adds the limit forces to qfrc_constraint and, when ld is not null, h (c + h k) on the diagonal of
// ld (the loaded, not yet factored, matrix qLD) for each active limit (needs d.qacc_smooth).
// qacc_prev: see joint_limit_force. Returns the number of active limits.
template <class T>
RLT_HD int joint_limits(const ModelView<T>& m, const DataView<T>& d, T h, T* ld, const T* qacc_prev) {
  const T ceff = m.limit_damping + h * m.limit_stiffness;
  int active = 0;
  for (int j = 0; j < m.njnt; ++j) {
    const T f = joint_limit_force(m, d, h, j, qacc_prev);
    if (f == T(0)) continue;
    ++active;
    const int dof = m.jnt_dofadr[j];
    d.qfrc_constraint[dof] += f;
    if (ld) ld[dof * m.nv + dof] += h * ceff;
  }
  return active;
}

// Limits active in the first solve whose force would pull after it (qacc: that solve's result).
template <class T>
RLT_HD int limits_pulling(const ModelView<T>& m, const DataView<T>& d, T h, const T* qacc) {
  int n = 0;
  for (int j = 0; j < m.njnt; ++j)
    n += joint_limit_force(m, d, h, j, static_cast<const T*>(nullptr)) != T(0) && joint_limit_force(m, d, h, j, qacc) == T(0);
  return n;
}

}  // namespace rlt
