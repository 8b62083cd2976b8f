// One control step of the articulated rigid-body physics (DESIGN.md D3): `substeps` physics steps
// of m.timestep each with ctrl held, every substep
//   smooth dynamics   kinematics, com quantities, qfrc_bias, qfrc_passive, qM (sim/dynamics.h)
//   tendons           lengths, moment arms, velocities, tendon springs and dampers (sim/tendon.h)
//   transmissions     site and slider-crank actuator lengths and moments (sim/transmission.h)
//   actuators         actuator_force, qfrc_actuator from ctrl (sim/actuators.h)
//   contacts          detection -> the contact list (sim/contact.h)
//   constraints       joint limits and contacts as MuJoCo's soft constraints, solved for their
//                     forces -> qfrc_constraint, qacc (sim/constraints.h; MuJoCo's Euler with
//                     eulerdamp: (M + h D_joint) qacc = qfrc_applied + qfrc_actuator + qfrc_passive +
//                     qfrc_constraint - qfrc_bias); with option noslip_iterations, MuJoCo's noslip
//                     post-pass on the friction rows after the main solve (sim/noslip.h)
//   integrator        Euler: qvel += h qacc; qpos with the new qvel (as step_euler; with no limits
//                     and no contacts it is step_euler exactly); implicitfast and RK4 as MuJoCo 3
//                     (physics_substep); actuator activations advance with the state
// After the last substep, the contact wrench per body (cfrc_ext, sim/contact.h). Single source:
// In the last substep, after the first forward pass and before the integration, the sensors when the
// model has any (sensordata, sim/sensors.h), as MuJoCo's mj_step.
// RLT_HD, no std::, no allocation.
#pragma once

#include "sim/actuators.h"
#include "sim/common.h"
#include "sim/constraints.h"
#include "sim/contact.h"
#include "sim/dynamics.h"
#include "sim/noslip.h"
#include "sim/sensors.h"
#include "sim/tendon.h"

namespace rlt {

// MuJoCo's mj_forward for one substep with ctrl held: smooth forces, actuators (actuator_force,
// act_dot, qfrc_actuator), contacts and the constrained acceleration d.qacc (hd > 0: with joint
// damping implicit over hd, MuJoCo's Euler with eulerdamp; sim/constraints.h).
template <class T>
RLT_HD void physics_forward(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, T hd) {
  smooth_forces(m, d);
  tendon_forward(m, d);           // lengths, moments, tendon springs and dampers (sim/tendon.h)
  transmission_kinematics(m, d);  // site and slider-crank lengths and moments (sim/transmission.h)
  actuator_forces(m, d, ctrl);
  clamp_joint_actuator_forces(m, d);  // actuatorfrcrange (sim/constraints.h)
  if (m.ncon_max > 0) {
    detect_contacts(m, d);
  } else {
    d.ncon[0] = T(0);
  }
  soft_constraint_acceleration(m, d, m.timestep, hd);  // MuJoCo's law (sim/constraints.h)
}

// MuJoCo's mj_advance: act from act_dot, qvel += h qacc, then qpos with pos_vel (null: the new qvel).
template <class T>
RLT_HD void advance_state(const ModelView<T>& m, const DataView<T>& d, const T* act_dot, const T* qacc,
                          const T* pos_vel) {
  const T h = m.timestep;
  advance_activations(m, d, act_dot);
  for (int i = 0; i < m.nv; ++i) d.qvel[i] += h * qacc[i];
  integrate_positions(m, d.qpos, pos_vel ? pos_vel : d.qvel, h);
}

// MuJoCo's implicitfast after physics_forward(hd = 0): qacc <- (M - h qDeriv)^-1 (qfrc_smooth +
// qfrc_constraint), qDeriv the diagonal derivative of actuator and passive forces in qvel
// (actuator_passive_velocity_derivative; the Coriolis derivative is left out, as implicitfast does).
// MuJoCo also solves a standalone free body (no parent but the world, no children) with its
// gyroscopic derivative (mjd_freeMhat); here it keeps M.
template <class T>
RLT_HD void implicitfast_acceleration(const ModelView<T>& m, const DataView<T>& d, const T* ctrl) {
  const int nv = m.nv;
  actuator_passive_velocity_derivative(m, d, ctrl);
  factor_mass_load(m, d, T(0));
  for (int i = 0; i < nv; ++i) d.qLD[i * nv + i] = d.qM[i * nv + i] + (-m.timestep) * d.qDeriv[i];
  factor_mass_eliminate(m, d);
  for (int i = 0; i < nv; ++i)
    d.qacc[i] = d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_constraint[i];
  solve_mass(m, d, d.qacc);
}

// MuJoCo's mj_RungeKutta(4): stages at the state advanced by (1/2, 1/2, 1) h along the previous
// stage's velocity and acceleration (positions on the manifold), then qvel, act and qpos advanced
// (advance_state) by the (1/6, 1/3, 1/3, 1/6) combination of the four stages' acc, act_dot and vel.
template <class T>
RLT_HD void step_rk4(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, bool sensors) {
  const T h = m.timestep;
  const T A[3] = {T(0.5), T(0.5), T(1)};
  const T B[4] = {T(1.0 / 6.0), T(1.0 / 3.0), T(1.0 / 3.0), T(1.0 / 6.0)};
  const int nq = m.nq, nv = m.nv, nu = m.nu;
  physics_forward(m, d, ctrl, T(0));
  if (sensors) compute_sensors(m, d);
  for (int i = 0; i < nq; ++i) d.rk_qpos[i] = d.qpos[i];
  for (int i = 0; i < nv; ++i)
    d.rk_qvel[i] = d.qvel[i], d.rk_dvel[i] = B[0] * d.qvel[i], d.rk_dacc[i] = B[0] * d.qacc[i];
  for (int i = 0; i < nu; ++i) d.rk_act[i] = d.act[i], d.rk_dact[i] = B[0] * d.act_dot[i];
  for (int s = 1; s < 4; ++s) {
    // X_s = X_0 + h A_s F_(s-1) (A has one entry per row, so the sum over j < s is that term alone).
    for (int i = 0; i < nv; ++i) d.rk_dpos[i] = d.qvel[i] * A[s - 1];
    for (int i = 0; i < nq; ++i) d.qpos[i] = d.rk_qpos[i];
    integrate_positions(m, d.qpos, d.rk_dpos, h);
    for (int i = 0; i < nv; ++i) d.qvel[i] = d.rk_qvel[i] + (d.qacc[i] * A[s - 1]) * h;
    for (int i = 0; i < nu; ++i) d.act[i] = d.rk_act[i] + (d.act_dot[i] * A[s - 1]) * h;
    physics_forward(m, d, ctrl, T(0));
    for (int i = 0; i < nv; ++i) d.rk_dvel[i] += d.qvel[i] * B[s], d.rk_dacc[i] += d.qacc[i] * B[s];
    for (int i = 0; i < nu; ++i) d.rk_dact[i] += d.act_dot[i] * B[s];
  }
  for (int i = 0; i < nq; ++i) d.qpos[i] = d.rk_qpos[i];
  for (int i = 0; i < nv; ++i) d.qvel[i] = d.rk_qvel[i];
  for (int i = 0; i < nu; ++i) d.act[i] = d.rk_act[i];
  advance_state(m, d, d.rk_dact, d.rk_dacc, static_cast<const T*>(d.rk_dvel));
}

// One physics substep of m.timestep with ctrl (nu values, may be null when nu == 0) held, by the
// model's integrator (MuJoCo's mj_step): Euler (joint damping implicit when m.implicit_damping,
// MuJoCo's eulerdamp), RK4 or implicitfast. With `sensors`, d.sensordata from the substep's state
// before its integration (sim/sensors.h).
template <class T>
RLT_HD void physics_substep(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, bool sensors = false) {
  if (m.integrator == kIntRK4) {
    step_rk4(m, d, ctrl, sensors);
    return;
  }
  if (m.integrator == kIntImplicitFast) {
    physics_forward(m, d, ctrl, T(0));
    if (sensors) compute_sensors(m, d);
    implicitfast_acceleration(m, d, ctrl);
  } else {
    physics_forward(m, d, ctrl, m.implicit_damping ? m.timestep : T(0));
    if (sensors) compute_sensors(m, d);
  }
  advance_state(m, d, d.act_dot, d.qacc, static_cast<const T*>(nullptr));
}

// One control step: `substeps` substeps with ctrl held; *num_contacts (when not null) = the contacts
// that pushed in the last substep. d.cfrc_ext gets the last substep's contact wrench per body
// (MuJoCo reports those of the last mj_step; sim/contact.h, contact_external_forces), computed once
// per control step, right after that substep, from what it solved. When the model has sensors, the
// last substep also computes d.sensordata (sim/sensors.h), as MuJoCo's mj_step does.
template <class T>
RLT_HD void physics_step(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, int substeps, int* num_contacts) {
  for (int s = 0; s < substeps; ++s) physics_substep(m, d, ctrl, m.nsensor > 0 && s == substeps - 1);
  if (substeps > 0) {
    contact_external_forces(m, d, m.timestep);
  } else {
    for (int k = 0; k < 6 * m.nbody; ++k) d.cfrc_ext[k] = T(0);
  }
  if (num_contacts) *num_contacts = substeps > 0 ? active_contacts(d) : 0;
}

// The per-env body of a batched control step: env rows of `data` (layout.row scalars each) and
// ctrl rows of nu scalars (ctrl may be null when nu == 0); num_contacts (may be null) gets one int
// per env. Runs on either executor: parallel_for(exec, n, f).
template <class T>
struct PhysicsStepEnvs {
  ModelView<T> m;
  DataLayout layout;
  T* data;
  const T* ctrl;
  int substeps;
  int* num_contacts;
  Workspace<T> workspace = {};  // on the device; unused on the host (BatchRows)

  RLT_HD void operator()(i64 env) const {
    const DataView<T> d = BatchRows<T>{layout, data, workspace}.env(env);
    physics_step(m, d, ctrl ? ctrl + env * m.nu : static_cast<const T*>(nullptr), substeps,
                 num_contacts ? num_contacts + env : static_cast<int*>(nullptr));
  }
};

// Geom poses of envs [first, first + count) of a batch's physics rows, for the viewer:
// (count x ngeom x 12) floats, each geom's geom_xpos (3) then geom_xmat (9, row-major), the
// VecEnv::request_draw_poses layout. Robot envs and PhysicsBatch both gather with it.
struct GatherGeomPoses {
  const float* data;
  DataLayout layout;
  int ngeom;
  i64 first;
  float* out;
  RLT_HD void operator()(i64 k) const {
    const float* row = data + (first + k) * layout.row;
    float* o = out + k * ngeom * 12;
    for (int g = 0; g < ngeom; ++g) {
      for (int q = 0; q < 3; ++q) o[12 * g + q] = row[layout.geom_xpos + 3 * g + q];
      for (int q = 0; q < 9; ++q) o[12 * g + 3 + q] = row[layout.geom_xmat + 9 * g + q];
    }
  }
};

}  // namespace rlt
