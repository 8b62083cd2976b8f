// Actuators (DESIGN.md D3), as MuJoCo 3's mj_fwdActuation on a hinge or slide joint transmission
// (joint or jointinparent: the same for these), a tendon (length gear ten_length, velocity gear
// ten_velocity, qfrc_actuator += gear force ten_J; sim/tendon.h) or a moment row: a site,
// slider-crank, ball or free joint or body (length actuator_length, velocity actuator_moment qvel,
// qfrc_actuator += force actuator_moment, the gear inside both; sim/transmission.h), single source
// (RLT_HD, no std::, no allocation). A servo's setpoint on a rotational transmission (a ball joint, a
// site's rotation about its refsite) is taken modulo its period (sim/transmission.h setpoint_period).
//
// For actuator a on joint j with gear g:
//   ctrl     clamped to ctrlrange when ctrllimited (MuJoCo's clampctrl, on by default; the flag
//            clampctrl="disable" leaves it unclamped)
//   length   = g * qpos[j]      (raw qpos, not qpos - qpos0, as MuJoCo's actuator_length)
//   velocity = g * qvel[j]
//   force    motor:    ctrl
//            position: kp * ctrl - kp * length - kv * velocity   (gain kp, bias (0, -kp, -kv))
//            velocity: kv * ctrl - kv * velocity                 (gain kv, bias (0, 0, -kv))
//            general:  gain * input + bias (MuJoCo's general actuator; intvelocity, damper and a
//                      position servo with timeconst compile to it, sim/mjcf_actuators.cpp):
//                        gain  fixed gainprm[0], or affine gainprm[0] + gainprm[1] length + gainprm[2] velocity,
//                              or muscle muscle_gain(length, velocity) (below)
//                        bias  none 0, or affine biasprm[0] + biasprm[1] length + biasprm[2] velocity, or
//                              muscle muscle_bias(length) (below)
//                        input ctrl (dyntype none), or the activation act (next_activation(act) with actearly)
//                        act_dot integrator: ctrl; filter, filterexact: (ctrl - act) / max(1e-15, dynprm[0]);
//                                muscle: muscle_dynamics(ctrl, act) (below)
//   force clamped to forcerange when forcelimited -> actuator_force[a]
//   qfrc_actuator[dof of j] += g * force
// The activation advances after the step's accelerations (advance_activations, MuJoCo's
// mj_nextActivation): act + h act_dot (filterexact: act + act_dot tau (1 - exp(-h / tau))), clamped
// to actrange when actlimited. The motor/position/velocity kinds keep their own formulas (the
// shipped robots' physics bit for bit, and per-env randomization of actuator_gear/kp/kv in
// envs/robot_env.h); they equal MuJoCo's to rounding.
// The flag actuation="disable" (MuJoCo's mjDSBL_ACTUATION): actuator_force, act_dot and
// qfrc_actuator 0, activations held, no actuator term in implicitfast's derivative.
#pragma once

#include "sim/common.h"
#include "sim/dynamics.h"
#include "sim/philox.h"
#include "sim/transmission.h"

namespace rlt {

// ---- MuJoCo's muscle model (engine_util_misc.c mju_muscleGain, mju_muscleBias, mju_muscleDynamics;
// engine_derivative.c mjd_muscleGain_vel) ----
// gainprm/biasprm = (range[0], range[1], force, scale, lmin, lmax, vmax, fpmax, fvmax); the muscle's
// length range lr = actuator_lengthrange (sim/mjcf_lengthrange.cpp) maps onto `range` of the
// normalized length L: L0 = (lr[1] - lr[0]) / (range[1] - range[0]) is the optimal length,
// L = range[0] + (length - lr[0]) / L0, V = velocity / (L0 vmax). A negative force means
// scale / acc0 (actuator_acc0, the acceleration a unit force gives at qpos0).

template <class T>
RLT_HD RLT_INLINE T at_least_minval(T x) {  // MuJoCo's mjMAX(mjMINVAL, x)
  return x > T(1e-15) ? x : T(1e-15);
}

// The normalized active force-length curve FL(L): 0 outside [lmin, lmax], 1 at L = 1, two
// half-quadratics on each side meeting at the midpoints (MuJoCo's mju_muscleGainLength).
template <class T>
RLT_HD T muscle_gain_length(T length, T lmin, T lmax) {
  if (!(lmin <= length && length <= lmax)) return T(0);
  const T a = T(0.5) * (lmin + T(1)), b = T(0.5) * (T(1) + lmax);
  if (length <= a) {
    const T x = (length - lmin) / at_least_minval(a - lmin);
    return T(0.5) * x * x;
  }
  if (length <= T(1)) {
    const T x = (T(1) - length) / at_least_minval(T(1) - a);
    return T(1) - T(0.5) * x * x;
  }
  if (length <= b) {
    const T x = (length - T(1)) / at_least_minval(b - T(1));
    return T(1) - T(0.5) * x * x;
  }
  const T x = (lmax - length) / at_least_minval(lmax - b);
  return T(0.5) * x * x;
}

// A muscle's peak force, its optimal length L0 and its normalized length L (see above).
template <class T>
struct MuscleScale {
  T force, L0, L;
};
template <class T>
RLT_HD MuscleScale<T> muscle_scale(T length, const T* lengthrange, T acc0, const T* prm) {
  MuscleScale<T> s;
  s.force = prm[2] < T(0) ? prm[3] / at_least_minval(acc0) : prm[2];
  s.L0 = (lengthrange[1] - lengthrange[0]) / at_least_minval(prm[1] - prm[0]);
  s.L = prm[0] + (length - lengthrange[0]) / at_least_minval(s.L0);
  return s;
}

// The muscle's active force per unit activation, -force FL(L) FV(V) (negative: a muscle pulls);
// FV: 0 below V = -1, (V + 1)^2 up to 0, then rising to fvmax at V = fvmax - 1.
// With dfv_dvel, the derivative with respect to the velocity instead (mjd_muscleGain_vel).
template <class T>
RLT_HD T muscle_gain(T length, T velocity, const T* lengthrange, T acc0, const T* prm, bool dfv_dvel = false) {
  const MuscleScale<T> s = muscle_scale(length, lengthrange, acc0, prm);
  const T vscale = at_least_minval(s.L0 * prm[6]);
  const T V = velocity / vscale, fvmax = prm[8], y = fvmax - T(1);
  const T FL = muscle_gain_length(s.L, prm[4], prm[5]);
  T FV;
  if (V <= T(-1)) {
    FV = T(0);
  } else if (V <= T(0)) {
    FV = dfv_dvel ? T(2) * V + T(2) : (V + T(1)) * (V + T(1));
  } else if (V <= y) {
    FV = dfv_dvel ? (T(-2) * V + T(2) * y) / at_least_minval(y) : fvmax - (y - V) * (y - V) / at_least_minval(y);
  } else {
    FV = dfv_dvel ? T(0) : fvmax;
  }
  return dfv_dvel ? -s.force * FL * FV / vscale : -s.force * FL * FV;
}

// The muscle's passive force: 0 up to L = 1, -force fpmax half-quadratic to b = (1 + lmax) / 2,
// linear beyond (MuJoCo's mju_muscleBias).
template <class T>
RLT_HD T muscle_bias(T length, const T* lengthrange, T acc0, const T* prm) {
  const MuscleScale<T> s = muscle_scale(length, lengthrange, acc0, prm);
  const T b = T(0.5) * (T(1) + prm[5]), fpmax = prm[7];
  if (s.L <= T(1)) return T(0);
  if (s.L <= b) {
    const T x = (s.L - T(1)) / at_least_minval(b - T(1));
    return -s.force * fpmax * T(0.5) * x * x;
  }
  const T x = (s.L - b) / at_least_minval(b - T(1));
  return -s.force * fpmax * (T(0.5) + x);
}

// act_dot of a muscle (MuJoCo's mju_muscleDynamics, Millard et al. 2013): dynprm = (tau_act,
// tau_deact, tausmooth); ctrl and act clipped to [0, 1] for the time constants, tau_act (0.5 + 1.5
// act) when activating, tau_deact / (0.5 + 1.5 act) when not, blended by MuJoCo's quintic sigmoid
// over a width tausmooth of ctrl - act when tausmooth > 0.
template <class T>
RLT_HD T muscle_dynamics(T ctrl, T act, const T* prm) {
  const T u = clamp(ctrl, T(0), T(1)), a = clamp(act, T(0), T(1));
  const T tau_act = prm[0] * (T(0.5) + T(1.5) * a), tau_deact = prm[1] / (T(0.5) + T(1.5) * a);
  const T width = prm[2], dctrl = u - act;
  T tau;
  if (width < T(1e-15)) {
    tau = dctrl > T(0) ? tau_act : tau_deact;
  } else {  // mju_sigmoid: 0 below 0, 1 above 1, 6x^5 - 15x^4 + 10x^3 between
    const T x = dctrl / width + T(0.5);
    const T sig = x <= T(0) ? T(0) : x >= T(1) ? T(1) : x * x * x * (T(3) * x * (T(2) * x - T(5)) + T(10));
    tau = tau_deact + (tau_act - tau_deact) * sig;
  }
  return dctrl / at_least_minval(tau);
}

// The activation after one step of m.timestep from act with derivative act_dot (MuJoCo's
// mj_nextActivation for actuator a).
template <class T>
RLT_HD T next_activation(const ModelView<T>& m, int a, T act, T act_dot) {
  if (m.actuator_dyntype[a] == kDynFilterExact) {
    const T tau = m.actuator_dynprm[3 * a] > T(1e-15) ? m.actuator_dynprm[3 * a] : T(1e-15);
    act = act + act_dot * tau * (T(1) - m_exp(-m.timestep / tau));
  } else {
    act = act + act_dot * m.timestep;
  }
  if (m.actuator_actlimited[a]) act = clamp(act, m.actuator_actrange[2 * a], m.actuator_actrange[2 * a + 1]);
  return act;
}

// Whether actuator a has an activation state.
template <class T>
RLT_HD RLT_INLINE bool actuator_stateful(const ModelView<T>& m, int a) {
  return m.actuator_kind[a] == kActGeneral && m.actuator_dyntype[a] != kDynNone;
}

// act <- next_activation(act, act_dot) for every stateful actuator (MuJoCo's mj_advance, first part).
template <class T>
RLT_HD void advance_activations(const ModelView<T>& m, const DataView<T>& d, const T* act_dot) {
  if (m.disable_actuation) return;
  for (int a = 0; a < m.nu; ++a) {
    if (!actuator_stateful(m, a)) continue;
    d.act[a] = next_activation(m, a, d.act[a], act_dot[a]);
    // a rotational setpoint integrated: the representative nearest the (last forward pass's) length
    const T period = m.actuator_dyntype[a] == kDynIntegrator ? setpoint_period(m, a) : T(0);
    if (period > T(0)) d.act[a] = wrap_setpoint(d.act[a], actuator_length_of(m, d, a), period);
  }
}

// actuator_force, act_dot and qfrc_actuator from ctrl (nu values; null means all zero), qpos, qvel, act.
template <class T>
RLT_HD void actuator_forces(const ModelView<T>& m, const DataView<T>& d, const T* ctrl) {
  for (int i = 0; i < m.nv; ++i) d.qfrc_actuator[i] = T(0);
  if (m.disable_actuation) {
    for (int a = 0; a < m.nu; ++a) d.actuator_force[a] = d.act_dot[a] = T(0);
    return;
  }
  for (int a = 0; a < m.nu; ++a) {
    const int j = m.actuator_trnid[a];
    const bool tendon = m.actuator_trntype[a] == kTrnTendon;  // j: a tendon (sim/tendon.h)
    const bool moment = moment_transmission(m, a);            // a moment row (sim/transmission.h)
    const int dof = tendon || moment ? -1 : m.jnt_dofadr[j];
    const T gear = m.actuator_gear[a];
    T u = ctrl ? ctrl[a] : T(0);
    if (m.actuator_ctrllimited[a] && !m.disable_clampctrl)
      u = clamp(u, m.actuator_ctrlrange[2 * a], m.actuator_ctrlrange[2 * a + 1]);
    const T length = actuator_length_of(m, d, a);
    const T velocity = actuator_velocity_of(m, d, a);
    T force;
    switch (m.actuator_kind[a]) {
      case kActPosition: {
        const T period = setpoint_period(m, a);  // (a rotational setpoint: sim/transmission.h)
        const T target = period > T(0) ? wrap_setpoint(u, length, period) : u;
        force = m.actuator_kp[a] * (target - length) - m.actuator_kv[a] * velocity;
        break;
      }
      case kActVelocity:
        force = m.actuator_kv[a] * (u - velocity);
        break;
      case kActGeneral: {
        const int dyn = m.actuator_dyntype[a];
        T input = u;
        if (dyn != kDynNone) {
          const T tau = m.actuator_dynprm[3 * a] > T(1e-15) ? m.actuator_dynprm[3 * a] : T(1e-15);
          const T act_dot = dyn == kDynIntegrator ? u
                            : dyn == kDynMuscle   ? muscle_dynamics(u, d.act[a], m.actuator_dynprm + 3 * a)
                                                  : (u - d.act[a]) / tau;
          d.act_dot[a] = act_dot;
          input = m.actuator_actearly[a] ? next_activation(m, a, d.act[a], act_dot) : d.act[a];
        }
        const T period = setpoint_period(m, a);  // (a rotational setpoint: sim/transmission.h)
        if (period > T(0)) input = wrap_setpoint(input, length, period);
        const T* gp = m.actuator_gainprm + kNumGainPrm * a;
        const T* bp = m.actuator_biasprm + kNumGainPrm * a;
        const T* lengthrange = m.actuator_lengthrange + 2 * a;
        const int gaintype = m.actuator_gaintype[a], biastype = m.actuator_biastype[a];
        const T gain = gaintype == kGainAffine   ? gp[0] + gp[1] * length + gp[2] * velocity
                       : gaintype == kGainMuscle ? muscle_gain(length, velocity, lengthrange, m.actuator_acc0[a], gp)
                                                 : gp[0];
        force = gain * input;
        if (biastype == kBiasAffine) force += bp[0] + bp[1] * length + bp[2] * velocity;
        if (biastype == kBiasMuscle) force += muscle_bias(length, lengthrange, m.actuator_acc0[a], bp);
        break;
      }
      default:  // motor
        force = u;
        break;
    }
    if (m.actuator_forcelimited[a])
      force = clamp(force, m.actuator_forcerange[2 * a], m.actuator_forcerange[2 * a + 1]);
    d.actuator_force[a] = force;
    if (tendon) {  // MuJoCo's actuator_moment gear ten_J, times the force
      for (int i = 0; i < m.nv; ++i) d.qfrc_actuator[i] += (gear * d.ten_J[j * m.nv + i]) * force;
    } else if (moment) {
      for (int i = 0; i < m.nv; ++i) d.qfrc_actuator[i] += d.actuator_moment[a * m.nv + i] * force;
    } else {
      d.qfrc_actuator[dof] += gear * force;
    }
  }
}

// qderiv += b row^T row on qDeriv's pattern (the entries (i, j) with j an ancestor-or-self of i; the
// others, between dofs of different branches or trees, MuJoCo's implicitfast leaves out): the
// velocity derivative of a force b (row . qvel) along row (MuJoCo's addJTBJSparse for one row).
template <class T>
RLT_HD void add_row_velocity_derivative(const ModelView<T>& m, T* qderiv, const T* row, T b) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i) {
    if (row[i] == T(0)) continue;
    const T bi = row[i] * b;
    for (int j = i; j >= 0; j = m.dof_parentid[j]) qderiv[i * nv + j] += row[j] * bi;
  }
}

// Actuator a's moment row (MuJoCo's actuator_moment): qfrc_actuator gets row * actuator_force, and
// the actuator's length rate is row . qvel. Hinge or slide joint: gear at the joint's dof; tendon:
// gear ten_J; site, slider-crank, ball or free joint and body: d.actuator_moment's row
// (sim/transmission.h, gear included). (A new transmission adds its case here: the velocity
// derivative below takes any row.)
template <class T>
RLT_HD void actuator_moment_row(const ModelView<T>& m, const DataView<T>& d, int a, T* row) {
  const int nv = m.nv;
  const T gear = m.actuator_gear[a];
  if (moment_transmission(m, a)) {
    for (int i = 0; i < nv; ++i) row[i] = d.actuator_moment[a * nv + i];
  } else if (m.actuator_trntype[a] == kTrnTendon) {
    const T* J = d.ten_J + m.actuator_trnid[a] * nv;
    for (int i = 0; i < nv; ++i) row[i] = gear * J[i];
  } else {
    for (int i = 0; i < nv; ++i) row[i] = T(0);
    row[m.jnt_dofadr[m.actuator_trnid[a]]] = gear;
  }
}

// qderiv += d qfrc_actuator / d qvel (MuJoCo's mjd_actuator_vel): per actuator whose force is not
// clamped by forcerange, (bias_vel + gain_vel * input) moment^T moment (add_row_velocity_derivative),
// bias_vel the velocity coefficient of an affine bias (-kv for position and velocity), gain_vel that
// of an affine gain or a muscle's (muscle_gain's velocity derivative; a muscle's bias has none) and input the raw ctrl
// (dyntype none, as MuJoCo) or the activation (the next one with actearly). `row`: nv scalars of scratch. Needs
// actuator_forces.
template <class T>
RLT_HD void actuator_velocity_derivative(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, T* qderiv,
                                         T* row) {
  for (int a = 0; a < m.nu && !m.disable_actuation; ++a) {  // (MuJoCo's mjDSBL_ACTUATION: nothing)
    if (m.actuator_forcelimited[a]) {
      const T f = d.actuator_force[a];
      if (f <= m.actuator_forcerange[2 * a] || f >= m.actuator_forcerange[2 * a + 1]) continue;
    }
    T bias_vel = T(0), gain_vel = T(0);
    const int kind = m.actuator_kind[a];
    if (kind == kActPosition || kind == kActVelocity) {
      bias_vel = -m.actuator_kv[a];
    } else if (kind == kActGeneral) {
      if (m.actuator_biastype[a] == kBiasAffine) bias_vel = m.actuator_biasprm[kNumGainPrm * a + 2];
      if (m.actuator_gaintype[a] == kGainAffine) gain_vel = m.actuator_gainprm[kNumGainPrm * a + 2];
      if (m.actuator_gaintype[a] == kGainMuscle)
        gain_vel =
            muscle_gain(actuator_length_of(m, d, a), actuator_velocity_of(m, d, a), m.actuator_lengthrange + 2 * a,
                        m.actuator_acc0[a], m.actuator_gainprm + kNumGainPrm * a, true);
    }
    if (gain_vel != T(0)) {
      if (m.actuator_dyntype[a] == kDynNone) {
        bias_vel += gain_vel * (ctrl ? ctrl[a] : T(0));
      } else {
        const T act = m.actuator_actearly[a] ? next_activation(m, a, d.act[a], d.act_dot[a]) : d.act[a];
        bias_vel += gain_vel * act;
      }
    }
    if (bias_vel == T(0)) continue;
    actuator_moment_row(m, d, a, row);
    add_row_velocity_derivative(m, qderiv, row, bias_vel);
  }
}

// qderiv += d qfrc_passive / d qvel (MuJoCo's mjd_passive_vel): the fluid forces' (sim/dynamics.h),
// -dof_damping on the diagonal, -tendon_damping ten_J^T ten_J per tendon (sim/tendon.h). `rows`:
// 6 nv scalars of scratch. Needs tendon_forward.
template <class T>
RLT_HD void passive_velocity_derivative(const ModelView<T>& m, const DataView<T>& d, T* qderiv, T* rows) {
  const int nv = m.nv;
  if (m.density > T(0) || m.viscosity > T(0)) fluid_velocity_derivative(m, d, qderiv, rows);
  for (int i = 0; i < nv; ++i) qderiv[i * nv + i] -= m.dof_damping[i];
  for (int t = 0; t < m.ntendon; ++t)
    if (m.tendon_damping[t] != T(0)) add_row_velocity_derivative(m, qderiv, d.ten_J + t * nv, -m.tendon_damping[t]);
}

// d.qDeriv <- d(qfrc_actuator + qfrc_passive) / d qvel on its pattern (MuJoCo's mjd_smooth_vel without
// the bias forces' term, as implicitfast calls it). Needs actuator_forces.
template <class T>
RLT_HD void smooth_velocity_derivative(const ModelView<T>& m, const DataView<T>& d, const T* ctrl) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i)
    for (int j = i; j >= 0; j = m.dof_parentid[j]) d.qDeriv[i * nv + j] = T(0);
  actuator_velocity_derivative(m, d, ctrl, d.qDeriv, d.qDeriv_rows);
  passive_velocity_derivative(m, d, d.qDeriv, d.qDeriv_rows);
}

// Controls of env `env` at control step `step`: uniform in [range[2u], range[2u+1]) from Philox
// (seed, RngStream::kAction, env, step), 24 bits per draw. Same numbers on every executor.
template <class T>
RLT_HD void random_ctrl(const T* range, int nu, std::uint64_t seed, u32 env, u32 step, T* ctrl) {
  Philox rng(seed, RngStream::kAction, env, step);
  for (int u = 0; u < nu; u += 4) {
    const U32x4 bits = rng.next4();
    for (int k = 0; k < 4 && u + k < nu; ++k) {
      const T lo = range[2 * (u + k)], hi = range[2 * (u + k) + 1];
      ctrl[u + k] = lo + (hi - lo) * static_cast<T>(u32_to_unit_float(bits.v[k]));
    }
  }
}

}  // namespace rlt
