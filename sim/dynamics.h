// Contact-free rigid-body dynamics in reduced (joint) coordinates (DESIGN.md D3): kinematics,
// bias forces by recursive Newton-Euler (RNEA), the joint-space mass matrix by the composite rigid
// body algorithm (CRBA), its tree-sparse L^T D L factorization, forward dynamics and MuJoCo's
// semi-implicit Euler step. Single source: every function is RLT_HD over one env (no std:: calls,
// no allocation, no exceptions), templated on the scalar (double in tests, float in envs), and
// reads the model through ModelView<T> (sim/model_view.h).
//
// It follows MuJoCo (engine_core_smooth.c, engine_forward.c) closely enough that the two agree to
// rounding on the same model (tests/sim/test_dynamics_mujoco.cpp: ~1e-14 relative in double):
//  * spatial quantities are "com-based": world orientation, about one reference point per kinematic
//    tree (MuJoCo takes the subtree center of mass of the tree's root body; we take the root
//    body's origin xpos[body_rootid[b]], which is cheaper and as good for float precision; M and
//    the bias forces do not depend on the choice);
//  * generalized velocities are MuJoCo's (sim/model.h): free joint (linear velocity of the body
//    origin in the world frame; angular velocity in the body frame), ball (angular velocity in the
//    body frame), hinge, slide;
//  * the time derivative of each dof's motion subspace (cdof_dot) is taken with the velocity the
//    body has accumulated before that joint, as mj_comVel does;
//  * the Euler step integrates joint damping implicitly ((M + dt D) qacc = f, MuJoCo's default
//    "eulerdamp"), then qvel += dt qacc, then qpos with the new qvel (quaternions on the manifold);
//    joint springs (jnt_stiffness) are explicit forces, as in MuJoCo's Euler (only its "implicit"
//    integrator treats them implicitly). An explicit spring of stiffness k on a dof of (effective)
//    inertia I is stable for dt < 2 sqrt(I / k), damped or not (implicit damping only widens it).
//
// Pipeline for one env (forward() and step_euler() call these in order):
//   kinematics       xpos, xquat, xmat, xipos, ximat, xanchor, xaxis, geom_x*, site_x*
//   com_position     cinert, cdof                      (needs kinematics)
//   com_velocity     cvel, cdof_dot                    (needs com_position, qvel)
//   rne              qfrc_bias (or M qacc + bias)      (needs com_velocity)
//   passive_forces   qfrc_passive = -jnt_stiffness (qpos - qpos_spring) - dof_damping qvel
//   mass_matrix      qM (CRBA, armature on the diagonal)
//   factor_mass      qLD = L^T D L of qM + h diag(dof_damping)
//   solve_mass       x <- (L^T D L)^-1 x
//
// Mass matrix storage and factorization. qM and qLD are stored dense (nv x nv, row-major), but
// the factorization only touches the entries (i, j) with j an ancestor-or-self of i in the dof tree
// (dof_parentid): CRBA fills exactly those, and Featherstone's LTDL factorization (RBDA, Table
// 6.3), which eliminates from the leaves up, produces no fill-in outside them. Measured (CPU time,
// -O3, double, on a MuJoCo-humanoid-shaped tree: nv = 23, free root, 185 ancestor pairs): ~780
// multiply-adds and 1.6-2.2 us for factor + solve, against ~2030 and 2.2-2.9 us for a dense
// Cholesky + solve of the same matrix (a shared 2-core machine, hence the ranges). Packing each
// row's ancestor chain contiguously (MuJoCo's dof_Madr layout) measured a further ~20% and would
// shrink qLD from nv^2 to 185 scalars; dense storage keeps the indexing trivial and is kept until
// a GPU profile says the row size matters.
#pragma once

#include <vector>

#include "sim/common.h"
#include "sim/model.h"
#include "sim/model_view.h"
#include "sim/spatial.h"

namespace rlt {

// One env's state and workspace, declared once: X(name, count, stage, doc), each field `count`
// scalars (its shape, row-major; from the sizes nq, nv, nbody, njnt, ngeom, nsite, nu, ncon_max,
// nefc_max, nsensordata, nsubtree, nbody_acc, nv_acc, ntendon, nwrap, nbody_noslip, nmoment, nv_deriv
// (nv under implicitfast and implicit, else 0), nclock, nenergy_lag, nmocap, nv_rne (nv under implicit,
// else 0), nefc_newton and nv_newton (nefc_max and nv where the Newton solver runs: m.use_newton, or
// double; else 0), nefc_z (nefc_max where Gauss-Seidel or noslip runs, else 0), ngeom_bound (ngeom where
// some geom pair may collide, m.ncollide > 0, else 0), nbody_xfrc and nv_xfrc (nbody and nv where
// body wrenches are on, m.nbody_xfrc > 0, else 0), nv_warm (nv where m.newton_warmstart, else 0))
// written by `stage`. From this list come DataView's pointers,
// DataLayout's offsets, the row layout (data_layout: the fields in this order, so keep new ones at
// the end) and data_view.
#define RLT_DATA_FIELDS(X)                                                                                           \
  /* state and inputs */                                                                                             \
  X(qpos, nq, state, "joint positions")                                                                              \
  X(qvel, nv, state, "joint velocities")                                                                             \
  X(qfrc_applied, nv, input, "user-applied generalized forces")                                                      \
  X(qfrc_actuator, nv, input, "actuator forces (the actuator stage writes them; zero without one)")                  \
  /* outputs */                                                                                                      \
  X(qacc, nv, forward, "joint accelerations: forward(), or what step_euler() integrated")                            \
  X(xpos, 3 * nbody, kinematics, "body frame origin, world")                                                         \
  X(xquat, 4 * nbody, kinematics, "body frame orientation, world")                                                   \
  X(xmat, 9 * nbody, kinematics, "the same as a row-major matrix")                                                   \
  X(xipos, 3 * nbody, kinematics, "center of mass, world")                                                           \
  X(ximat, 9 * nbody, kinematics, "principal axes of inertia, world")                                                \
  X(xanchor, 3 * njnt, kinematics, "joint anchor, world")                                                            \
  X(xaxis, 3 * njnt, kinematics, "joint axis, world")                                                                \
  X(geom_xpos, 3 * ngeom, kinematics, "geom position, world")                                                        \
  X(geom_xmat, 9 * ngeom, kinematics, "geom orientation, world, row-major")                                          \
  X(site_xpos, 3 * nsite, kinematics, "site position, world")                                                        \
  X(site_xmat, 9 * nsite, kinematics, "site orientation, world, row-major")                                          \
  /* workspace (com-based spatial quantities, see the header) */                                                     \
  X(cinert, 10 * nbody, com_position, "body inertia about its tree's reference point")                               \
  X(cdof, 6 * nv, com_position, "motion subspace of each dof")                                                       \
  X(cvel, 6 * nbody, com_velocity, "body spatial velocity")                                                          \
  X(cdof_dot, 6 * nv, com_velocity, "time derivative of cdof")                                                       \
  X(cacc, 6 * nbody, rne, "body spatial acceleration")                                                               \
  X(cfrc, 6 * nbody, rne, "force carried by the joint above each body")                                              \
  X(crb, 10 * nbody, mass_matrix, "composite (subtree) inertia")                                                     \
  X(qfrc_bias, nv, rne, "Coriolis, centrifugal and gravity forces")                                                  \
  X(qfrc_passive, nv, passive_forces, "joint springs and damping (see passive_forces)")                              \
  X(qM, nv* nv, mass_matrix, "mass matrix, dense, zero off the dof tree's ancestor chains")                          \
  X(qLD, nv* nv, factor_mass, "its L^T D L factors, same sparsity")                                                  \
  /* actuators, joint limits and contacts (sim/actuators.h, sim/constraints.h, sim/contact.h; driven by        */    \
  /* physics_step in sim/physics_step.h)                                                                       */    \
  X(actuator_force, nu, actuator_forces, "scalar force of each actuator (MuJoCo's actuator_force)")                  \
  X(qfrc_constraint, nv, physics_step, "joint-limit and contact forces")                                             \
  X(qacc_smooth, nv, physics_step, "acceleration without limits and contacts")                                       \
  X(ncon, 1, detect_contacts, "contact candidates in `contact` (an integer count)")                                  \
  X(contact, kContactStride* ncon_max, detect_contacts, "contact candidates (kContactStride each, sim/contact.h)")   \
  X(cfrc_ext, 6 * nbody, contact_external_forces,                                                                    \
    "external (contact) wrench on each body in the last substep of a physics_step: torque (about the body's "        \
    "tree reference point, as cvel, at the end of the step), then force; world row 0 stays zero")                    \
  X(nefc, 1, constraint_rows, "constraint rows in the last substep (an integer count)")                              \
  /* actuator activations and the integrators (sim/actuators.h, sim/physics_step.h) */                               \
  X(act, nu, state, "actuator activation (MuJoCo's act; stateful dynamics only, 0 for the others)")                  \
  X(act_dot, nu, actuator_forces, "its time derivative (MuJoCo's act_dot)")                                          \
  X(rk_qpos, nq, integrate, "RK4: the step's starting qpos")                                                         \
  X(rk_qvel, nv, integrate, "RK4: the step's starting qvel")                                                         \
  X(rk_act, nu, integrate, "RK4: the step's starting act")                                                           \
  X(rk_dvel, nv, integrate, "RK4: sum over stages of B_j qvel_j")                                                    \
  X(rk_dacc, nv, integrate, "RK4: sum over stages of B_j qacc_j")                                                    \
  X(rk_dact, nu, integrate, "RK4: sum over stages of B_j act_dot_j")                                                 \
  X(rk_dpos, nv, integrate, "RK4: a stage's position increment A_i qvel_(i-1)")                                      \
  /* sensors (sim/sensors.h; every row but sensordata is empty unless a sensor needs it)                      */     \
  X(sensordata, nsensordata, compute_sensors,                                                                        \
    "sensor outputs (Model::sensor_id, sensor_adr, sensor_dim), of the state at the start of the last substep, "     \
    "as MuJoCo's after mj_step")                                                                                     \
  X(subtree_com, 3 * nsubtree, compute_sensors, "center of mass of each body's subtree, world")                      \
  X(subtree_linvel, 3 * nsubtree, compute_sensors, "linear velocity of each subtree's center of mass")               \
  X(subtree_angmom, 3 * nsubtree, compute_sensors, "angular momentum of each subtree about its center of mass")      \
  X(subtree_mass, nsubtree, compute_sensors, "mass of each subtree")                                                 \
  X(sensor_qacc, nv_acc, soft_constraint_acceleration, "the solver's qacc before Euler's damping (d->qacc)")         \
  X(sensor_cacc, 6 * nbody_acc, compute_sensors, "body spatial acceleration with qacc, gravity included")            \
  X(sensor_cfrc_ext, 6 * nbody_acc, compute_sensors, "contact wrench on each body, as cfrc, at the substep's start") \
  X(cfrc_int, 6 * nbody_acc, compute_sensors, "force the joint above each body transmits (mj_rnePostConstraint)")    \
  /* tendons (sim/tendon.h; empty without tendons) */                                                                \
  X(ten_length, ntendon, tendon_kinematics, "tendon length")                                                         \
  X(ten_velocity, ntendon, tendon_kinematics, "its rate, ten_J qvel")                                                \
  X(ten_J, ntendon* nv, tendon_kinematics, "d length / d qpos per dof (the tendon's moment arms)")                   \
  X(ten_wrapnum, ntendon, tendon_kinematics, "spatial: points of the tendon's path in wrap_xpos (an integer count)") \
  X(wrap_xpos, 6 * nwrap, tendon_kinematics,                                                                         \
    "spatial: the path's points, world, tendon i's from point 2 tendon_adr[i] on (a pulley: a (0,0,0) break)")       \
  /* solver statistics (sim/constraints.h) */                                                                        \
  X(solver_niter, 1, constraint_solve, "the last substep's Newton iterations or Gauss-Seidel sweeps (MuJoCo's solver_niter)") \
  /* site and slider-crank transmissions (sim/transmission.h; empty without them, nmoment = 0) */                    \
  X(actuator_length, nmoment, transmission, "each actuator's length (MuJoCo's actuator_length)")                     \
  X(actuator_moment, nmoment* nv, transmission,                                                                      \
    "d length / d qpos per actuator and dof (MuJoCo's actuator_moment, dense): qfrc_actuator += moment^T force") \
  /* sensor state (sim/sensors.h; empty unless a clock sensor, or e_kinetic under the energy flag, needs it) */      \
  X(time, nclock, state, "simulation time, s (MuJoCo's d->time; 0 after reset_data, + timestep per substep)")        \
  X(energy_lag, nenergy_lag, physics_step,                                                                           \
    "kinetic energy of the previous substep's state, 1 once set (MuJoCo's d->energy[1] under the energy flag)")      \
  /* mocap bodies (MJCF body mocap="true"; empty without them): inputs that env code or a script sets */             \
  X(mocap_pos, 3 * nmocap, input,                                                                                    \
    "each mocap body's position, world (MuJoCo's mocap_pos; reset_data: body_pos, or a keyframe's mpos)")            \
  X(mocap_quat, 4 * nmocap, input,                                                                                   \
    "its orientation, world, (w, x, y, z); kinematics normalizes a copy (MuJoCo's mocap_quat; need not be unit)")  \
  /* body wrenches (m.nbody_xfrc > 0; empty otherwise): inputs, sim/physics_step.h xfrc_forces */                    \
  X(xfrc_applied, 6 * nbody_xfrc, input,                                                                             \
    "Cartesian force (3) then torque (3) on each body at its centre of mass, world (MuJoCo's xfrc_applied)")          \
  X(qfrc_user, nv_xfrc, input,                                                                                       \
    "the caller's generalized forces where body wrenches are on: physics_forward sets qfrc_applied to them plus "    \
    "J^T xfrc_applied every substep (MuJoCo's qfrc_applied, with mj_xfrcAccumulate's term)")                        \
  /* the Newton solver's warm start (m.newton_warmstart: a float model with an iterations budget; else empty) */    \
  X(qacc_warmstart, nv_warm, physics_step,                                                                           \
    "the last substep's acceleration from the solver, before Euler's implicit damping (MuJoCo's qacc_warmstart; 0 " \
    "after reset_data; a forward pass alone leaves it); newton_solve starts there where it costs less than "          \
    "qacc_smooth")


// The constraint rows' workspace: written and read only inside one physics step (constraint_rows
// builds the rows, the solver, noslip and the sensors of that substep read them; implicitfast builds
// and uses its qDeriv within a substep), so a batch keeps it out of the env rows: DataLayout places
// these fields after DataLayout::row, and a batch gives each thread that steps envs a workspace of
// its own, used by one env at a time (BatchRows below). The count of rows (nefc) stays in the row.
#define RLT_DATA_WORKSPACE(X)                                                                                        \
  X(efc_J, nefc_max* nv, constraint_rows, "each row's Jacobian")                                                     \
  X(efc_Z, nefc_z* nv, constraint_rows, "z = D^-1/2 L^-T J^T per row: its nonzero entries first (sim/constraints.h)") \
  X(efc, kEfcStride* nefc_max, constraint_rows, "per row: aref, R, A_rr + R, force, owner, ... (sim/constraints.h)") \
  X(efc_Zind, nefc_z* nv, constraint_rows, "the dofs of efc_Z's nonzero entries, ascending (integers)")               \
  X(qLDiagSqrtInv, nv, constraint_rows, "1 / sqrt(D) of qLD without implicit damping (MuJoCo's qLDiagSqrtInv)")     \
  X(crb_cdof, 6 * nv, mass_matrix, "each dof's crb_(its body) cdof, component-major (6 x nv): CRBA's columns")     \
  X(efc_Zf, nv, constraint_solve, "sum over rows of force times z: the forces in the factor's coordinates")         \
  X(qacc_solver, nv_warm, soft_constraint_acceleration,                                                              \
    "this substep's acceleration from the solver, before Euler's implicit damping (physics_substep keeps it in "    \
    "qacc_warmstart)")                                                                                               \
  X(efc_newton, kNewtonStride* nefc_newton, constraint_solve,                                                        \
    "Newton (sim/constraints.h newton_solve): per row J a - aref, J dir, its dof chain, state, d force / d(J a), "    \
    "and a scalar row's constants for the line search (1 / R, kind, friction loss)")                                 \
  X(newton_H, nv_newton* nv_newton, constraint_solve,                                                                \
    "Newton: the Hessian M + J^T D J, then its factors (qM's pattern; its envelope while a row couples two branches)") \
  X(newton_vec, 9 * nv_newton, constraint_solve,                                                                     \
    "Newton: the gradient, the search direction, M times it, M (a - a0), each factor row's first column, "            \
    "H_tree^-1 J^T of up to 4 cross-branch rows (newton_low_rank_solve)")                                              \
  X(noslip_tree, nbody_noslip, noslip_solve, "noslip: each body's union-find parent among the tree roots (islands)") \
  X(qDeriv, nv_deriv* nv_deriv, velocity_derivative,                                                                 \
    "implicitfast: d(qfrc_actuator + qfrc_passive) / d qvel, dense, only (i, j) with j an ancestor-or-self of i "    \
    "(qM's lower pattern); implicit: d(qfrc_actuator + qfrc_passive - qfrc_bias) / d qvel, every entry (nonzero "   \
    "only on qM's symmetric pattern; sim/physics_step.h)")                                                           \
  X(qDeriv_rows, 6 * nv_deriv, velocity_derivative,                                                                  \
    "implicitfast: the rows J of a J^T B J term of qDeriv (an actuator's moment, a body's com Jacobian)")     \
  X(rne_dvel, 6 * nbody* nv_rne, velocity_derivative,                                                                \
    "implicit: d cvel / d qvel per body, 6 x nv column-major (sim/dynamics.h rne_velocity_derivative)")              \
  X(rne_dacc, 6 * nbody* nv_rne, velocity_derivative,                                                                \
    "implicit: d cacc / d qvel per body, then d cfrc / d qvel (the same layout)")                                    \
  X(geom_bound, 2 * ngeom_bound, detect_contacts,                                                                    \
    "per geom: its bounding radius, then its speed bound (sim/contact.h geom_bounds), once per substep for the pairs")

// Every field: the row's, then the workspace's.
#define RLT_DATA_ALL_FIELDS(X) RLT_DATA_FIELDS(X) RLT_DATA_WORKSPACE(X)

// Scalars per contact in DataView::contact (fields: sim/contact.h).
constexpr int kContactStride = 17;
// Scalars per constraint row in DataView::efc (fields: sim/constraints.h).
constexpr int kEfcStride = 9;
// Scalars per constraint row in DataView::efc_newton (fields: sim/constraints.h NewtonField).
constexpr int kNewtonStride = 13;

// One env's fields as plain pointers into its row and its workspace (RLT_DATA_FIELDS and
// RLT_DATA_WORKSPACE: shape, stage, meaning).
template <class T>
struct DataView {
#define RLT_DATA_POINTER(name, count, stage, doc) T* name;
  RLT_DATA_ALL_FIELDS(RLT_DATA_POINTER)
#undef RLT_DATA_POINTER
};

// Offsets of DataView's fields in one env's block: the row's fields in [0, row), the workspace's in
// [row, total). One env alone keeps both in one block of `total` scalars; a batch keeps rows of
// `row` scalars (its state: what lives from one step to the next and what env code reads) and hands
// each env running a step a workspace of `workspace` scalars (BatchRows).
struct DataLayout {
#define RLT_DATA_OFFSET(name, count, stage, doc) int name;
  RLT_DATA_ALL_FIELDS(RLT_DATA_OFFSET)
#undef RLT_DATA_OFFSET
  int row;        // scalars per env row (a multiple of 4)
  int workspace;  // scalars of one env's workspace (a multiple of 4)
  int total;      // row + workspace: one env in one block
};

template <class T>
RLT_HD inline DataLayout data_layout(const ModelView<T>& m) {
  const int nq = m.nq, nv = m.nv, nbody = m.nbody, njnt = m.njnt, ngeom = m.ngeom, nsite = m.nsite, nu = m.nu;
  const int ncon_max = m.ncon_max, nefc_max = m.nefc_max;
  const int nsensordata = m.nsensordata, nsubtree = m.nsubtree, nbody_acc = m.nbody_acc,
            nv_acc = m.nbody_acc ? m.nv : 0, nbody_noslip = m.noslip_iterations > 0 ? m.nbody : 0;
  const int ntendon = m.ntendon, nwrap = m.nwrap, nmoment = m.nmoment;
  const int nv_deriv = velocity_implicit(m.integrator) ? m.nv : 0, nv_rne = m.integrator == kIntImplicit ? m.nv : 0;
  const int nclock = m.nclock, nenergy_lag = m.nenergy_lag, nmocap = m.nmocap;
  const int nbody_xfrc = m.nbody_xfrc, nv_xfrc = m.nbody_xfrc > 0 ? nv : 0;
  const int nv_warm = m.newton_warmstart ? nv : 0;
  // the Newton solver's workspace, and the rows' z (Gauss-Seidel's and noslip's): sim/model_view.h
  const bool newton = solves_by_newton(m);
  const int nefc_newton = newton ? nefc_max : 0, nv_newton = newton ? nv : 0;
  const int nefc_z = needs_z(m) ? nefc_max : 0;
  // detect_contacts' per-geom bounds (and the distance sensors' narrow phase: sim/sensors.h)
  const int ngeom_bound = m.ncollide > 0 || m.ngeomdist > 0 ? ngeom : 0;
  DataLayout l{};
  int at = 0;
#define RLT_DATA_PLACE(name, count, stage, doc) l.name = at, at += (count);
  RLT_DATA_FIELDS(RLT_DATA_PLACE)
  // Rows start on a multiple of 4 scalars (16 bytes in float) when the batch array does.
  l.row = (at + 3) / 4 * 4;
  at = l.row;
  RLT_DATA_WORKSPACE(RLT_DATA_PLACE)
#undef RLT_DATA_PLACE
  l.total = (at + 3) / 4 * 4;
  l.workspace = l.total - l.row;
  return l;
}

// Scalars of one env alone: its row and its workspace in one block.
template <class T>
RLT_HD inline int data_size(const ModelView<T>& m) {
  return data_layout(m).total;
}

// The fields of one env: its row at `row` and its workspace at `workspace`; with no workspace given,
// `row` is a block of DataLayout::total scalars holding both (one env alone: data_size(m)).
template <class T>
RLT_HD inline DataView<T> data_view(const DataLayout& l, T* row, T* workspace = nullptr) {
  DataView<T> d;
  T* const ws = workspace ? workspace - l.row : row;
#define RLT_DATA_BIND(name, count, stage, doc) d.name = row + l.name;
  RLT_DATA_FIELDS(RLT_DATA_BIND)
#undef RLT_DATA_BIND
#define RLT_DATA_BIND_WS(name, count, stage, doc) d.name = ws + l.name;
  RLT_DATA_WORKSPACE(RLT_DATA_BIND_WS)
#undef RLT_DATA_BIND_WS
  return d;
}
template <class T>
RLT_HD inline DataView<T> data_view(const ModelView<T>& m, T* row) {
  return data_view(data_layout(m), row);
}

// A batch's constraint workspace on the device: `slots` blocks of layout.workspace scalars, one per
// thread that can run at once. The CUDA executor caps every launch at its resident threads
// (CudaExecutor::max_threads) and loops grid-stride, so thread t steps envs t, t + grid, ... one
// after the other, each in slot t: the workspace is min(num_envs, resident threads) blocks, not one
// per env (Exec::workspace_slots). On the host the calling thread's own buffer serves instead (no slots).
// (Constructors, not an aggregate: a functor's braced initializer cannot spread one over its fields.)
template <class T>
struct Workspace {
  T* data = nullptr;
  i64 slots = 0;
  Workspace() = default;
  RLT_HD Workspace(T* d, i64 s) : data(d), slots(s) {}
};

// A batch's envs: `rows` (num_envs x layout.row, executor memory) and their workspace. On the device
// the env runs in the workspace slot of the calling thread (its global index, below
// workspace.slots in every launch of the executor); on the host an env's step runs start to end
// on one thread, so the thread's own buffer serves every env it steps (`workspace` unused: a CPU
// batch allocates none).
template <class T>
struct BatchRows {
  DataLayout layout;
  T* rows;
  Workspace<T> workspace;

  RLT_HD DataView<T> env(i64 i) const {
#ifdef __CUDA_ARCH__
    const i64 slot = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    // a device batch must give its workspace, and a launch must stay within its slots
    if (layout.workspace > 0 && (workspace.data == nullptr || slot >= workspace.slots)) __trap();
    return data_view(layout, rows + i * layout.row, workspace.data + slot * layout.workspace);
#else
    return data_view(layout, rows + i * layout.row, host_workspace(layout.workspace));
#endif
  }

#ifndef __CUDA_ARCH__
  // The calling thread's workspace, grown to n scalars (never shrunk; a few KB per thread).
  static T* host_workspace(int n) {
    thread_local std::vector<T> buffer;
    if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
    return buffer.data();
  }
#endif
};

// Scalars a batch allocates for its workspace: `slots` blocks (Exec::workspace_slots).
inline i64 batch_workspace_scalars(const DataLayout& l, i64 slots) { return slots * l.workspace; }

// Sets the state to the reference configuration qpos0 at rest, with no applied forces.
template <class T>
RLT_HD void reset_data(const ModelView<T>& m, const DataView<T>& d) {
  for (int i = 0; i < m.nq; ++i) d.qpos[i] = m.qpos0[i];
  for (int i = 0; i < m.nv; ++i) d.qvel[i] = d.qacc[i] = d.qfrc_applied[i] = d.qfrc_actuator[i] = T(0);
  for (int i = 0; i < m.nv; ++i) d.qfrc_constraint[i] = d.qacc_smooth[i] = T(0);
  for (int i = 0; i < m.nu; ++i) d.actuator_force[i] = d.act[i] = d.act_dot[i] = T(0);
  for (int i = 0; i < 6 * m.nbody; ++i) d.cfrc_ext[i] = T(0);
  for (int i = 0; i < m.nsensordata; ++i) d.sensordata[i] = T(0);
  for (int i = 0; i < m.nclock; ++i) d.time[i] = T(0);
  for (int i = 0; i < m.nenergy_lag; ++i) d.energy_lag[i] = T(0);
  for (int i = 0; i < 6 * m.nbody_xfrc; ++i) d.xfrc_applied[i] = T(0);
  for (int i = 0; m.nbody_xfrc > 0 && i < m.nv; ++i) d.qfrc_user[i] = T(0);
  d.ncon[0] = d.nefc[0] = d.solver_niter[0] = T(0);
  for (int i = 0; i < (m.newton_warmstart ? m.nv : 0); ++i) d.qacc_warmstart[i] = T(0);  // (as mj_resetData)
  if (m.nmocap > 0) {  // MuJoCo's mj_resetData: each mocap body where the model puts it
    for (int b = 1; b < m.nbody; ++b) {
      const int id = m.body_mocapid[b];
      if (id < 0) continue;
      for (int k = 0; k < 3; ++k) d.mocap_pos[3 * id + k] = T(m.body_pos[3 * b + k]);
      for (int k = 0; k < 4; ++k) d.mocap_quat[4 * id + k] = T(m.body_quat[4 * b + k]);
    }
  }
}

// ---- position stage --------------------------------------------------------------------------------

// MuJoCo's mj_local2Global: the world pose (xpos, xmat) of a frame (pos, quat) fixed to body b, whose
// own pose kinematics has placed. A frame the compiler found equal to the body's frame or its inertial
// frame (sameframe, SameFrame in sim/model.h; 1e-6) copies that pose, so that it stays equal to the last
// bit (a capsule on its body's inertial frame touching another body agrees with MuJoCo's contact depth);
// otherwise xmat pos + xpos and xquat quat.
template <class T>
RLT_HD void local_to_global(const DataView<T>& d, int b, const ModelReal<T>* pos, const ModelReal<T>* quat,
                            int sameframe, T* xpos, T* xmat) {
  if (sameframe == kSameFrameBody) {
    Vec3<T>::load(d.xpos + 3 * b).store(xpos);
  } else if (sameframe == kSameFrameInertia) {
    Vec3<T>::load(d.xipos + 3 * b).store(xpos);
  } else {
    (Mat3<T>::load(d.xmat + 9 * b) * Vec3<T>::load(pos) + Vec3<T>::load(d.xpos + 3 * b)).store(xpos);
  }
  if (sameframe == kSameFrameBody || sameframe == kSameFrameBodyRot) {
    Mat3<T>::load(d.xmat + 9 * b).store(xmat);
  } else if (sameframe == kSameFrameInertia || sameframe == kSameFrameInertiaRot) {
    Mat3<T>::load(d.ximat + 9 * b).store(xmat);
  } else {
    quat_to_mat(quat_mul(Quat<T>::load(d.xquat + 4 * b), Quat<T>::load(quat))).store(xmat);
  }
}

// World poses of bodies (frame and inertia), joints (anchor, axis), geoms and sites from qpos, and
// a mocap body's frame from mocap_pos and mocap_quat (normalized here, as MuJoCo's mj_kinematics; the
// input is left as it is) in place of body_pos and body_quat. all_poses false (physics_step's inner
// substeps): of the geoms and sites only those a substep reads (ModelView::geom_substep, site_substep),
// each as with all_poses; the others keep their last values until a substep with all_poses.
template <class T>
RLT_HD void kinematics(const ModelView<T>& m, const DataView<T>& d, bool all_poses = true) {
  Vec3<T>::zero().store(d.xpos), Quat<T>::identity().store(d.xquat), quat_to_mat(Quat<T>::identity()).store(d.xmat);
  Vec3<T>::zero().store(d.xipos), quat_to_mat(Quat<T>::identity()).store(d.ximat);
  for (int b = 1; b < m.nbody; ++b) {
    const int parent = m.body_parentid[b];
    const int jadr = m.body_jntadr[b], jnum = m.body_jntnum[b];
    Vec3<T> pos;
    Quat<T> quat;
    if (jnum > 0 && m.jnt_type[jadr] == kJointFree) {
      // A free body's frame is qpos itself.
      const T* q = d.qpos + m.jnt_qposadr[jadr];
      pos = Vec3<T>::load(q);
      quat = quat_normalize(Quat<T>::load(q + 3));
      pos.store(d.xanchor + 3 * jadr);
      Vec3<T>::load(m.jnt_axis + 3 * jadr).store(d.xaxis + 3 * jadr);
    } else {
      const Quat<T> pquat = Quat<T>::load(d.xquat + 4 * parent);
      const int mocap = m.nmocap > 0 ? m.body_mocapid[b] : -1;
      if (mocap >= 0) {  // a child of the world (HostModel checks), placed where its input says
        pos = Vec3<T>::load(d.mocap_pos + 3 * mocap);
        quat = quat_normalize(Quat<T>::load(d.mocap_quat + 4 * mocap));
      } else {
        pos = Vec3<T>::load(d.xpos + 3 * parent) + Mat3<T>::load(d.xmat + 9 * parent) * Vec3<T>::load(m.body_pos + 3 * b);
        quat = quat_mul(pquat, Quat<T>::load(m.body_quat + 4 * b));
      }
      for (int j = jadr; j < jadr + jnum; ++j) {
        const int type = m.jnt_type[j];
        const T* q = d.qpos + m.jnt_qposadr[j];
        const Vec3<T> local_axis = Vec3<T>::load(m.jnt_axis + 3 * j), local_pos = Vec3<T>::load(m.jnt_pos + 3 * j);
        const Vec3<T> axis = quat_rotate(quat, local_axis);
        // A joint at the body's origin (most robots' hinges): a unit quaternion rotates (+0, +0, +0)
        // to (+0, +0, +0) exactly, so pos + that and anchor - that are pos + 0 and anchor themselves.
        const bool at_origin = m.jnt_at_origin[j] != 0;
        const Vec3<T> anchor = pos + (at_origin ? Vec3<T>::zero() : quat_rotate(quat, local_pos));
        if (type == kJointSlide) {
          pos += (q[0] - m.qpos0[m.jnt_qposadr[j]]) * axis;
        } else {
          // Rotate about the anchor, which stays where it is.
          const Quat<T> local = type == kJointBall ? quat_normalize(Quat<T>::load(q))
                                                   : quat_from_axis_angle(local_axis, q[0] - m.qpos0[m.jnt_qposadr[j]]);
          quat = quat_mul(quat, local);
          pos = at_origin ? anchor : anchor - quat_rotate(quat, local_pos);
        }
        anchor.store(d.xanchor + 3 * j);
        axis.store(d.xaxis + 3 * j);
      }
      quat = quat_normalize(quat);
    }
    pos.store(d.xpos + 3 * b), quat.store(d.xquat + 4 * b), quat_to_mat(quat).store(d.xmat + 9 * b);
    local_to_global(d, b, m.body_ipos + 3 * b, m.body_iquat + 4 * b, m.body_sameframe[b], d.xipos + 3 * b,
                    d.ximat + 9 * b);
  }
  const int ngeom = all_poses ? m.ngeom : m.ngeom_substep, nsite = all_poses ? m.nsite : m.nsite_substep;
  for (int k = 0; k < ngeom; ++k) {
    const int g = all_poses ? k : m.geom_substep[k];
    local_to_global(d, m.geom_bodyid[g], m.geom_pos + 3 * g, m.geom_quat + 4 * g, m.geom_sameframe[g],
                    d.geom_xpos + 3 * g, d.geom_xmat + 9 * g);
  }
  for (int k = 0; k < nsite; ++k) {
    const int s = all_poses ? k : m.site_substep[k];
    local_to_global(d, m.site_bodyid[s], m.site_pos + 3 * s, m.site_quat + 4 * s, m.site_sameframe[s],
                    d.site_xpos + 3 * s, d.site_xmat + 9 * s);
  }
}

// Body inertias and dof motion subspaces about each tree's reference point (needs kinematics).
template <class T>
RLT_HD void com_position(const ModelView<T>& m, const DataView<T>& d) {
  for (int k = 0; k < 10; ++k) d.cinert[k] = T(0);
  for (int b = 1; b < m.nbody; ++b) {
    const Vec3<T> ref = Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
    body_inertia(m.body_mass[b], Vec3<T>::load(d.xipos + 3 * b) - ref, Mat3<T>::load(d.ximat + 9 * b),
                 Vec3<T>::load(m.body_inertia + 3 * b))
        .store(d.cinert + 10 * b);
    const Mat3<T> rot = Mat3<T>::load(d.xmat + 9 * b);
    const int jadr = m.body_jntadr[b], jnum = m.body_jntnum[b];
    for (int j = jadr; j < jadr + jnum; ++j) {
      T* cdof = d.cdof + 6 * m.jnt_dofadr[j];
      const Vec3<T> anchor = Vec3<T>::load(d.xanchor + 3 * j) - ref;
      const Vec3<T> axis = Vec3<T>::load(d.xaxis + 3 * j);
      switch (m.jnt_type[j]) {
        case kJointFree:
          // Translation along the world axes, then rotation about the body axes (as ball).
          for (int k = 0; k < 3; ++k) {
            Vec3<T> e = Vec3<T>::zero();
            (k == 0 ? e.x : k == 1 ? e.y : e.z) = T(1);
            translation_dof(e).store(cdof + 6 * k);
          }
          cdof += 18;
          for (int k = 0; k < 3; ++k) rotation_dof(rot.col(k), anchor).store(cdof + 6 * k);
          break;
        case kJointBall:
          // About the body's final axes (MuJoCo's convention: the angular velocity is in the body
          // frame); HostModel rejects a rotation after a ball in one body, so these are the ball's own.
          for (int k = 0; k < 3; ++k) rotation_dof(rot.col(k), anchor).store(cdof + 6 * k);
          break;
        case kJointSlide:
          translation_dof(axis).store(cdof);
          break;
        default:  // hinge
          rotation_dof(axis, anchor).store(cdof);
          break;
      }
    }
  }
}

// ---- velocity stage --------------------------------------------------------------------------------

// Body spatial velocities and the time derivatives of the motion subspaces (needs com_position).
template <class T>
RLT_HD void com_velocity(const ModelView<T>& m, const DataView<T>& d) {
  SVec<T>::zero().store(d.cvel);
  for (int b = 1; b < m.nbody; ++b) {
    SVec<T> vel = SVec<T>::load(d.cvel + 6 * m.body_parentid[b]);
    const int jadr = m.body_jntadr[b], jnum = m.body_jntnum[b];
    for (int j = jadr; j < jadr + jnum; ++j) {
      const int type = m.jnt_type[j];
      int dof = m.jnt_dofadr[j];
      // A free joint is a translation group followed by a rotation group; a ball is one rotation
      // group. Each group's cdof_dot uses the velocity from before the group: for the three axes of
      // one rotation the terms that the group's own rotation would add cancel in sum_k cdot_k qvel_k.
      const int groups = type == kJointFree ? 2 : 1;
      const int group_size = type == kJointFree || type == kJointBall ? 3 : 1;
      for (int g = 0; g < groups; ++g, dof += group_size) {
        SVec<T> added = SVec<T>::zero();
        for (int k = dof; k < dof + group_size; ++k) {
          const SVec<T> s = SVec<T>::load(d.cdof + 6 * k);
          cross_motion(vel, s).store(d.cdof_dot + 6 * k);
          added += d.qvel[k] * s;
        }
        vel += added;
      }
    }
    vel.store(d.cvel + 6 * b);
  }
}

// Recursive Newton-Euler: result = M qacc + bias, or the bias forces alone (Coriolis, centrifugal,
// gravity) when qacc is null (needs com_velocity). Gravity enters as an upward acceleration of the world.
template <class T>
RLT_HD void rne(const ModelView<T>& m, const DataView<T>& d, const T* qacc, T* result) {
  const SVec<T> world_acc{Vec3<T>::zero(), -Vec3<T>::load(m.gravity)};
  world_acc.store(d.cacc);
  SVec<T>::zero().store(d.cfrc);
  for (int b = 1; b < m.nbody; ++b) {
    SVec<T> acc = SVec<T>::load(d.cacc + 6 * m.body_parentid[b]);
    const int dofadr = m.body_dofadr[b], dofnum = m.body_dofnum[b];
    for (int k = dofadr; k < dofadr + dofnum; ++k) {
      acc += d.qvel[k] * SVec<T>::load(d.cdof_dot + 6 * k);
      if (qacc) acc += qacc[k] * SVec<T>::load(d.cdof + 6 * k);
    }
    acc.store(d.cacc + 6 * b);
    const Inertia<T> inertia = Inertia<T>::load(d.cinert + 10 * b);
    const SVec<T> vel = SVec<T>::load(d.cvel + 6 * b);
    (inertia * acc + cross_force(vel, inertia * vel)).store(d.cfrc + 6 * b);
  }
  // Each body's force carries its subtree's; trees meet only at the world, which takes nothing.
  for (int b = m.nbody - 1; b > 0; --b) {
    const int parent = m.body_parentid[b];
    if (parent > 0) (SVec<T>::load(d.cfrc + 6 * parent) + SVec<T>::load(d.cfrc + 6 * b)).store(d.cfrc + 6 * parent);
  }
  for (int i = 0; i < m.nv; ++i)
    result[i] = dot(SVec<T>::load(d.cdof + 6 * i), SVec<T>::load(d.cfrc + 6 * m.dof_bodyid[i]));
}

// The last dof of body b's chain: its own last, else that of its nearest ancestor with dofs; -1
// when none moves it.
template <class T>
RLT_HD int last_chain_dof(const ModelView<T>& m, int b) {
  for (; b > 0; b = m.body_parentid[b])
    if (m.body_dofnum[b] > 0) return m.body_dofadr[b] + m.body_dofnum[b] - 1;
  return -1;
}

// qderiv -= d qfrc_bias / d qvel (MuJoCo's mjd_rne_vel: the Coriolis and centrifugal forces' velocity
// derivative, not symmetric), every entry of the nv x nv qderiv (nonzero only where i and j share an
// ancestor chain). rne differentiated one column (dof) at a time, per body b 6 x nv column-major in
// dvel and dacc (6 nbody nv scalars each, body 0's unused): forward, dvel_b and dacc_b start as the
// parent's; for each dof group (as com_velocity) d cdof_dot_k = dvel_b x cdof_k (the velocity from
// before the group) adds qvel_k d cdof_dot_k to dacc_b, then column k gets cdof_k in dvel_b and
// cdof_dot_k in dacc_b. Then dacc_b <- d cfrc_b = I_b dacc_b + dvel_b x* (I_b v_b) + v_b x* (I_b dvel_b),
// each added to its parent's from the leaves, and row i loses cdof_i . d cfrc_(body of i). Gravity is
// constant. Needs com_velocity.
template <class T>
RLT_HD void rne_velocity_derivative(const ModelView<T>& m, const DataView<T>& d, T* qderiv, T* dvel, T* dacc) {
  const int nv = m.nv, stride = 6 * nv;
  for (int b = 1; b < m.nbody; ++b) {
    T* vb = dvel + b * stride;
    T* ab = dacc + b * stride;
    const int parent = m.body_parentid[b];
    for (int k = 0; k < stride; ++k)
      vb[k] = parent > 0 ? dvel[parent * stride + k] : T(0), ab[k] = parent > 0 ? dacc[parent * stride + k] : T(0);
    const int jadr = m.body_jntadr[b], jnum = m.body_jntnum[b];
    for (int j = jadr; j < jadr + jnum; ++j) {
      const int type = m.jnt_type[j];
      const int groups = type == kJointFree ? 2 : 1;
      const int group_size = type == kJointFree || type == kJointBall ? 3 : 1;
      for (int g = 0, dof = m.jnt_dofadr[j]; g < groups; ++g, dof += group_size) {
        for (int k = dof; k < dof + group_size; ++k) {
          const SVec<T> s = SVec<T>::load(d.cdof + 6 * k);
          for (int c = m.dof_parentid[dof]; c >= 0; c = m.dof_parentid[c])  // the columns dvel_b has so far
            (SVec<T>::load(ab + 6 * c) + d.qvel[k] * cross_motion(SVec<T>::load(vb + 6 * c), s)).store(ab + 6 * c);
        }
        for (int k = dof; k < dof + group_size; ++k)
          for (int r = 0; r < 6; ++r) vb[6 * k + r] += d.cdof[6 * k + r], ab[6 * k + r] += d.cdof_dot[6 * k + r];
      }
    }
  }
  for (int b = 1; b < m.nbody; ++b) {
    const Inertia<T> inertia = Inertia<T>::load(d.cinert + 10 * b);
    const SVec<T> vel = SVec<T>::load(d.cvel + 6 * b);
    const SVec<T> momentum = inertia * vel;
    const T* vb = dvel + b * stride;
    T* ab = dacc + b * stride;
    for (int c = last_chain_dof(m, b); c >= 0; c = m.dof_parentid[c]) {
      const SVec<T> dv = SVec<T>::load(vb + 6 * c);
      (inertia * SVec<T>::load(ab + 6 * c) + cross_force(dv, momentum) + cross_force(vel, inertia * dv)).store(ab + 6 * c);
    }
  }
  for (int b = m.nbody - 1; b > 0; --b) {
    const int parent = m.body_parentid[b];
    if (parent > 0)
      for (int k = 0; k < stride; ++k) dacc[parent * stride + k] += dacc[b * stride + k];
  }
  for (int i = 0; i < nv; ++i) {
    const SVec<T> s = SVec<T>::load(d.cdof + 6 * i);
    const T* f = dacc + m.dof_bodyid[i] * stride;
    for (int c = 0; c < nv; ++c) qderiv[i * nv + c] -= dot(s, SVec<T>::load(f + 6 * c));
  }
}

// atan2 for float and double, host and device (quat_difference's angle).
RLT_HD RLT_INLINE float spring_atan2(float y, float x) { return atan2f(y, x); }
RLT_HD RLT_INLINE double spring_atan2(double y, double x) { return ::atan2(y, x); }

// The rotation that takes unit quaternion b to unit quaternion a, as a rotation vector (unit axis
// times angle in (-pi, pi]) in b's frame: b * exp(r / 2) = a. MuJoCo's mju_subQuat (mju_quat2Vel
// with dt = 1), rounding included: a rotation below 1e-15 comes out along x, as there.
template <class T>
RLT_HD Vec3<T> quat_difference(const Quat<T>& a, const Quat<T>& b) {
  const Quat<T> q = quat_mul(Quat<T>{b.w, -b.x, -b.y, -b.z}, a);
  Vec3<T> axis{q.x, q.y, q.z};
  const T sin_half = norm(axis);
  axis = select(sin_half < T(1e-15), Vec3<T>{T(1), T(0), T(0)}, (T(1) / sin_half) * axis);
  T angle = T(2) * spring_atan2(sin_half, q.w);
  angle = select(angle > T(3.14159265358979323846), angle - T(2 * 3.14159265358979323846), angle);
  return angle * axis;
}

// Each joint spring's displacement from its rest configuration, per dof: f(dof, k, x) for
//  * a hinge or slide: its dof, x = qpos - qpos_spring;
//  * a free joint: its three translation dofs, x = position - spring position, then as a ball;
//  * a ball: its three rotation dofs, x = the components of quat_difference(qpos quaternion,
//    qpos_spring's) (the rotation from the rest orientation, in the body frame at rest).
// The spring force on the dof is -k x and its energy 1/2 k x^2 (passive_forces, spring_energy).
template <class T, class F>
RLT_HD void for_each_spring_dof(const ModelView<T>& m, const DataView<T>& d, F&& f) {
  for (int j = 0; j < m.njnt; ++j) {
    const ModelReal<T> k = m.jnt_stiffness[j];
    if (k == 0) continue;
    const int type = m.jnt_type[j];
    int padr = m.jnt_qposadr[j], dadr = m.jnt_dofadr[j];
    if (type == kJointHinge || type == kJointSlide) {
      f(dadr, k, d.qpos[padr] - m.qpos_spring[padr]);
      continue;
    }
    if (type == kJointFree) {
      for (int c = 0; c < 3; ++c) f(dadr + c, k, d.qpos[padr + c] - m.qpos_spring[padr + c]);
      padr += 3, dadr += 3;
    }
    const Vec3<T> r = quat_difference(Quat<T>::load(d.qpos + padr), Quat<T>::load(m.qpos_spring + padr));
    f(dadr, k, r.x), f(dadr + 1, k, r.y), f(dadr + 2, k, r.z);
  }
}

// ---- misc: gravity compensation and fluid forces (MuJoCo's mj_gravcomp, mj_inertiaBoxFluidModel) --

// qfrc += J^T (torque, force) for a force acting at world point p of body b and a torque (MuJoCo's
// mj_applyFT), from cdof about the tree's reference point (needs com_position).
template <class T>
RLT_HD void apply_force_torque(const ModelView<T>& m, const DataView<T>& d, int b, const Vec3<T>& p,
                               const Vec3<T>& force, const Vec3<T>& torque, T* qfrc) {
  if (b <= 0) return;
  const Vec3<T> moment = torque + cross(p - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]), force);
  int i = m.body_dofadr[b] >= 0 ? m.body_dofadr[b] + m.body_dofnum[b] - 1 : -1;
  for (int a = b; i < 0 && a > 0; a = m.body_parentid[a])  // the nearest ancestor with dofs
    if (m.body_dofnum[a] > 0) i = m.body_dofadr[a] + m.body_dofnum[a] - 1;
  for (; i >= 0; i = m.dof_parentid[i]) {
    const SVec<T> s = SVec<T>::load(d.cdof + 6 * i);
    qfrc[i] += dot(s.lin, force) + dot(s.ang, moment);
  }
}

// MuJoCo's body gravcomp: -gravity * mass * gravcomp at each body's center of mass (only bodies with
// body_gravcomp != 0; as a passive force: joint actuatorgravcomp is refused by the compiler).
template <class T>
RLT_HD void gravcomp_forces(const ModelView<T>& m, const DataView<T>& d) {
  const Vec3<T> g{m.gravity[0], m.gravity[1], m.gravity[2]}, zero = Vec3<T>::zero();
  for (int b = 1; b < m.nbody; ++b) {
    if (m.body_gravcomp[b] == 0) continue;
    apply_force_torque(m, d, b, Vec3<T>::load(d.xipos + 3 * b), (-(m.body_mass[b] * m.body_gravcomp[b])) * g, zero,
                       d.qfrc_passive);
  }
}

// MuJoCo's inertia-box fluid model for body b (mj_inertiaBoxFluidModel, mjd_inertiaBoxFluid): the
// body as the box of its inertia, in the frame of its principal axes at its center of mass.
template <class T>
struct FluidBox {
  T box[3];     // the box's sides: sqrt(6 (I_j + I_k - I_i) / mass)
  Mat3<T> R;    // principal axes, world (ximat)
  Vec3<T> com;  // center of mass, world (xipos)
  T w[3];       // angular velocity, principal frame
  T v[3];       // linear velocity of the com less the wind, principal frame
};
template <class T>
RLT_HD FluidBox<T> fluid_box(const ModelView<T>& m, const DataView<T>& d, int b) {
  FluidBox<T> f;
  const T mass = m.body_mass[b];
  const ModelReal<T>* I = m.body_inertia + 3 * b;
  for (int k = 0; k < 3; ++k) {
    const T x = I[(k + 1) % 3] + I[(k + 2) % 3] - I[k];
    f.box[k] = m_sqrt(select(x > T(1e-15), x, T(1e-15)) / mass * T(6));
  }
  f.R = Mat3<T>::load(d.ximat + 9 * b);
  f.com = Vec3<T>::load(d.xipos + 3 * b);
  const SVec<T> v = SVec<T>::load(d.cvel + 6 * b);
  const Vec3<T> vcom = v.lin + cross(v.ang, f.com - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]));
  const Vec3<T> vrel = vcom - Vec3<T>{m.wind[0], m.wind[1], m.wind[2]};
  for (int k = 0; k < 3; ++k) f.w[k] = dot(f.R.col(k), v.ang), f.v[k] = dot(f.R.col(k), vrel);  // R^T
  return f;
}

// The fluid forces on every body with mass (fluid_box): viscous (Stokes) force -3 pi D mu v and
// torque -pi D^3 mu w, D the box's mean side; quadratic drag -1/2 rho A |v| v per axis and torque
// -rho b_i (b_j^4 + b_k^4) |w_i| w_i / 64 (needs com_velocity).
template <class T>
RLT_HD void fluid_forces(const ModelView<T>& m, const DataView<T>& d) {
  const T pi = T(3.14159265358979323846);
  for (int b = 1; b < m.nbody; ++b) {
    if (m.body_mass[b] < ModelReal<T>(1e-15)) continue;
    const FluidBox<T> f = fluid_box(m, d, b);
    const T* box = f.box;
    T torque[3] = {T(0), T(0), T(0)}, force[3] = {T(0), T(0), T(0)};
    if (m.viscosity > 0) {
      const T diam = (box[0] + box[1] + box[2]) / T(3);
      for (int k = 0; k < 3; ++k) {
        torque[k] = -pi * diam * diam * diam * m.viscosity * f.w[k];
        force[k] = -T(3) * pi * diam * m.viscosity * f.v[k];
      }
    }
    if (m.density > 0) {
      for (int k = 0; k < 3; ++k) {
        const T bj = box[(k + 1) % 3], bk = box[(k + 2) % 3];
        force[k] -= T(0.5) * m.density * bj * bk * select(f.v[k] < T(0), -f.v[k], f.v[k]) * f.v[k];
        torque[k] -= m.density * box[k] * (bj * bj * bj * bj + bk * bk * bk * bk) *
                     select(f.w[k] < T(0), -f.w[k], f.w[k]) * f.w[k] / T(64);
      }
    }
    apply_force_torque(m, d, b, f.com, f.R * Vec3<T>{force[0], force[1], force[2]},
                       f.R * Vec3<T>{torque[0], torque[1], torque[2]}, d.qfrc_passive);
  }
}

// qderiv += sum over rows r of B_r J_r^T J_r, the velocity derivative of fluid_forces (MuJoCo's
// mjd_inertiaBoxFluid): J the body's com Jacobian in its principal frame (rows: angular 0-2, linear
// 3-5), B_r the derivative of the force or torque along axis r in that axis's velocity (the drag's
// |v| v gives 2 |v|), on the entries (i, j) with j an ancestor-or-self of i (qDeriv's pattern).
// `rows` holds 6 nv scalars (J, per dof its 6 entries). Needs com_velocity.
template <class T>
RLT_HD void fluid_velocity_derivative(const ModelView<T>& m, const DataView<T>& d, T* qderiv, T* rows) {
  const T pi = T(3.14159265358979323846);
  const int nv = m.nv;
  for (int b = 1; b < m.nbody; ++b) {
    if (m.body_mass[b] < T(1e-15)) continue;
    const int last = last_chain_dof(m, b);
    if (last < 0) continue;
    const FluidBox<T> f = fluid_box(m, d, b);
    const T* box = f.box;
    T B[6] = {T(0), T(0), T(0), T(0), T(0), T(0)};
    if (m.viscosity > T(0)) {
      const T diam = (box[0] + box[1] + box[2]) / T(3);
      for (int k = 0; k < 3; ++k)
        B[k] += -pi * diam * diam * diam * m.viscosity, B[3 + k] += -T(3) * pi * diam * m.viscosity;
    }
    if (m.density > T(0)) {
      for (int k = 0; k < 3; ++k) {
        const T bj = box[(k + 1) % 3], bk = box[(k + 2) % 3];
        const T aw = f.w[k] < T(0) ? -f.w[k] : f.w[k], av = f.v[k] < T(0) ? -f.v[k] : f.v[k];
        B[k] += -m.density * box[k] * (bj * bj * bj * bj + bk * bk * bk * bk) * T(2) * aw / T(64);
        B[3 + k] += -T(0.5) * m.density * bj * bk * T(2) * av;
      }
    }
    // J: per chain dof, the angular (cdof's) and com-linear columns, into the principal frame
    const Vec3<T> arm = f.com - Vec3<T>::load(d.xpos + 3 * m.body_rootid[b]);
    for (int i = last; i >= 0; i = m.dof_parentid[i]) {
      const SVec<T> s = SVec<T>::load(d.cdof + 6 * i);
      const Vec3<T> lin = s.lin + cross(s.ang, arm);
      for (int k = 0; k < 3; ++k) rows[6 * i + k] = dot(f.R.col(k), s.ang), rows[6 * i + 3 + k] = dot(f.R.col(k), lin);
    }
    for (int i = last; i >= 0; i = m.dof_parentid[i])
      for (int j = i; j >= 0; j = m.dof_parentid[j]) {
        T sum = T(0);
        for (int r = 0; r < 6; ++r) sum += B[r] * rows[6 * i + r] * rows[6 * j + r];
        qderiv[i * nv + j] += sum;
      }
  }
}

// Passive forces, MuJoCo 2.2.2's mj_passive for joints: springs (-k x, for_each_spring_dof), then
// dampers (-dof_damping qvel on every dof). With implicit damping (step_euler) qvel here is the
// step's starting velocity and the damping also enters the factored matrix; springs are explicit.
// Then, only in models that have them, MuJoCo 3's gravity compensation and fluid forces.
template <class T>
RLT_HD void passive_forces(const ModelView<T>& m, const DataView<T>& d) {
  for (int i = 0; i < m.nv; ++i) d.qfrc_passive[i] = T(0);
  for_each_spring_dof(m, d, [&](int dof, T k, T x) { d.qfrc_passive[dof] -= k * x; });
  for (int i = 0; i < m.nv; ++i) d.qfrc_passive[i] -= m.dof_damping[i] * d.qvel[i];
  if (m.has_gravcomp) gravcomp_forces(m, d);
  if (m.density > 0 || m.viscosity > 0) fluid_forces(m, d);
}

// ---- mass matrix -----------------------------------------------------------------------------------

// CRBA: qM(i, j) = cdof_i . (composite inertia of body(i)) cdof_j for j ancestor-or-self of i,
// mirrored to (j, i); armature added on the diagonal; the other entries are zero (needs com_position).
// Column by column: the i with j an ancestor-or-self of i are j's subtree, j..dof_subtreeend[j]
// (contiguous in tree order, and every one of them in M's pattern), so with f_i = crb cdof_i kept
// component-major (crb_cdof) column j is one vectorized pass over them, where the row-by-row walk up
// each dof's parent links (MuJoCo's mj_crb) made one short scalar 6-product per pair (the G1: 341
// pairs). Each entry is dot(f_i, cdof_j)'s products summed in dot's order: the same bits.
namespace dynamics_detail {
// out[i] = dot(f_i, c) for i in j..end, f_i the columns of f (component-major, 6 x nv), in dot's
// order. (__restrict__: out, f and c share the data row, and GCC's run-time overlap checks for seven
// pointers cost more than the loop on the short columns.)
template <class T>
RLT_HD RLT_INLINE void crba_column(T* __restrict__ out, const T* __restrict__ f, const T* __restrict__ c, int nv,
                                   int j, int end) {
  const T *f0 = f, *f1 = f + nv, *f2 = f + 2 * nv, *f3 = f + 3 * nv, *f4 = f + 4 * nv, *f5 = f + 5 * nv;
  const T c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], c5 = c[5];
  for (int i = j; i <= end; ++i)
    out[i] = (f0[i] * c0 + f1[i] * c1 + f2[i] * c2) + (f3[i] * c3 + f4[i] * c4 + f5[i] * c5);
}
}  // namespace dynamics_detail
template <class T>
RLT_HD void mass_matrix(const ModelView<T>& m, const DataView<T>& d) {
  for (int k = 0; k < m.nv * m.nv; ++k) d.qM[k] = T(0);
  for (int k = 0; k < 10 * m.nbody; ++k) d.crb[k] = d.cinert[k];
  // Each body's composite inertia into its parent's, from the leaves up. Down a chain (the parent
  // is the body just before: its first child, so the last to add) the sum stays in registers
  // instead of going through memory body after body; the same additions in the same order.
  T cur[10] = {};  // crb of body b, when `held`
  bool held = false;
  for (int b = m.nbody - 1; b > 0; --b) {
    const int parent = m.body_parentid[b];
    if (!held)
      for (int k = 0; k < 10; ++k) cur[k] = d.crb[10 * b + k];
    held = parent > 0 && parent == b - 1;
    if (held) {
      for (int k = 0; k < 10; ++k) cur[k] = d.crb[10 * parent + k] + cur[k];
      for (int k = 0; k < 10; ++k) d.crb[10 * parent + k] = cur[k];
    } else if (parent > 0) {
      add_inertia(d.crb + 10 * parent, static_cast<const T*>(cur));
    }
  }
  const int nv = m.nv;
  T* const f = d.crb_cdof;
  for (int i = 0; i < nv; ++i) {
    const SVec<T> fi = Inertia<T>::load(d.crb + 10 * m.dof_bodyid[i]) * SVec<T>::load(d.cdof + 6 * i);
    f[i] = fi.ang.x, f[nv + i] = fi.ang.y, f[2 * nv + i] = fi.ang.z;
    f[3 * nv + i] = fi.lin.x, f[4 * nv + i] = fi.lin.y, f[5 * nv + i] = fi.lin.z;
  }
  for (int j = 0; j < nv; ++j) {
    const int end = m.dof_subtreeend[j];
    T* mj = d.qM + j * nv;  // row j from the diagonal: column j mirrored
    dynamics_detail::crba_column(mj, static_cast<const T*>(f), static_cast<const T*>(d.cdof + 6 * j), nv, j, end);
    mj[j] += m.dof_armature[j];
    for (int i = j + 1; i <= end; ++i) d.qM[i * nv + j] = mj[i];
  }
}

// qLD <- L^T D L factors of qM + h diag(dof_damping) (h = 0: of qM itself), Featherstone's LTDL:
// eliminating from the last dof up, the row of dof k only updates k's ancestors, so the factors keep
// M's sparsity. D sits on the diagonal, L (unit lower triangular) below it.
// Split in two so that physics_step can add implicit constraint terms (sim/physics_step.h) in
// between: factor_mass_load copies qM + h diag(dof_damping) into qLD (row i from its tree's first
// dof to i: the ancestor entries and, between them, qM's zeros), factor_mass_eliminate factors qLD
// in place.
template <class T>
RLT_HD void factor_mass_load(const ModelView<T>& m, const DataView<T>& d, T h) {
  const int nv = m.nv;
  T* ld = d.qLD;
  for (int i = 0; i < nv; ++i) {
    for (int j = m.dof_treestart[i]; j <= i; ++j) ld[i * nv + j] = d.qM[i * nv + j];
    ld[i * nv + i] += h * m.dof_damping[i];
  }
}
// The elimination itself, on any nv x nv matrix with qM's pattern (ld: the ancestor entries (i, j),
// j ancestor-or-self of i, row-major): the Newton solver's Hessian (sim/constraints.h) uses it too.
// Eliminating dof k updates each ancestor i's row on i's ancestors; the loop runs over the whole
// span dof_treestart[i]..i instead (contiguous, so vectorized, where following the parent links
// was a short scalar loop per ancestor: M's factorization 25-30% faster on the humanoids and the
// G1, tools/stage_times). The entries between the ancestors take the same arithmetic with row k's
// entries there and are never read; the loaders keep them zero (qM's, factor_mass_load,
// newton_hessian), where they stay zero (a non-ancestor of i below i is no ancestor of k either),
// so no garbage (subnormals) slows the loop.
//
// Chains of dofs are eliminated together: a run k, k-1, .., k-s+1 (s <= kLtdlRun) in which each
// dof is the parent of the one after it (a free joint's six dofs, a ball's three, a limb of
// single-hinge bodies: most of a robot) is eliminated onto its own rows first (row r takes the
// updates of the run's rows below it, in one pass over its span), then onto each common ancestor
// row i in one pass: li[j] - lk[j] a_k - l(k-1)[j] a_(k-1) - .., so that each ancestor row is
// loaded and stored once per run, not once per dof (the loop setup per (dof, ancestor) pair, not the
// multiply-adds, was the cost: 306 pairs on the G1). Each entry gets the same operations in the same
// order as eliminating one dof at a time along the links (nothing else touches these rows between
// the run's eliminations: its dofs are consecutive, and every other descendant of the run's top
// dof comes after it, so it was eliminated before): the same bits.
constexpr int kLtdlRun = 4;  // the longest run eliminated together (measured: 4 beats 6 and 8; the
                             // switches in tree_ltdl_factor and ltdl_run_row go up to it)
namespace dynamics_detail {
// li[first..i] -= ls[0][j] a[0], then ls[1][j] a[1], .. (S rows at once, in that order).
template <int S, class T>
RLT_HD RLT_INLINE void ltdl_run_update(T* li, T* const* ls, const T* a, int first, int i) {
  const T* l[S];
  T b[S];
  for (int t = 0; t < S; ++t) l[t] = ls[t], b[t] = a[t];
  for (int j = first; j <= i; ++j) {
    T v = li[j];
    for (int t = 0; t < S; ++t) v = v - l[t][j] * b[t];
    li[j] = v;
  }
}
template <int S, class T>
RLT_HD RLT_INLINE void ltdl_run_rows(T* li, T* const* ls, const T* a, int first, int i) {
  if (first == 0) {  // (one tree, or the first: GCC's vector loop from a literal 0 is 10% faster)
    ltdl_run_update<S>(li, ls, a, 0, i);
  } else {
    ltdl_run_update<S>(li, ls, a, first, i);
  }
}
// Row i (span first..i) takes the updates of the run's rows ls[0..s-1] (deepest first), with the
// coefficients a; s in 1..kLtdlRun.
template <class T>
RLT_HD RLT_INLINE void ltdl_run_row(T* li, T* const* ls, const T* a, int first, int i, int s) {
  switch (s) {
    case 4: ltdl_run_rows<4>(li, ls, a, first, i); break;
    case 3: ltdl_run_rows<3>(li, ls, a, first, i); break;
    case 2: ltdl_run_rows<2>(li, ls, a, first, i); break;
    default: ltdl_run_rows<1>(li, ls, a, first, i); break;
  }
}
// Each ancestor row of the run's top dof `top` takes the S rows' updates.
template <int S, class T>
RLT_HD RLT_INLINE void ltdl_run_ancestors(const ModelView<T>& m, T* ld, T* const* ls, const T* inv, int top) {
  for (int i = m.dof_parentid[top]; i >= 0; i = m.dof_parentid[i]) {
    T a[S];
    for (int u = 0; u < S; ++u) a[u] = ls[u][i] * inv[u];
    ltdl_run_rows<S>(ld + i * m.nv, ls, a, m.dof_treestart[i], i);
    for (int u = 0; u < S; ++u) ls[u][i] = a[u];
  }
}
}  // namespace dynamics_detail
template <class T>
RLT_HD void tree_ltdl_factor(const ModelView<T>& m, T* ld) {
  const int nv = m.nv;
  for (int k = nv - 1; k >= 0;) {
    int s = 1;  // the run k, k-1, .., k-s+1
    while (s < kLtdlRun && k - s >= 0 && m.dof_parentid[k - s + 1] == k - s) ++s;
    T* ls[kLtdlRun];    // the run's rows, deepest first
    T inv[kLtdlRun];    // 1 / their pivots
    T a[kLtdlRun];      // their coefficients on the row being updated
    ls[0] = ld + k * nv;
    inv[0] = T(1) / ls[0][k];
    for (int t = 1; t < s; ++t) {  // within the run: row k - t takes the t rows below it
      const int r = k - t;
      T* lr = ld + r * nv;
      for (int u = 0; u < t; ++u) a[u] = ls[u][r] * inv[u];
      dynamics_detail::ltdl_run_row(lr, ls, a, m.dof_treestart[r], r, t);
      for (int u = 0; u < t; ++u) ls[u][r] = a[u];
      ls[t] = lr;
      inv[t] = T(1) / lr[r];
    }
    switch (s) {  // then the run's common ancestors
      case 4: dynamics_detail::ltdl_run_ancestors<4>(m, ld, ls, inv, k - s + 1); break;
      case 3: dynamics_detail::ltdl_run_ancestors<3>(m, ld, ls, inv, k - s + 1); break;
      case 2: dynamics_detail::ltdl_run_ancestors<2>(m, ld, ls, inv, k - s + 1); break;
      default: dynamics_detail::ltdl_run_ancestors<1>(m, ld, ls, inv, k - s + 1); break;
    }
    k -= s;
  }
}
// The factors ld of H (tree_ltdl_factor: H = L^T D L) become those of H + c w w^T, for a w that is
// zero off the tree path from dof `deep` to the root (a constraint row's Jacobian on one chain: H
// keeps qM's pattern, no fill-in). The rank-one update of Gill, Golub, Murray and Saunders (1974,
// method C1) in the factorization's elimination order (deepest dof first): eliminating dof k moves
// w's entry at k onto k's ancestors, so only the path's rows of L change, ~depth^2 multiply-adds
// against the factorization's sum over every dof (what MuJoCo's mju_cholUpdateSparse does for its
// sparse Cholesky). w is overwritten on the path (read and written nowhere else). A downdate (c < 0)
// loses the digits that D_k + c p^2 cancels: returns false, leaving ld half updated (the caller
// factors afresh), when a pivot keeps no more than `keep` of its value (or is not positive).
template <class T>
RLT_HD bool tree_ltdl_update(const ModelView<T>& m, T* ld, T* w, int deep, T c, T keep) {
  const int nv = m.nv;
  for (int k = deep; k >= 0; k = m.dof_parentid[k]) {
    const T p = w[k];
    if (p == T(0)) continue;  // (k's row of L and the rest of w stay)
    const T dk = ld[k * nv + k];
    const T dbar = dk + c * p * p;
    if (!(dbar > keep * dk)) return false;
    const T inv = T(1) / dbar;
    const T beta = c * p * inv;
    c = c * dk * inv;
    ld[k * nv + k] = dbar;
    for (int i = m.dof_parentid[k]; i >= 0; i = m.dof_parentid[i]) {
      w[i] -= p * ld[k * nv + i];
      ld[k * nv + i] += beta * w[i];
    }
  }
  return true;
}
template <class T>
RLT_HD void factor_mass_eliminate(const ModelView<T>& m, const DataView<T>& d) {
  tree_ltdl_factor(m, d.qLD);
}
template <class T>
RLT_HD void factor_mass(const ModelView<T>& m, const DataView<T>& d, T h) {
  factor_mass_load(m, d, h);
  factor_mass_eliminate(m, d);
}

// x <- (L^T D L)^-1 x with factors of tree_ltdl_factor (ld). L^T y = x carries each x_i to i's
// ancestors over the span dof_treestart[i]..i-1 (contiguous, so vectorized; the entries between
// the ancestors are zero, as in tree_ltdl_factor): each ancestor's x_j gets the same operations in
// the same order as along the parent links, the others x_j - 0 x_i, which leaves them as they are
// (but for the sign of a zero).
template <class T>
RLT_HD void tree_ltdl_solve(const ModelView<T>& m, const T* ld, T* x) {
  const int nv = m.nv;
  for (int i = nv - 1; i > 0; --i) {  // L^T y = x
    const T xi = x[i];
    const T* li = ld + i * nv;
    const int first = m.dof_treestart[i];
    if (first == i) continue;
    if (first == 0) {  // (as in tree_ltdl_factor: GCC's vector loop from a literal 0)
      for (int j = 0; j < i; ++j) x[j] -= li[j] * xi;
    } else {
      for (int j = first; j < i; ++j) x[j] -= li[j] * xi;
    }
  }
  for (int i = 0; i < nv; ++i) x[i] /= ld[i * nv + i];  // z = D^-1 y
  for (int i = 0; i < nv; ++i)                          // L x = z
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) x[i] -= ld[i * nv + j] * x[j];
}
// x <- (L^T D L)^-1 x with the factors of factor_mass.
template <class T>
RLT_HD void solve_mass(const ModelView<T>& m, const DataView<T>& d, T* x) {
  tree_ltdl_solve(m, static_cast<const T*>(d.qLD), x);
}

// ---- forward dynamics and integration --------------------------------------------------------------

// The smooth (constraint-free) quantities: kinematics (all_poses: see there), com quantities,
// qfrc_bias, qfrc_passive, qM.
template <class T>
RLT_HD void smooth_forces(const ModelView<T>& m, const DataView<T>& d, bool all_poses = true) {
  kinematics(m, d, all_poses);
  com_position(m, d);
  com_velocity(m, d);
  rne(m, d, static_cast<const T*>(nullptr), d.qfrc_bias);
  passive_forces(m, d);
  mass_matrix(m, d);
}

// smooth_forces, then qLD (factors of qM + h diag(dof_damping)).
template <class T>
RLT_HD void smooth_dynamics(const ModelView<T>& m, const DataView<T>& d, T h) {
  smooth_forces(m, d);
  factor_mass(m, d, h);
}

// qacc <- (factored matrix)^-1 (qfrc_applied + qfrc_actuator + qfrc_passive - qfrc_bias).
template <class T>
RLT_HD void solve_acceleration(const ModelView<T>& m, const DataView<T>& d) {
  for (int i = 0; i < m.nv; ++i)
    d.qacc[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
  solve_mass(m, d, d.qacc);
}

// Forward dynamics: qacc = M^-1 (qfrc_applied + qfrc_actuator + qfrc_passive - qfrc_bias), MuJoCo's
// mj_forward without constraints.
template <class T>
RLT_HD void forward(const ModelView<T>& m, const DataView<T>& d) {
  smooth_dynamics(m, d, T(0));
  solve_acceleration(m, d);
}

// qpos advanced by qvel over dt: free and ball quaternions rotate by the body-frame angular
// velocity (q * exp(w dt / 2)) and stay unit; everything else is qpos += dt qvel.
template <class T>
RLT_HD void integrate_positions(const ModelView<T>& m, T* qpos, const T* qvel, T dt) {
  // Joints are laid out in order, so their qpos and qvel blocks follow each other.
  int padr = 0, vadr = 0;
  for (int j = 0; j < m.njnt; ++j) {
    const int type = m.jnt_type[j];
    if (type == kJointFree) {
      for (int k = 0; k < 3; ++k) qpos[padr + k] += dt * qvel[vadr + k];
      padr += 3, vadr += 3;
    }
    if (type == kJointFree || type == kJointBall) {
      quat_integrate(Quat<T>::load(qpos + padr), Vec3<T>::load(qvel + vadr), dt).store(qpos + padr);
      padr += 4, vadr += 3;
    } else {
      qpos[padr] += dt * qvel[vadr];
      padr += 1, vadr += 1;
    }
  }
}

// One step of MuJoCo's Euler integrator (mj_step with integrator="Euler", no constraints):
// qacc from (M + dt diag(dof_damping)) qacc = f when m.implicit_damping (MuJoCo's default), from
// M qacc = f otherwise; then qvel += dt qacc and qpos advanced with the new qvel (semi-implicit).
template <class T>
RLT_HD void step_euler(const ModelView<T>& m, const DataView<T>& d) {
  const T dt = m.timestep;
  smooth_dynamics(m, d, m.implicit_damping ? dt : T(0));
  solve_acceleration(m, d);
  for (int i = 0; i < m.nv; ++i) d.qvel[i] += dt * d.qacc[i];
  integrate_positions(m, d.qpos, d.qvel, dt);
}

// The per-env body of a batched step: the env rows of `data` (one per env, layout.row scalars
// each) advanced by num_steps Euler steps. Runs on either executor: parallel_for(exec, n, f).
template <class T>
struct StepEulerEnvs {
  ModelView<T> m;
  DataLayout layout;
  T* data;            // (num_envs x layout.row)
  int num_steps;
  Workspace<T> workspace = {};  // on the device; unused on the host (BatchRows)

  RLT_HD void operator()(i64 env) const {
    const DataView<T> d = BatchRows<T>{layout, data, workspace}.env(env);
    for (int s = 0; s < num_steps; ++s) step_euler(m, d);
  }
};

// ---- energy ----------------------------------------------------------------------------------------

// Kinetic energy 1/2 qvel^T M qvel, armature included, as MuJoCo's mj_energyVel (needs mass_matrix).
template <class T>
RLT_HD T kinetic_energy(const ModelView<T>& m, const DataView<T>& d) {
  const int nv = m.nv;
  T e = T(0);
  for (int i = 0; i < nv; ++i) {
    T row = T(0);
    for (int j = i; j >= 0; j = m.dof_parentid[j]) row += (j == i ? T(0.5) : T(1)) * d.qM[i * nv + j] * d.qvel[j];
    e += d.qvel[i] * row;
  }
  return e;
}

// Gravitational potential energy -sum_b m_b g . xipos_b (needs kinematics).
template <class T>
RLT_HD T potential_energy(const ModelView<T>& m, const DataView<T>& d) {
  const Vec3<T> g = Vec3<T>::load(m.gravity);
  T e = T(0);
  for (int b = 1; b < m.nbody; ++b) e -= m.body_mass[b] * dot(g, Vec3<T>::load(d.xipos + 3 * b));
  return e;
}

// Energy stored in the joint springs: 1/2 k x^2 per sprung dof, x as passive_forces takes it
// (for_each_spring_dof, so the spring forces are minus its gradient), as MuJoCo's mj_energyPos adds
// to the gravitational energy. Reads qpos only.
template <class T>
RLT_HD T spring_energy(const ModelView<T>& m, const DataView<T>& d) {
  T e = T(0);
  for_each_spring_dof(m, d, [&](int, T k, T x) { e += T(0.5) * k * x * x; });
  return e;
}

}  // namespace rlt
