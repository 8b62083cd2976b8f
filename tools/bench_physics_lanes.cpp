// bench_physics_lanes: the smooth stages of the robots' physics (sim/dynamics.h) one env at a time
// (T = float) against kLanes envs in SIMD lanes (T = LaneFloat, sim/physics_lanes.h), one thread,
// per stage and in all, on the same states; and the whole physics_step (contacts and the
// constraint solver included) for the share the smooth stages take of it (Amdahl). See
// docs/ARCHITECTURE.md "Physics in lanes".
//
//   bench_physics_lanes [--envs 1024] [--rounds 5] [--reps 20] [MODEL.xml ...]
//
// Without models: envs/assets/ant.xml, humanoid.xml, go1/ and g1/scene_mjx_feetonly_flat_terrain.xml.
// States: qpos0 with noise, then 100 substeps of physics_step under random controls (on the floor,
// in contact), the same for both runs. Each round times `reps` smooth steps of every env, scalar
// then lanes, from those states; the best round of each is printed (a shared machine). Totals are
// thread CPU time without per-stage counters; a stage's figure is that total split in the ratio of
// the time-stamp counter's ticks per stage (per env scalar, per lanes block in lanes; a call
// another process interrupted is left out). After the last round every env's block from the lanes
// is compared bit for bit with the scalar run's.
//
// The hybrid line: the cost of moving the smooth stages' fields (the row from qpos to qLD) of every
// env into lanes and back (gather_lanes, scatter_lanes), timed alone, added to the lanes' time.
//
// The solver in slots (sim/newton_lanes.h; models solved under MuJoCo's iterations budget whose
// rows fit slots): from the warmed-up states, one forward pass per env, then newton_solve (and the
// forces' J^T f) one env at a time against slot_newton_solve over kLanes envs at once, on the same
// rows, `reps` solves each, best of `rounds`; the rows are put into slots once per group, untimed
// (a batch stepped in lanes would make them there).
//
// The solver's side: over the warm-up substeps, for groups of kLanes consecutive envs, the mean
// over lanes of each env's constraint rows and solver iterations against the group's largest (the
// work a masked lane loop does is the group's largest in each lane): the lane efficiency of
// contacts and iterations run in lanes.
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "sim/dynamics.h"
#include "sim/lanes.h"
#include "sim/mjcf.h"
#include "sim/model_view.h"
#include "sim/newton_lanes.h"
#include "sim/physics_lanes.h"
#include "sim/physics_step.h"
#include "sim/slot_rows.h"
#include "sim/slot_step.h"

namespace {

using Clock = std::chrono::steady_clock;
using rlt::DataView;
using rlt::LaneFloat;
using rlt::ModelView;

// CPU time of this thread, s: the machine is shared, and a wall clock would count other processes' turns.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// A cheap counter for the per-stage split (only ratios are used): the time-stamp counter on x86.
inline unsigned long long ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<unsigned long long>(Clock::now().time_since_epoch().count());
#endif
}

// The smooth stages, in step_euler's order (sim/dynamics.h).
enum Stage {
  kKinematics,
  kComPosition,
  kComVelocity,
  kRne,
  kPassive,
  kMassMatrix,
  kFactor,
  kSolve,
  kIntegrate,
  kNumStages
};
const char* const kStageName[kNumStages] = {"kinematics",  "com_position",       "com_velocity",
                                            "rne (bias)",  "passive_forces",     "mass_matrix",
                                            "factor_mass", "solve_acceleration", "integrate"};

template <class T>
inline void run_stage(int s, const ModelView<T>& m, const DataView<T>& d) {
  const T dt = T(m.timestep);
  switch (s) {
    case kKinematics:
      rlt::kinematics(m, d);
      break;
    case kComPosition:
      rlt::com_position(m, d);
      break;
    case kComVelocity:
      rlt::com_velocity(m, d);
      break;
    case kRne:
      rlt::rne(m, d, static_cast<const T*>(nullptr), d.qfrc_bias);
      break;
    case kPassive:
      rlt::passive_forces(m, d);
      break;
    case kMassMatrix:
      rlt::mass_matrix(m, d);
      break;
    case kFactor:
      rlt::factor_mass(m, d, m.implicit_damping ? dt : T(0));
      break;
    case kSolve:
      rlt::solve_acceleration(m, d);
      break;
    default:
      for (int i = 0; i < m.nv; ++i) d.qvel[i] += dt * d.qacc[i];
      rlt::integrate_positions(m, d.qpos, d.qvel, dt);
      break;
  }
}

// A stage call the counter saw take longer than this was interrupted (another process's turn on a
// shared machine: milliseconds; the longest stage call here takes microseconds) and is left out.
constexpr double kInterruptedTicks = 2e5;

// Per stage: counter ticks per call, the least over rounds (each round's mean over its calls).
struct Timing {
  double total_s = 1e30;  // best round's thread CPU time, all stages, no per-stage counters
  double stage_ticks[kNumStages];
  Timing() { std::fill(stage_ticks, stage_ticks + kNumStages, 1e30); }
  double ticks_sum() const {
    double s = 0;
    for (double t : stage_ticks) s += t;
    return s;
  }
};

// reps smooth steps of `blocks` data blocks (envs alone, or lanes blocks), each block through every
// stage in turn: the thread CPU time; with `t`, each stage's ticks per call (its least over rounds).
template <class T>
double run_blocks(const ModelView<T>& m, std::vector<T>& data, int blocks, int block_size, int reps, Timing* t) {
  const bool per_stage = t != nullptr;
  double sum[kNumStages] = {}, calls[kNumStages] = {};
  const double t0 = thread_seconds();
  for (int r = 0; r < reps; ++r)
    for (int b = 0; b < blocks; ++b) {
      const DataView<T> d = rlt::data_view(m, data.data() + static_cast<size_t>(b) * block_size);
      if (!per_stage) {
        for (int s = 0; s < kNumStages; ++s) run_stage(s, m, d);
        continue;
      }
      for (int s = 0; s < kNumStages; ++s) {
        const unsigned long long a = ticks();
        run_stage(s, m, d);
        const double dt = static_cast<double>(ticks() - a);
        if (dt < kInterruptedTicks) sum[s] += dt, calls[s] += 1;
      }
    }
  if (per_stage)
    for (int s = 0; s < kNumStages; ++s) t->stage_ticks[s] = std::min(t->stage_ticks[s], sum[s] / calls[s]);
  return thread_seconds() - t0;
}

void usage() {
  std::fprintf(stderr,
               "usage: bench_physics_lanes [--envs N (a multiple of %d)] [--rounds R] [--reps K] [MODEL.xml ...]\n",
               rlt::kLanes);
  std::exit(2);
}

// The solver one env at a time (newton_solve) against the slots in lanes (slot_newton_solve): ns
// per env-solve each, from the forward pass's rows of every env of `states`.
void bench_solver(const ModelView<float>& m, const std::vector<float>& states, int num_envs, int rounds, int reps,
                  double full_ns) {
  const ModelView<LaneFloat> lm = rlt::lane_model_view(m);
  const int n = rlt::data_size(m), kL = rlt::kLanes, blocks = num_envs / kL;
  if (m.newton_ls_iterations < 0) {
    std::printf("  solver in slots: not measured (the model is solved to convergence, not under MuJoCo's budget)\n");
    return;
  }
  std::vector<float> rows = states;
  std::vector<float> ctrl(static_cast<size_t>(m.nu) + 1, 0.0f);
  const float hd = rlt::velocity_implicit(m.integrator) ? 0.0f
                   : m.implicit_damping                 ? static_cast<float>(m.timestep)
                                                        : 0.0f;
  std::vector<int> nr(static_cast<size_t>(num_envs));
  for (int e = 0; e < num_envs; ++e) {
    const DataView<float> d = rlt::data_view(m, rows.data() + static_cast<size_t>(e) * n);
    rlt::physics_forward(m, d, ctrl.data(), hd, true);
    nr[static_cast<size_t>(e)] = static_cast<int>(d.nefc[0]);
  }
  // the groups whose rows fit slots (a G1 with a hand on a thigh: a row on two branches, left out)
  std::vector<rlt::SlotRowsHost> slots;
  std::vector<int> groups;
  std::vector<LaneFloat> lanes;
  double slot_sum = 0, row_sum = 0;
  std::string why;
  for (int b = 0; b < blocks; ++b) {
    std::vector<DataView<float>> views;
    std::vector<const float*> ptrs;
    for (int l = 0; l < kL; ++l) {
      float* p = rows.data() + static_cast<size_t>(b * kL + l) * n;
      views.push_back(rlt::data_view(m, p)), ptrs.push_back(p);
    }
    rlt::SlotRowsHost group;
    if (!rlt::slot_rows_from_envs(m, views.data(), nr.data() + b * kL, &group, &why)) continue;
    for (int l = 0; l < kL; ++l) row_sum += nr[static_cast<size_t>(b * kL + l)];
    slot_sum += static_cast<double>(group.deep.size());
    slots.push_back(std::move(group)), groups.push_back(b);
    lanes.resize(lanes.size() + static_cast<size_t>(n));
    rlt::gather_lanes(lanes.data() + lanes.size() - static_cast<size_t>(n), ptrs.data(), n);
  }
  const int fit = static_cast<int>(groups.size());
  if (fit == 0) {
    std::printf("  solver in slots: not measured (%s, in every group)\n", why.c_str());
    return;
  }
  double scalar_s = 1e30, lanes_s = 1e30;
  std::vector<LaneFloat> scratch;
  for (int r = 0; r < rounds; ++r) {
    double t0 = thread_seconds();
    for (int k = 0; k < reps; ++k)
      for (int b : groups)
        for (int e = b * kL; e < (b + 1) * kL; ++e) {
          const DataView<float> d = rlt::data_view(m, rows.data() + static_cast<size_t>(e) * n);
          rlt::constraint_detail::newton_solve(m, d, nr[static_cast<size_t>(e)]);
          rlt::constraint_detail::newton_constraint_force(m, d, nr[static_cast<size_t>(e)]);
        }
    scalar_s = std::min(scalar_s, thread_seconds() - t0);
    t0 = thread_seconds();
    for (int k = 0; k < reps; ++k)
      for (int b = 0; b < fit; ++b) {
        const rlt::SlotRows<LaneFloat> v = slots[static_cast<size_t>(b)].view();
        const size_t need = static_cast<size_t>(rlt::slot_newton_scratch(m.nv, v.n));
        if (scratch.size() < need) scratch.resize(need);
        rlt::slot_newton_solve(lm, rlt::data_view(lm, lanes.data() + static_cast<size_t>(b) * n), v, scratch.data());
      }
    lanes_s = std::min(lanes_s, thread_seconds() - t0);
  }
  const double solves = static_cast<double>(fit) * kL * reps;
  const double sn = 1e9 * scalar_s / solves, ln = 1e9 * lanes_s / solves;
  std::printf(
      "  solver (newton_solve + J^T f) %.1f ns per env-solve, in slots and lanes %.1f ns: %.2fx; %.0f%% of a "
      "substep; rows per env %.1f, slots per group of %d %.1f (lane occupancy %.0f%%); %d of %d groups fit "
      "slots%s%s\n",
      sn, ln, sn / ln, 100.0 * sn / full_ns, row_sum / (fit * kL), kL, slot_sum / fit,
      100.0 * row_sum / (fit * kL) / (slot_sum / fit), fit, blocks, fit < blocks ? ": the others " : "",
      fit < blocks ? why.c_str() : "");

  // The rows: constraint_rows one env at a time against build_slot_rows over kLanes envs (from the
  // contact candidates of the forward passes, untimed), then rows and solve together.
  rlt::SlotLayout layout;
  if (!layout.build(m, &why)) {
    std::printf("  rows in slots: not measured (%s)\n", why.c_str());
    return;
  }
  std::vector<rlt::ContactSlotsHost> cands(static_cast<size_t>(blocks));
  std::vector<LaneFloat> blocks_lanes(static_cast<size_t>(blocks) * n);
  for (int b = 0; b < blocks; ++b) {
    std::vector<DataView<float>> views;
    std::vector<const float*> ptrs;
    for (int l = 0; l < kL; ++l) {
      float* p = rows.data() + static_cast<size_t>(b * kL + l) * n;
      views.push_back(rlt::data_view(m, p)), ptrs.push_back(p);
    }
    if (!rlt::contact_slots_from_envs(m, layout, views.data(), &cands[static_cast<size_t>(b)], &why)) {
      std::printf("  rows in slots: not measured (%s)\n", why.c_str());
      return;
    }
    rlt::gather_lanes(blocks_lanes.data() + static_cast<size_t>(b) * n, ptrs.data(), n);
  }
  const float h = static_cast<float>(m.timestep);
  rlt::SlotRowsBuffer<LaneFloat> buf(layout);
  scratch.assign(static_cast<size_t>(rlt::slot_newton_scratch(m.nv, layout.max_slots)), LaneFloat(0.0f));
  double rows_s = 1e30, lrows_s = 1e30, both_s = 1e30, lboth_s = 1e30, slots_sum = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int with_solve = 0; with_solve < 2; ++with_solve) {
      double t0 = thread_seconds();
      for (int k = 0; k < reps; ++k)
        for (int e = 0; e < num_envs; ++e) {
          const DataView<float> d = rlt::data_view(m, rows.data() + static_cast<size_t>(e) * n);
          const int nre = rlt::constraint_rows(m, d, h);
          if (!with_solve) continue;
          rlt::constraint_detail::newton_solve(m, d, nre);
          rlt::constraint_detail::newton_constraint_force(m, d, nre);
        }
      (with_solve ? both_s : rows_s) = std::min(with_solve ? both_s : rows_s, thread_seconds() - t0);
      t0 = thread_seconds();
      for (int k = 0; k < reps; ++k)
        for (int b = 0; b < blocks; ++b) {
          const DataView<LaneFloat> ld = rlt::data_view(lm, blocks_lanes.data() + static_cast<size_t>(b) * n);
          const int ns =
              rlt::build_slot_rows(m, lm, ld, layout, cands[static_cast<size_t>(b)].view(layout), h, buf.out());
          if (r == 0 && k == 0 && !with_solve) slots_sum += ns;
          if (with_solve) rlt::slot_newton_solve(lm, ld, buf.rows(ns), scratch.data());
        }
      (with_solve ? lboth_s : lrows_s) = std::min(with_solve ? lboth_s : lrows_s, thread_seconds() - t0);
    }
  }
  const double env_reps = static_cast<double>(blocks) * kL * reps;
  const double rn = 1e9 * rows_s / env_reps, lrn = 1e9 * lrows_s / env_reps;
  const double bn = 1e9 * both_s / env_reps, lbn = 1e9 * lboth_s / env_reps;
  std::printf(
      "  rows (constraint_rows) %.1f ns per env, in slots and lanes (build_slot_rows) %.1f ns: %.2fx; rows and "
      "solve %.1f -> %.1f ns: %.2fx (%.0f%% of a substep); %.1f slots per group of %d from the layout's %d\n",
      rn, lrn, rn / lrn, bn, lbn, bn / lbn, 100.0 * bn / full_ns, slots_sum / blocks, kL, layout.max_slots);
}

// The whole inner substep: physics_substep one env at a time against slot_substep over kLanes envs
// (and its float instance one env at a time), `reps` substeps from the same states, best of `rounds`.
void bench_substep(const ModelView<float>& m, const std::vector<float>& states, int num_envs, int rounds, int reps) {
  std::string why;
  rlt::SlotLayout layout;
  if (!layout.build(m, &why) || !rlt::slot_step_supported(m, &why)) {
    std::printf("  substep in slots: not measured (%s)\n", why.c_str());
    return;
  }
  const ModelView<LaneFloat> lm = rlt::lane_model_view(m);
  const int n = rlt::data_size(m), kL = rlt::kLanes, blocks = num_envs / kL;
  std::vector<float> ctrl(static_cast<size_t>(m.nu) + 1, 0.0f);
  const std::vector<LaneFloat> lctrl(static_cast<size_t>(m.nu) + 1, LaneFloat(0.0f));
  double scalar_s = 1e30, alone_s = 1e30, lanes_s = 1e30;
  rlt::SlotStepWork<float> fw(m, layout);
  rlt::SlotStepWork<LaneFloat> lw(m, layout);
  std::vector<LaneFloat> lanes(static_cast<size_t>(blocks) * n);
  std::vector<float> work;
  for (int r = 0; r < rounds; ++r) {
    work = states;
    double t0 = thread_seconds();
    for (int k = 0; k < reps; ++k)
      for (int e = 0; e < num_envs; ++e)
        rlt::physics_substep(m, rlt::data_view(m, work.data() + static_cast<size_t>(e) * n), ctrl.data(), false, false);
    scalar_s = std::min(scalar_s, thread_seconds() - t0);
    work = states;
    t0 = thread_seconds();
    for (int k = 0; k < reps; ++k)
      for (int e = 0; e < num_envs; ++e)
        rlt::slot_substep(m, m, rlt::data_view(m, work.data() + static_cast<size_t>(e) * n), ctrl.data(), layout, fw);
    alone_s = std::min(alone_s, thread_seconds() - t0);
    std::vector<const float*> ptrs(static_cast<size_t>(kL));
    for (int b = 0; b < blocks; ++b) {
      for (int l = 0; l < kL; ++l) ptrs[static_cast<size_t>(l)] = states.data() + static_cast<size_t>(b * kL + l) * n;
      rlt::gather_lanes(lanes.data() + static_cast<size_t>(b) * n, ptrs.data(), n);
    }
    t0 = thread_seconds();
    for (int k = 0; k < reps; ++k)
      for (int b = 0; b < blocks; ++b)
        rlt::slot_substep(m, lm, rlt::data_view(lm, lanes.data() + static_cast<size_t>(b) * n), lctrl.data(), layout,
                          lw);
    lanes_s = std::min(lanes_s, thread_seconds() - t0);
  }
  const double steps = static_cast<double>(blocks) * kL * reps;
  const double sn = 1e9 * scalar_s / steps, an = 1e9 * alone_s / steps, ln = 1e9 * lanes_s / steps;
  std::printf(
      "  inner substep: physics_substep %.1f ns per env, slot_substep one env at a time %.1f ns, in lanes %.1f ns: "
      "%.2fx physics_substep\n",
      sn, an, ln, sn / ln);
}

void bench_model(const std::string& path, int num_envs, int rounds, int reps) {
  const rlt::Model model = rlt::load_mjcf(path);
  const rlt::HostModel<float> host(model);
  const ModelView<float>& m = host.view();
  const ModelView<LaneFloat> lm = rlt::lane_model_view(m);
  const int n = rlt::data_size(m);
  const int kL = rlt::kLanes;

  // ---- states: qpos0 with noise, then physics_step under random controls -------------------------
  std::vector<float> states(static_cast<size_t>(num_envs) * n, 0.0f);
  std::vector<float> range(2 * static_cast<size_t>(model.nu));
  for (int u = 0; u < model.nu; ++u) {
    const bool limited = model.actuator_ctrllimited[static_cast<size_t>(u)] != 0;
    range[2 * u] = limited ? static_cast<float>(model.actuator_ctrlrange[2 * static_cast<size_t>(u)]) : -1.0f;
    range[2 * u + 1] = limited ? static_cast<float>(model.actuator_ctrlrange[2 * static_cast<size_t>(u) + 1]) : 1.0f;
  }
  std::vector<float> ctrl(static_cast<size_t>(model.nu) + 1, 0.0f);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> noise(-0.05f, 0.05f);
  const int warm_substeps = 100;
  // per substep and group of kLanes envs: sum over lanes and the group's largest of rows and iterations
  double rows_sum = 0, rows_max = 0, iter_sum = 0, iter_max = 0, work_sum = 0, work_max = 0;
  for (int e = 0; e < num_envs; ++e) {
    const DataView<float> d = rlt::data_view(m, states.data() + static_cast<size_t>(e) * n);
    rlt::reset_data(m, d);
    for (int i = 0; i < m.nq; ++i) d.qpos[i] += noise(rng);
  }
  double full_s = 0;
  std::vector<float> nefc(static_cast<size_t>(num_envs)), niter(static_cast<size_t>(num_envs));
  for (int s = 0; s < warm_substeps; ++s) {
    const double t0 = thread_seconds();
    for (int e = 0; e < num_envs; ++e) {
      const DataView<float> d = rlt::data_view(m, states.data() + static_cast<size_t>(e) * n);
      rlt::random_ctrl(range.data(), model.nu, 7u, static_cast<rlt::u32>(e), static_cast<rlt::u32>(s / 5), ctrl.data());
      rlt::physics_step(m, d, ctrl.data(), 1, nullptr);
      nefc[static_cast<size_t>(e)] = d.nefc[0], niter[static_cast<size_t>(e)] = d.solver_niter[0];
    }
    if (s >= warm_substeps / 2) full_s += thread_seconds() - t0;  // the second half: the robots have landed
    if (s < warm_substeps / 2) continue;
    for (int g = 0; g + kL <= num_envs; g += kL) {
      float rmax = 0, imax = 0, wmax = 0;
      for (int l = g; l < g + kL; ++l) {
        const float r = nefc[static_cast<size_t>(l)], it = niter[static_cast<size_t>(l)];
        rows_sum += r, iter_sum += it, work_sum += r * it;
        rmax = std::max(rmax, r), imax = std::max(imax, it), wmax = std::max(wmax, r * it);
      }
      rows_max += kL * rmax, iter_max += kL * imax, work_max += kL * wmax;
    }
  }
  const double full_ns = 1e9 * full_s / (static_cast<double>(num_envs) * (warm_substeps - warm_substeps / 2));

  // ---- the smooth stages, scalar and in lanes, from the same states -------------------------------
  const int blocks = num_envs / kL;
  std::vector<float> scalar;
  std::vector<LaneFloat> lanes(static_cast<size_t>(blocks) * n);
  auto load_lanes = [&] {
    std::vector<const float*> rows(static_cast<size_t>(kL));
    for (int b = 0; b < blocks; ++b) {
      for (int l = 0; l < kL; ++l) rows[static_cast<size_t>(l)] = states.data() + static_cast<size_t>(b * kL + l) * n;
      rlt::gather_lanes(lanes.data() + static_cast<size_t>(b) * n, rows.data(), n);
    }
  };
  Timing ts, tl;
  for (int r = 0; r < rounds; ++r) {
    scalar = states;
    ts.total_s = std::min(ts.total_s, run_blocks(m, scalar, num_envs, n, reps, nullptr));
    scalar = states;
    run_blocks(m, scalar, num_envs, n, reps, &ts);
    load_lanes();
    tl.total_s = std::min(tl.total_s, run_blocks(lm, lanes, blocks, n, reps, nullptr));
    load_lanes();
    run_blocks(lm, lanes, blocks, n, reps, &tl);
  }
  // A hybrid step (smooth stages in lanes, collision and solver per env in its row) moves the
  // smooth stages' inputs and outputs between the two layouts every substep: the row's prefix from
  // qpos to qLD (RLT_DATA_FIELDS' order), gathered into lanes and scattered back.
  const rlt::DataLayout layout = rlt::data_layout(m);
  const int moved = layout.qLD + m.nv * m.nv;
  double move_s = 1e30;
  {
    std::vector<float> rows_copy = states;
    std::vector<float*> rows(static_cast<size_t>(kL));
    for (int r = 0; r < rounds; ++r) {
      const double t0 = thread_seconds();
      for (int k = 0; k < reps; ++k)
        for (int b = 0; b < blocks; ++b) {
          for (int l = 0; l < kL; ++l)
            rows[static_cast<size_t>(l)] = rows_copy.data() + static_cast<size_t>(b * kL + l) * n;
          rlt::gather_lanes(lanes.data() + static_cast<size_t>(b) * n, rows.data(), moved);
          rlt::scatter_lanes(rows.data(), lanes.data() + static_cast<size_t>(b) * n, moved);
        }
      move_s = std::min(move_s, thread_seconds() - t0);
    }
  }
  load_lanes();
  run_blocks(lm, lanes, blocks, n, reps, nullptr);  // the lanes' last run again, after the moves

  // the last round's runs started from the same states: every lane must hold its env's bits
  int differing_envs = 0;
  {
    std::vector<float> from_lanes(scalar.size());
    std::vector<float*> rows(static_cast<size_t>(kL));
    for (int b = 0; b < blocks; ++b) {
      for (int l = 0; l < kL; ++l)
        rows[static_cast<size_t>(l)] = from_lanes.data() + static_cast<size_t>(b * kL + l) * n;
      rlt::scatter_lanes(rows.data(), lanes.data() + static_cast<size_t>(b) * n, n);
    }
    for (int e = 0; e < num_envs; ++e)
      differing_envs +=
          std::memcmp(scalar.data() + static_cast<size_t>(e) * n, from_lanes.data() + static_cast<size_t>(e) * n,
                      sizeof(float) * static_cast<size_t>(n)) != 0;
  }

  const double env_steps = static_cast<double>(num_envs) * reps;
  const double scalar_ns = 1e9 * ts.total_s / env_steps, lanes_ns = 1e9 * tl.total_s / env_steps;
  std::printf("\n%s: nq %d, nv %d, nbody %d, ngeom %d; %d envs, %d rounds of %d steps; %d floats per env\n",
              path.c_str(), m.nq, m.nv, m.nbody, m.ngeom, num_envs, rounds, reps, n);
  std::printf("  %-20s %12s %12s %8s %8s\n", "stage", "scalar ns", "lanes ns", "speedup", "share");
  for (int s = 0; s < kNumStages; ++s) {
    // the counter's ticks as ns: each run's share of its per-stage total, times the untimed total
    const double sn = scalar_ns * ts.stage_ticks[s] / ts.ticks_sum(),
                 ln = lanes_ns * tl.stage_ticks[s] / tl.ticks_sum();
    std::printf("  %-20s %12.1f %12.1f %7.2fx %7.1f%%\n", kStageName[s], sn, ln, sn / ln,
                100.0 * ts.stage_ticks[s] / ts.ticks_sum());
  }
  std::printf("  %-20s %12.1f %12.1f %7.2fx   (per env-substep; lanes bit-identical: %s, %d of %d envs differ)\n",
              "smooth, all", scalar_ns, lanes_ns, scalar_ns / lanes_ns, differing_envs == 0 ? "yes" : "NO",
              differing_envs, num_envs);
  const double share = scalar_ns / full_ns;
  const double whole = full_ns / (full_ns - scalar_ns + lanes_ns);
  const double move_ns = 1e9 * move_s / env_steps;
  const double hybrid = full_ns / (full_ns - scalar_ns + lanes_ns + move_ns);
  std::printf(
      "  physics_step (1 substep, contacts and solver): %.1f ns per env-substep; smooth share %.0f%%; "
      "with the smooth stages in lanes: %.2fx the whole step (Amdahl)\n",
      full_ns, 100.0 * share, whole);
  std::printf(
      "  hybrid (smooth in lanes, the rest per env): moving %d floats per env between the layouts, %.1f ns per "
      "env-substep: %.2fx the whole step\n",
      moved, move_ns, hybrid);
  std::printf(
      "  lane efficiency over groups of %d envs (mean / group max): constraint rows %.0f%%, solver iterations "
      "%.0f%%, rows x iterations %.0f%%; mean rows %.1f, mean iterations %.1f\n",
      kL, 100.0 * rows_sum / rows_max, 100.0 * iter_sum / iter_max, 100.0 * work_sum / work_max,
      rows_sum / (static_cast<double>(num_envs / kL * kL) * (warm_substeps - warm_substeps / 2)),
      iter_sum / (static_cast<double>(num_envs / kL * kL) * (warm_substeps - warm_substeps / 2)));
  bench_solver(m, states, num_envs, rounds, reps, full_ns);
  bench_substep(m, states, num_envs, rounds, reps);
}

}  // namespace

int main(int argc, char** argv) {
  int num_envs = 1024, rounds = 5, reps = 20;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> int {
      if (i + 1 >= argc) usage();
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1) usage();
      return static_cast<int>(v);
    };
    if (a == "--envs") num_envs = value();
    else if (a == "--rounds") rounds = value();
    else if (a == "--reps") reps = value();
    else if (!a.empty() && a[0] == '-') usage();
    else models.push_back(a);
  }
  if (num_envs % rlt::kLanes != 0) usage();
  if (models.empty()) {
    const std::string dir = std::string(RLT_SOURCE_DIR) + "/envs/assets/";
    models = {dir + "ant.xml", dir + "humanoid.xml", dir + "go1/scene_mjx_feetonly_flat_terrain.xml",
              dir + "g1/scene_mjx_feetonly_flat_terrain.xml"};
  }
  std::printf("bench_physics_lanes: %d lanes (LaneFloat, sim/lanes.h), one thread\n", rlt::kLanes);
  for (const std::string& path : models) {
    try {
      bench_model(path, num_envs, rounds, reps);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_physics_lanes: %s\n", e.what());
      return 2;
    }
  }
  return 0;
}
