// Actuators (DESIGN.md D3): MuJoCo 2.2.2's motor, position and velocity shortcuts on a hinge or slide
// joint transmission, single source (RLT_HD, no std::, no allocation).
//
// For actuator a on joint j with gear g (MuJoCo's mj_fwdActuation, joint transmission):
//   ctrl     clamped to ctrlrange when ctrllimited
//   length   = g * qpos[j]      (raw qpos, not qpos - qpos0, as MuJoCo's actuator_length)
//   velocity = g * qvel[j]
//   force    motor:    ctrl
//            position: kp * ctrl - kp * length - kv * velocity   (gain kp, bias (0, -kp, -kv))
//            velocity: kv * ctrl - kv * velocity                 (gain kv, bias (0, 0, -kv))
//   force clamped to forcerange when forcelimited -> actuator_force[a]
//   qfrc_actuator[dof of j] += g * force
// The servo gains act explicitly (MuJoCo 2.2.2's Euler integrates only joint damping implicitly).
#pragma once

#include "sim/common.h"
#include "sim/dynamics.h"
#include "sim/philox.h"

namespace rlt {

// actuator_force and qfrc_actuator from ctrl (nu values; null means all zero) and qpos, qvel.
template <class T>
RLT_HD void actuator_forces(const ModelView<T>& m, const DataView<T>& d, const T* ctrl) {
  for (int i = 0; i < m.nv; ++i) d.qfrc_actuator[i] = T(0);
  for (int a = 0; a < m.nu; ++a) {
    const int j = m.actuator_trnid[a];
    const int dof = m.jnt_dofadr[j];
    const T gear = m.actuator_gear[a];
    T u = ctrl ? ctrl[a] : T(0);
    if (m.actuator_ctrllimited[a]) u = clamp(u, m.actuator_ctrlrange[2 * a], m.actuator_ctrlrange[2 * a + 1]);
    const T length = gear * d.qpos[m.jnt_qposadr[j]];
    const T velocity = gear * d.qvel[dof];
    T force;
    switch (m.actuator_kind[a]) {
      case kActPosition:
        force = m.actuator_kp[a] * (u - length) - m.actuator_kv[a] * velocity;
        break;
      case kActVelocity:
        force = m.actuator_kv[a] * (u - velocity);
        break;
      default:  // motor
        force = u;
        break;
    }
    if (m.actuator_forcelimited[a])
      force = clamp(force, m.actuator_forcerange[2 * a], m.actuator_forcerange[2 * a + 1]);
    d.actuator_force[a] = force;
    d.qfrc_actuator[dof] += gear * force;
  }
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
