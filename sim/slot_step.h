// A physics substep and a control step with the constraint rows in slots (sim/slot_rows.h) and
// MuJoCo's Newton solve on them (sim/newton_lanes.h), for one env (F = float: the reference, and
// the batch's last envs) or kLanes envs in SIMD lanes (F = LaneFloat), from one source: the CPU
// PhysicsBatch's physics in lanes (envs/physics_batch.cpp, set_lanes; docs/ARCHITECTURE.md
// "Physics in lanes").
//
// slot_substep is physics_substep's inner Euler substep (smooth forces placing only the poses a
// substep reads, contacts, actuator forces, the soft constraints, the implicit damping, the Euler
// update) with two changes: the rows come from build_slot_rows and the solve is
// slot_newton_solve, so an env's step equals newton_solve's to float rounding, not bit for bit.
// The control step's last substep (slot_last_substep, slot_physics_step_lanes) places every pose,
// gives the contact list its forces and computes the sensors, as physics_step's. In lanes the
// narrow phase runs per lane, in the scalar code (detect_contacts) on that lane's poses: the
// candidate pairs are the model's, but their contacts branch on the geometry. Every other stage
// runs in lanes, and each lane gets the bits the float instance gives its env
// (tests/sim/test_newton_lanes.cpp, tests/envs/test_physics_batch.cpp).
//
// Scope: SlotLayout's (the rows of MuJoCo Playground's scenes) and slot_step_supported's: Euler,
// joint-transmission actuators (motor, position, velocity, general with fixed or affine gain and
// no or affine bias) without activation dynamics, no applied body wrenches, no kinetic-energy or
// clock sensors.
#pragma once

#if !defined(__CUDACC__)
#include <algorithm>
#include <string>
#include <vector>
#endif

#include "sim/actuators.h"
#include "sim/contact.h"
#include "sim/dynamics.h"
#include "sim/newton_lanes.h"
#include "sim/physics_step.h"
#include "sim/sensors.h"
#include "sim/slot_rows.h"
#include "sim/transmission.h"

namespace rlt {

#if !defined(__CUDACC__)
// Host: whether slot_substep covers the model (with SlotLayout::build's checks); the reason if not.
inline bool slot_step_supported(const ModelView<float>& m, std::string* why) {
  if (m.integrator != kIntEuler) return *why = "an integrator other than Euler", false;
  if (m.nbody_xfrc > 0) return *why = "applied body wrenches", false;
  if (m.nenergy_lag > 0 || m.nclock > 0) return *why = "kinetic-energy or clock sensors", false;
  for (int a = 0; a < m.nu; ++a) {
    const int k = m.actuator_kind[a];
    if (m.actuator_trntype[a] != kTrnJoint || moment_transmission(m, a))
      return *why = "an actuator on other than a hinge or slide joint", false;
    if (k == kActGeneral && (m.actuator_dyntype[a] != kDynNone || m.actuator_gaintype[a] == kGainMuscle ||
                             m.actuator_biastype[a] == kBiasMuscle))
      return *why = "an actuator with activation dynamics or a muscle", false;
  }
  return true;
}

// Host: the workspace of slot_substep for one group (one env with F = float): the contact
// candidates, the rows, the solver's scratch, and (lanes) one env's float block for the narrow phase.
template <class F>
struct SlotStepWork {
  std::vector<F> depth, pos, normal;
  std::vector<F> index;  // per candidate and lane: the contact's index in that env's contact list
  SlotRowsBuffer<F> rows;
  std::vector<F> scratch;
  std::vector<float> env;   // a lane's poses for detect_contacts (F = LaneFloat)
  std::vector<int> first;   // per geom_collide pair: its first candidate
  int nrows = 0;            // the last substep's slots
  SlotNewtonStats stats{};  // the last solve's, per lane
  // (lanes, the last substep) each lane's contact list as detect_contacts left it
  std::vector<float> lists;
  int ncon[16] = {};

  SlotStepWork(const ModelView<float>& m, const SlotLayout& lay)
      : depth(lay.cand_pair.size(), F(-1.0f)),
        pos(3 * lay.cand_pair.size(), F(0.0f)),
        normal(3 * lay.cand_pair.size(), F(0.0f)),
        index(lay.cand_pair.size(), F(-1.0f)),
        rows(lay),
        scratch(static_cast<size_t>(slot_newton_scratch(m.nv, lay.max_slots)), F(0.0f)),
        env(static_cast<size_t>(data_size(m)), 0.0f),
        first(static_cast<size_t>(m.ncollide), -1),
        lists(static_cast<size_t>(LaneCount<F>::value) * kContactStride * static_cast<size_t>(m.ncon_max) + 1, 0.0f) {
    for (size_t k = lay.cand_pair.size(); k-- > 0;) first[static_cast<size_t>(lay.cand_pair[k])] = static_cast<int>(k);
  }
  ContactSlots<F> contacts(const SlotLayout& lay) const {
    ContactSlots<F> c;
    c.n = static_cast<int>(lay.cand_pair.size()), c.pair = lay.cand_pair.data();
    c.depth = depth.data(), c.pos = pos.data(), c.normal = normal.data();
    return c;
  }
};

namespace slot_step_detail {

// One env's contact list (detect_contacts' in d) into lane l of the candidates: rank r of
// geom_collide pair k into candidate first[k] + r (the list holds a pair's contacts together, in
// the pair list's order, so the rank counts within the run).
template <class F>
void contacts_to_slots(const ModelView<float>& m, const DataView<float>& d, int lane, SlotStepWork<F>& w) {
  int k = 0, rank = 0, last = -1;
  for (int i = 0; i < static_cast<int>(d.ncon[0]); ++i) {
    const float* con = d.contact + kContactStride * i;
    const int key = (static_cast<int>(con[kConGeom1]) << kGeomCollideShift) | static_cast<int>(con[kConGeom2]);
    if (key != last) {
      while (k < m.ncollide && m.geom_collide[k] != key) ++k;  // (the list follows the pair order)
      last = key, rank = 0;
    }
    // (cannot happen: detect_contacts lists the geom_collide pairs in order, and pair_contact_capacity,
    // which sizes the candidates, bounds what a pair emits; a guard against writing past them)
    if (k == m.ncollide ||
        rank >= pair_contact_capacity(m.geom_type[key >> kGeomCollideShift], m.geom_type[key & kGeomCollideMask]))
      continue;
    const size_t c = static_cast<size_t>(w.first[static_cast<size_t>(k)] + rank++);
    set_lane_value(w.depth[c], lane, con[kConDepth]);
    set_lane_value(w.index[c], lane, float(i));
    for (size_t j = 0; j < 3; ++j) {
      set_lane_value(w.pos[3 * c + j], lane, con[kConPos + j]);
      set_lane_value(w.normal[3 * c + j], lane, con[kConNormal + j]);
    }
  }
}

// The narrow phase into the candidates: for one env, detect_contacts on its data; in lanes, on each
// lane's poses (the colliders' geom frames, the bodies' frames and velocities: what detect_contacts
// reads) copied into a float block.
inline void slot_collide(const ModelView<float>& fm, const ModelView<float>&, const DataView<float>& d,
                         SlotStepWork<float>& w, bool = false) {
  for (float& x : w.depth) x = -1.0f;
  detect_contacts(fm, d);
  contacts_to_slots(fm, d, 0, w);
}
#if defined(RLT_LANES)
inline void slot_collide(const ModelView<float>& fm, const ModelView<LaneFloat>&, const DataView<LaneFloat>& d,
                         SlotStepWork<LaneFloat>& w, bool keep_lists = false) {
  for (LaneFloat& x : w.depth) x = LaneFloat(-1.0f);
  const DataView<float> e = data_view(fm, w.env.data());
  for (int l = 0; l < kLanes; ++l) {
    for (int k = 0; k < fm.ncollider; ++k) {
      const int g = fm.geom_collider[k];
      for (int j = 0; j < 3; ++j) e.geom_xpos[3 * g + j] = d.geom_xpos[3 * g + j].lane(l);
      for (int j = 0; j < 9; ++j) e.geom_xmat[9 * g + j] = d.geom_xmat[9 * g + j].lane(l);
    }
    for (int j = 0; j < 3 * fm.nbody; ++j) e.xpos[j] = d.xpos[j].lane(l);
    for (int j = 0; j < 6 * fm.nbody; ++j) e.cvel[j] = d.cvel[j].lane(l);
    detect_contacts(fm, e);
    contacts_to_slots(fm, e, l, w);
    if (!keep_lists) continue;
    w.ncon[l] = static_cast<int>(e.ncon[0]);
    std::copy(e.contact, e.contact + kContactStride * w.ncon[l],
              w.lists.data() + size_t(l) * kContactStride * fm.ncon_max);
  }
}
#endif

// actuator_forces for slot_step_supported's actuators, lane by lane: the same operations.
template <class F>
void slot_actuator_forces(const ModelView<float>& fm, const DataView<F>& d, const F* ctrl) {
  for (int i = 0; i < fm.nv; ++i) d.qfrc_actuator[i] = F(0);
  if (fm.disable_actuation) {
    for (int a = 0; a < fm.nu; ++a) d.actuator_force[a] = d.act_dot[a] = F(0);
    return;
  }
  auto clampf = [](F x, float lo, float hi) { return select(x < F(lo), F(lo), select(x > F(hi), F(hi), x)); };
  for (int a = 0; a < fm.nu; ++a) {
    const int j = fm.actuator_trnid[a], dof = fm.jnt_dofadr[j];
    const float gear = fm.actuator_gear[a];
    F u = ctrl ? ctrl[a] : F(0);
    if (fm.actuator_ctrllimited[a] && !fm.disable_clampctrl)
      u = clampf(u, fm.actuator_ctrlrange[2 * a], fm.actuator_ctrlrange[2 * a + 1]);
    const F length = F(gear) * d.qpos[fm.jnt_qposadr[j]], velocity = F(gear) * d.qvel[dof];
    F force;
    switch (fm.actuator_kind[a]) {
      case kActPosition:
        force = F(fm.actuator_kp[a]) * (u - length) - F(fm.actuator_kv[a]) * velocity;
        break;
      case kActVelocity:
        force = F(fm.actuator_kv[a]) * (u - velocity);
        break;
      case kActGeneral: {
        const float* gp = fm.actuator_gainprm + kNumGainPrm * a;
        const float* bp = fm.actuator_biasprm + kNumGainPrm * a;
        const F gain =
            fm.actuator_gaintype[a] == kGainAffine ? F(gp[0]) + F(gp[1]) * length + F(gp[2]) * velocity : F(gp[0]);
        force = gain * u;
        if (fm.actuator_biastype[a] == kBiasAffine) force += F(bp[0]) + F(bp[1]) * length + F(bp[2]) * velocity;
        break;
      }
      default:
        force = u;
        break;
    }
    if (fm.actuator_forcelimited[a])
      force = clampf(force, fm.actuator_forcerange[2 * a], fm.actuator_forcerange[2 * a + 1]);
    d.actuator_force[a] = force;
    d.qfrc_actuator[dof] += F(gear) * force;
  }
  for (int jj = 0; jj < fm.njnt; ++jj) {  // clamp_joint_actuator_forces
    if (!fm.jnt_actfrclimited[jj]) continue;
    const int t = fm.jnt_type[jj], n = t == kJointFree ? 6 : t == kJointBall ? 3 : 1;
    for (int k = 0; k < n; ++k) {
      F& f = d.qfrc_actuator[fm.jnt_dofadr[jj] + k];
      f = clampf(f, fm.jnt_actfrcrange[2 * jj], fm.jnt_actfrcrange[2 * jj + 1]);
    }
  }
}

}  // namespace slot_step_detail

// The constrained acceleration of a substep whose forces and contact candidates are in d and w
// (soft_constraint_acceleration's steps, the rows and the solve in slots), then the implicit damping.
template <class F>
void slot_acceleration(const ModelView<float>& fm, const ModelView<F>& m, const DataView<F>& d, const SlotLayout& lay,
                       SlotStepWork<F>& w) {
  const int nv = fm.nv;
  const float h = static_cast<float>(fm.timestep);
  factor_mass_load(m, d, F(0));
  factor_mass_eliminate(m, d);
  for (int i = 0; i < nv; ++i) d.qLDiagSqrtInv[i] = F(1) / m_sqrt(d.qLD[i * nv + i]);
  for (int i = 0; i < nv; ++i)
    d.qacc_smooth[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
  solve_mass(m, d, d.qacc_smooth);
  w.nrows = build_slot_rows(fm, m, d, lay, w.contacts(lay), h, w.rows.out());
  slot_newton_solve(m, d, w.rows.rows(w.nrows), w.scratch.data(), &w.stats);
  for (int i = 0; i < (fm.newton_warmstart ? nv : 0); ++i) d.qacc_solver[i] = d.qacc[i];
  for (int i = 0; i < nv && fm.nbody_acc > 0; ++i) d.sensor_qacc[i] = d.qacc[i];
  const float hd = fm.implicit_damping ? h : 0.0f;  // (Euler)
  bool damped = false;
  for (int i = 0; i < nv && hd > 0.0f; ++i) damped = damped || fm.dof_damping[i] != 0.0f;
  if (!damped) return;
  factor_mass_load(m, d, F(hd));
  factor_mass_eliminate(m, d);
  for (int i = 0; i < nv; ++i)
    d.qacc[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] + d.qfrc_constraint[i] - d.qfrc_bias[i];
  solve_mass(m, d, d.qacc);
}

// physics_substep's end: the next substep's warm start, then Euler.
template <class F>
void slot_advance(const ModelView<float>& fm, const ModelView<F>& m, const DataView<F>& d) {
  const float h = static_cast<float>(fm.timestep);
  for (int i = 0; i < (fm.newton_warmstart ? fm.nv : 0); ++i) d.qacc_warmstart[i] = d.qacc_solver[i];
  for (int i = 0; i < fm.nv; ++i) d.qvel[i] += F(h) * d.qacc[i];
  integrate_positions(m, d.qpos, d.qvel, F(h));
}

// A substep up to its acceleration: smooth forces, the narrow phase, the actuator forces, the
// constrained acceleration; in the last substep of a control step (`last`) every pose placed and,
// in lanes, each lane's contact list kept (SlotStepWork::lists).
template <class F>
void slot_forward(const ModelView<float>& fm, const ModelView<F>& m, const DataView<F>& d, const F* ctrl,
                  const SlotLayout& lay, SlotStepWork<F>& w, bool last) {
  using namespace slot_step_detail;
  smooth_forces(m, d, last);
  slot_collide(fm, m, d, w, last);
  slot_actuator_forces(fm, d, ctrl);
  slot_acceleration(fm, m, d, lay, w);
}

// One inner substep (see the top of this file) of every lane of d: fm is the float view of the
// model, m its view for F (lane_model_view for LaneFloat), ctrl nu values of F.
template <class F>
void slot_substep(const ModelView<float>& fm, const ModelView<F>& m, const DataView<F>& d, const F* ctrl,
                  const SlotLayout& lay, SlotStepWork<F>& w) {
  slot_forward(fm, m, d, ctrl, lay, w, false);
  slot_advance(fm, m, d);
}

// An env's rows (lane `lane` of the slots of the last solve) into its d.efc in constraint_rows'
// order, each with its force and owner (a contact edge: its contact's index in d's list, which also
// holds contacts within the margin that make no rows), d.nefc and d.solver_niter; the contact list
// as constraint_rows leaves it (each contact's force, flag and friction cleared, its mu the pair's,
// no torsion row); then the contacts' forces (constraint_contact_forces), which the sensors and
// cfrc_ext read.
template <class F>
void slot_env_forces(const ModelView<float>& m, const DataView<float>& d, const SlotStepWork<F>& w, int lane) {
  using namespace constraint_detail;
  for (int i = 0; i < static_cast<int>(d.ncon[0]); ++i) {
    float* con = d.contact + kContactStride * i;
    con[kConForce] = con[kConActive] = 0.0f;
    con[kConFriction] = con[kConFriction + 1] = con[kConFriction + 2] = 0.0f;
    con[kConMu] = contact_params(m, static_cast<int>(con[kConGeom1]), static_cast<int>(con[kConGeom2])).mu_raw;
    con[kConTorqueRow] = 0.0f;  // (SlotLayout refuses condim 4 and 6)
  }
  int r = 0;
  for (int s = 0; s < w.nrows; ++s) {
    if (lane_value(w.rows.real[static_cast<size_t>(s)], lane) == 0.0f) continue;
    const int c = w.rows.cand[static_cast<size_t>(s)];
    const int dof = w.rows.deep[static_cast<size_t>(s)];
    float* e = d.efc + r * kEfcStride;
    e[kEfcOwner] = c >= 0 ? lane_value(w.index[static_cast<size_t>(c)], lane)
                   : w.rows.kind[static_cast<size_t>(s)] == kScalarFriction ? float(-2 - dof)
                                                                            : -1.0f;
    e[kEfcForce] = lane_value(w.rows.force[static_cast<size_t>(s)], lane);
    ++r;
  }
  d.nefc[0] = float(r);
  d.solver_niter[0] = float(w.stats.iterations[lane]);
  constraint_contact_forces(m, d, r);
}

// The last substep of a control step for one env with the rows and the solve in slots:
// physics_substep's (every pose placed, the model's sensors computed), the contact list with its
// forces for the sensors and cfrc_ext.
inline void slot_last_substep(const ModelView<float>& m, const DataView<float>& d, const float* ctrl,
                              const SlotLayout& lay, SlotStepWork<float>& w) {
  slot_forward(m, m, d, ctrl, lay, w, true);
  slot_env_forces(m, d, w, 0);
  if (m.nsensor > 0) compute_sensors(m, d);
  slot_advance(m, m, d);
}

// A control step of one env with every substep's rows and solve in slots: physics_step's (cfrc_ext,
// the pushing contacts' count), the inner substeps by slot_substep, the last by slot_last_substep.
// A batch in lanes gives each env these bits.
inline void slot_physics_step(const ModelView<float>& m, const DataView<float>& d, const float* ctrl, int substeps,
                              int* num_contacts, const SlotLayout& lay, SlotStepWork<float>& w) {
  for (int s = 0; s + 1 < substeps; ++s) slot_substep(m, m, d, ctrl, lay, w);
  if (substeps > 0) {
    slot_last_substep(m, d, ctrl, lay, w);
    contact_external_forces(m, d, m.timestep);
  } else {
    for (int k = 0; k < 6 * m.nbody; ++k) d.cfrc_ext[k] = 0.0f;
  }
  if (num_contacts) *num_contacts = substeps > 0 ? active_contacts(d) : 0;
}
#endif

#if defined(RLT_LANES) && !defined(__CUDACC__)
// Host: the workspace of a batch thread stepping groups of kLanes envs in lanes.
struct SlotLanesWork {
  SlotStepWork<LaneFloat> lanes;
  SlotStepWork<float> alone;
  std::vector<LaneFloat> block;  // the group's data, field-major (data_size(m) lanes)
  std::vector<LaneFloat> ctrl;
  std::vector<float> workspace;  // one env's constraint workspace (DataLayout::workspace)
  SlotLanesWork(const ModelView<float>& m, const SlotLayout& lay)
      : lanes(m, lay),
        alone(m, lay),
        block(static_cast<size_t>(data_size(m)), LaneFloat(0.0f)),
        ctrl(static_cast<size_t>(m.nu) + 1, LaneFloat(0.0f)),
        workspace(static_cast<size_t>(data_layout(m).workspace) + 1, 0.0f) {}
};

// A control step of kLanes envs (rows[l]: env l's data row, DataLayout::row floats; ctrl[l] its nu
// controls or null): every substep's physics in lanes; in the last, after the constrained
// acceleration, each env alone takes its contact list and forces, its sensors and the Euler update.
// Each env gets slot_physics_step's bits (tests/sim/test_newton_lanes.cpp).
inline void slot_physics_step_lanes(const ModelView<float>& m, const ModelView<LaneFloat>& lm, float* const* rows,
                                    const float* const* ctrl, int substeps, int* const* num_contacts,
                                    const SlotLayout& lay, SlotLanesWork& w) {
  using namespace slot_step_detail;
  const DataLayout layout = data_layout(m);
  if (substeps > 0) {
    gather_lanes(w.block.data(), const_cast<const float* const*>(rows), layout.row);
    for (int a = 0; a < m.nu; ++a)
      for (int l = 0; l < kLanes; ++l) w.ctrl[static_cast<size_t>(a)].set_lane(l, ctrl[l] ? ctrl[l][a] : 0.0f);
    const DataView<LaneFloat> d = data_view(lm, w.block.data());
    for (int s = 0; s + 1 < substeps; ++s) slot_substep(m, lm, d, w.ctrl.data(), lay, w.lanes);
    slot_forward(m, lm, d, w.ctrl.data(), lay, w.lanes, true);
    scatter_lanes(rows, w.block.data(), layout.row);
  }
  const DataView<LaneFloat> ld = data_view(lm, w.block.data());
  for (int l = 0; l < kLanes; ++l) {
    const DataView<float> d = data_view(layout, rows[l], w.workspace.data());
    if (substeps > 0) {
      // (the scatter moved the rows; the solver's acceleration lives in the workspace)
      for (int i = 0; i < (m.newton_warmstart ? m.nv : 0); ++i) d.qacc_solver[i] = ld.qacc_solver[i].lane(l);
      d.ncon[0] = float(w.lanes.ncon[l]);
      const float* list = w.lanes.lists.data() + size_t(l) * kContactStride * m.ncon_max;
      std::copy(list, list + kContactStride * w.lanes.ncon[l], d.contact);
      slot_env_forces(m, d, w.lanes, l);
      if (m.nsensor > 0) compute_sensors(m, d);
      slot_advance(m, m, d);
      contact_external_forces(m, d, m.timestep);
    } else {
      for (int k = 0; k < 6 * m.nbody; ++k) d.cfrc_ext[k] = 0.0f;
    }
    if (num_contacts[l]) *num_contacts[l] = substeps > 0 ? active_contacts(d) : 0;
  }
}
#endif

}  // namespace rlt
