// Rigid-body dynamics (sim/dynamics.h) against MuJoCo 2.2.2 (Debian's libmujoco-dev) on the same
// MJCF files (tests/data/mjcf/dyn_*.xml): kinematics, mass matrix, bias and passive forces (joint
// springs and damping) and accelerations at random states, and trajectories under MuJoCo's Euler
// integrator. Skipped, with the reason, in a build without MuJoCo.
//
// Our Model comes from MuJoCo's own compiled mjModel (model_from_mujoco), so these tests check the
// dynamics alone; where the MJCF compiler (sim/mjcf.h) is built, the same file is also loaded with
// it and checked the same way.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sim/dynamics.h"
#include "tests/sim/test_dynamics_util.h"

#include "tests/sim/test_mujoco.h"
#if defined(RLT_TEST_HAVE_MJCF) && RLT_TEST_HAVE_MJCF
#include "sim/mjcf.h"
#endif

namespace rlt {
namespace {

using test::Sim;

std::string mjcf_path(const std::string& name) { return std::string(RLT_TEST_DATA_DIR) + "/mjcf/" + name + ".xml"; }

// ||a - b|| / ||b||.
double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
}

#if RLT_TEST_MUJOCO

using MjModelPtr = std::unique_ptr<mjModel, decltype(&mj_deleteModel)>;
using MjDataPtr = std::unique_ptr<mjData, decltype(&mj_deleteData)>;

MjModelPtr load_mujoco(const std::string& path) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  if (!m) ADD_FAILURE() << "MuJoCo could not load " << path << ": " << error;
  return MjModelPtr(m, mj_deleteModel);
}

template <class S>
std::vector<double> to_vec(const S* p, int n) {
  return std::vector<double>(p, p + n);
}
std::vector<int> to_ivec(const int* p, int n) { return std::vector<int>(p, p + n); }

// Our Model from MuJoCo's compiled one: the fields the dynamics reads.
Model model_from_mujoco(const mjModel* mm) {
  Model m;
  m.nq = mm->nq, m.nv = mm->nv, m.nbody = mm->nbody, m.njnt = mm->njnt, m.ngeom = mm->ngeom, m.nsite = mm->nsite;
  m.timestep = mm->opt.timestep;
  for (int k = 0; k < 3; ++k) m.gravity[k] = mm->opt.gravity[k];
  const int nb = mm->nbody, nj = mm->njnt, nv = mm->nv;
  m.body_parentid = to_ivec(mm->body_parentid, nb);
  m.body_pos = to_vec(mm->body_pos, 3 * nb), m.body_quat = to_vec(mm->body_quat, 4 * nb);
  m.body_ipos = to_vec(mm->body_ipos, 3 * nb), m.body_iquat = to_vec(mm->body_iquat, 4 * nb);
  m.body_mass = to_vec(mm->body_mass, nb), m.body_inertia = to_vec(mm->body_inertia, 3 * nb);
  m.body_jntadr = to_ivec(mm->body_jntadr, nb), m.body_jntnum = to_ivec(mm->body_jntnum, nb);
  m.body_dofadr = to_ivec(mm->body_dofadr, nb), m.body_dofnum = to_ivec(mm->body_dofnum, nb);
  m.jnt_type = to_ivec(mm->jnt_type, nj), m.jnt_bodyid = to_ivec(mm->jnt_bodyid, nj);
  m.jnt_qposadr = to_ivec(mm->jnt_qposadr, nj), m.jnt_dofadr = to_ivec(mm->jnt_dofadr, nj);
  m.jnt_pos = to_vec(mm->jnt_pos, 3 * nj), m.jnt_axis = to_vec(mm->jnt_axis, 3 * nj);
  m.jnt_stiffness = to_vec(mm->jnt_stiffness, nj);
  m.dof_bodyid = to_ivec(mm->dof_bodyid, nv), m.dof_jntid = to_ivec(mm->dof_jntid, nv);
  m.dof_parentid = to_ivec(mm->dof_parentid, nv);
  m.dof_damping = to_vec(mm->dof_damping, nv), m.dof_armature = to_vec(mm->dof_armature, nv);
  m.geom_bodyid = to_ivec(mm->geom_bodyid, mm->ngeom);
  m.geom_pos = to_vec(mm->geom_pos, 3 * mm->ngeom), m.geom_quat = to_vec(mm->geom_quat, 4 * mm->ngeom);
  m.site_bodyid = to_ivec(mm->site_bodyid, mm->nsite);
  m.site_pos = to_vec(mm->site_pos, 3 * mm->nsite), m.site_quat = to_vec(mm->site_quat, 4 * mm->nsite);
  m.qpos0 = to_vec(mm->qpos0, mm->nq), m.qpos_spring = to_vec(mm->qpos_spring, mm->nq);
  return m;
}

// The models to check against MuJoCo's: converted from mjModel, and compiled by sim/mjcf.h where built.
std::vector<std::pair<std::string, Model>> our_models(const mjModel* mm, const std::string& path) {
  std::vector<std::pair<std::string, Model>> out;
  out.emplace_back("from mjModel", model_from_mujoco(mm));
#if defined(RLT_TEST_HAVE_MJCF) && RLT_TEST_HAVE_MJCF
  out.emplace_back("from sim/mjcf.h", load_mjcf(path));
#else
  (void)path;
#endif
  return out;
}

struct Errors {
  double kinematics = 0, mass = 0, bias = 0, passive = 0, acc = 0;
  double passive_abs = 0, acc_abs = 0;  // max |ours - MuJoCo's| over the entries
  void update(const Errors& e) {
    kinematics = std::max(kinematics, e.kinematics), mass = std::max(mass, e.mass);
    bias = std::max(bias, e.bias), passive = std::max(passive, e.passive), acc = std::max(acc, e.acc);
    passive_abs = std::max(passive_abs, e.passive_abs), acc_abs = std::max(acc_abs, e.acc_abs);
  }
};

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Our forward() at MuJoCo's current state against mj_forward's results.
template <class T>
Errors compare_forward(Sim<T>& s, const mjModel* mm, const mjData* md) {
  const int nv = mm->nv;
  s.set_state(to_vec(md->qpos, mm->nq), to_vec(md->qvel, nv));
  for (int i = 0; i < nv; ++i) s.d.qfrc_applied[i] = static_cast<T>(md->qfrc_applied[i]);
  forward(s.m(), s.d);
  Errors e;
  e.kinematics = std::max({rel_err(s.get(s.d.xpos, 3 * mm->nbody), to_vec(md->xpos, 3 * mm->nbody)),
                           rel_err(s.get(s.d.xquat, 4 * mm->nbody), to_vec(md->xquat, 4 * mm->nbody)),
                           rel_err(s.get(s.d.xipos, 3 * mm->nbody), to_vec(md->xipos, 3 * mm->nbody)),
                           rel_err(s.get(s.d.ximat, 9 * mm->nbody), to_vec(md->ximat, 9 * mm->nbody)),
                           rel_err(s.get(s.d.xanchor, 3 * mm->njnt), to_vec(md->xanchor, 3 * mm->njnt)),
                           rel_err(s.get(s.d.xaxis, 3 * mm->njnt), to_vec(md->xaxis, 3 * mm->njnt))});
  if (mm->ngeom)
    e.kinematics =
        std::max({e.kinematics, rel_err(s.get(s.d.geom_xpos, 3 * mm->ngeom), to_vec(md->geom_xpos, 3 * mm->ngeom)),
                  rel_err(s.get(s.d.geom_xmat, 9 * mm->ngeom), to_vec(md->geom_xmat, 9 * mm->ngeom))});
  if (mm->nsite)
    e.kinematics =
        std::max({e.kinematics, rel_err(s.get(s.d.site_xpos, 3 * mm->nsite), to_vec(md->site_xpos, 3 * mm->nsite)),
                  rel_err(s.get(s.d.site_xmat, 9 * mm->nsite), to_vec(md->site_xmat, 9 * mm->nsite))});
  std::vector<double> full(static_cast<size_t>(nv * nv));
  mj_fullM(mm, full.data(), md->qM);
  e.mass = rel_err(s.get(s.d.qM, nv * nv), full);
  e.bias = rel_err(s.get(s.d.qfrc_bias, nv), to_vec(md->qfrc_bias, nv));
  e.passive = rel_err(s.get(s.d.qfrc_passive, nv), to_vec(md->qfrc_passive, nv));
  e.acc = rel_err(s.get(s.d.qacc, nv), to_vec(md->qacc, nv));
  e.passive_abs = max_abs_diff(s.get(s.d.qfrc_passive, nv), to_vec(md->qfrc_passive, nv));
  e.acc_abs = max_abs_diff(s.get(s.d.qacc, nv), to_vec(md->qacc, nv));
  return e;
}

#endif  // RLT_TEST_MUJOCO

class PhysicsMujoco : public ::testing::TestWithParam<std::string> {};

// Kinematics, mass matrix, bias and passive forces and accelerations at random states (random
// qfrc_applied too).
TEST_P(PhysicsMujoco, ForwardAgreesAtRandomStates) {
#if !RLT_TEST_MUJOCO
  GTEST_SKIP() << "built without MuJoCo (libmujoco-dev not found at configure time)";
#else
  const std::string path = mjcf_path(GetParam());
  MjModelPtr mm = load_mujoco(path);
  ASSERT_TRUE(mm);
  MjDataPtr md(mj_makeData(mm.get()), mj_deleteData);
  for (const auto& [source, model] : our_models(mm.get(), path)) {
    Sim<double> sd(model);
    Sim<float> sf(model);
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> u(-1, 1);
    Errors worst_d, worst_f;
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> qpos, qvel;
      test::random_state(model, rng, qpos, qvel, 3.0);
      mj_resetData(mm.get(), md.get());
      for (int i = 0; i < mm->nq; ++i) md->qpos[i] = qpos[static_cast<size_t>(i)];
      for (int i = 0; i < mm->nv; ++i) md->qvel[i] = qvel[static_cast<size_t>(i)], md->qfrc_applied[i] = 2 * u(rng);
      mj_forward(mm.get(), md.get());
      ASSERT_EQ(md->nefc, 0) << "the test models have no contacts or limits";
      worst_d.update(compare_forward(sd, mm.get(), md.get()));
      worst_f.update(compare_forward(sf, mm.get(), md.get()));
    }
    std::printf(
        "%s (%s) vs MuJoCo, relative: double kin %.1e qM %.1e bias %.1e passive %.1e qacc %.1e | "
        "float kin %.1e qM %.1e bias %.1e passive %.1e qacc %.1e; max abs double: qfrc_passive %.1e qacc %.1e\n",
        GetParam().c_str(), source.c_str(), worst_d.kinematics, worst_d.mass, worst_d.bias, worst_d.passive,
        worst_d.acc, worst_f.kinematics, worst_f.mass, worst_f.bias, worst_f.passive, worst_f.acc, worst_d.passive_abs,
        worst_d.acc_abs);
    EXPECT_LT(worst_d.kinematics, 1e-9) << source;
    EXPECT_LT(worst_d.mass, 1e-9) << source;
    EXPECT_LT(worst_d.bias, 1e-9) << source;
    EXPECT_LT(worst_d.passive, 1e-9) << source;
    EXPECT_LT(worst_d.acc, 1e-9) << source;
    EXPECT_LT(worst_f.kinematics, 1e-4) << source;
    EXPECT_LT(worst_f.mass, 1e-4) << source;
    EXPECT_LT(worst_f.bias, 1e-4) << source;
    EXPECT_LT(worst_f.passive, 1e-4) << source;
    EXPECT_LT(worst_f.acc, 1e-4) << source;
  }
#endif
}

// 1000 steps of MuJoCo's Euler integrator (implicit joint damping) from the same state with the
// same constant applied forces: qpos and qvel agree at every step.
TEST_P(PhysicsMujoco, EulerTrajectoriesAgree) {
#if !RLT_TEST_MUJOCO
  GTEST_SKIP() << "built without MuJoCo (libmujoco-dev not found at configure time)";
#else
  const std::string path = mjcf_path(GetParam());
  MjModelPtr mm = load_mujoco(path);
  ASSERT_TRUE(mm);
  ASSERT_EQ(mm->opt.integrator, mjINT_EULER);
  MjDataPtr md(mj_makeData(mm.get()), mj_deleteData);
  for (const auto& [source, model] : our_models(mm.get(), path)) {
    Sim<double> sd(model);
    Sim<float> sf(model);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> qpos, qvel;
    test::random_state(model, rng, qpos, qvel, 2.0);
    mj_resetData(mm.get(), md.get());
    for (int i = 0; i < mm->nq; ++i) md->qpos[i] = qpos[static_cast<size_t>(i)];
    for (int i = 0; i < mm->nv; ++i) md->qvel[i] = qvel[static_cast<size_t>(i)], md->qfrc_applied[i] = 0.5 * u(rng);
    sd.set_state(qpos, qvel), sf.set_state(qpos, qvel);
    for (int i = 0; i < mm->nv; ++i) {
      sd.d.qfrc_applied[i] = md->qfrc_applied[i];
      sf.d.qfrc_applied[i] = static_cast<float>(md->qfrc_applied[i]);
    }
    double worst_d = 0, worst_f = 0, worst_abs_d = 0;
    for (int step = 1; step <= 1000; ++step) {
      mj_step(mm.get(), md.get());
      step_euler(sd.m(), sd.d);
      step_euler(sf.m(), sf.d);
      ASSERT_EQ(md->nefc, 0);
      const std::vector<double> ref_q = to_vec(md->qpos, mm->nq), ref_v = to_vec(md->qvel, mm->nv);
      worst_d =
          std::max({worst_d, rel_err(sd.get(sd.d.qpos, mm->nq), ref_q), rel_err(sd.get(sd.d.qvel, mm->nv), ref_v)});
      worst_f =
          std::max({worst_f, rel_err(sf.get(sf.d.qpos, mm->nq), ref_q), rel_err(sf.get(sf.d.qvel, mm->nv), ref_v)});
      worst_abs_d = std::max({worst_abs_d, max_abs_diff(sd.get(sd.d.qpos, mm->nq), ref_q),
                              max_abs_diff(sd.get(sd.d.qvel, mm->nv), ref_v)});
    }
    std::printf(
        "%s (%s) Euler trajectory vs MuJoCo, 1000 steps of %.0e s: worst relative error double %.1e, "
        "float %.1e; max abs qpos/qvel difference double %.1e\n",
        GetParam().c_str(), source.c_str(), mm->opt.timestep, worst_d, worst_f, worst_abs_d);
    EXPECT_LT(worst_d, 1e-3) << source;
    EXPECT_LT(worst_f, 1e-3) << source;  // these models are not chaotic enough to amplify float rounding past it
  }
#endif
}

INSTANTIATE_TEST_SUITE_P(Models, PhysicsMujoco,
                         ::testing::Values("dyn_chain", "dyn_slide_hinge", "dyn_free_tree", "dyn_ball_chain",
                                           "dyn_springs"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

}  // namespace
}  // namespace rlt
