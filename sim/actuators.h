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
//                        gain  fixed gainprm[0], or affine gainprm[0] + gainprm[1] length + gainprm[2] velocity
//                        bias  none 0, or affine biasprm[0] + biasprm[1] length + biasprm[2] velocity
//                        input ctrl (dyntype none), or the activation act (next_activation(act) with actearly)
//                        act_dot integrator: ctrl; filter, filterexact: (ctrl - act) / max(1e-15, dynprm[0])
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
    if (m.actuator_ctrllimited[a] && !m.disable_clampctrl) u = clamp(u, m.actuator_ctrlrange[2 * a], m.actuator_ctrlrange[2 * a + 1]);
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
          const T act_dot = dyn == kDynIntegrator ? u : (u - d.act[a]) / tau;
          d.act_dot[a] = act_dot;
          input = m.actuator_actearly[a] ? next_activation(m, a, d.act[a], act_dot) : d.act[a];
        }
        const T period = setpoint_period(m, a);  // (a rotational setpoint: sim/transmission.h)
        if (period > T(0)) input = wrap_setpoint(input, length, period);
        const T* gp = m.actuator_gainprm + 3 * a;
        const T* bp = m.actuator_biasprm + 3 * a;
        const T gain = m.actuator_gaintype[a] == kGainAffine ? gp[0] + gp[1] * length + gp[2] * velocity : gp[0];
        force = gain * input;
        if (m.actuator_biastype[a] == kBiasAffine) force += bp[0] + bp[1] * length + bp[2] * velocity;
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
// of an affine gain and input the raw ctrl (dyntype none, as MuJoCo) or the activation (the next one
// with actearly). `row`: nv scalars of scratch. Needs actuator_forces.
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
      if (m.actuator_biastype[a] == kBiasAffine) bias_vel = m.actuator_biasprm[3 * a + 2];
      if (m.actuator_gaintype[a] == kGainAffine) gain_vel = m.actuator_gainprm[3 * a + 2];
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
