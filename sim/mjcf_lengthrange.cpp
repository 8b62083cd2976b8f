// MJCF compiler, after mj_setConst: MuJoCo's actuator lengthrange (user_model.cc LengthRange,
// engine_setconst.c mj_setLengthRange), which a muscle needs to map its length onto its normalized
// range (sim/actuators.h muscle_gain). <compiler><lengthrange> chooses the actuators (mode: none,
// muscle, muscleuser, all; this subset has no user types, so muscleuser is muscle) and how:
//   useexisting  an actuator's own lengthrange="lo hi" (lo < hi) stays
//   uselimit     a limited joint's or tendon's range is copied (which one: MuJoCo 3.17's indexing, below)
//   otherwise    a simulation from qpos0, once per side: a force along the actuator's moment that
//                accelerates it by `accel` (at most `maxforce`), the velocity decaying with
//                `timeconst`, for `inttotal` seconds of `timestep`; the length's extreme over the last
//                `interval` seconds is the range's end on that side. The physics is this project's
//                own step in double (sim/physics_step.h) on a copy of the model with MuJoCo's
//                changes: no friction loss, contacts, springs, dampers, gravity or actuation.
#include <cmath>
#include <cstdio>

#include "sim/mjcf_compiler.h"
#include "sim/model_view.h"
#include "sim/physics_step.h"

namespace rlt::mjcf_detail {

void MjcfCompiler::read_lengthrange(const XMLElement* e) {
  no_children(e);
  Attrs a(m_file, e);
  CompilerOptions::LengthRange& o = m_opt.lengthrange;
  if (const int k = a.keyword("mode", {"none", "muscle", "muscleuser", "all"}); k >= 0) o.mode = k;
  a.boolean("useexisting", &o.useexisting);
  a.boolean("uselimit", &o.uselimit);
  a.number("accel", &o.accel);
  a.number("maxforce", &o.maxforce);
  a.number("timeconst", &o.timeconst);
  a.number("timestep", &o.timestep);
  a.number("inttotal", &o.inttotal);
  a.number("interval", &o.interval);
  a.number("tolrange", &o.tolrange);
  a.finish();
  o.line = line_of(e);
}

namespace {

// The model MuJoCo's LengthRange simulates: its disable flags frictionloss, contact, spring, damper,
// gravity and actuation set, the lengthrange timestep (when positive), and mj_step2's integrator
// (RK4 integrates as Euler there).
Model length_range_model(const Model& model, double timestep) {
  Model m = model;
  if (timestep > 0) m.timestep = timestep;
  if (m.integrator == kIntRK4) m.integrator = kIntEuler;
  m.gravity[0] = m.gravity[1] = m.gravity[2] = 0;
  m.actuation = false;
  m.refsafe = true;  // (its flags replace the model's: refsafe on)
  for (double& v : m.dof_frictionloss) v = 0;
  for (double& v : m.tendon_frictionloss) v = 0;
  for (double& v : m.jnt_stiffness) v = 0;
  for (double& v : m.tendon_stiffness) v = 0;
  for (double& v : m.dof_damping) v = 0;
  for (double& v : m.tendon_damping) v = 0;
  m.density = m.viscosity = 0;  // (MuJoCo skips passive forces whole without spring and damper)
  m.body_gravcomp.clear();
  for (int& v : m.geom_contype) v = 0;
  for (int& v : m.geom_conaffinity) v = 0;
  m.npair = 0;
#define RLT_CLEAR_PAIR(type, name, count, need, doc) \
  if (std::string(#name).rfind("pair_", 0) == 0) m.name.clear();
  RLT_MODEL_FIELDS(RLT_CLEAR_PAIR)
#undef RLT_CLEAR_PAIR
  return m;
}

}  // namespace

void MjcfCompiler::set_length_range() {
  const CompilerOptions::LengthRange& o = m_opt.lengthrange;
  auto fail_actuator = [&](int u, const std::string& what) { fail(m_actuator_elements[static_cast<size_t>(u)], what); };
  std::vector<int> simulate;
  for (int u = 0; u < m.nu; ++u) {
    const size_t us = static_cast<size_t>(u);
    const bool muscle = m.actuator_kind[us] == kActGeneral &&
                        (m.actuator_gaintype[us] == kGainMuscle || m.actuator_biastype[us] == kBiasMuscle);
    if (o.mode == 0 || (o.mode != 3 && !muscle)) continue;
    double* range = m.actuator_lengthrange.data() + 2 * u;
    if (o.useexisting && range[0] < range[1]) continue;
    // uselimit: MuJoCo 3.17 reads the transmission's id as actuator_trnid[u] of its (nu x 2) array,
    // that is the first id of actuator u / 2 for an even u and the second (the refsite, else -1) of
    // actuator (u - 1) / 2 for an odd one (measured: with muscles on joints a, b, c, the third takes a's
    // range, the second simulates); that id's joint or tendon, when limited, gives its range (an id
    // out of range, MuJoCo's read before the array, counts as not limited)
    const int trn = m.actuator_trntype[us];
    const int id = u % 2 == 0 ? m.actuator_trnid[us / 2] : m.actuator_trnid2.empty() ? -1 : m.actuator_trnid2[us / 2];
    // (the compiled jnt_limited and tendon_limited are 0 under <flag limit="disable">, MuJoCo's are not)
    if (o.uselimit && !m_flags.limit && (trn == kTrnJoint || trn == kTrnTendon))
      fail_actuator(u, "<compiler><lengthrange uselimit=\"true\"> with <flag limit=\"disable\"> is not supported");
    if (o.uselimit && trn == kTrnJoint && id >= 0 && id < m.njnt && !m.jnt_limited.empty() &&
        m.jnt_limited[static_cast<size_t>(id)]) {
      range[0] = m.jnt_range[2 * static_cast<size_t>(id)], range[1] = m.jnt_range[2 * static_cast<size_t>(id) + 1];
      continue;
    }
    if (o.uselimit && trn == kTrnTendon && id >= 0 && id < m.ntendon && m.tendon_limited[static_cast<size_t>(id)]) {
      range[0] = m.tendon_range[2 * static_cast<size_t>(id)],
      range[1] = m.tendon_range[2 * static_cast<size_t>(id) + 1];
      continue;
    }
    // MuJoCo's simulation replaces the model's disable flags by its own set: limits and equalities act
    // there even where the model disables them, which the compiled model here no longer knows
    bool any_range = false;  // (a limit the flag took away)
    for (double r : m.jnt_range) any_range = any_range || r != 0;
    for (double r : m.tendon_range) any_range = any_range || r != 0;
    if ((!m_flags.limit && any_range) || (!m_flags.equality && m.neq > 0))
      fail_actuator(u,
                    "the lengthrange simulation with <flag limit/equality=\"disable\"> is not supported "
                    "(give lengthrange=\"lo hi\" or <compiler><lengthrange uselimit=\"true\">)");
    simulate.push_back(u);
  }
  if (simulate.empty()) return;

  const HostModel<double> host(length_range_model(m, o.timestep));
  const ModelView<double>& view = host.view();
  std::vector<double> row(static_cast<size_t>(data_size(view)), 0.0), x(static_cast<size_t>(m.nv));
  const DataView<double> d = data_view(view, row.data());
  const double h = view.timestep, decay = std::exp(-h / std::max(0.01, o.timeconst));
  for (const int u : simulate) {
    double lmin[2] = {0, 0}, lmax[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      reset_data(view, d);
      bool updated = false;
      for (double time = 0; time < o.inttotal;) {
        // MuJoCo's evalAct: the velocity decays, then mj_step1 (positions, moments, M), a force
        // qfrc_applied = moment (2 side - 1) accel / |M^-1 moment| (its norm at most maxforce), then
        // mj_step2; the length is the one before the step
        for (int i = 0; i < m.nv; ++i) d.qvel[i] *= decay;
        position_stage(view, d);
        actuator_moment_row(view, d, u, x.data());
        const double len = actuator_length_of(view, d, u);
        for (int i = 0; i < m.nv; ++i) d.qfrc_applied[i] = x[static_cast<size_t>(i)];
        solve_mass(view, d, d.qfrc_applied);
        double nrm = 0;
        for (int i = 0; i < m.nv; ++i) nrm += d.qfrc_applied[i] * d.qfrc_applied[i];
        nrm = std::sqrt(nrm);
        const double scale = (2 * side - 1) * o.accel / std::max(kMinVal, nrm);
        for (int i = 0; i < m.nv; ++i) d.qfrc_applied[i] = x[static_cast<size_t>(i)] * scale;
        nrm = 0;
        for (int i = 0; i < m.nv; ++i) nrm += d.qfrc_applied[i] * d.qfrc_applied[i];
        nrm = std::sqrt(nrm);
        if (o.maxforce > 0 && nrm > o.maxforce)
          for (int i = 0; i < m.nv; ++i) d.qfrc_applied[i] *= o.maxforce / std::max(kMinVal, nrm);
        physics_substep(view, d, static_cast<const double*>(nullptr));
        time += h;
        bool finite = std::isfinite(len);
        for (int i = 0; i < m.nq && finite; ++i) finite = std::isfinite(d.qpos[i]);
        for (int i = 0; i < m.nv && finite; ++i) finite = std::isfinite(d.qvel[i]);
        if (!finite) fail_actuator(u, "unstable lengthrange simulation in actuator " + std::to_string(u));
        if (time > o.inttotal - o.interval) {
          if (len < lmin[side] || !updated) lmin[side] = len;
          if (len > lmax[side] || !updated) lmax[side] = len;
          updated = true;
        }
      }
    }
    double* range = m.actuator_lengthrange.data() + 2 * u;
    range[0] = lmin[0], range[1] = lmax[1];
    char buf[400];
    const double dif = range[1] - range[0];
    if (dif <= 0) {
      std::snprintf(buf, sizeof buf, "invalid lengthrange (%g, %g) in actuator %d", range[0], range[1], u);
      fail_actuator(u, buf);
    }
    for (int side = 0; side < 2; ++side) {
      if (lmax[side] - lmin[side] > o.tolrange * dif) {
        std::snprintf(buf, sizeof buf,
                      "lengthrange computation did not converge in actuator %d: eval (%g, %g), range (%g, %g) "
                      "(MuJoCo refuses it too; <compiler><lengthrange inttotal=...> longer, or lengthrange=\"lo hi\")",
                      u, lmin[side], lmax[side], range[0], range[1]);
        fail_actuator(u, buf);
      }
    }
  }
}

}  // namespace rlt::mjcf_detail
