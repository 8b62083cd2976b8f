// One control step of the articulated rigid-body physics (DESIGN.md D3): `substeps` physics steps
// of m.timestep each with ctrl held, every substep
//   smooth dynamics   kinematics, com quantities, qfrc_bias, qfrc_passive, qM (sim/dynamics.h)
//   actuators         actuator_force, qfrc_actuator from ctrl (sim/actuators.h)
//   contacts          detection -> the contact list (sim/contact.h)
//   constraints       joint limits and contacts as MuJoCo's soft constraints, solved for their
//                     forces -> qfrc_constraint, qacc (sim/constraints.h; MuJoCo's Euler with
//                     eulerdamp: (M + h D_joint) qacc = qfrc_applied + qfrc_actuator + qfrc_passive +
//                     qfrc_constraint - qfrc_bias)
//   Euler step        qvel += h qacc; qpos with the new qvel (as step_euler; with no limits and no
//                     contacts it is step_euler exactly)
// After the last substep, the contact wrench per body (cfrc_ext, sim/contact.h); in it, before its
// Euler update, the sensors when the model has any (sensordata, sim/sensors.h). Single source:
// RLT_HD, no std::, no allocation.
#pragma once

#include "sim/actuators.h"
#include "sim/common.h"
#include "sim/constraints.h"
#include "sim/contact.h"
#include "sim/dynamics.h"
#include "sim/sensors.h"

namespace rlt {

// One physics substep of m.timestep with ctrl (nu values, may be null when nu == 0) held; with
// `sensors`, d.sensordata from the substep's state before its integration (sim/sensors.h).
template <class T>
RLT_HD void physics_substep(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, bool sensors = false) {
  const T h = m.timestep;
  const T hd = m.implicit_damping ? h : T(0);
  smooth_forces(m, d);
  actuator_forces(m, d, ctrl);
  if (m.ncon_max > 0) {
    detect_contacts(m, d);
  } else {
    d.ncon[0] = T(0);
  }
  soft_constraint_acceleration(m, d, h, hd);  // MuJoCo's law (sim/constraints.h)
  if (sensors) compute_sensors(m, d);
  for (int i = 0; i < m.nv; ++i) d.qvel[i] += h * d.qacc[i];
  integrate_positions(m, d.qpos, d.qvel, h);
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

// The per-env body of a batched control step: env rows of `data` (layout.size scalars each) and
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

  RLT_HD void operator()(i64 env) const {
    const DataView<T> d = data_view<T>(layout, data + env * layout.size);
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
    const float* row = data + (first + k) * layout.size;
    float* o = out + k * ngeom * 12;
    for (int g = 0; g < ngeom; ++g) {
      for (int q = 0; q < 3; ++q) o[12 * g + q] = row[layout.geom_xpos + 3 * g + q];
      for (int q = 0; q < 9; ++q) o[12 * g + 3 + q] = row[layout.geom_xmat + 9 * g + q];
    }
  }
};

}  // namespace rlt
