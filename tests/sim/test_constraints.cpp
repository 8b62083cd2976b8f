// Soft constraints (sim/constraints.h): MuJoCo's law for contacts and joint limits.
//  * Against MuJoCo 2.2.2 (skipped, with the reason, without libmujoco-dev): the shipped robots
//    loaded by both from the same file, MuJoCo run with random controls under its Euler
//    integrator, and at states along the way one step of each from MuJoCo's state: the same
//    number of constraint rows, the same constraint forces (qfrc_constraint) and the same velocity
//    after the step.
//  * Physical properties that hold without MuJoCo: a box resting on the floor carries its weight
//    (cfrc_ext), a sliding box stops after v^2 / (2 mu g), a pendulum rests against its joint limit,
//    float agrees with double, and a model that asks for torsional or rolling friction is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sim/constraints.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/test_dynamics_util.h"

#include "tests/sim/test_mujoco.h"

namespace rlt {
namespace {

std::string asset(const std::string& name) { return std::string(RLT_SOURCE_DIR) + "/envs/assets/" + name + ".xml"; }

template <class T>
using Env = test::Sim<T>;

// A box (0.2 m cube, 8 kg) on the floor with friction mu, timestep h.
Model box_scene(double mu, double h, double z) {
  const std::string xml = "<mujoco><option timestep='" + std::to_string(h) +
                          "'/>"
                          "<worldbody><geom type='plane' size='5 5 0.1' friction='" +
                          std::to_string(mu) +
                          " 0.005 0.0001'/>"
                          "<body pos='0 0 " +
                          std::to_string(z) +
                          "'><freejoint/>"
                          "<geom type='box' size='0.1 0.1 0.1' mass='8' friction='" +
                          std::to_string(mu) + " 0.005 0.0001'/></body></worldbody></mujoco>";
  return parse_mjcf(xml, "box_scene.xml");
}

TEST(SoftConstraints, RestingBoxCarriesItsWeight) {
  Env<double> env(box_scene(1.0, 0.002, 0.1));
  for (int s = 0; s < 1000; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
  int contacts = 0;
  physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, &contacts);
  EXPECT_EQ(contacts, 4);                                         // the four bottom corners push
  EXPECT_NEAR(env.d.cfrc_ext[6 + 5], 8 * 9.81, 1e-6 * 8 * 9.81);  // body 1's force z: the weight
  EXPECT_NEAR(env.d.cfrc_ext[6 + 3], 0, 1e-9);
  EXPECT_NEAR(env.d.cfrc_ext[6 + 4], 0, 1e-9);
  // MuJoCo's soft contact lets it sink into its margin by a little: mm, not cm.
  EXPECT_GT(env.d.qpos[2], 0.1 - 0.002);
  EXPECT_LT(env.d.qpos[2], 0.1 + 1e-6);
  for (int i = 0; i < 6; ++i) EXPECT_LT(std::fabs(env.d.qvel[i]), 1e-6) << "dof " << i;
  EXPECT_EQ(static_cast<int>(env.d.nefc[0]), 16);  // 4 contacts x 4 pyramid edges
}

TEST(SoftConstraints, SlidingBoxStopsAfterCoulombDistance) {
  for (const double mu : {0.3, 0.8}) {
    Env<double> env(box_scene(mu, 0.002, 0.1));
    for (int s = 0; s < 300; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
    const double x0 = env.d.qpos[0], v0 = 2.0;
    env.d.qvel[0] = v0;
    for (int s = 0; s < 2000; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
    const double expected = v0 * v0 / (2 * mu * 9.81);
    EXPECT_NEAR(env.d.qpos[0] - x0, expected, 0.03 * expected) << "mu " << mu;
    EXPECT_LT(std::fabs(env.d.qvel[0]), 1e-3) << "mu " << mu;
    EXPECT_LT(std::fabs(env.d.qpos[1]), 1e-4) << "mu " << mu << ": the box slid sideways";
  }
}

// condim 3 with friction 0: MuJoCo keeps the pyramid with mu = 1e-5 (mjMINMU), so the box slides on
// almost freely and the contact still has its four edges.
TEST(SoftConstraints, FrictionlessPyramidKeepsItsEdges) {
  Env<double> env(box_scene(0.0, 0.002, 0.1));
  for (int s = 0; s < 300; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
  env.d.qvel[0] = 2.0;
  for (int s = 0; s < 500; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
  EXPECT_GT(env.d.qvel[0], 1.99);
  EXPECT_EQ(static_cast<int>(env.d.nefc[0]), 16);
}

TEST(SoftConstraints, DroppedBoxSettlesWithoutBouncing) {
  Env<double> env(box_scene(1.0, 0.005, 0.5));
  double top_after_contact = 0;
  bool touched = false;
  for (int s = 0; s < 600; ++s) {
    physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
    touched = touched || env.d.nefc[0] > 0;
    if (touched) top_after_contact = std::fmax(top_after_contact, env.d.qpos[2]);
    ASSERT_TRUE(std::isfinite(env.d.qpos[2]));
  }
  EXPECT_TRUE(touched);
  EXPECT_LT(top_after_contact, 0.1 + 0.01);  // critically damped (solref dampratio 1): no bounce
  EXPECT_NEAR(env.d.qpos[2], 0.1, 0.002);
}

TEST(SoftConstraints, PendulumRestsAgainstItsLimit) {
  const std::string xml =
      "<mujoco><option timestep='0.002'/>"
      "<worldbody><body><joint name='j' type='hinge' axis='0 1 0' limited='true' range='-30 30'/>"
      "<geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05' mass='1' contype='0' conaffinity='0'/>"
      "</body></worldbody></mujoco>";
  Env<double> env(parse_mjcf(xml, "limit_scene.xml"));
  for (int s = 0; s < 3000; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
  // Gravity swings the rod down (positive angle about y) onto the +30 degree limit, where it rests
  // a little beyond (the soft constraint's give) and still.
  const double hi = 30 * M_PI / 180;
  EXPECT_GT(env.d.qpos[0], hi);
  EXPECT_LT(env.d.qpos[0], hi + 0.01);
  EXPECT_LT(std::fabs(env.d.qvel[0]), 1e-6);
  EXPECT_EQ(static_cast<int>(env.d.nefc[0]), 1);
  // The limit's torque holds the rod's weight: m g (L/2) cos(q).
  EXPECT_NEAR(env.d.qfrc_constraint[0], -1 * 9.81 * 0.25 * std::cos(env.d.qpos[0]), 1e-3);
}

TEST(SoftConstraints, FloatFollowsDouble) {
  const Model model = load_mjcf(asset("ant"));
  Env<double> a(model);
  Env<float> b(model);
  for (int i = 0; i < model.nq; ++i)
    a.d.qpos[i] = model.key_qpos[i], b.d.qpos[i] = static_cast<float>(model.key_qpos[i]);
  std::vector<double> ca(static_cast<size_t>(model.nu));
  std::vector<float> cb(ca.size());
  for (int s = 0; s < 30; ++s) {
    for (int u = 0; u < model.nu; ++u) ca[u] = std::sin(0.3 * s + u), cb[u] = static_cast<float>(ca[u]);
    physics_step(a.m(), a.d, ca.data(), 5, nullptr);
    physics_step(b.m(), b.d, cb.data(), 5, nullptr);
  }
  // 0.3 s of an ant thrashing its legs: float stays within a centimetre of double. (Not further: the
  // ant lands hard at 0.37 s, and from there double itself parts with its own run by 0.1 m in x and
  // 0.6 m in z at 0.5 s when its start height is nudged by 1e-6 m, so float's rounding decides where
  // it lands: the Newton solver's factor updates, which change float's bits, moved it 0.2 m.)
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(b.d.qpos[k], a.d.qpos[k], 0.01) << "coordinate " << k;
  EXPECT_GT(a.d.nefc[0], 0);
}

// A ball (r 0.1 m, 1 kg) resting on the floor, spinning about the vertical at 10 rad/s and rolling
// at 1 m/s, with condim `condim` and the friction cone `cone`.
Model ball_scene(int condim, const std::string& cone) {
  const std::string xml = "<mujoco><option timestep='0.002' cone='" + cone +
                          "'/><worldbody><geom type='plane' size='5 5 0.1' friction='0.8 0.02 0.01' condim='" +
                          std::to_string(condim) +
                          "'/><body pos='0 0 0.1'><freejoint/><geom type='sphere' size='0.1' mass='1'/></body>"
                          "</worldbody></mujoco>";
  return parse_mjcf(xml, "ball_scene.xml");
}

// condim 4 adds torsional friction (about the normal), 6 rolling friction too, on both cones; condim
// 3 has neither, so one contact point neither stops a spin nor a roll.
TEST(SoftConstraints, TorsionalAndRollingFriction) {
  for (const std::string cone : {"pyramidal", "elliptic"}) {
    double spin[7] = {0}, roll[7] = {0}, torque_z[7] = {0};
    for (const int condim : {3, 4, 6}) {
      Env<double> env(ball_scene(condim, cone));
      for (int s = 0; s < 50; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
      env.d.qvel[0] = 1.0, env.d.qvel[4] = 10.0, env.d.qvel[5] = 10.0;  // rolling along x, spinning about z
      physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
      torque_z[condim] = env.d.cfrc_ext[6 + 2];  // contact torque on the ball about z (its centre is over p)
      for (int s = 0; s < 250; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
      spin[condim] = env.d.qvel[5], roll[condim] = env.d.qvel[0];
      EXPECT_EQ(static_cast<int>(env.d.nefc[0]), cone == "elliptic" ? condim : 2 * (condim - 1)) << cone << condim;
    }
    EXPECT_GT(spin[3], 9.9) << cone;  // no torsion
    EXPECT_NEAR(roll[3], 1.0, 1e-3) << cone;
    EXPECT_NEAR(torque_z[3], 0.0, 1e-9) << cone;
    // torsional friction (at most 0.02 m x 9.81 N; soft, so more a damper at these rates) slows the
    // spin of 0.004 kg m^2 (MuJoCo too: tests/data/mjcf/cone_*.xml)
    EXPECT_LT(std::fabs(spin[4]), 7.0) << cone;
    EXPECT_LT(torque_z[4], -0.1) << cone;  // against the spin, seen in cfrc_ext (contact_torque)
    EXPECT_NEAR(roll[4], 1.0, 1e-3) << cone;
    EXPECT_LT(std::fabs(spin[6]), 7.0) << cone;
    EXPECT_LT(roll[6], 0.95) << cone;  // rolling friction slows the roll
  }
}

// Elliptic cones: a sliding box stops after about the Coulomb distance (within 6%: the soft
// friction rows of the cone hold a little more than the pyramid's); float follows double.
TEST(SoftConstraints, EllipticConeSlidesCoulombDistance) {
  for (const double mu : {0.3, 0.8}) {
    Model model = box_scene(mu, 0.002, 0.1);
    model.cone = kConeElliptic;
    Env<double> env(model);
    Env<float> envf(model);
    for (int s = 0; s < 300; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
    EXPECT_EQ(static_cast<int>(env.d.nefc[0]), 12);  // 4 contacts x 3 rows
    const double x0 = env.d.qpos[0], v0 = 2.0;
    env.d.qvel[0] = v0;
    envf.set_state(env.get(env.d.qpos, env.nq()), env.get(env.d.qvel, env.nv()));
    for (int s = 0; s < 2000; ++s) {
      physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
      physics_step(envf.m(), envf.d, static_cast<const float*>(nullptr), 1, nullptr);
    }
    const double expected = v0 * v0 / (2 * mu * 9.81);
    EXPECT_NEAR(env.d.qpos[0] - x0, expected, 0.06 * expected) << "mu " << mu;
    EXPECT_LT(std::fabs(env.d.qvel[0]), 1e-3) << "mu " << mu;
    EXPECT_LT(std::fabs(env.d.qpos[1]), 1e-4) << "mu " << mu << ": the box slid sideways";
    EXPECT_NEAR(envf.d.qpos[0], env.d.qpos[0], 1e-3) << "mu " << mu << ": float";
  }
}

TEST(SoftConstraints, CondimIsChecked) {
  // A Model built in code (not from MJCF) is checked by HostModel: condim 1, 3, 4 or 6.
  Model model = box_scene(1.0, 0.002, 0.1);
  model.geom_condim[1] = 5;
  try {
    HostModel<double> host(model);
    FAIL() << "condim 5 was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("condim 5"), std::string::npos) << e.what();
  }
  model.geom_condim[1] = 6;
  EXPECT_NO_THROW(HostModel<double> host(model));
  // The old MJCF switch takes 1 (a no-op: soft constraints are the only law) and names the file
  // when given anything else.
  try {
    parse_mjcf("<mujoco><custom><numeric name='rltrain/soft_constraints' data='0'/></custom></mujoco>", "bad.xml");
    FAIL() << "rltrain/soft_constraints 0 was accepted";
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("soft_constraints"), std::string::npos) << e.what();
  }
}


// ---- the sparse Newton solver (constraint_detail::newton_solve) ----------------------------------

// Two boxes stacked on the floor (the upper one's contact with the lower couples the two free
// bodies' dof trees: kCrossBranch rows), and a two-link arm whose links are tied by a connect to a
// free ball (another cross-branch row); with `stack` false the lower box alone (chain rows only).
Model newton_scene(bool stack) {
  std::string xml =
      "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='5 5 0.1'/>"
      "<body pos='0 0 0.1'><freejoint/><geom type='box' size='0.1 0.1 0.1' mass='8'/></body>";
  if (stack) {
    xml +=
        "<body pos='0.03 0 0.3'><freejoint/><geom type='box' size='0.08 0.08 0.08' mass='3'/></body>"
        "<body name='arm' pos='1 0 0.5'><joint type='hinge' axis='0 1 0' range='-1 1' limited='true'/>"
        "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/>"
        "<body pos='0.3 0 0'><joint type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.3 0 0' "
        "size='0.03'/></body></body>"
        "<body name='ball' pos='1.6 0 0.5'><freejoint/><geom type='sphere' size='0.05' contype='0' "
        "conaffinity='0'/></body>";
  }
  xml += "</worldbody>";
  if (stack) xml += "<equality><connect body1='ball' body2='arm' anchor='0 0 0'/></equality>";
  return parse_mjcf(xml + "</mujoco>", "newton_scene.xml");
}

// H = M + J^T h J assembled the sparse way (qM's ancestor pairs; dense while a cross-branch row
// pushes) equals the plain dense sum over the rows, at the pieces of the last solve; the sparse way
// leaves the cross-branch rows out (H_tree: newton_low_rank_solve takes them).
void check_newton_hessian(bool stack) {
  using namespace constraint_detail;
  Env<double> env(newton_scene(stack));
  for (int s = 0; s < 200; ++s) physics_step(env.m(), env.d, static_cast<const double*>(nullptr), 1, nullptr);
  const ModelView<double>& m = env.m();
  const DataView<double>& d = env.d;
  const int nv = m.nv, nr = static_cast<int>(d.nefc[0]);
  ASSERT_GT(nr, 0);
  // the plain sum: qM + sum_r h_r J_r^T J_r (an elliptic block's h from row_forces; none here)
  std::vector<double> plain(static_cast<size_t>(nv * nv)), plain_tree(plain.size());  // (tree: no cross rows)
  for (int k = 0; k < nv * nv; ++k) plain[static_cast<size_t>(k)] = plain_tree[static_cast<size_t>(k)] = d.qM[k];
  int cross_active = 0, chain_rows = 0;
  for (int r = 0; r < nr; ++r) {
    const double* w = d.efc_newton + r * kNewtonStride;
    const double h = w[kNewtonH];
    if (w[kNewtonDeep] == kCrossBranch && h != 0) ++cross_active;
    if (w[kNewtonDeep] >= 0) ++chain_rows;
    for (int p = 0; p < nv; ++p)
      for (int q = 0; q < nv; ++q) {
        const double v = h * d.efc_J[r * nv + p] * d.efc_J[r * nv + q];
        plain[static_cast<size_t>(p * nv + q)] += v;
        if (w[kNewtonDeep] != kCrossBranch) plain_tree[static_cast<size_t>(p * nv + q)] += v;
      }
  }
  EXPECT_GT(chain_rows, 0);
  auto ancestor = [&](int i, int j) {  // j ancestor-or-self of i
    for (int k = i; k >= 0; k = m.dof_parentid[k])
      if (k == j) return true;
    return false;
  };
  double scale = 0;
  for (double v : plain) scale = std::fmax(scale, std::fabs(v));
  std::vector<double> H(static_cast<size_t>(nv * nv), 0.0);
  for (bool dense : {false, true}) {
    std::fill(H.begin(), H.end(), 0.0);
    newton_hessian(m, d, nr, dense, H.data());
    double worst = 0;
    const std::vector<double>& ref = dense ? plain : plain_tree;
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j <= i; ++j)
        if (dense || ancestor(i, j))
          worst = std::fmax(worst, std::fabs(H[static_cast<size_t>(i * nv + j)] - ref[static_cast<size_t>(i * nv + j)]));
    EXPECT_LT(worst, 1e-13 * scale) << (dense ? "dense" : "sparse") << " Hessian, stack " << stack;
  }
  // Off qM's pattern the plain sum is zero without cross-branch rows (the sparse Hessian is all
  // of it), and not with them (the fill-in the dense path is there for).
  double off = 0;
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j <= i; ++j)
      if (!ancestor(i, j)) off = std::fmax(off, std::fabs(plain[static_cast<size_t>(i * nv + j)]));
  if (stack) {
    EXPECT_GT(cross_active, 0) << "the stacked boxes' contact and the connect push: cross-branch rows";
    EXPECT_GT(off, 1e-6 * scale);
  } else {
    EXPECT_EQ(cross_active, 0);
    EXPECT_EQ(off, 0.0);
  }
}
TEST(SoftConstraintsNewton, SparseHessianEqualsDenseWithoutCrossBranchRows) { check_newton_hessian(false); }
TEST(SoftConstraintsNewton, SparseHessianEqualsDenseWithCrossBranchRows) { check_newton_hessian(true); }

// The envelope factorization of a cross-branch H (envelope_ltdl_factor, newton_solve's while a row
// that couples two branches pushes) solves H x = b as the dense Cholesky does, on random
// configurations: along a run of a scene, each row pushing or not at random with a random h (so
// the coupling set, the pattern and its fill change from state to state), H assembled over the
// rows' two paths (newton_hessian, dense) and compared with the plain sum qM + sum_r h_r J_r^T J_r;
// then x from both factorizations against each other. Also: a contact's support found along its
// bodies' chains (row_support with their last dofs) is the one a scan of every dof finds.
template <class T>
void check_envelope_factor(const Model& model, int steps, double tol, const char* name) {
  using namespace constraint_detail;
  Env<T> env(model);
  const ModelView<T>& m = env.m();
  const DataView<T>& d = env.d;
  const int nv = m.nv;
  ASSERT_TRUE(solves_by_newton(m)) << name;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> H(static_cast<size_t>(nv * nv)), L(H.size()), first(static_cast<size_t>(nv)), x(first.size()), y(first.size()),
      b(first.size());
  std::vector<double> plain(H.size());
  std::vector<T> scan(kNewtonStride);
  int compared = 0, cross_states = 0, two_path_rows = 0, fill_states = 0;
  double worst = 0, worst_h = 0, worst_dense = 0, worst_diff = 0;
  for (int s = 0; s < steps; ++s) {
    physics_step(m, d, static_cast<const T*>(nullptr), 1, nullptr);
    const int nr = static_cast<int>(d.nefc[0]);
    if (s % 7 != 6 || nr == 0) continue;
    // the supports: along the chains (newton_solve's, left in efc_newton) against a full scan
    for (int r = 0; r < nr; ++r) {
      const T* w = d.efc_newton + r * kNewtonStride;
      row_support(m, d.efc_J + r * nv, 1, -2, -2, scan.data());
      if (row_block(m, d, r, nr) > 1) continue;  // (an elliptic block's: their union)
      for (int k : {kNewtonDeep, kNewtonTop, kNewtonDeepA, kNewtonDeepB, kNewtonTopB})
        ASSERT_EQ(w[k], scan[static_cast<size_t>(k)]) << name << " row " << r << " field " << k;
      two_path_rows += w[kNewtonDeep] == T(kCrossBranch) && w[kNewtonDeepA] >= T(0);
    }
    for (int trial = 0; trial < 3; ++trial) {
      // random pieces: each row pushes (h > 0, from 1e-3 to 1e3 times 1 / R) or not
      bool cross = false;
      for (int r = 0; r < nr; ++r) {
        T* w = d.efc_newton + r * kNewtonStride;
        const bool push = u(rng) < 0.5;
        w[kNewtonState] = T(push ? kRowQuadratic : kRowFree);
        w[kNewtonH] = push ? static_cast<T>(std::pow(10.0, 2 * u(rng) - 1) / d.efc[r * kEfcStride + kEfcR]) : T(0);
        cross = cross || (push && w[kNewtonDeep] == T(kCrossBranch));
      }
      cross_states += cross;
      std::fill(H.begin(), H.end(), T(0));
      newton_hessian(m, d, nr, true, H.data());
      double scale = 0, err_h = 0;
      for (int k = 0; k < nv * nv; ++k) plain[static_cast<size_t>(k)] = static_cast<double>(d.qM[k]);
      for (int r = 0; r < nr; ++r) {
        const double h = static_cast<double>(d.efc_newton[r * kNewtonStride + kNewtonH]);
        if (h == 0) continue;
        for (int p = 0; p < nv; ++p)
          for (int q = 0; q <= p; ++q)
            plain[static_cast<size_t>(p * nv + q)] += h * static_cast<double>(d.efc_J[r * nv + p]) * static_cast<double>(d.efc_J[r * nv + q]);
      }
      for (int p = 0; p < nv; ++p)
        for (int q = 0; q <= p; ++q) scale = std::fmax(scale, std::fabs(plain[static_cast<size_t>(p * nv + q)]));
      for (int p = 0; p < nv; ++p)
        for (int q = 0; q <= p; ++q)
          err_h = std::fmax(err_h, std::fabs(static_cast<double>(H[static_cast<size_t>(p * nv + q)]) - plain[static_cast<size_t>(p * nv + q)]));
      worst_h = std::fmax(worst_h, err_h / scale);
      // x = H^-1 b both ways
      L = H;
      envelope_ltdl_factor(L.data(), nv, first.data());
      bool filled = false;  // the envelope reaches outside qM's trees: cross-tree couplings
      for (int i = 0; i < nv; ++i) filled = filled || static_cast<int>(first[static_cast<size_t>(i)]) < m.dof_treestart[i];
      fill_states += filled;
      for (int i = 0; i < nv; ++i) b[static_cast<size_t>(i)] = x[static_cast<size_t>(i)] = y[static_cast<size_t>(i)] = static_cast<T>(2 * u(rng) - 1);
      envelope_ltdl_solve(static_cast<const T*>(L.data()), nv, static_cast<const T*>(first.data()), x.data());
      small_cholesky(H.data(), nv);
      small_cholesky_solve(static_cast<const T*>(H.data()), y.data(), nv, false);
      // backward errors |H x - b| / (|H| |x|) against the plain H (both factorizations are backward
      // stable: ~eps whatever H's condition), and the two answers' difference
      auto residual = [&](const std::vector<T>& sol) {
        double res = 0, xs = 0;
        for (int p = 0; p < nv; ++p) {
          double hx = 0;
          for (int q = 0; q < nv; ++q)
            hx += plain[static_cast<size_t>(p >= q ? p * nv + q : q * nv + p)] * static_cast<double>(sol[static_cast<size_t>(q)]);
          res = std::fmax(res, std::fabs(hx - static_cast<double>(b[static_cast<size_t>(p)])));
          xs = std::fmax(xs, std::fabs(static_cast<double>(sol[static_cast<size_t>(p)])));
        }
        return res / (scale * xs);
      };
      worst = std::fmax(worst, residual(x)), worst_dense = std::fmax(worst_dense, residual(y));
      double xs = 0, diff = 0;
      for (int i = 0; i < nv; ++i) {
        xs = std::fmax(xs, std::fabs(static_cast<double>(y[static_cast<size_t>(i)])));
        diff = std::fmax(diff, std::fabs(static_cast<double>(x[static_cast<size_t>(i)] - y[static_cast<size_t>(i)])));
      }
      worst_diff = std::fmax(worst_diff, diff / xs);
      ++compared;
    }
  }
  EXPECT_GT(compared, steps / 10) << name;
  EXPECT_GT(cross_states, compared / 2) << name << ": states where a cross-branch row pushes";
  EXPECT_GT(fill_states, compared / 2) << name << ": states whose envelope couples trees";
  EXPECT_GT(two_path_rows, 0) << name;
  EXPECT_LT(worst_h, sizeof(T) == sizeof(float) ? 1e-6 : 1e-14) << name << ": H over the rows' paths against the plain sum";
  EXPECT_LT(worst, tol) << name << ": |H x - b| / (|H| |x|) with the envelope factors (dense Cholesky's " << worst_dense
                        << ")";
  std::printf("%s (%s): %d states (%d with cross-branch rows pushing, %d filled across trees), %d two-path rows; "
              "H %.2e; backward error envelope %.2e, dense %.2e; x apart %.2e\n",
              name, sizeof(T) == sizeof(float) ? "float" : "double", compared, cross_states, fill_states, two_path_rows,
              worst_h, worst, worst_dense, worst_diff);
}
Model box_pile() { return load_mjcf(std::string(RLT_SOURCE_DIR) + "/tests/data/mjcf/misc/box_stack8.xml"); }
TEST(SoftConstraintsNewton, EnvelopeFactorsSolveAsDenseBoxStack) {
  check_envelope_factor<double>(box_pile(), 300, 1e-14, "box_stack8");
  check_envelope_factor<float>(box_pile(), 300, 1e-5, "box_stack8");
}
TEST(SoftConstraintsNewton, EnvelopeFactorsSolveAsDenseArmConnect) {
  check_envelope_factor<double>(newton_scene(true), 300, 1e-14, "newton_scene");
  check_envelope_factor<float>(newton_scene(true), 300, 1e-5, "newton_scene");
}

// Newton's answer (float, m.use_newton set) is Gauss-Seidel's (float, converged) up to Gauss-Seidel's
// tolerance, and both are double Newton's: one substep from the same states along a random-control
// run of the model, qacc compared relative to the largest |qacc - qacc_smooth| of the double solve.
void check_newton_against_gauss_seidel(const std::string& path, int steps, double tol) {
  const Model model = load_mjcf(path);
  HostModel<float> host_f(model);
  ModelView<float> gs = host_f.view(), nt = host_f.view();
  gs.use_newton = 0, nt.use_newton = 1;
  nt = without_newton_budget(nt);  // (converged: not the G1 file's budget)
  std::vector<float> row_gs(static_cast<size_t>(data_size(gs))), row_nt(static_cast<size_t>(data_size(nt)));
  const DataView<float> dg = data_view(gs, row_gs.data()), dn = data_view(nt, row_nt.data());
  reset_data(gs, dg);
  Env<double> ref(model);
  if (model.nkey > 0)
    for (int i = 0; i < model.nq; ++i) dg.qpos[i] = static_cast<float>(model.key_qpos[static_cast<size_t>(i)]);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> ctrl(static_cast<size_t>(model.nu));
  std::vector<double> ctrl_d(ctrl.size());
  double worst_gs = 0, worst_nt = 0;
  int with_rows = 0, newton_iters = 0, sweeps = 0;
  for (int s = 0; s < steps; ++s) {
    for (size_t a = 0; a < ctrl.size(); ++a) ctrl[a] = u(rng), ctrl_d[a] = ctrl[a];
    physics_substep(gs, dg, ctrl.data());
    if (s % 10 != 9) continue;
    // the same state in the Newton row and the double reference, then one substep of each
    for (int i = 0; i < model.nq; ++i) dn.qpos[i] = dg.qpos[i], ref.d.qpos[i] = dg.qpos[i];
    for (int i = 0; i < model.nv; ++i) dn.qvel[i] = dg.qvel[i], ref.d.qvel[i] = dg.qvel[i];
    for (int i = 0; i < model.nu; ++i) dn.act[i] = dg.act[i], ref.d.act[i] = dg.act[i];
    std::vector<float> saved(row_gs);
    physics_forward(gs, dg, ctrl.data(), gs.implicit_damping ? gs.timestep : 0.0f);
    physics_forward(nt, dn, ctrl.data(), nt.implicit_damping ? nt.timestep : 0.0f);
    physics_forward(ref.m(), ref.d, ctrl_d.data(), ref.m().implicit_damping ? ref.m().timestep : 0.0);
    if (ref.d.nefc[0] > 0) ++with_rows;
    newton_iters += static_cast<int>(dn.solver_niter[0]), sweeps += static_cast<int>(dg.solver_niter[0]);
    double scale = 1e-6, eg = 0, en = 0;
    for (int i = 0; i < model.nv; ++i) scale = std::fmax(scale, std::fabs(ref.d.qacc[i] - ref.d.qacc_smooth[i]));
    for (int i = 0; i < model.nv; ++i) {
      eg = std::fmax(eg, std::fabs(dg.qacc[i] - ref.d.qacc[i]));
      en = std::fmax(en, std::fabs(dn.qacc[i] - ref.d.qacc[i]));
    }
    worst_gs = std::fmax(worst_gs, eg / scale), worst_nt = std::fmax(worst_nt, en / scale);
    row_gs = saved;  // (the forward pass changed no state; the run goes on from Gauss-Seidel's)
  }
  EXPECT_GT(with_rows, steps / 20) << path;
  EXPECT_LT(worst_gs, tol) << path << ": Gauss-Seidel (float) against Newton (double)";
  EXPECT_LT(worst_nt, tol) << path << ": Newton (float) against Newton (double)";
  std::printf("%s: qacc off double's, relative: Gauss-Seidel %.2e, Newton %.2e; %.1f sweeps, %.1f iterations\n",
              path.c_str(), worst_gs, worst_nt, sweeps / (steps / 10.0), newton_iters / (steps / 10.0));
}
TEST(SoftConstraintsNewton, AgreesWithGaussSeidelAnt) { check_newton_against_gauss_seidel(asset("ant"), 400, 1e-2); }
TEST(SoftConstraintsNewton, AgreesWithGaussSeidelHumanoid) {
  check_newton_against_gauss_seidel(asset("humanoid"), 400, 1e-2);
}
TEST(SoftConstraintsNewton, AgreesWithGaussSeidelG1) {
  check_newton_against_gauss_seidel(std::string(RLT_SOURCE_DIR) + "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml",
                                    200, 1e-2);
}

// Rank-one updates of H's tree factors (tree_ltdl_update) give the factors of the updated H: at
// states along a random-control run, H at the solve's final pieces is factored, a random third of
// its chain rows switch (a row that pushes stops, h -> 0, a downdate; one that does not starts,
// h -> 1 / R, an update), and the factors updated row by row solve H' x = b as a fresh factorization
// of H' does. Also from M's factors (qLD) with the pushing rows added, the solver's first H.
template <class T>
void check_incremental_factors(const std::string& path, int steps, double tol) {
  using namespace constraint_detail;
  const Model model = load_mjcf(path);
  Env<T> env(model);
  const ModelView<T>& m = env.m();
  const DataView<T>& d = env.d;
  if (model.nkey > 0)
    for (int i = 0; i < model.nq; ++i) d.qpos[i] = static_cast<T>(model.key_qpos[static_cast<size_t>(i)]);
  const int nv = m.nv;
  std::mt19937 rng(5);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<T> ctrl(static_cast<size_t>(m.nu)), inc(static_cast<size_t>(nv * nv)), fresh(inc.size());
  std::vector<T> w(static_cast<size_t>(nv)), b(w.size()), x_inc(w.size()), x_fresh(w.size());
  int compared = 0, downdates = 0, updates = 0, refused = 0;
  double worst = 0;
  for (int s = 0; s < steps; ++s) {
    for (auto& c : ctrl) c = u(rng);
    physics_substep(m, d, ctrl.data());
    const int nr = static_cast<int>(d.nefc[0]);
    if (s % 5 != 4 || nr == 0) continue;
    bool cross = false;
    for (int r = 0; r < nr; ++r) cross = cross || d.efc_newton[r * kNewtonStride + kNewtonDeep] == T(kCrossBranch);
    if (cross) continue;
    for (int from_mass = 0; from_mass < 2; ++from_mass) {
      // the factors before: H at the final pieces, or M's (qLD: every row's h taken as 0)
      std::vector<T> h0(static_cast<size_t>(nr)), h1(h0.size());
      for (int r = 0; r < nr; ++r) h0[static_cast<size_t>(r)] = from_mass ? T(0) : d.efc_newton[r * kNewtonStride + kNewtonH];
      for (int r = 0; r < nr; ++r) {
        const T on = T(1) / d.efc[r * kEfcStride + kEfcR];
        const T h = h0[static_cast<size_t>(r)];
        h1[static_cast<size_t>(r)] = from_mass ? d.efc_newton[r * kNewtonStride + kNewtonH] : (u(rng) < T(-0.33) ? (h != T(0) ? T(0) : on) : h);
      }
      auto factors_of = [&](const std::vector<T>& hs, std::vector<T>& out) {
        for (int r = 0; r < nr; ++r) d.efc_newton[r * kNewtonStride + kNewtonH] = hs[static_cast<size_t>(r)];
        newton_hessian(m, d, nr, false, out.data());
        tree_ltdl_factor(m, out.data());
      };
      std::vector<T> saved_h(static_cast<size_t>(nr));
      for (int r = 0; r < nr; ++r) saved_h[static_cast<size_t>(r)] = d.efc_newton[r * kNewtonStride + kNewtonH];
      if (from_mass) {
        factor_mass(m, d, T(0));
        for (int i = 0; i < nv; ++i)
          for (int j = i; j >= 0; j = m.dof_parentid[j]) inc[static_cast<size_t>(i * nv + j)] = d.qLD[i * nv + j];
      } else {
        factors_of(h0, inc);
      }
      bool ok = true;
      for (int r = 0; r < nr && ok; ++r) {
        const T dh = h1[static_cast<size_t>(r)] - h0[static_cast<size_t>(r)];
        const int deep = static_cast<int>(d.efc_newton[r * kNewtonStride + kNewtonDeep]);
        if (dh == T(0) || deep < 0) continue;
        for (int k = deep; k >= 0; k = m.dof_parentid[k]) w[static_cast<size_t>(k)] = d.efc_J[r * nv + k];
        ok = tree_ltdl_update(m, inc.data(), w.data(), deep, dh, sizeof(T) == sizeof(float) ? T(1e-3) : T(1e-10));
        (dh < T(0) ? downdates : updates) += 1;
      }
      factors_of(h1, fresh);
      for (int r = 0; r < nr; ++r) d.efc_newton[r * kNewtonStride + kNewtonH] = saved_h[static_cast<size_t>(r)];
      if (!ok) {  // (a downdate that cancels too much: the solver factors afresh instead)
        ++refused;
        continue;
      }
      for (int i = 0; i < nv; ++i) b[static_cast<size_t>(i)] = u(rng);
      x_inc = b, x_fresh = b;
      tree_ltdl_solve(m, static_cast<const T*>(inc.data()), x_inc.data());
      tree_ltdl_solve(m, static_cast<const T*>(fresh.data()), x_fresh.data());
      double scale = 0, err = 0;
      for (int i = 0; i < nv; ++i) {
        scale = std::fmax(scale, std::fabs(static_cast<double>(x_fresh[static_cast<size_t>(i)])));
        err = std::fmax(err, std::fabs(static_cast<double>(x_inc[static_cast<size_t>(i)] - x_fresh[static_cast<size_t>(i)])));
      }
      worst = std::fmax(worst, err / scale);
      ++compared;
    }
  }
  EXPECT_GT(compared, steps / 10) << path;
  EXPECT_GT(downdates, compared / 5) << path;
  EXPECT_GT(updates, compared / 2) << path;
  EXPECT_LE(refused, compared / 10) << path;
  EXPECT_LT(worst, tol) << path << ": H'^-1 b, incremental factors against fresh ones, relative to the largest entry";
  std::printf("%s (%s): %d states, %d downdates, %d updates, %d refused; worst relative difference %.2e\n",
              path.c_str(), sizeof(T) == sizeof(float) ? "float" : "double", compared, downdates, updates, refused, worst);
}
// (tolerances: a downdate may cancel all but 1e-10 (double) or 1e-3 (float) of a pivot
// (tree_ltdl_update's keep) and lose those digits; measured 1e-13 and 1.3e-4 at worst)
TEST(SoftConstraintsNewton, IncrementalFactorsEqualFreshOnesAnt) {
  check_incremental_factors<double>(asset("ant"), 400, 1e-11);
  check_incremental_factors<float>(asset("ant"), 400, 1e-3);
}
TEST(SoftConstraintsNewton, IncrementalFactorsEqualFreshOnesHumanoid) {
  check_incremental_factors<double>(asset("humanoid"), 400, 1e-11);
  check_incremental_factors<float>(asset("humanoid"), 400, 1e-3);
}
TEST(SoftConstraintsNewton, IncrementalFactorsEqualFreshOnesG1) {
  const std::string g1 = std::string(RLT_SOURCE_DIR) + "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml";
  check_incremental_factors<double>(g1, 200, 1e-11);
  check_incremental_factors<float>(g1, 200, 1e-3);
}

// The index of the model's keyframe `name`, -1 where it has none.
int keyframe_index(const Model& model, const std::string& name) {
  for (int k = 0; k < model.nkey; ++k)
    if (model.key_name[static_cast<size_t>(k)] == name) return k;
  return -1;
}

// A float row reset at keyframe `key`'s qpos.
void reset_at_keyframe(const Model& model, int key, const ModelView<float>& m, const DataView<float>& d) {
  reset_data(m, d);
  for (int i = 0; i < model.nq; ++i) d.qpos[i] = static_cast<float>(model.key_qpos[static_cast<size_t>(key) * model.nq + i]);
}

// Keyframe `key`'s ctrl plus noise x U(-1, 1) per actuator: the robot on its feet, pulled at random.
void noisy_keyframe_ctrl(const Model& model, int key, double noise, std::mt19937& rng, std::vector<float>& ctrl) {
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < model.nu; ++i)
    ctrl[static_cast<size_t>(i)] =
        static_cast<float>(model.key_ctrl[static_cast<size_t>(key) * model.nu + i] + noise * u(rng));
}

// |a - b| / |b| (two accelerations).
double relative_distance(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]), den += double(b[i]) * b[i];
  return std::sqrt(num / std::fmax(den, 1e-24));
}

// The solver's answer with rank-one updates of H's factors (newton_solve's default) is the one with
// H factored afresh at every iteration: from the same rows at states along a random-control run,
// qacc relative to the largest |qacc - qacc_smooth|.
// key >= 0: from that keyframe, its ctrl held plus noise x U(-1, 1) (a robot on its feet), else
// from the first keyframe (if any) under controls U(-1, 1). Also counts the states where a
// cross-branch row pushes (the low-rank path: newton_low_rank_solve).
template <class T>
void check_incremental_solve(const std::string& path, int steps, double tol, int key = -1, double noise = 0,
                             int* cross_states = nullptr) {
  using namespace constraint_detail;
  const Model model = load_mjcf(path);
  HostModel<T> host(model);
  // (solved to convergence: under a scene's iterations budget MuJoCo's line search stops where the
  // slope falls below its tolerance, so two directions a rounding apart can stop at points 1e-3 apart)
  const ModelView<T> m = without_newton_budget(host.view());
  std::vector<T> row(static_cast<size_t>(data_size(m))), row_other(row.size());
  struct {
    DataView<T> d;
  } env{data_view(m, row.data())}, other{data_view(m, row_other.data())};
  reset_data(m, env.d);
  const size_t k0 = static_cast<size_t>(key < 0 ? 0 : key);
  if (model.nkey > 0)
    for (int i = 0; i < model.nq; ++i) env.d.qpos[i] = static_cast<T>(model.key_qpos[k0 * model.nq + i]);
  ASSERT_TRUE(solves_by_newton(m));
  std::mt19937 rng(9);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<T> ctrl(static_cast<size_t>(m.nu));
  int compared = 0, differ = 0, iters_inc = 0, iters_fresh = 0, crossing = 0, cross_steps_differ = 0;
  double worst = 0;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < m.nu; ++i)
      ctrl[static_cast<size_t>(i)] =
          key < 0 ? u(rng) : static_cast<T>(model.key_ctrl[k0 * model.nu + i] + noise * u(rng));
    physics_substep(m, env.d, ctrl.data());
    const int nr = static_cast<int>(env.d.nefc[0]);
    if ((key < 0 && s % 5 != 4) || nr == 0) continue;
    // the rows of this state (physics_substep left them), M's factors in qLD, in both copies
    factor_mass(m, env.d, T(0));
    row_other = row;  // (the row and its workspace)
    const int it_inc = newton_solve(m, env.d, nr, true), it_fresh = newton_solve(m, other.d, nr, false);
    iters_inc += it_inc, iters_fresh += it_fresh;
    bool cross = false;
    for (int r = 0; r < nr; ++r) {
      const T* w = env.d.efc_newton + r * kNewtonStride;
      cross = cross || (w[kNewtonDeep] == T(kCrossBranch) && w[kNewtonState] == T(kRowQuadratic));
    }
    crossing += cross ? 1 : 0;
    // (a wrong direction still converges, the line search is exact, but in more steps: the same
    // directions take the same steps)
    cross_steps_differ += cross && it_inc != it_fresh ? 1 : 0;
    double scale = 1e-6, err = 0;
    for (int i = 0; i < m.nv; ++i) {
      scale = std::fmax(scale, std::fabs(static_cast<double>(other.d.qacc[i] - other.d.qacc_smooth[i])));
      err = std::fmax(err, std::fabs(static_cast<double>(env.d.qacc[i] - other.d.qacc[i])));
      differ += env.d.qacc[i] != other.d.qacc[i] ? 1 : 0;
    }
    worst = std::fmax(worst, err / scale);
    ++compared;
  }
  EXPECT_GT(compared, steps / 10) << path;
  EXPECT_GT(differ, 0) << path << ": the updates were never taken (the answers are bit-identical)";
  EXPECT_LT(worst, tol) << path << ": qacc, rank-one updates against fresh factorizations";
  std::printf("%s (%s): %d states (%d with a cross-branch row pushing), worst relative difference %.2e; %.2f / %.2f "
              "iterations per solve\n",
              path.c_str(), sizeof(T) == sizeof(float) ? "float" : "double", compared, crossing, worst,
              iters_inc / double(compared), iters_fresh / double(compared));
  EXPECT_LE(cross_steps_differ, crossing / 4) << path << ": line searches where a cross-branch row pushes";
  if (cross_states) *cross_states = crossing;
}
// (tolerances: both converge to rounding, measured 1.5e-14 in double and 1e-5 in float at worst)
TEST(SoftConstraintsNewton, IncrementalSolveAnswersAsFreshAnt) {
  check_incremental_solve<double>(asset("ant"), 400, 1e-11);
  check_incremental_solve<float>(asset("ant"), 400, 1e-4);
}
TEST(SoftConstraintsNewton, IncrementalSolveAnswersAsFreshHumanoid) {
  check_incremental_solve<double>(asset("humanoid"), 400, 1e-11);
  check_incremental_solve<float>(asset("humanoid"), 400, 1e-4);
}
TEST(SoftConstraintsNewton, IncrementalSolveAnswersAsFreshG1) {
  const std::string g1 = std::string(RLT_SOURCE_DIR) + "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml";
  check_incremental_solve<double>(g1, 200, 1e-11);
  check_incremental_solve<float>(g1, 200, 1e-4);
}
// The G1 on its feet (keyframe knees_bent, its ctrl held plus noise), where a hand meets a thigh:
// those cross-branch rows by Woodbury's identity on the tree factors (newton_low_rank_solve) against
// H's envelope factored afresh (tolerances: as above; measured 2.5e-14 in double, 2.0e-5 in float over
// 1500 substeps, 22 and 18 of them with a hand on a thigh)
TEST(SoftConstraintsNewton, LowRankCrossRowsAnswerAsEnvelopeG1) {
  const std::string g1 = std::string(RLT_SOURCE_DIR) + "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml";
  const Model model = load_mjcf(g1);
  const int key = keyframe_index(model, "knees_bent");
  ASSERT_GE(key, 0);
  int cross_d = 0, cross_f = 0;
  check_incremental_solve<double>(g1, 1500, 1e-11, key, 0.6, &cross_d);
  check_incremental_solve<float>(g1, 1500, 1e-4, key, 0.6, &cross_f);
  EXPECT_GE(cross_d, 10) << "too few states with a hand on a thigh to test the low-rank path";
  EXPECT_GE(cross_f, 10) << "too few states with a hand on a thigh to test the low-rank path";
}

// The float solver is Newton where the tree factorization of its Hessian is cheap (every shipped
// robot), Gauss-Seidel on a long chain (a 40-link snake: 10660 multiply-adds), and Newton again
// there when its rows need it (condim 6).
TEST(SoftConstraintsNewton, SolverFollowsTheFactorizationCost) {
  auto chain = [](int links, int condim) {
    std::string xml = "<mujoco><worldbody><geom type='plane' size='5 5 0.1' condim='" + std::to_string(condim) + "'/>";
    for (int k = 0; k < links; ++k)
      xml += std::string("<body pos='") + (k ? "0.1" : "0") + " 0 " + (k ? "0" : "0.2") +
             "'><joint type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.1 0 0' size='0.02'/>";
    for (int k = 0; k < links; ++k) xml += "</body>";
    return parse_mjcf(xml + "</worldbody></mujoco>", "chain.xml");
  };
  EXPECT_EQ(tree_factor_cost(chain(40, 3)), 10660);
  EXPECT_EQ(HostModel<float>(chain(40, 3)).view().use_newton, 0);
  EXPECT_EQ(HostModel<float>(chain(40, 6)).view().use_newton, 1);
  EXPECT_EQ(HostModel<float>(chain(20, 3)).view().use_newton, 1);  // 1330
  EXPECT_EQ(HostModel<float>(load_mjcf(asset("humanoid"))).view().use_newton, 1);
}

// ---- newton_solve's stopping rule (MuJoCo's: improvement, gradient, decrement; float: an exact step) --

// The primal cost newton_solve minimizes, at acceleration a: 1/2 (a - a0)^T M (a - a0) + the rows'
// row_cost at J a - aref, in double from the solver's rows.
template <class T>
double newton_cost(const ModelView<T>& m, const DataView<T>& d, int nr, const T* a) {
  using namespace constraint_detail;
  const int nv = m.nv;
  double c = 0;
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j)
      c += 0.5 * (double(a[i]) - double(d.qacc_smooth[i])) * double(d.qM[i * nv + j]) *
           (double(a[j]) - double(d.qacc_smooth[j]));
  for (int r = 0; r < nr;) {
    const int n = row_block(m, d, r, nr);
    T x[6];
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int i = 0; i < nv; ++i) s += double(d.efc_J[(r + j) * nv + i]) * double(a[i]);
      x[j] = static_cast<T>(s - double(d.efc[(r + j) * kEfcStride + kEfcAref]));
    }
    int state;
    c += double(row_cost(m, d, r, n, x, &state));
    r += n;
  }
  return c;
}

// States along a random-control run of a model, each with its rows and M's factors as
// soft_constraint_acceleration hands them to the solver; calls f(m, d, nr, restore) with d a scratch
// copy, which restore() copies afresh. The run and m: the model without its iterations budget (solves
// run to convergence from qacc_smooth: what the stopping tests measure).
template <class T, class F>
void for_newton_states(const Model& model, int steps, F&& f) {
  HostModel<T> host(model);
  const ModelView<T> m = without_newton_budget(host.view());
  std::vector<T> row(static_cast<size_t>(data_size(m))), scratch(row.size());
  const DataView<T> d = data_view(m, row.data()), ds = data_view(m, scratch.data());
  reset_data(m, d);
  if (model.nkey > 0)
    for (int i = 0; i < model.nq; ++i) d.qpos[i] = static_cast<T>(model.key_qpos[static_cast<size_t>(i)]);
  std::mt19937 rng(11);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<T> ctrl(static_cast<size_t>(m.nu));
  for (int s = 0; s < steps; ++s) {
    if (s % 10 == 0)
      for (auto& c : ctrl) c = u(rng);
    physics_substep(m, d, ctrl.data());
    const int nr = static_cast<int>(d.nefc[0]);
    if (s % 3 != 2 || nr == 0) continue;
    factor_mass(m, d, T(0));  // (the rows are this state's; the step left M + h D in qLD)
    for (int i = 0; i < m.nv; ++i) d.qLDiagSqrtInv[i] = T(1) / m_sqrt(d.qLD[i * m.nv + i]);
    scratch = row;
    f(m, ds, nr, [&] { scratch = row; });
  }
}

// The improvement each line search reports (MuJoCo's scaled cost decrease, the first of its stopping
// tests) is the cost's decrease between the iterates, computed here from the cost itself.
void check_newton_improvement(const std::string& path, const Model& model) {
  using namespace constraint_detail;
  NewtonTrace<double> tr{};
  int checked = 0, kept = 0;
  double worst = 0;
  for_newton_states<double>(model, 600, [&](ModelView<double> m, const DataView<double>& d, int nr, auto&&) {
    m.tolerance = 0;  // every pass traced until rounding stops it
    std::vector<double> q(static_cast<size_t>(NewtonTrace<double>::kPasses) * m.nv);
    tr.qacc = q.data();
    newton_solve(m, d, nr, true, &tr);
    double trace_m = 0;
    for (int i = 0; i < m.nv; ++i) trace_m += d.qM[i * m.nv + i];
    for (int p = 1; p < tr.passes; ++p) {
      const double before = newton_cost(m, d, nr, tr.qacc + (p - 1) * m.nv);
      const double after = newton_cost(m, d, nr, tr.qacc + p * m.nv);
      const double want = (before - after) / trace_m;
      // (the cost difference itself carries rounding of the cost's size)
      worst = std::fmax(worst, std::fabs(tr.improvement[p] - want) / (std::fabs(before) / trace_m + 1e-300));
      EXPECT_GT(tr.improvement[p], -1e-12 * std::fabs(before) / trace_m) << path << ": a line search raised the cost";
      kept += tr.exact[p];
      ++checked;
    }
  });
  EXPECT_GT(checked, 50) << path;
  EXPECT_GT(kept, 0) << path;
  EXPECT_LT(worst, 1e-10) << path << ": improvement against the cost's decrease, relative to the cost";
  std::printf("%s: %d line searches, improvement within %.1e of the cost's decrease (relative to the cost)\n",
              path.c_str(), checked, worst);
}
// Boxes and capsules tumbling onto the floor and each other with elliptic cones, condim 3 and 6
// (the cone's side: the one piece that is not quadratic), and a hinge with friction loss.
Model elliptic_scene() {
  std::string xml =
      "<mujoco><option timestep='0.002' cone='elliptic'/><worldbody><geom type='plane' size='5 5 0.1' "
      "friction='0.8 0.02 0.01'/>";
  for (int k = 0; k < 4; ++k) {
    const std::string pos = std::to_string(0.15 * k) + " " + std::to_string(0.05 * k) + " " + std::to_string(0.2 + 0.25 * k);
    xml += "<body pos='" + pos + "' euler='" + std::to_string(20 * k) + " 30 10'><freejoint/>" +
           (k % 2 ? "<geom type='capsule' fromto='-0.1 0 0 0.1 0 0' size='0.05' condim='6'/>"
                  : "<geom type='box' size='0.1 0.08 0.06' condim='3'/>") +
           "</body>";
  }
  xml += "<body pos='1 0 0.3'><joint type='hinge' axis='0 1 0' frictionloss='0.5'/>"
         "<geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.04'/></body>";
  return parse_mjcf(xml + "</worldbody></mujoco>", "elliptic_scene.xml");
}

TEST(SoftConstraintsNewton, ImprovementIsTheCostDecreaseAnt) { check_newton_improvement("ant", load_mjcf(asset("ant"))); }
TEST(SoftConstraintsNewton, ImprovementIsTheCostDecreaseHumanoid) {
  check_newton_improvement("humanoid", load_mjcf(asset("humanoid")));
}
TEST(SoftConstraintsNewton, ImprovementIsTheCostDecreaseElliptic) {
  check_newton_improvement("elliptic_scene", elliptic_scene());
}

// In float, at the model's tolerance, the solver stops where MuJoCo's test says (the last pass's
// scaled gradient or decrement below the tolerance, or the improvement in (0, tolerance)) or right
// after an exact Newton step, in fewer line searches than with tolerance 0, and its answer is that
// of tolerance 0 (run until rounding stops it) within `tol` relative to |qacc| (measured on the
// robots under random controls, tools/stage_times --newton-stops: at most 9e-5, the humanoids; the
// float answer run to rounding is itself up to 7e-5 from the double one). Double ignores the
// tolerance (the MuJoCo comparisons' path runs to rounding): its answers are tolerance 0's, bit for bit.
template <class T>
void check_newton_stops(const std::string& path, const Model& model, double tol) {
  using namespace constraint_detail;
  constexpr bool is_float = sizeof(T) == sizeof(float);
  NewtonTrace<T> tr{};
  long ls = 0, ls0 = 0, solves = 0, by_test = 0, exact_stops = 0;
  double worst = 0;
  for_newton_states<T>(model, 600, [&](const ModelView<T>& m, const DataView<T>& d, int nr, auto&& restore) {
    std::vector<T> q(static_cast<size_t>(NewtonTrace<T>::kPasses) * m.nv);
    tr.qacc = q.data();
    ASSERT_GT(m.tolerance, T(0));
    ls += newton_solve(m, d, nr, true, &tr);
    const int last = tr.passes - 1;
    const bool mj_test = (tr.gradient[last] >= T(0) && tr.gradient[last] < m.tolerance) ||
                         (tr.improvement[last] > T(0) && tr.improvement[last] < m.tolerance) ||
                         (tr.decrement[last] >= T(0) && tr.decrement[last] < m.tolerance);
    if (tr.stopped_by == kStopExact) {
      EXPECT_TRUE(tr.exact[last]) << path;
    }
    exact_stops += tr.stopped_by == kStopExact;
    by_test += tr.stopped_by == kStopExact || (mj_test && tr.stopped_by != kStopRounding);
    if (!is_float) {  // (g = 0 exactly: no row pushes at a0)
      EXPECT_TRUE(tr.stopped_by == kStopRounding || tr.stopped_by == kStopMaxIter ||
                  (tr.stopped_by == kStopGradient && tr.gradient[last] == T(0)))
          << path << ": double stopped by test " << tr.stopped_by;
    }
    std::vector<T> a(d.qacc, d.qacc + m.nv);
    restore();
    ModelView<T> m0 = m;
    m0.tolerance = T(0);
    ls0 += newton_solve(m0, d, nr, true);
    double num = 0, den = 0;
    for (int i = 0; i < m.nv; ++i) {
      num += (double(a[i]) - double(d.qacc[i])) * (double(a[i]) - double(d.qacc[i]));
      den += double(d.qacc[i]) * double(d.qacc[i]);
      if (!is_float) {
        EXPECT_EQ(a[i], d.qacc[i]) << path << ": double at the tolerance, dof " << i;
      }
    }
    worst = std::fmax(worst, std::sqrt(num / std::fmax(den, 1e-24)));
    ++solves;
  });
  EXPECT_GT(solves, 50) << path;
  if (is_float) {
    EXPECT_GT(by_test, solves * 9 / 10) << path << ": most solves end on the tolerance, not on rounding";
    EXPECT_GT(exact_stops, 0) << path;
    EXPECT_LT(ls, ls0) << path << ": the tolerance saves no line search";
    EXPECT_LT(worst, tol) << path << ": |qacc - qacc(tolerance 0)| / |qacc|";
  } else {
    EXPECT_EQ(ls, ls0) << path;
  }
  std::printf("%s (%s): %ld solves, %.2f line searches (tolerance 0: %.2f), %ld stopped by the tolerance's tests "
              "(%ld after an exact step), worst relative distance %.1e\n",
              path.c_str(), is_float ? "float" : "double", solves, ls / double(solves), ls0 / double(solves), by_test,
              exact_stops, worst);
}
TEST(SoftConstraintsNewton, StopsOnMuJoCosTestG1) {
  const std::string g1 = std::string(RLT_SOURCE_DIR) + "/envs/assets/g1/scene_mjx_feetonly_flat_terrain.xml";
  check_newton_stops<float>(g1, load_mjcf(g1), 2e-4);
  check_newton_stops<double>(g1, load_mjcf(g1), 0);
}
TEST(SoftConstraintsNewton, StopsOnMuJoCosTestHumanoid) {
  check_newton_stops<float>("humanoid", load_mjcf(asset("humanoid")), 2e-4);
  check_newton_stops<double>("humanoid", load_mjcf(asset("humanoid")), 0);
}
// (the Go1's float answer measured up to 6.9e-5 from tolerance 0's: tools/stage_times)
TEST(SoftConstraintsNewton, StopsOnMuJoCosTestElliptic) {
  check_newton_stops<float>("elliptic_scene", elliptic_scene(), 2e-4);
  check_newton_stops<double>("elliptic_scene", elliptic_scene(), 0);
}

// MuJoCo Playground's Go1 and G1 scenes stop MuJoCo's Newton after 1 and 3 iterations (MJCF option
// iterations), from its warm start. In float (the training path) newton_solve does the same: at most
// the budget's line searches, from the last substep's acceleration where that costs no more than
// qacc_smooth (MuJoCo's rule); double (the MuJoCo comparisons) runs to convergence from qacc_smooth.
// Checked on the robots on their feet (keyframe, its ctrl plus noise): the budget holds; the start is
// the cheaper of the two (the cost in double, from the solver's rows); a warm start at the converged
// answer stays there; one far away is not taken (the cold solve's bits); a forward pass alone leaves
// the warm start, a step replaces it. (How close this comes to MuJoCo's own answer at the file's
// settings, where the converged one is 25% away on the Go1: tools/stage_times --newton-stops,
// docs/ARCHITECTURE.md.)
TEST(SoftConstraintsNewton, IterationsBudgetFromTheWarmStart) {
  using namespace constraint_detail;
  const std::string dir = std::string(RLT_SOURCE_DIR) + "/envs/assets/";
  const struct {
    std::string path, key;
    int budget;
  } scenes[] = {{dir + "go1/scene_mjx_feetonly_flat_terrain.xml", "home", 1},
                {dir + "g1/scene_mjx_feetonly_flat_terrain.xml", "knees_bent", 3}};
  for (const auto& sc : scenes) {
    const Model model = load_mjcf(sc.path);
    EXPECT_EQ(model.iterations, sc.budget) << sc.path;
    EXPECT_TRUE(model.warmstart) << sc.path;
    HostModel<float> host(model);
    const ModelView<float>& m = host.view();
    ASSERT_EQ(m.newton_iterations, sc.budget) << sc.path;
    ASSERT_EQ(m.newton_warmstart, 1) << sc.path;
    EXPECT_EQ(HostModel<double>(model).view().newton_iterations, kNewtonMaxIter) << sc.path;
    EXPECT_EQ(HostModel<double>(model).view().newton_warmstart, 0) << sc.path;
    const ModelView<float> mc = without_newton_budget(m);  // converged
    ModelView<float> mcold = m;  // the budget from qacc_smooth
    mcold.newton_warmstart = 0;
    const int key = keyframe_index(model, sc.key);
    ASSERT_GE(key, 0) << sc.path;
    std::vector<float> row(static_cast<size_t>(data_size(m))), scratch(row.size());
    const DataView<float> d = data_view(m, row.data()), ds = data_view(m, scratch.data());
    reset_at_keyframe(model, key, m, d);
    std::mt19937 rng(3);
    std::vector<float> ctrl(static_cast<size_t>(m.nu));
    int solves = 0, took_warm = 0;
    double at_optimum = 0;
    for (int s = 0; s < 400; ++s) {
      noisy_keyframe_ctrl(model, key, 0.3, rng, ctrl);
      // (the warm start this substep's solve reads: the last one's answer; a forward pass leaves it)
      const std::vector<float> aw(d.qacc_warmstart, d.qacc_warmstart + m.nv);
      if (s == 200) {
        scratch = row;
        physics_forward(m, ds, ctrl.data(), 0.0f);
        for (int i = 0; i < m.nv; ++i) ASSERT_EQ(ds.qacc_warmstart[i], aw[static_cast<size_t>(i)]) << sc.path;
      }
      physics_substep(m, d, ctrl.data());
      const int nr = static_cast<int>(d.nefc[0]);
      EXPECT_LE(d.solver_niter[0], float(sc.budget)) << sc.path;
      if (s % 4 != 3 || nr == 0) continue;
      factor_mass(m, d, 0.0f);  // (the rows are this state's; the step left M + h D in qLD)
      for (int i = 0; i < m.nv; ++i) d.qLDiagSqrtInv[i] = 1.0f / m_sqrt(d.qLD[i * m.nv + i]);
      for (int i = 0; i < m.nv; ++i) d.qacc_warmstart[i] = aw[static_cast<size_t>(i)];
      auto solve = [&](const ModelView<float>& mv, const float* start, int* iters = nullptr) {
        scratch = row;
        if (start)
          for (int i = 0; i < m.nv; ++i) ds.qacc_warmstart[i] = start[i];
        const int it = newton_solve(mv, ds, nr);
        if (iters) *iters = it;
        return std::vector<float>(ds.qacc, ds.qacc + m.nv);
      };
      int it = 0;
      const std::vector<float> conv = solve(mc, nullptr), warm = solve(m, nullptr, &it), cold = solve(mcold, nullptr);
      EXPECT_LE(it, sc.budget) << sc.path;
      // MuJoCo's rule: the warm start where its cost is no more than qacc_smooth's (a tie within float's
      // rounding of the cost may go either way)
      scratch = row;
      const double c_warm = newton_cost(m, ds, nr, aw.data()), c_cold = newton_cost(m, ds, nr, ds.qacc_smooth);
      const bool took = warm != cold;
      took_warm += took;
      const double slack = 1e-5 * (std::fabs(c_warm) + std::fabs(c_cold));
      if (took) {
        EXPECT_LE(c_warm, c_cold + slack) << sc.path << " substep " << s;
      } else {
        EXPECT_GE(c_warm, c_cold - slack) << sc.path << " substep " << s;
      }
      at_optimum = std::fmax(at_optimum, relative_distance(solve(m, conv.data()), conv));
      // a warm start far from the answer costs more than qacc_smooth: the cold solve, bit for bit
      std::vector<float> start(static_cast<size_t>(m.nv));
      for (int i = 0; i < m.nv; ++i) start[static_cast<size_t>(i)] = d.qacc_smooth[i] + 1e3f * float(1 + i % 3);
      const std::vector<float> far = solve(m, start.data());
      for (int i = 0; i < m.nv; ++i) ASSERT_EQ(far[static_cast<size_t>(i)], cold[static_cast<size_t>(i)]) << sc.path << " dof " << i;
      ++solves;
    }
    ASSERT_GT(solves, 50) << sc.path;
    EXPECT_GT(took_warm, solves / 2) << sc.path << ": the last substep's answer is rarely the cheaper start";
    EXPECT_LT(at_optimum, 1e-4) << sc.path << ": from the converged answer the budget moved it";
    std::printf("%s: %d solves, budget %d, from the warm start %d times; from the converged answer at most %.1e\n",
                sc.path.c_str(), solves, sc.budget, took_warm, at_optimum);
  }
}

// Under the budget the line search is MuJoCo's, and where it stops is the answer: with many evaluations
// allowed it finds the exact search's minimum along the step (to float's rounding), with two (the
// start and the Newton point) the answer is the Newton point, no cheaper, and on substeps where the
// first step moves rows to other pieces measurably elsewhere; the Go1 scene's five lie between.
TEST(SoftConstraintsNewton, MuJoCosLineSearchUnderTheBudget) {
  using namespace constraint_detail;
  const Model model = load_mjcf(std::string(RLT_SOURCE_DIR) + "/envs/assets/go1/scene_mjx_feetonly_flat_terrain.xml");
  EXPECT_EQ(model.ls_iterations, 5);
  HostModel<float> host(model);
  const ModelView<float>& m = host.view();
  ASSERT_EQ(m.newton_iterations, 1);
  ASSERT_EQ(m.newton_ls_iterations, 5);
  EXPECT_FLOAT_EQ(m.newton_ls_tolerance, 1e-10f);  // (tolerance 1e-8 x ls_tolerance 0.01, MuJoCo's defaults)
  ModelView<float> exact = m, many = m, two = m;
  exact.newton_ls_iterations = -1, many.newton_ls_iterations = 50, two.newton_ls_iterations = 2;
  const int key = keyframe_index(model, "home");
  ASSERT_GE(key, 0);
  std::vector<float> row(static_cast<size_t>(data_size(m))), scratch(row.size());
  const DataView<float> d = data_view(m, row.data()), ds = data_view(m, scratch.data());
  reset_at_keyframe(model, key, m, d);
  std::mt19937 rng(5);
  std::vector<float> ctrl(static_cast<size_t>(m.nu));
  int solves = 0, apart = 0;
  double many_vs_exact = 0;
  for (int s = 0; s < 400; ++s) {
    noisy_keyframe_ctrl(model, key, 0.5, rng, ctrl);
    const std::vector<float> aw(d.qacc_warmstart, d.qacc_warmstart + m.nv);
    physics_substep(m, d, ctrl.data());
    const int nr = static_cast<int>(d.nefc[0]);
    if (s % 4 != 3 || nr == 0) continue;
    factor_mass(m, d, 0.0f);  // (this state's rows; the step left M + h D in qLD)
    for (int i = 0; i < m.nv; ++i) d.qLDiagSqrtInv[i] = 1.0f / m_sqrt(d.qLD[i * m.nv + i]);
    for (int i = 0; i < m.nv; ++i) d.qacc_warmstart[i] = aw[static_cast<size_t>(i)];
    auto solve = [&](const ModelView<float>& mv) {
      scratch = row;
      newton_solve(mv, ds, nr);
      return std::vector<float>(ds.qacc, ds.qacc + m.nv);
    };
    const std::vector<float> a_exact = solve(exact), a_many = solve(many), a_two = solve(two), a_file = solve(m);
    scratch = row;
    const double c_exact = newton_cost(m, ds, nr, a_exact.data()), c_two = newton_cost(m, ds, nr, a_two.data());
    const double c_file = newton_cost(m, ds, nr, a_file.data());
    const double slack = 1e-5 * (std::fabs(c_exact) + 1e-6);
    EXPECT_GE(c_two, c_exact - slack) << "substep " << s;   // (the exact search's point is the line's minimum)
    EXPECT_GE(c_file, c_exact - slack) << "substep " << s;
    many_vs_exact = std::fmax(many_vs_exact, relative_distance(a_many, a_exact));
    apart += relative_distance(a_two, a_exact) > 1e-4;
    ++solves;
  }
  ASSERT_GT(solves, 50);
  EXPECT_LT(many_vs_exact, 1e-4) << "50 evaluations do not find the line's minimum";
  EXPECT_GT(apart, 0) << "the Newton point was the line's minimum on every substep: nothing tested";
  std::printf("Go1: %d solves; 50 evaluations vs the exact search at most %.1e; the Newton point alone apart on %d\n",
              solves, many_vs_exact, apart);
}

// A budget of Newton iterations where the file runs MuJoCo's Newton (its default solver), below
// kNewtonMaxIter; PGS's and CG's iterations are not Newton's (those solve to convergence); flag
// warmstart="disable" keeps qacc_smooth as the start.
TEST(SoftConstraintsNewton, IterationsBudgetFromTheFile) {
  auto view = [](const std::string& option, const std::string& flag = "") {
    const std::string xml = "<mujoco><option " + option + ">" + flag +
                            "</option><worldbody><geom type='plane' size='1 1 0.1'/><body pos='0 0 0.2'><freejoint/>"
                            "<geom type='sphere' size='0.1'/></body></worldbody></mujoco>";
    return HostModel<float>(parse_mjcf(xml, "budget.xml")).view();
  };
  EXPECT_EQ(view("").newton_iterations, kNewtonMaxIter);
  EXPECT_EQ(view("").newton_warmstart, 0);
  EXPECT_EQ(view("iterations='100'").newton_iterations, kNewtonMaxIter);
  EXPECT_EQ(view("iterations='4'").newton_iterations, 4);
  EXPECT_EQ(view("iterations='4'").newton_warmstart, 1);
  EXPECT_EQ(view("iterations='0' solver='Newton'").newton_iterations, 0);
  EXPECT_EQ(view("iterations='4' solver='CG'").newton_iterations, kNewtonMaxIter);
  EXPECT_EQ(view("iterations='4' solver='PGS'").newton_iterations, kNewtonMaxIter);
  EXPECT_EQ(view("iterations='4'", "<flag warmstart='disable'/>").newton_iterations, 4);
  EXPECT_EQ(view("iterations='4'", "<flag warmstart='disable'/>").newton_warmstart, 0);
  EXPECT_THROW(view("iterations='-1'"), MjcfError);
  // MuJoCo's line search under the budget (its defaults: 50 evaluations, ls_tolerance 0.01), the exact
  // one where the solve converges
  EXPECT_EQ(view("").newton_ls_iterations, -1);
  EXPECT_EQ(view("ls_iterations='5'").newton_ls_iterations, -1);
  EXPECT_EQ(view("iterations='4'").newton_ls_iterations, 50);
  EXPECT_EQ(view("iterations='4' ls_iterations='0'").newton_ls_iterations, 0);
  EXPECT_FLOAT_EQ(view("iterations='4' tolerance='1e-6' ls_tolerance='0.1'").newton_ls_tolerance, 1e-7f);
  EXPECT_EQ(HostModel<double>(parse_mjcf("<mujoco><option iterations='4'/></mujoco>", "d.xml")).view().newton_ls_iterations, -1);
  EXPECT_THROW(view("ls_iterations='-1'"), MjcfError);
  EXPECT_THROW(view("ls_tolerance='-0.5'"), MjcfError);
}

// MJCF option tolerance is the solver's (MuJoCo's default 1e-8); a negative one is refused.
// A free box on the floor carrying a hinged arm (limits, joint damping, dof and tendon friction
// losses, a joint equality) with an accelerometer and a force sensor: every kind of single row.
Model scalar_rows_scene() {
  return parse_mjcf(R"(<mujoco><option timestep="0.005"/>
  <worldbody><geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="2"/><site name="s"/>
      <body pos="0.2 0 0"><joint name="a" type="hinge" axis="0 1 0" range="-20 20" limited="true" damping="0.5"
          frictionloss="0.3"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" mass="0.5"/>
        <body pos="0.3 0 0"><joint name="b" type="hinge" axis="0 1 0" range="-30 30" limited="true" damping="0.2"
            frictionloss="0.1"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" mass="0.3"/></body></body></body></worldbody>
  <tendon><fixed name="t" frictionloss="0.2"><joint joint="a" coef="1"/><joint joint="b" coef="-1"/></fixed></tendon>
  <equality><joint joint1="a" joint2="b" polycoef="0 0.5 0 0 0"/></equality>
  <actuator><motor joint="a" gear="5"/></actuator>
  <sensor><accelerometer site="s"/><force site="s"/></sensor></mujoco>)",
                    "scalar_rows.xml");
}

// The Newton line search's scalar_row_force (a single row's force from the constants kept once per
// solve) against row_forces, bit for bit, on every row of the scene along a run, at random points
// and at the pieces' edges (0, the friction loss's bounds +-R fl and their neighbors).
template <class T>
void check_scalar_row_force() {
  Env<T> env(scalar_rows_scene());
  const ModelView<T>& m = env.m();
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  T ctrl[1];
  int kinds[3] = {}, compared = 0;
  for (int step = 0; step < 300; ++step) {
    ctrl[0] = static_cast<T>(u(rng));
    physics_substep(m, env.d, ctrl);
    const int nr = static_cast<int>(env.d.nefc[0]);
    for (int r = 0; r < nr; ++r) {
      constraint_detail::scalar_row_constants(m, env.d, r);
      const T* w = env.d.efc_newton + r * kNewtonStride;
      const T R = env.d.efc[r * kEfcStride + kEfcR], fl = w[constraint_detail::kNewtonFl];
      ++kinds[static_cast<int>(w[constraint_detail::kNewtonKind])];
      std::vector<T> xs = {T(0), -T(0), R * fl, -R * fl, std::nextafter(R * fl, T(1)), std::nextafter(-R * fl, T(-1)),
                           std::nextafter(R * fl, T(0)), std::nextafter(-R * fl, T(0))};
      for (int k = 0; k < 8; ++k) xs.push_back(static_cast<T>(u(rng) * std::pow(10.0, 4 * u(rng))));
      for (const T x : xs) {
        T f0, h0, f1, h1;
        const int s0 = constraint_detail::row_forces(m, env.d, r, 1, &x, &f0, &h0);
        const int s1 = constraint_detail::scalar_row_force(w, R, x, &f1, &h1);
        ASSERT_EQ(s0, s1) << "row " << r << " x " << x;
        ASSERT_EQ(std::memcmp(&f0, &f1, sizeof(T)), 0) << "row " << r << " x " << x << ": " << f0 << " vs " << f1;
        ASSERT_EQ(std::memcmp(&h0, &h1, sizeof(T)), 0) << "row " << r << " x " << x << ": " << h0 << " vs " << h1;
        // MuJoCo's line search's cost change from each other point, the same within rounding
        for (const T x1 : xs) {
          const T dx = x1 - x;
          T f2, h2;
          const int s2 = constraint_detail::scalar_row_force(w, R, x + dx, &f2, &h2);
          const T a = constraint_detail::row_cost_change(m, env.d, r, 1, &x, &dx);
          const T b = constraint_detail::scalar_row_cost_change(w, R, x, dx, s1, s2);
          int st;
          const double mag = std::fabs(double(constraint_detail::row_cost(m, env.d, r, 1, &x, &st))) +
                             std::fabs(double(a)) + 1e-30;
          ASSERT_LE(std::fabs(double(a) - double(b)), 1e-5 * mag) << "row " << r << " x " << x << " dx " << dx;
        }
        ++compared;
      }
    }
  }
  EXPECT_GT(kinds[constraint_detail::kScalarInequality], 0);
  EXPECT_GT(kinds[constraint_detail::kScalarEquality], 0);
  EXPECT_GT(kinds[constraint_detail::kScalarFriction], 0);
  EXPECT_GT(compared, 1000);
}
TEST(SoftConstraintsNewton, ScalarRowForceIsRowForces) {
  check_scalar_row_force<float>();
  check_scalar_row_force<double>();
}

// Under Euler's implicit damping the acceleration sensors read the solver's qacc (MuJoCo's d->qacc,
// which its mj_Euler leaves undamped), kept in sensor_qacc before the damped solve replaces d.qacc:
// the forward pass with damping keeps bit for bit the qacc of the same pass without it, and the
// sensors read the same values from either.
TEST(SoftConstraints, AccelerationSensorsReadTheSolversAcceleration) {
  Env<double> env(scalar_rows_scene());
  const ModelView<double>& m = env.m();
  const int nv = m.nv;
  ASSERT_GT(m.nbody_acc, 0);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  double ctrl[1];
  int damped_differs = 0;
  for (int step = 0; step < 200; ++step) {
    ctrl[0] = u(rng);
    physics_substep(m, env.d, ctrl);
    const std::vector<double> qpos = env.get(env.d.qpos, m.nq), qvel = env.get(env.d.qvel, nv);
    physics_forward(m, env.d, ctrl, 0.0);
    const std::vector<double> qacc = env.get(env.d.qacc, nv);
    compute_sensors(m, env.d);
    const std::vector<double> sensors = env.get(env.d.sensordata, m.nsensordata);
    env.set_state(qpos, qvel);
    physics_forward(m, env.d, ctrl, m.timestep);
    for (int i = 0; i < nv; ++i) {
      ASSERT_EQ(env.d.sensor_qacc[i], qacc[static_cast<size_t>(i)]) << "step " << step << " dof " << i;
      damped_differs += env.d.qacc[i] != qacc[static_cast<size_t>(i)];
    }
    compute_sensors(m, env.d);
    for (int k = 0; k < m.nsensordata; ++k)
      ASSERT_EQ(env.d.sensordata[k], sensors[static_cast<size_t>(k)]) << "step " << step << " sensordata " << k;
    env.set_state(qpos, qvel);
  }
  EXPECT_GT(damped_differs, 0);  // (the damping acted: d.qacc is the damped one)
}

TEST(SoftConstraintsNewton, ToleranceFromMjcf) {
  EXPECT_EQ(parse_mjcf("<mujoco><worldbody/></mujoco>", "t.xml").tolerance, 1e-8);
  EXPECT_EQ(parse_mjcf("<mujoco><option tolerance='1e-10'/><worldbody/></mujoco>", "t.xml").tolerance, 1e-10);
  EXPECT_EQ(HostModel<float>(parse_mjcf("<mujoco><option tolerance='0'/><worldbody/></mujoco>", "t.xml")).view().tolerance,
            0.0f);
  try {
    parse_mjcf("<mujoco><option tolerance='-1'/><worldbody/></mujoco>", "bad.xml");
    FAIL() << "tolerance -1 was accepted";
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tolerance"), std::string::npos) << e.what();
  }
}

#if RLT_TEST_MUJOCO

// MuJoCo with random controls; every `every` steps, one step of ours from MuJoCo's state.
void compare_with_mujoco(const std::string& name) {
  const std::string path = asset(name);
  const Model model = load_mjcf(path);
  char error[1000] = "";
  mjModel* mm = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  ASSERT_NE(mm, nullptr) << error;
  mm->opt.tolerance = 1e-13;  // converge MuJoCo's Newton solver fully
  mm->opt.iterations = 1000;
  mjData* md = mj_makeData(mm);
  if (mm->nkey > 0) mj_resetDataKeyframe(mm, md, 0);
  Env<double> env(model);
  ASSERT_EQ(env.nq(), mm->nq);
  ASSERT_EQ(env.m().nu, mm->nu);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  int compared = 0, with_rows = 0;
  double worst_frc = 0, worst_vel = 0;
  for (int step = 0; step < 600; ++step) {
    if (step % 5 == 0)
      for (int a = 0; a < mm->nu; ++a) md->ctrl[a] = u(rng);
    const bool check = step % 10 == 9;
    if (check) {
      for (int i = 0; i < mm->nq; ++i) env.d.qpos[i] = md->qpos[i];
      for (int i = 0; i < mm->nv; ++i) env.d.qvel[i] = md->qvel[i];
    }
    mj_step(mm, md);
    if (!check) continue;
    physics_substep(env.m(), env.d, md->ctrl);
    ++compared;
    EXPECT_EQ(static_cast<int>(env.d.nefc[0]), md->nefc) << name << " step " << step;
    if (md->nefc > 0) ++with_rows;
    double frc_scale = 1e-9, frc_err = 0, vel_scale = 1e-9, vel_err = 0;
    for (int i = 0; i < mm->nv; ++i) {
      frc_scale = std::fmax(frc_scale, std::fabs(md->qfrc_constraint[i]));
      frc_err = std::fmax(frc_err, std::fabs(env.d.qfrc_constraint[i] - md->qfrc_constraint[i]));
      vel_scale = std::fmax(vel_scale, std::fabs(md->qvel[i]));
      vel_err = std::fmax(vel_err, std::fabs(env.d.qvel[i] - md->qvel[i]));
    }
    worst_frc = std::fmax(worst_frc, frc_err / frc_scale);
    worst_vel = std::fmax(worst_vel, vel_err / vel_scale);
  }
  EXPECT_GT(with_rows, compared / 2) << name << ": too few states with contacts or limits to compare";
  EXPECT_LT(worst_frc, 1e-6) << name << ": qfrc_constraint, largest error relative to the largest force";
  EXPECT_LT(worst_vel, 1e-6) << name << ": qvel after the step";
  mj_deleteData(md);
  mj_deleteModel(mm);
}

TEST(SoftConstraintsMujoco, AntAgreesStepByStep) { compare_with_mujoco("ant"); }
TEST(SoftConstraintsMujoco, HalfCheetahAgreesStepByStep) { compare_with_mujoco("halfcheetah"); }
TEST(SoftConstraintsMujoco, HopperAgreesStepByStep) { compare_with_mujoco("hopper"); }
TEST(SoftConstraintsMujoco, Walker2dAgreesStepByStep) { compare_with_mujoco("walker2d"); }

#else
TEST(SoftConstraintsMujoco, AgreesStepByStep) { GTEST_SKIP() << "built without libmujoco-dev"; }
#endif

}  // namespace
}  // namespace rlt
