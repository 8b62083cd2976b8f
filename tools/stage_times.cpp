// stage_times: the physics substep stage by stage, rltrain (float, as the envs step) beside MuJoCo 3
// (the `mujoco` wheel's libmujoco, double), on the same states (issue 21). Built only where the
// wheel is found at configure time (RLTRAIN_MUJOCO3_DIR; CMakeLists.txt).
//
//   stage_times MODEL.xml [--control-dt 0.02] [--envs 16] [--steps 40] [--rounds 5] [--seed 7]
//               [--keyframe NAME [--ctrl-noise F] [--warmup N]] [--newton-stops]
//
// --newton-stops: instead of the times, the Newton solver's stopping rule on the same states (its
// line searches and its answers' distance from converged ones; newton_stops below).
//
// States: `envs` trajectories of MuJoCo from qpos0 at rest, controls uniform in ctrlrange from
// rltrain's random_ctrl (Philox: seed, env, control step), held for control_dt / timestep substeps,
// `steps` control steps: as `rltrain bench --model` and tools/bench_mujoco3.py drive their batches.
// Random controls leave a legged robot lying on the floor (few contacts), not the states a task
// trains on. --keyframe NAME: every trajectory starts from that keyframe (qpos, qvel, act, ctrl) and
// holds the keyframe's ctrl (position actuators: the robot stands on its feet), plus, with
// --ctrl-noise F, F x the random control's offset from the middle of the ctrlrange (clamped to it),
// so the feet shift and the contacts change as in a walk; --warmup N control steps are stepped and
// not recorded (the drop onto the floor from the keyframe's height).
// Every substep's MuJoCo state (mjSTATE_INTEGRATION: qpos, qvel, act, ctrl, warm start, ...) is
// recorded; each round then steps every recorded state once in MuJoCo and once in rltrain (its
// qpos, qvel, act and ctrl rounded to float), alternating, so both see the same load.
//
// MuJoCo's stages: its own timers (mjData.timer, mjcb_time = the time-stamp counter), and for the
// smooth split, kinematics to rne called one by one on a second mjData holding the same state.
// rltrain's stages: physics_substep's calls (sim/physics_step.h, sim/constraints.h
// soft_constraint_acceleration) made one by one here with the counter around each; the result is
// checked bit for bit (qpos, qvel, sensordata) against physics_substep itself. Per recorded state the
// least of each measurement over the rounds is kept (a shared machine: another process's turn only adds, and
// rarely hits the same state in every round; MuJoCo's stages are derived from those least timers
// and probe calls); a stage's figure is the mean over the states.
#include <x86intrin.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"

namespace {

using rlt::DataView;
using rlt::ModelView;

inline double ticks() { return static_cast<double>(__rdtsc()); }
mjtNum mj_ticks() { return static_cast<mjtNum>(__rdtsc()); }

// Counter ticks per ns, from 50 ms of the steady clock.
double ticks_per_ns() {
  using C = std::chrono::steady_clock;
  const auto t0 = C::now();
  const double k0 = ticks();
  while (C::now() - t0 < std::chrono::milliseconds(50)) {
  }
  const double k1 = ticks();
  return (k1 - k0) / std::chrono::duration<double, std::nano>(C::now() - t0).count();
}

// The rows of the table: one stage of both engines (what each counts is in kStageNote).
enum Stage {
  kKinematics,  // rltrain kinematics (+ tendons, transmissions); MuJoCo POS_KINEMATICS
  kComPos,
  kCrb,
  kFactor,  // M's factors (and 1/sqrt of D)
  kSmoothAcc,  // qacc_smooth = M^-1 (forces without constraints)
  kComVel,
  kPassive,
  kRne,
  kCollision,
  kRows,        // constraint rows and Jacobians
  kProject,     // MuJoCo only: projectConstraint (A = J M^-1 J^T for the dual solvers)
  kActuation,   // actuator forces
  kSolver,      // the constraint solver, qfrc_constraint, qacc
  kIntegrate,   // the integrator (Euler's damped refactor, RK4's combination, qpos/qvel update;
                // MuJoCo: mj_step less mj_forward)
  kSensors,     // rltrain: compute_sensors (last substep of a control step); MuJoCo: sensorPos/Vel/Acc
                // called on the probe (its sensorAcc without constraint rows)
  kOther,       // MuJoCo: mj_forward less its timers (sensors, fwdAcceleration, energy)
  kNumStages
};
const char* const kStageName[kNumStages] = {
    "kinematics (+tendon, transm.)", "com_position",        "CRBA (mass matrix)", "factor M", "qacc_smooth (solve M)",
    "com_velocity",                  "passive",             "RNE (bias)",         "collision",
    "constraint rows/Jacobians",     "projectConstraint",   "actuation",          "solver",
    "integration",                   "sensors",             "other"};

struct Totals {
  double t[kNumStages] = {};
};

// ---- rltrain: physics_substep's calls, one by one, timed ---------------------------------------
struct RltTimer {
  Totals* tot;
  template <class F>
  auto operator()(Stage s, F&& f) const {
    const double a = ticks();
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      add(s, ticks() - a);
    } else {
      auto r = f();
      add(s, ticks() - a);
      return r;
    }
  }
  void add(Stage s, double dt) const { tot->t[s] += dt; }
};

// physics_forward (sim/physics_step.h) with soft_constraint_acceleration (sim/constraints.h)
// unrolled: the same calls in the same order. forward_to_rows: up to the constraint rows (returns
// their count), timed_forward: the whole pass.
template <class T>
int forward_to_rows(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, const RltTimer& tm) {
  tm(kKinematics, [&] { rlt::kinematics(m, d); });
  tm(kComPos, [&] { rlt::com_position(m, d); });
  tm(kComVel, [&] { rlt::com_velocity(m, d); });
  tm(kRne, [&] { rlt::rne(m, d, static_cast<const T*>(nullptr), d.qfrc_bias); });
  tm(kPassive, [&] { rlt::passive_forces(m, d); });
  tm(kCrb, [&] { rlt::mass_matrix(m, d); });
  tm(kKinematics, [&] { rlt::tendon_forward(m, d); });
  tm(kCollision, [&] {
    if (m.ncon_max > 0) rlt::detect_contacts(m, d);
    else d.ncon[0] = T(0);
  });
  tm(kKinematics, [&] { rlt::transmission_kinematics(m, d); });
  tm(kActuation, [&] {
    rlt::actuator_forces(m, d, ctrl);
    rlt::clamp_joint_actuator_forces(m, d);
  });
  tm(kFactor, [&] {
    rlt::factor_mass_load(m, d, T(0));
    rlt::factor_mass_eliminate(m, d);
    for (int i = 0; i < m.nv; ++i) d.qLDiagSqrtInv[i] = T(1) / rlt::m_sqrt(d.qLD[i * m.nv + i]);
  });
  tm(kSmoothAcc, [&] {
    for (int i = 0; i < m.nv; ++i)
      d.qacc_smooth[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
    rlt::solve_mass(m, d, d.qacc_smooth);
  });
  return tm(kRows, [&] { return rlt::constraint_rows(m, d, m.timestep); });
}
template <class T>
void timed_forward(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, T hd, const RltTimer& tm) {
  const int nr = forward_to_rows(m, d, ctrl, tm);
  tm(kSolver, [&] {
    d.solver_niter[0] = T(rlt::constraint_solve(m, d, nr));
    if (m.noslip_iterations > 0) rlt::noslip_solve(m, d, nr);
    rlt::constraint_contact_forces(m, d, nr);
    for (int i = 0; i < m.nv && m.nbody_acc > 0; ++i) d.sensor_qacc[i] = d.qacc[i];
  });
  tm(kIntegrate, [&] {  // MuJoCo's mj_Euler refactors M + h D itself (ADVANCE)
    bool damped = false;
    for (int i = 0; i < m.nv && hd > T(0); ++i) damped = damped || m.dof_damping[i] != T(0);
    if (!damped) return;
    rlt::factor_mass_load(m, d, hd);
    rlt::factor_mass_eliminate(m, d);
    for (int i = 0; i < m.nv; ++i)
      d.qacc[i] = d.qfrc_applied[i] + d.qfrc_actuator[i] + d.qfrc_passive[i] + d.qfrc_constraint[i] - d.qfrc_bias[i];
    rlt::solve_mass(m, d, d.qacc);
  });
}

// physics_substep (Euler, implicitfast, implicit) and step_rk4, with timed_forward.
template <class T>
void timed_substep(const ModelView<T>& m, const DataView<T>& d, const T* ctrl, bool sensors, const RltTimer& tm) {
  if (m.integrator == rlt::kIntRK4) {  // step_rk4 (sim/physics_step.h)
    const T h = m.timestep;
    const T A[3] = {T(0.5), T(0.5), T(1)};
    const T B[4] = {T(1.0 / 6.0), T(1.0 / 3.0), T(1.0 / 3.0), T(1.0 / 6.0)};
    const int nq = m.nq, nv = m.nv, nu = m.nu;
    timed_forward(m, d, ctrl, T(0), tm);
    if (sensors) tm(kSensors, [&] { rlt::compute_sensors(m, d); });
    tm(kIntegrate, [&] {
      for (int i = 0; i < nq; ++i) d.rk_qpos[i] = d.qpos[i];
      for (int i = 0; i < nv; ++i)
        d.rk_qvel[i] = d.qvel[i], d.rk_dvel[i] = B[0] * d.qvel[i], d.rk_dacc[i] = B[0] * d.qacc[i];
      for (int i = 0; i < nu; ++i) d.rk_act[i] = d.act[i], d.rk_dact[i] = B[0] * d.act_dot[i];
    });
    for (int s = 1; s < 4; ++s) {
      tm(kIntegrate, [&] {
        for (int i = 0; i < nv; ++i) d.rk_dpos[i] = d.qvel[i] * A[s - 1];
        for (int i = 0; i < nq; ++i) d.qpos[i] = d.rk_qpos[i];
        rlt::integrate_positions(m, d.qpos, d.rk_dpos, h);
        for (int i = 0; i < nv; ++i) d.qvel[i] = d.rk_qvel[i] + (d.qacc[i] * A[s - 1]) * h;
        for (int i = 0; i < nu; ++i) d.act[i] = d.rk_act[i] + (d.act_dot[i] * A[s - 1]) * h;
      });
      timed_forward(m, d, ctrl, T(0), tm);
      tm(kIntegrate, [&] {
        for (int i = 0; i < nv; ++i) d.rk_dvel[i] += d.qvel[i] * B[s], d.rk_dacc[i] += d.qacc[i] * B[s];
        for (int i = 0; i < nu; ++i) d.rk_dact[i] += d.act_dot[i] * B[s];
      });
    }
    tm(kIntegrate, [&] {
      for (int i = 0; i < nq; ++i) d.qpos[i] = d.rk_qpos[i];
      for (int i = 0; i < nv; ++i) d.qvel[i] = d.rk_qvel[i];
      for (int i = 0; i < nu; ++i) d.act[i] = d.rk_act[i];
      rlt::advance_state(m, d, d.rk_dact, d.rk_dacc, static_cast<const T*>(d.rk_dvel));
    });
  } else {
    timed_forward(m, d, ctrl,
                  rlt::velocity_implicit(m.integrator) ? T(0) : m.implicit_damping ? m.timestep : T(0), tm);
    if (m.nenergy_lag > 0) {
      const T ke = rlt::kinetic_energy(m, d);
      if (sensors) tm(kSensors, [&] { rlt::compute_sensors(m, d); });
      d.energy_lag[0] = ke, d.energy_lag[1] = T(1);
    } else if (sensors) {
      tm(kSensors, [&] { rlt::compute_sensors(m, d); });
    }
    tm(kIntegrate, [&] {
      if (m.integrator == rlt::kIntImplicit) rlt::implicit_acceleration(m, d, ctrl);
      else if (m.integrator == rlt::kIntImplicitFast) rlt::implicitfast_acceleration(m, d, ctrl);
      rlt::advance_state(m, d, d.act_dot, d.qacc, static_cast<const T*>(nullptr));
    });
  }
  if (m.nclock > 0) d.time[0] += m.timestep;
}


// ---- MuJoCo: its timers, and the lumped ones split by calling the stages on a second mjData ------
// Per substep: MuJoCo's own timers of one mj_step (ticks), and the smooth stages called one by one
// on `probe` (same state) to split the timers that lump them.
struct MujocoTimes {
  double timer[mjNTIMER] = {};
  double timer_calls_forward = 0;  // forward passes in the step (RK4: 4)
  double kin = 0, compos = 0, crb = 0, factor = 0, comvel = 0, passive = 0, rne = 0, smooth_acc = 0, sensors = 0;
};

void mujoco_substep(const mjModel* mm, mjData* d, mjData* probe, mjtNum* scratch, MujocoTimes& t) {
  auto timed = [](double& acc, auto&& f) {
    const double a = ticks();
    f();
    acc = ticks() - a;
  };
  timed(t.kin, [&] { mj_kinematics(mm, probe); });
  timed(t.compos, [&] { mj_comPos(mm, probe); });
  timed(t.crb, [&] { mj_makeM(mm, probe); });
  timed(t.factor, [&] { mj_factorM(mm, probe); });
  timed(t.comvel, [&] { mj_comVel(mm, probe); });
  timed(t.passive, [&] { mj_passive(mm, probe); });
  timed(t.rne, [&] { mj_rne(mm, probe, 0, mm->nv ? scratch : nullptr); });
  timed(t.smooth_acc, [&] { mj_fwdAcceleration(mm, probe); });
  if (mm->nsensor > 0) timed(t.sensors, [&] {
      mj_sensorPos(mm, probe);
      mj_sensorVel(mm, probe);
      mj_sensorAcc(mm, probe);
    });
  std::memset(d->timer, 0, sizeof(d->timer));
  mj_step(mm, d);
  for (int k = 0; k < mjNTIMER; ++k) t.timer[k] = d->timer[k].duration;
  t.timer_calls_forward = d->timer[mjTIMER_POS_KINEMATICS].number;
}

// A lump of MuJoCo's timers split in the ratio of the probe's calls.
void split(double lump, std::initializer_list<std::pair<Stage, double>> parts, Totals& out) {
  double sum = 0;
  for (const auto& p : parts) sum += p.second;
  for (const auto& p : parts) out.t[p.first] += sum > 0 ? lump * p.second / sum : 0.0;
}

// FNV-1a over n floats' bytes.
unsigned long long fnv1a(unsigned long long h, const float* x, int n) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(x);
  for (size_t i = 0; i < sizeof(float) * static_cast<size_t>(n); ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

Totals mujoco_stages(const MujocoTimes& t) {
  Totals o;
  auto tm = [&](int k) { return t.timer[k]; };
  split(tm(mjTIMER_POS_KINEMATICS), {{kKinematics, t.kin}, {kComPos, t.compos}}, o);
  split(tm(mjTIMER_POS_INERTIA), {{kCrb, t.crb}, {kFactor, t.factor}}, o);
  split(tm(mjTIMER_VELOCITY), {{kComVel, t.comvel}, {kPassive, t.passive}, {kRne, t.rne}}, o);
  o.t[kCollision] = tm(mjTIMER_POS_COLLISION);
  o.t[kRows] = tm(mjTIMER_POS_MAKE);
  o.t[kProject] = tm(mjTIMER_POS_PROJECT);
  o.t[kActuation] = tm(mjTIMER_ACTUATION);
  o.t[kSolver] = tm(mjTIMER_CONSTRAINT);
  // everything of mj_step outside mj_forward: the integrator (Euler's damped refactor, RK4's
  // combination; its three inner forward passes are in the timers above) and the state checks
  o.t[kIntegrate] = tm(mjTIMER_STEP) - tm(mjTIMER_FORWARD);
  // inside mj_forward but in no timer: fwdAcceleration and the sensors (the probe's, once per forward
  // pass), and what is left (energy, checks)
  const double forwards = t.timer_calls_forward;
  o.t[kSmoothAcc] = forwards * t.smooth_acc;
  o.t[kSensors] = t.sensors;  // (RK4: its inner forward passes skip the sensors)
  o.t[kOther] = -o.t[kSmoothAcc] - o.t[kSensors] + tm(mjTIMER_FORWARD) - tm(mjTIMER_POS_KINEMATICS) - tm(mjTIMER_POS_INERTIA) -
                tm(mjTIMER_POS_COLLISION) - tm(mjTIMER_POS_MAKE) - tm(mjTIMER_POS_PROJECT) -
                tm(mjTIMER_VELOCITY) - tm(mjTIMER_ACTUATION) - tm(mjTIMER_CONSTRAINT);
  return o;
}

// ---- --newton-stops: the Newton solver's stopping rule measured on the recorded states ------------
// Per state, rltrain's float rows (forward_to_rows from the state rounded to float), then newton_solve
// three times from the same rows: as the pipeline runs it (the model's tolerance), with tolerance 0
// (until rounding stops it: the converged float answer, its passes traced), and in double from the
// same float state (which runs to rounding: the converged answer, float's rounding aside). Reported:
// line searches per substep, which test stopped the solver, and |qacc - qacc*| / |qacc*| (2-norms)
// of each answer against the converged double one and the converged float one; also the rules
// read off the traced passes: stop at the first pass reached by an exact Newton step (every row on
// its piece) and MuJoCo's test alone (without the rounding guards); and MuJoCo's own distance: its
// Newton (whatever the file names) at its tolerance against its tolerance 0, from the same state.
struct Dist {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  std::string str() {
    if (v.empty()) return "-";
    std::sort(v.begin(), v.end());
    auto q = [&](double p) { return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))]; };
    double mean = 0;
    for (double x : v) mean += x;
    char b[200];
    std::snprintf(b, sizeof(b), "median %.1e p90 %.1e p99 %.1e max %.1e mean %.1e", q(0.5), q(0.9), q(0.99), v.back(),
                  mean / static_cast<double>(v.size()));
    return b;
  }
};

template <class A, class B>
double rel_dist(const A* a, const B* b, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    const double x = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += x * x, den += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-12);
}

int newton_stops(const rlt::Model& model, const ModelView<float>& m, const mjModel* mm, const std::vector<mjtNum>& states,
                 int num_states, int state_size, int sig) {
  if (!m.use_newton) {
    std::printf("  --newton-stops: the model's float constraints are solved by Gauss-Seidel, not Newton\n");
    return 0;
  }
  const rlt::HostModel<double> host_d(model);
  const ModelView<double>& md0 = host_d.view();  // (double runs to rounding whatever the tolerance)
  ModelView<float> m0 = rlt::without_newton_budget(m);  // converged: no tolerance, no budget, from qacc_smooth
  m0.tolerance = 0;
  const int nv = m.nv;
  std::vector<float> row(static_cast<size_t>(rlt::data_size(m))), saved(row.size());
  std::vector<double> row_d(static_cast<size_t>(rlt::data_size(md0)));
  const DataView<float> d = rlt::data_view(m, row.data());
  const DataView<double> dd = rlt::data_view(md0, row_d.data());
  rlt::reset_data(m, d);
  rlt::reset_data(md0, dd);
  mjData* probe = mj_makeData(mm);
  using Trace = rlt::constraint_detail::NewtonTrace<float>;
  Trace tr{}, tr0{};
  std::vector<float> tq(static_cast<size_t>(Trace::kPasses) * nv), tq0(tq.size()), qa(static_cast<size_t>(nv)),
      qf(static_cast<size_t>(nv));
  tr.qacc = tq.data(), tr0.qacc = tq0.data();
  Dist mj_own, mj_file, new_file, conv_file;  // (the *_file: against MuJoCo at the file's own settings)
  mjData* mjd_file = mj_makeData(mm);
  double mj_file_iter = 0;
  // MuJoCo's own distance: its Newton at its tolerance against tolerance 0 (1000 iterations), from
  // the same recorded state (its warm start included)
  mjModel* mm_newton = mj_copyModel(nullptr, mm);
  mm_newton->opt.solver = mjSOL_NEWTON;
  mm_newton->opt.iterations = std::max(100, mm->opt.iterations);
  mjData* mjd = mj_makeData(mm_newton);
  std::vector<mjtNum> mj_qacc(static_cast<size_t>(nv));
  double mj_iter = 0;
  std::vector<float> ctrl(static_cast<size_t>(m.nu) + 1);
  std::vector<double> ctrl_d(ctrl.size());
  Totals dummy;
  const RltTimer tm{&dummy};
  long stops[7] = {}, ls_new = 0, ls_conv = 0, ls_exact = 0, ls_mj = 0, refines = 0, solves = 0, rows_differ = 0;
  Dist new_d, new_f, conv_d, exact_d, exact_f, mj_d, mj_f;
  for (int k = 0; k < num_states; ++k) {
    mj_setState(mm, probe, states.data() + static_cast<size_t>(k) * state_size, sig);
    for (int i = 0; i < m.nu; ++i) ctrl[static_cast<size_t>(i)] = static_cast<float>(probe->ctrl[i]);
    for (int i = 0; i < m.nu; ++i) ctrl_d[static_cast<size_t>(i)] = ctrl[static_cast<size_t>(i)];
    for (int i = 0; i < m.nq; ++i) d.qpos[i] = static_cast<float>(probe->qpos[i]), dd.qpos[i] = d.qpos[i];
    for (int i = 0; i < nv; ++i) d.qvel[i] = static_cast<float>(probe->qvel[i]), dd.qvel[i] = d.qvel[i];
    for (int u = 0; u < m.nu; ++u) {
      d.act[u] = mm->actuator_actadr[u] >= 0 ? static_cast<float>(probe->act[mm->actuator_actadr[u]]) : 0.0f;
      dd.act[u] = d.act[u];
    }
    {
      const mjtNum tol = mm_newton->opt.tolerance;
      mj_setState(mm_newton, mjd, states.data() + static_cast<size_t>(k) * state_size, sig);
      mj_forward(mm_newton, mjd);
      mj_iter += mjd->solver_niter[0];
      std::copy(mjd->qacc, mjd->qacc + nv, mj_qacc.begin());
      mm_newton->opt.tolerance = 0, mm_newton->opt.iterations = 1000;
      mj_setState(mm_newton, mjd, states.data() + static_cast<size_t>(k) * state_size, sig);
      mj_forward(mm_newton, mjd);
      mm_newton->opt.tolerance = tol, mm_newton->opt.iterations = std::max(100, mm->opt.iterations);
      if (mjd->nefc > 0) mj_own.add(rel_dist(mj_qacc.data(), mjd->qacc, nv));
      // MuJoCo as the file sets it (solver, iterations, tolerance, its warm start from the state)
      mj_setState(mm, mjd_file, states.data() + static_cast<size_t>(k) * state_size, sig);
      mj_forward(mm, mjd_file);
      mj_file_iter += mjd_file->solver_niter[0];
      if (mjd->nefc > 0) mj_file.add(rel_dist(mjd_file->qacc, mjd->qacc, nv));
    }
    if (m.newton_warmstart)  // (the state's warm start: MuJoCo's, the previous step's qacc)
      for (int i = 0; i < nv; ++i) d.qacc_warmstart[i] = static_cast<float>(probe->qacc_warmstart[i]);
    const int nr = forward_to_rows(m, d, ctrl.data(), tm);
    const int nr_d = forward_to_rows(md0, dd, ctrl_d.data(), tm);
    if (nr == 0) continue;
    ++solves;
    saved = row;
    ls_new += rlt::constraint_detail::newton_solve(m, d, nr, true, &tr);
    ++stops[tr.stopped_by];
    for (int i = 0; i < nv; ++i) qa[static_cast<size_t>(i)] = d.qacc[i];
    row = saved;
    const int ls0 = rlt::constraint_detail::newton_solve(m0, d, nr, true, &tr0);
    ls_conv += ls0;
    for (int i = 0; i < nv; ++i) qf[static_cast<size_t>(i)] = d.qacc[i];
    row = saved;
    if (nr_d != nr) {  // (a contact in one precision and not the other: no double reference)
      ++rows_differ;
    } else {
      rlt::constraint_detail::newton_solve(md0, dd, nr_d, true);
      new_d.add(rel_dist(qa.data(), dd.qacc, nv));
      conv_d.add(rel_dist(qf.data(), dd.qacc, nv));
    }
    new_f.add(rel_dist(qa.data(), qf.data(), nv));
    new_file.add(rel_dist(qa.data(), mjd_file->qacc, nv));
    conv_file.add(rel_dist(qf.data(), mjd_file->qacc, nv));
    // the rules read off the tolerance-0 trace: pass p is the iterate after p line searches
    int p_exact = -1, p_mj = -1;
    for (int p = 1; p < tr0.passes; ++p) {
      refines += tr0.refine[p] && p < ls0;  // (a line search from pass p)
      if (p_exact < 0 && tr0.exact[p]) p_exact = p;
      const float tol = m.tolerance;
      const bool mj = (tr0.improvement[p] > 0 && tr0.improvement[p] < tol) || tr0.gradient[p] < tol ||
                      (tr0.decrement[p] >= 0 && tr0.decrement[p] < tol);
      if (p_mj < 0 && mj) p_mj = p;
    }
    auto at = [&](int p) { return p < 0 ? qf.data() : tq0.data() + static_cast<size_t>(p) * nv; };
    ls_exact += p_exact < 0 ? tr0.passes : p_exact;
    ls_mj += p_mj < 0 ? tr0.passes : p_mj;
    exact_f.add(rel_dist(at(p_exact), qf.data(), nv));
    mj_f.add(rel_dist(at(p_mj), qf.data(), nv));
    if (nr_d == nr) exact_d.add(rel_dist(at(p_exact), dd.qacc, nv)), mj_d.add(rel_dist(at(p_mj), dd.qacc, nv));
  }
  const double n = static_cast<double>(std::max(1L, solves));
  std::printf("  --newton-stops: %ld states with rows (of %d; %ld with another row count in double, left out of the "
              "double comparison); tolerance %g; |qacc - qacc*| / |qacc*|:\n",
              solves, num_states, rows_differ, static_cast<double>(m.tolerance));
  std::printf("  pipeline (model's tolerance): %.2f line searches; stopped by an exact step %ld, gradient %ld, "
              "improvement %ld, decrement %ld, rounding %ld, max %ld\n    vs double converged: %s\n    vs float "
              "converged: %s\n",
              ls_new / n, stops[rlt::constraint_detail::kStopExact], stops[rlt::constraint_detail::kStopGradient],
              stops[rlt::constraint_detail::kStopImprovement], stops[rlt::constraint_detail::kStopDecrement],
              stops[rlt::constraint_detail::kStopRounding], stops[rlt::constraint_detail::kStopMaxIter],
              new_d.str().c_str(), new_f.str().c_str());
  std::printf("  tolerance 0 (until rounding; %.2f of its line searches refinements): %.2f line searches\n"
              "    vs double converged: %s\n",
              refines / n, ls_conv / n, conv_d.str().c_str());
  std::printf("  traced rule, stop at the first exact Newton step: %.2f line searches\n    vs double converged: %s\n"
              "    vs float converged: %s\n",
              ls_exact / n, exact_d.str().c_str(), exact_f.str().c_str());
  std::printf("  traced rule, MuJoCo's test alone: %.2f line searches\n    vs double converged: %s\n    vs float "
              "converged: %s\n",
              ls_mj / n, mj_d.str().c_str(), mj_f.str().c_str());
  std::printf("  MuJoCo's Newton at its tolerance (iterations at least 100; %.2f a substep), against its tolerance 0:\n"
              "    %s\n",
              mj_iter / num_states, mj_own.str().c_str());
  std::printf("  MuJoCo as the file sets it (solver %d, iterations %d, tolerance %g, warm start; %.2f iterations a "
              "substep), against its converged answer:\n    %s\n",
              mm->opt.solver, mm->opt.iterations, mm->opt.tolerance, mj_file_iter / num_states, mj_file.str().c_str());
  std::printf("  against MuJoCo as the file sets it: the pipeline (budget %d, warm start %d):\n    %s\n  float "
              "converged:\n    %s\n",
              m.newton_iterations, m.newton_warmstart, new_file.str().c_str(), conv_file.str().c_str());
  mj_deleteData(mjd_file);
  mj_deleteData(mjd);
  mj_deleteModel(mm_newton);
  mj_deleteData(probe);
  return 0;
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: stage_times MODEL.xml [--control-dt S] [--envs N] [--steps N] [--rounds N] [--seed N] "
               "[--keyframe NAME [--ctrl-noise F] [--warmup N]] [--newton-stops]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  double control_dt = 0.02;
  int num_envs = 16, num_steps = 40, rounds = 5;
  unsigned seed = 7;
  bool newton_stops_only = false;  // --newton-stops: the stopping-rule measurement instead of the times
  std::string keyframe;            // --keyframe: start there and hold its ctrl (empty: qpos0, random controls)
  double ctrl_noise = 0;           // --ctrl-noise: with --keyframe, this fraction of the random control's offset
  int warmup = 0;                  // --warmup: control steps stepped before the recorded ones
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--control-dt") control_dt = std::atof(next());
    else if (a == "--envs") num_envs = std::atoi(next());
    else if (a == "--steps") num_steps = std::atoi(next());
    else if (a == "--rounds") rounds = std::atoi(next());
    else if (a == "--seed") seed = static_cast<unsigned>(std::atoi(next()));
    else if (a == "--newton-stops") newton_stops_only = true;
    else if (a == "--keyframe") keyframe = next();
    else if (a == "--ctrl-noise") ctrl_noise = std::atof(next());
    else if (a == "--warmup") warmup = std::atoi(next());
    else if (!a.empty() && a[0] != '-' && path.empty()) path = a;
    else usage();
  }
  if (path.empty() || num_envs < 1 || num_steps < 1 || rounds < 1 || warmup < 0 || ctrl_noise < 0) usage();
  if (keyframe.empty() && (ctrl_noise > 0 || warmup > 0)) usage();

  // ---- both models from the same file --------------------------------------------------------------
  const rlt::Model model = rlt::load_mjcf(path);
  const rlt::HostModel<float> host(model);
  const ModelView<float>& m = host.view();
  char err[1000] = "";
  mjModel* mm = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
  if (!mm) {
    std::fprintf(stderr, "stage_times: MuJoCo cannot load %s: %s\n", path.c_str(), err);
    return 2;
  }
  if (mm->nq != m.nq || mm->nv != m.nv || mm->nu != m.nu) {
    std::fprintf(stderr, "stage_times: %s: nq/nv/nu differ (MuJoCo %d/%d/%d, rltrain %d/%d/%d)\n", path.c_str(),
                 static_cast<int>(mm->nq), static_cast<int>(mm->nv), static_cast<int>(mm->nu), m.nq, m.nv, m.nu);
    return 2;
  }
  const int substeps = static_cast<int>(std::lround(control_dt / mm->opt.timestep));
  if (substeps < 1 || std::fabs(substeps * mm->opt.timestep - control_dt) > 1e-9 * control_dt + 1e-12) {
    std::fprintf(stderr, "stage_times: --control-dt %g is not a whole number of timesteps (%g)\n", control_dt,
                 mm->opt.timestep);
    return 2;
  }
  mjData* d = mj_makeData(mm);
  mjData* probe = mj_makeData(mm);
  std::vector<mjtNum> scratch(static_cast<size_t>(mm->nv));
  const int sig = mjSTATE_INTEGRATION;
  const int state_size = mj_stateSize(mm, sig);

  // ---- the states: MuJoCo's trajectories under rltrain's random controls -------------------------
  std::vector<double> range(2 * static_cast<size_t>(m.nu));
  for (int u = 0; u < m.nu; ++u) {
    const bool limited = mm->actuator_ctrllimited[u] != 0;
    range[2 * u] = limited ? mm->actuator_ctrlrange[2 * u] : -1.0;
    range[2 * u + 1] = limited ? mm->actuator_ctrlrange[2 * u + 1] : 1.0;
  }
  int key = -1;
  if (!keyframe.empty()) {
    key = mj_name2id(mm, mjOBJ_KEY, keyframe.c_str());
    if (key < 0) {
      std::fprintf(stderr, "stage_times: %s: no keyframe named \"%s\"\n", path.c_str(), keyframe.c_str());
      return 2;
    }
  }
  const int num_states = num_envs * num_steps * substeps;
  std::vector<mjtNum> states(static_cast<size_t>(num_states) * state_size);
  std::vector<char> last_substep(static_cast<size_t>(num_states));
  {
    int k = 0;
    for (int e = 0; e < num_envs; ++e) {
      if (key >= 0) mj_resetDataKeyframe(mm, d, key);
      else mj_resetData(mm, d);
      for (int c = 0; c < warmup + num_steps; ++c) {
        rlt::random_ctrl(range.data(), m.nu, seed, static_cast<rlt::u32>(e), static_cast<rlt::u32>(c), d->ctrl);
        for (int u = 0; u < m.nu && key >= 0; ++u) {  // the keyframe's ctrl plus a fraction of the offset
          const double lo = range[2 * u], hi = range[2 * u + 1];
          const double c0 = mm->key_ctrl[static_cast<size_t>(key) * m.nu + u];
          d->ctrl[u] = std::min(hi, std::max(lo, c0 + ctrl_noise * (d->ctrl[u] - 0.5 * (lo + hi))));
        }
        for (int s = 0; s < substeps; ++s) {
          if (c < warmup) {
            mj_step(mm, d);
            continue;
          }
          mj_getState(mm, d, states.data() + static_cast<size_t>(k) * state_size, sig);
          last_substep[static_cast<size_t>(k)] = s == substeps - 1;
          mj_step(mm, d);
          ++k;
        }
      }
    }
  }

  if (newton_stops_only) {
    std::printf("%s\n", path.c_str());
    const int rc = newton_stops(model, m, mm, states, num_states, state_size, sig);
    mj_deleteData(probe);
    mj_deleteData(d);
    mj_deleteModel(mm);
    return rc;
  }

  // ---- rounds: every state once in MuJoCo, once in rltrain timed and once untimed, alternating ------
  mjcb_time = mj_ticks;
  const int n = rlt::data_size(m);
  // each row from a page boundary (the heap's placement of the rows moved the solver's time by ~3%
  // between builds whose row sizes differ: measure the code, not where malloc put the rows)
  std::vector<float> rows(2 * (static_cast<size_t>(n) + 2048));
  auto page = [&](size_t at) {
    const auto p = reinterpret_cast<std::uintptr_t>(rows.data() + at);
    return reinterpret_cast<float*>((p + 4095) & ~static_cast<std::uintptr_t>(4095));
  };
  float* const row = page(0);
  float* const plain = page(static_cast<size_t>(n) + 2048);
  const DataView<float> rd = rlt::data_view(m, row), pd = rlt::data_view(m, plain);
  rlt::reset_data(m, rd);
  rlt::reset_data(m, pd);
  std::vector<float> ctrl(static_cast<size_t>(m.nu) + 1);
  // per state, the least over rounds: rltrain's stages and untimed substep, MuJoCo's timers and probe calls
  std::vector<Totals> best_r(static_cast<size_t>(num_states));
  std::vector<MujocoTimes> best_mt(static_cast<size_t>(num_states));  // each timer and probe call's least
  std::vector<double> best_plain(static_cast<size_t>(num_states), 1e300);
  for (auto& t : best_r) std::fill(t.t, t.t + kNumStages, 1e300);
  for (auto& t : best_mt) {
    std::fill(t.timer, t.timer + mjNTIMER, 1e300);
    t.kin = t.compos = t.crb = t.factor = t.comvel = t.passive = t.rne = t.smooth_acc = t.sensors = 1e300;
  }
  long differing = 0;
  unsigned long long digest = 1469598103934665603ull;  // of rltrain's substeps' results (bit-identity across builds)
  double niter_sum = 0, nefc_sum = 0, ncon_sum = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < num_states; ++k) {
      const mjtNum* st = states.data() + static_cast<size_t>(k) * state_size;
      // MuJoCo
      mj_setState(mm, d, st, sig);
      mj_setState(mm, probe, st, sig);
      MujocoTimes mt;
      mujoco_substep(mm, d, probe, scratch.data(), mt);
      MujocoTimes& b = best_mt[static_cast<size_t>(k)];
      for (int q = 0; q < mjNTIMER; ++q) b.timer[q] = std::min(b.timer[q], mt.timer[q]);
      b.timer_calls_forward = mt.timer_calls_forward;
      for (double MujocoTimes::*f : {&MujocoTimes::kin, &MujocoTimes::compos, &MujocoTimes::crb, &MujocoTimes::factor,
                                     &MujocoTimes::comvel, &MujocoTimes::passive, &MujocoTimes::rne,
                                     &MujocoTimes::smooth_acc, &MujocoTimes::sensors})
        b.*f = std::min(b.*f, mt.*f);
      // rltrain, from the same state in float
      mj_setState(mm, probe, st, sig);
      for (int i = 0; i < m.nu; ++i) ctrl[static_cast<size_t>(i)] = static_cast<float>(probe->ctrl[i]);
      auto load = [&](const DataView<float>& x) {
        for (int i = 0; i < m.nq; ++i) x.qpos[i] = static_cast<float>(probe->qpos[i]);
        for (int i = 0; i < m.nv; ++i) x.qvel[i] = static_cast<float>(probe->qvel[i]);
        for (int u = 0; u < m.nu; ++u)  // rltrain's act has one per actuator, MuJoCo's one per stateful one
          x.act[u] = mm->actuator_actadr[u] >= 0 ? static_cast<float>(probe->act[mm->actuator_actadr[u]]) : 0.0f;
        for (int i = 0; i < (m.newton_warmstart ? m.nv : 0); ++i)  // (the solver's warm start, MuJoCo's)
          x.qacc_warmstart[i] = static_cast<float>(probe->qacc_warmstart[i]);
      };
      const bool sensors = m.nsensor > 0 && last_substep[static_cast<size_t>(k)];
      load(rd);
      Totals rt;
      timed_substep(m, rd, ctrl.data(), sensors, RltTimer{&rt});
      for (int s = 0; s < kNumStages; ++s) best_r[k].t[s] = std::min(best_r[k].t[s], rt.t[s]);
      load(pd);
      const double a = ticks();
      rlt::physics_substep(m, pd, ctrl.data(), sensors);
      best_plain[k] = std::min(best_plain[k], ticks() - a);
      if (r == 0) {
        differing += std::memcmp(rd.qpos, pd.qpos, sizeof(float) * m.nq) != 0 ||
                     std::memcmp(rd.qvel, pd.qvel, sizeof(float) * m.nv) != 0 ||
                     (sensors && std::memcmp(rd.sensordata, pd.sensordata, sizeof(float) * m.nsensordata) != 0);
        niter_sum += pd.solver_niter[0], nefc_sum += pd.nefc[0], ncon_sum += pd.ncon[0];
        digest = fnv1a(digest, pd.qpos, m.nq), digest = fnv1a(digest, pd.qvel, m.nv);
        digest = fnv1a(digest, pd.qacc, m.nv), digest = fnv1a(digest, pd.qfrc_constraint, m.nv);
      }
    }
  }

  // ---- the table ------------------------------------------------------------------------------------
  const double tpn = ticks_per_ns();
  const double per = 1.0 / (tpn * 1e3 * num_states);  // ticks summed over states -> us per substep
  Totals sr, sm;
  double plain_sum = 0, step_sum = 0, lumps[3] = {};
  for (int k = 0; k < num_states; ++k) {
    const Totals ms = mujoco_stages(best_mt[static_cast<size_t>(k)]);  // from the least of each measurement
    for (int s = 0; s < kNumStages; ++s) sr.t[s] += best_r[k].t[s], sm.t[s] += ms.t[s];
    const double* timer = best_mt[static_cast<size_t>(k)].timer;
    plain_sum += best_plain[k], step_sum += timer[mjTIMER_STEP];
    lumps[0] += timer[mjTIMER_POS_KINEMATICS], lumps[1] += timer[mjTIMER_POS_INERTIA], lumps[2] += timer[mjTIMER_VELOCITY];
  }
  double mj_nefc = 0, mj_niter = 0;
  {
    mj_resetData(mm, d);  // MuJoCo's rows and iterations over the same states (one more pass)
    for (int k = 0; k < num_states; ++k) {
      mj_setState(mm, d, states.data() + static_cast<size_t>(k) * state_size, sig);
      mj_step(mm, d);
      mj_nefc += d->nefc, mj_niter += d->solver_niter[0];
    }
  }
  const char* integrators[] = {"Euler", "RK4", "implicit", "implicitfast"};
  const char* solvers[] = {"PGS", "CG", "Newton"};
  if (key >= 0)
    std::printf("states: from keyframe \"%s\", its ctrl held + %g x the random offset, %d warm-up control steps\n",
                keyframe.c_str(), ctrl_noise, warmup);
  std::printf("%s\n  nq %d nv %d nbody %d ngeom %d nu %d; timestep %g, %s, %d substeps per control step; %d envs x %d "
              "control steps = %d substeps; %d rounds, least per state\n",
              path.c_str(), m.nq, m.nv, m.nbody, m.ngeom, m.nu, mm->opt.timestep,
              integrators[std::min(3, std::max(0, mm->opt.integrator))], substeps, num_envs, num_steps, num_states,
              rounds);
  std::printf("  rltrain float %s: %.1f contacts, %.1f rows, %.2f iterations per substep; MuJoCo %s: %.1f rows, %.2f "
              "iterations\n",
              m.use_newton ? "Newton" : "PGS", ncon_sum / num_states, nefc_sum / num_states, niter_sum / num_states,
              solvers[std::min(2, std::max(0, mm->opt.solver))], mj_nefc / num_states, mj_niter / num_states);
  std::printf("  | stage | rltrain us | MuJoCo us | ratio MuJoCo/rltrain |\n  |---|---|---|---|\n");
  double tr = 0, tm = 0;
  for (int s = 0; s < kNumStages; ++s) {
    const double a = sr.t[s] * per, b = sm.t[s] * per;
    tr += a, tm += b;
    std::printf("  | %s | %.2f | %.2f | %s |\n", kStageName[s], a, b,
                a > 0.005 && b > 0.005 ? (std::to_string(b / a).substr(0, 5) + "x").c_str() : "-");
  }
  std::printf("  | **sum of stages** | **%.2f** | **%.2f** | **%.2fx** |\n", tr, tm, tm / tr);
  std::printf("  rltrain physics_substep untimed: %.2f us (sum of its timed stages %.2f); MuJoCo mj_step (its STEP "
              "timer) %.2f us\n",
              plain_sum * per, tr, step_sum * per);
  std::printf("  MuJoCo's lumped timers: POS_KINEMATICS %.2f, POS_INERTIA %.2f, VELOCITY %.2f us (split above in the "
              "ratio of the probe's calls)\n",
              lumps[0] * per, lumps[1] * per, lumps[2] * per);
  std::printf("  timed rltrain substep bit-identical to physics_substep: %s (%ld of %d states differ); digest of "
              "its results (qpos, qvel, qacc, qfrc_constraint) %016llx\n",
              differing == 0 ? "yes" : "NO", differing, num_states, digest);
  mj_deleteData(probe);
  mj_deleteData(d);
  mj_deleteModel(mm);
  return differing == 0 ? 0 : 1;
}
