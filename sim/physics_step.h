// One control step of the articulated rigid-body physics (DESIGN.md D3): `substeps` physics steps
// of m.timestep each with ctrl held, every substep
//   smooth dynamics   kinematics, com quantities, qfrc_bias, qfrc_passive, qM (sim/dynamics.h)
//   tendons           lengths, moment arms, velocities, tendon springs and dampers (sim/tendon.h)
//   contacts          detection -> the contact list (sim/contact.h)
//   transmissions     site, slider-crank, ball and free joint and body (from the contact list)
//                     actuator lengths and moments (sim/transmission.h)
//   actuators         actuator_force, qfrc_actuator from ctrl (sim/actuators.h)
//   constraints       joint limits and contacts as MuJoCo's soft constraints, solved for their
//                     forces -> qfrc_constraint, qacc (sim/constraints.h; MuJoCo's Euler with
//                     eulerdamp: (M + h D_joint) qacc = qfrc_applied + qfrc_actuator + qfrc_passive +
//                     qfrc_constraint - qfrc_bias); with option noslip_iterations, MuJoCo's noslip
//                     post-pass on the friction rows after the main solve (sim/noslip.h)
//   integrator        Euler: qvel += h qacc; qpos with the new qvel (as step_euler; with no limits
//                     and no contacts it is step_euler exactly); implicitfast, implicit and RK4 as MuJoCo 3
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

// qfrc += J^T (force, torque) for a wrench on body b at world point p (MuJoCo's mj_applyFT): the
// translational Jacobian of p (point_jacobian_col) and the rotational one (cdof's angular part) over
// b's dof chain. Needs com_position.
template <class T>
RLT_HD void apply_body_wrench(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& force,
                              const Vec3<T>& torque, const Vec3<T>& p, T* qfrc) {
  for (int i = last_dof(m, b); i >= 0; i = m.dof_parentid[i])
    qfrc[i] += dot(force, point_jacobian_col(m, d, b, p, i)) + dot(torque, Vec3<T>::load(d.cdof + 6 * i));
}

// Where body wrenches are on (m.nbody_xfrc > 0): qfrc_applied <- qfrc_user + sum over bodies of
// J^T xfrc_applied at the body's centre of mass (MuJoCo's mj_xfrcAccumulate; bodies with a zero
// wrench skipped, as there). Needs com_position; physics_forward calls it after the smooth forces.
template <class T>
RLT_HD void xfrc_forces(const ModelView<T>& m, const DataView<T>& d) {
  for (int i = 0; i < m.nv; ++i) d.qfrc_applied[i] = d.qfrc_user[i];
  for (int b = 1; b < m.nbody_xfrc; ++b) {
    const T* w = d.xfrc_applied + 6 * b;
    if (w[0] == T(0) && w[1] == T(0) && w[2] == T(0) && w[3] == T(0) && w[4] == T(0) && w[5] == T(0)) continue;
    apply_body_wrench(m, d, b, Vec3<T>::load(w), Vec3<T>::load(w + 3), Vec3<T>::load(d.xipos + 3 * b), d.qfrc_applied);
  }
}

// MuJoCo's mj_forward for one substep with ctrl held: smooth forces, actuators (actuator_force,
// act_dot, qfrc_actuator), contacts and the constrained acceleration d.qacc (hd > 0: with joint
// damping implicit over hd, MuJoCo's Euler with eulerdamp; sim/constraints.h). With body wrenches
// on, qfrc_applied is rewritten from qfrc_user and xfrc_applied first (xfrc_forces). all_poses false:
// the poses of the geoms and sites that only sensors, env code and the viewer read are left as they
// were (kinematics; physics_step's inner substeps).
template <class T>
RLT_HD void physics_forward(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, T hd, bool all_poses = true) {
  smooth_forces(m, d, all_poses);
  if (m.nbody_xfrc > 0) xfrc_forces(m, d);
  tendon_forward(m, d);  // lengths, moments, tendon springs and dampers (sim/tendon.h)
  if (m.ncon_max > 0) {  // (before the transmissions: a body's moment comes from its contacts)
    detect_contacts(m, d);
  } else {
    d.ncon[0] = T(0);
  }
  transmission_kinematics(m, d);  // moment rows: site, slider-crank, ball, free, body (sim/transmission.h)
  actuator_forces(m, d, ctrl);
  clamp_joint_actuator_forces(m, d);  // actuatorfrcrange (sim/constraints.h)
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

// The velocity derivative of a standalone free body's bias forces (MuJoCo's mjd_freeBias_vel), columns
// of its three rotational dofs (the linear ones give none): for a unit rate along body axis c, the
// world angular velocity changes by dw = R e_c, the com force f = mass w x (w x s) by
// mass (dw x (w x s) + w x (dw x s)) (s = com - origin) and the torque about the com w x Iw w by
// dw x Iw w + w x Iw dw; the free joint's bias is (f, R^T (s x f + torque)). B[3 r + c]: row r
// (the six dofs), column c (rotational dof c).
template <class T>
RLT_HD void free_bias_velocity_derivative(const ModelView<T>& m, const DataView<T>& d, int b, T* B) {
  const int adr = m.body_dofadr[b];
  const T mass = m.body_mass[b];
  const Mat3<T> R = Mat3<T>::load(d.xmat + 9 * b), Ri = Mat3<T>::load(d.ximat + 9 * b);
  const T* inertia = m.body_inertia + 3 * b;
  auto world_inertia = [&](const Vec3<T>& x) {  // Ri diag(inertia) Ri^T x
    const Vec3<T> p{dot(Ri.col(0), x) * inertia[0], dot(Ri.col(1), x) * inertia[1], dot(Ri.col(2), x) * inertia[2]};
    return p.x * Ri.col(0) + p.y * Ri.col(1) + p.z * Ri.col(2);
  };
  const Vec3<T> s = Vec3<T>::load(d.xipos + 3 * b) - Vec3<T>::load(d.xpos + 3 * b);
  const Vec3<T> w = R * Vec3<T>::load(d.qvel + adr + 3);
  const Vec3<T> ws = cross(w, s), Iw = world_inertia(w);
  for (int c = 0; c < 3; ++c) {
    const Vec3<T> dw = R.col(c);
    const Vec3<T> df = mass * (cross(dw, ws) + cross(w, cross(dw, s)));
    const Vec3<T> dtorque = cross(dw, Iw) + cross(w, world_inertia(dw));
    const Vec3<T> dmoment = cross(s, df) + dtorque;
    const T dm[3] = {dot(R.col(0), dmoment), dot(R.col(1), dmoment), dot(R.col(2), dmoment)};
    B[3 * 0 + c] = df.x, B[3 * 1 + c] = df.y, B[3 * 2 + c] = df.z;
    for (int r = 0; r < 3; ++r) B[3 * (3 + r) + c] = dm[r];
  }
}

// x <- A^-1 x for a 6x6 A (row-major, overwritten), Gaussian elimination with partial pivoting;
// false (x untouched) when a pivot is below 1e-15 (MuJoCo's mju_factorLU6 / mju_solveLU6).
template <class T>
RLT_HD bool solve6(T* A, T* x) {
  T y[6];
  for (int i = 0; i < 6; ++i) y[i] = x[i];
  for (int k = 0; k < 6; ++k) {
    int p = k;
    for (int i = k + 1; i < 6; ++i)
      if ((A[6 * i + k] < T(0) ? -A[6 * i + k] : A[6 * i + k]) > (A[6 * p + k] < T(0) ? -A[6 * p + k] : A[6 * p + k]))
        p = i;
    const T pivot = A[6 * p + k];
    if ((pivot < T(0) ? -pivot : pivot) < T(1e-15)) return false;
    if (p != k) {
      for (int j = 0; j < 6; ++j) {
        const T t = A[6 * k + j];
        A[6 * k + j] = A[6 * p + j], A[6 * p + j] = t;
      }
      const T t = y[k];
      y[k] = y[p], y[p] = t;
    }
    for (int i = k + 1; i < 6; ++i) {
      const T f = A[6 * i + k] / pivot;
      for (int j = k; j < 6; ++j) A[6 * i + j] -= f * A[6 * k + j];
      y[i] -= f * y[k];
    }
  }
  for (int k = 5; k >= 0; --k) {
    T sum = y[k];
    for (int j = k + 1; j < 6; ++j) sum -= A[6 * k + j] * y[j];
    y[k] = sum / A[6 * k + k];
  }
  for (int i = 0; i < 6; ++i) x[i] = y[i];
  return true;
}

// MuJoCo's implicitfast (mj_implicitSkip) after physics_forward(hd = 0): qacc <- (M - h qDeriv)^-1
// (qfrc_smooth + qfrc_constraint), qDeriv the derivative of actuator and passive forces in qvel
// (smooth_velocity_derivative; the bias forces' is left out, and the matrix keeps only qM's lower
// pattern, as implicitfast's symmetric factorization does: an entry between dofs of different
// branches or trees is dropped, and so is every off-diagonal entry of a "simple" dof, m.dof_simple).
// A standalone free body (m.body_freebody) keeps M in that factorization; its six accelerations are
// then solved apart with the full 6x6 M - h qDeriv + h d qfrc_bias / d qvel (its gyroscopic
// derivative, MuJoCo's mjd_freeMhat), whose block is decoupled from every other dof.
template <class T>
RLT_HD void implicitfast_acceleration(const ModelView<T>& m, const DataView<T>& d, const T* ctrl) {
  const int nv = m.nv;
  const T h = m.timestep;
  smooth_velocity_derivative(m, d, ctrl);
  T* ld = d.qLD;
  for (int i = 0; i < nv; ++i) {
    const bool free_body = m.body_freebody[m.dof_bodyid[i]] != 0;
    for (int j = i; j >= 0; j = m.dof_parentid[j]) {
      if (j != i && m.dof_simple[i]) {
        ld[i * nv + j] = T(0);
        continue;
      }
      ld[i * nv + j] = free_body ? d.qM[i * nv + j] : d.qM[i * nv + j] - h * d.qDeriv[i * nv + j];
    }
  }
  factor_mass_eliminate(m, d);
  for (int i = 0; i < nv; ++i)
    d.qacc[i] = d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_constraint[i];
  solve_mass(m, d, d.qacc);
  for (int b = 1; b < m.nbody; ++b) {
    if (!m.body_freebody[b]) continue;
    const int adr = m.body_dofadr[b];
    T A[36], B[18], x[6];
    for (int r = 0; r < 6; ++r) {
      const int i = adr + r;
      x[r] = d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_constraint[i];
      for (int c = 0; c <= r; ++c) {  // M (its kept pattern) - h qDeriv, both symmetric
        const int j = adr + c;
        const T mij = c == r || !m.dof_simple[i] ? d.qM[i * nv + j] : T(0);
        A[6 * r + c] = A[6 * c + r] = mij - h * d.qDeriv[i * nv + j];
      }
    }
    free_bias_velocity_derivative(m, d, b, B);  // + h d qfrc_bias / d qvel (qfrc_smooth has -qfrc_bias)
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 3; ++c) A[6 * r + 3 + c] += h * B[3 * r + c];
    if (solve6(A, x))
      for (int r = 0; r < 6; ++r) d.qacc[adr + r] = x[r];
  }
}

// d.qDeriv <- d(qfrc_actuator + qfrc_passive - qfrc_bias) / d qvel, every entry (MuJoCo's mjd_smooth_vel
// with its bias term, as its implicit integrator calls it): the actuator and passive terms on qM's lower
// pattern (smooth_velocity_derivative, symmetric: J^T B J with B diagonal) mirrored to the upper, then
// the bias forces' (rne_velocity_derivative, not symmetric). Nonzero only where i and j share an
// ancestor chain (MuJoCo's D pattern). Needs physics_forward.
template <class T>
RLT_HD void implicit_velocity_derivative(const ModelView<T>& m, const DataView<T>& d, const T* ctrl) {
  const int nv = m.nv;
  for (int k = 0; k < nv * nv; ++k) d.qDeriv[k] = T(0);
  smooth_velocity_derivative(m, d, ctrl);
  for (int i = 0; i < nv; ++i)
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) d.qDeriv[j * nv + i] = d.qDeriv[i * nv + j];
  rne_velocity_derivative(m, d, d.qDeriv, d.rne_dvel, d.rne_dacc);
}

// In place, A = (U + I) L (MuJoCo's mju_factorLUSparse: reverse-order LU without fill-in) for an A whose
// entries (i, j) are nonzero only where i and j share an ancestor chain (dense nv x nv, row-major; the
// others never read): from the last dof up, each ancestor j of i takes A_ji /= A_ii, then
// A_jk -= A_ik A_ji for every ancestor k of i. L (lower, with the diagonal) and U (strictly upper)
// keep that pattern. No pivoting: M - h qDeriv keeps M's dominant diagonal at any sane timestep.
template <class T>
RLT_HD void factor_lu(const ModelView<T>& m, T* A) {
  const int nv = m.nv;
  for (int i = nv - 1; i >= 0; --i) {
    const T* Ai = A + i * nv;
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) {
      T* Aj = A + j * nv;
      const T aji = Aj[i] /= Ai[i];
      for (int k = m.dof_parentid[i]; k >= 0; k = m.dof_parentid[k]) Aj[k] -= Ai[k] * aji;
    }
  }
}

// x <- A^-1 x from factor_lu's (U + I) L: (U + I) y = x from the last dof up (each finished y_k taken
// out of its ancestors' rows), then L x = y from the first dof down (MuJoCo's mju_solveLUSparse).
template <class T>
RLT_HD void solve_lu(const ModelView<T>& m, const T* A, T* x) {
  const int nv = m.nv;
  for (int k = nv - 1; k >= 0; --k)
    for (int j = m.dof_parentid[k]; j >= 0; j = m.dof_parentid[j]) x[j] -= A[j * nv + k] * x[k];
  for (int i = 0; i < nv; ++i) {
    T sum = x[i];
    for (int k = m.dof_parentid[i]; k >= 0; k = m.dof_parentid[k]) sum -= A[i * nv + k] * x[k];
    x[i] = sum / A[i * nv + i];
  }
}

// MuJoCo's implicit (mj_implicitSkip with mjINT_IMPLICIT) after physics_forward(hd = 0):
// qacc <- (M - h qDeriv)^-1 (qfrc_smooth + qfrc_constraint) with the full qDeriv
// (implicit_velocity_derivative: actuator, passive and bias forces), factored by LU (factor_lu, in
// d.qLD, which nothing reads after the substep). M enters on its kept pattern only, as MuJoCo's
// gather of its sparse M into the LU pattern: both (i, j) and (j, i) of a "simple" dof i
// (m.dof_simple) and an ancestor j are dropped, the diagonal kept. No standalone free-body solve:
// the gyroscopic derivative is already in qDeriv.
template <class T>
RLT_HD void implicit_acceleration(const ModelView<T>& m, const DataView<T>& d, const T* ctrl) {
  const int nv = m.nv;
  const T h = m.timestep;
  implicit_velocity_derivative(m, d, ctrl);
  T* lu = d.qLD;
  for (int i = 0; i < nv; ++i) {
    lu[i * nv + i] = d.qM[i * nv + i] - h * d.qDeriv[i * nv + i];
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) {
      const T mij = m.dof_simple[i] ? T(0) : d.qM[i * nv + j];
      lu[i * nv + j] = mij - h * d.qDeriv[i * nv + j];
      lu[j * nv + i] = mij - h * d.qDeriv[j * nv + i];
    }
  }
  factor_lu(m, lu);
  for (int i = 0; i < nv; ++i)
    d.qacc[i] = d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_constraint[i];
  solve_lu(m, lu, d.qacc);
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
  // the next step's solver warm start: the last stage's, as MuJoCo's mj_advance (every stage's solve
  // started from the step's)
  for (int i = 0; i < (m.newton_warmstart ? nv : 0); ++i) d.qacc_warmstart[i] = d.qacc_solver[i];
  advance_state(m, d, d.rk_dact, d.rk_dacc, static_cast<const T*>(d.rk_dvel));
}

// One physics substep of m.timestep with ctrl (nu values, may be null when nu == 0) held, by the
// model's integrator (MuJoCo's mj_step): Euler (joint damping implicit when m.implicit_damping,
// MuJoCo's eulerdamp), RK4, implicitfast or implicit. With `sensors`, d.sensordata from the substep's state
// before its integration (sim/sensors.h).
// The clock (DataView::time, with a clock sensor) advances by the timestep after the integration, as
// MuJoCo's d->time. Under the energy flag an e_kinetic sensor reads the kinetic energy of the
// previous substep's state (DataView::energy_lag, MuJoCo's d->energy[1], left by its previous step's
// velocity stage; the current one after reset_data), Euler and implicitfast only (the compiler
// refuses RK4, whose stages would each leave theirs).
template <class T>
RLT_HD void physics_substep(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, bool sensors = false,
                            bool all_poses = true) {
  if (m.integrator == kIntRK4) {
    step_rk4(m, d, ctrl, sensors);
  } else {
    physics_forward(m, d, ctrl, velocity_implicit(m.integrator) ? T(0) : m.implicit_damping ? m.timestep : T(0),
                    all_poses || sensors);
    if (m.nenergy_lag > 0) {
      const T ke = kinetic_energy(m, d);
      if (sensors) compute_sensors(m, d);
      d.energy_lag[0] = ke, d.energy_lag[1] = T(1);
    } else if (sensors) {
      compute_sensors(m, d);
    }
    if (m.integrator == kIntImplicit) implicit_acceleration(m, d, ctrl);
    else if (m.integrator == kIntImplicitFast) implicitfast_acceleration(m, d, ctrl);
    // the next substep's solver warm start: this one's answer (before the implicit damping or
    // implicitfast's velocity derivatives), as MuJoCo's mj_advance
    for (int i = 0; i < (m.newton_warmstart ? m.nv : 0); ++i) d.qacc_warmstart[i] = d.qacc_solver[i];
    advance_state(m, d, d.act_dot, d.qacc, static_cast<const T*>(nullptr));
  }
  if (m.nclock > 0) d.time[0] += m.timestep;
}

// One control step: `substeps` substeps with ctrl held; *num_contacts (when not null) = the contacts
// that pushed in the last substep. d.cfrc_ext gets the last substep's contact wrench per body
// (MuJoCo reports those of the last mj_step; sim/contact.h, contact_external_forces), computed once
// per control step, right after that substep, from what it solved. When the model has sensors, the
// last substep also computes d.sensordata (sim/sensors.h), as MuJoCo's mj_step does.
template <class T>
RLT_HD void physics_step(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, int substeps, int* num_contacts) {
  // (the inner substeps place only the geoms and sites a substep reads: the last places them all, so
  // after the step every pose is what a full forward pass at the last substep's state gives)
  for (int s = 0; s < substeps; ++s) physics_substep(m, d, ctrl, m.nsensor > 0 && s == substeps - 1, s == substeps - 1);
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

#ifndef __CUDACC__
// Compiled once for the host, in sim/physics_instances.cpp (nvcc's translation units make their own).
extern template void physics_forward<float>(const ModelView<float>&, const DataView<float>&, const float*, float, bool);
extern template void step_rk4<float>(const ModelView<float>&, const DataView<float>&, const float*, bool);
extern template void physics_substep<float>(const ModelView<float>&, const DataView<float>&, const float*, bool, bool);
extern template void physics_step<float>(const ModelView<float>&, const DataView<float>&, const float*, int, int*);
extern template void physics_forward<double>(const ModelView<double>&, const DataView<double>&, const double*, double, bool);
extern template void step_rk4<double>(const ModelView<double>&, const DataView<double>&, const double*, bool);
extern template void physics_substep<double>(const ModelView<double>&, const DataView<double>&, const double*, bool, bool);
extern template void physics_step<double>(const ModelView<double>&, const DataView<double>&, const double*, int, int*);
#endif

}  // namespace rlt
