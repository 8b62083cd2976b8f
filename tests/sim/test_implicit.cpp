// MuJoCo 3's implicit integrator (sim/physics_step.h implicit_acceleration): the bias forces' velocity
// derivative (sim/dynamics.h rne_velocity_derivative, MuJoCo's mjd_rne_vel) and the whole qDeriv
// against finite differences of the forces they differentiate, the LU solve of M - h qDeriv against
// the matrix it factors, and the stability the gyroscopic term buys. (Trajectories against MuJoCo
// itself: the mujoco_peer_implicit_* ctest tests on the same files.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/mjcf_test_util.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {
using test::Sim;
using testing_util::mjcf_data;

const char* const kFiles[] = {"implicit/spinning_free.xml", "implicit/chain_damping.xml",
                              "implicit/humanoid_tendon.xml"};

// One file at its "moving" keyframe (ctrl held).
struct Keyframe {
  std::vector<double> qpos, qvel, ctrl;
};
Keyframe moving_key(const Model& model) {
  int key = model.key_id("moving");
  if (key < 0) key = model.key_id("spinning");
  EXPECT_GE(key, 0);
  const size_t k = static_cast<size_t>(key), nq = static_cast<size_t>(model.nq), nv = static_cast<size_t>(model.nv),
               nu = static_cast<size_t>(model.nu);
  return {std::vector<double>(model.key_qpos.begin() + k * nq, model.key_qpos.begin() + (k + 1) * nq),
          std::vector<double>(model.key_qvel.begin() + k * nv, model.key_qvel.begin() + (k + 1) * nv),
          std::vector<double>(model.key_ctrl.begin() + k * nu, model.key_ctrl.begin() + (k + 1) * nu)};
}

// Forces at the sim's state with ctrl held: qfrc_bias alone, or qfrc_actuator + qfrc_passive - qfrc_bias.
std::vector<double> forces(Sim<double>& s, const std::vector<double>& ctrl, bool bias_only) {
  smooth_forces(s.m(), s.d);
  tendon_forward(s.m(), s.d);
  transmission_kinematics(s.m(), s.d);
  actuator_forces(s.m(), s.d, ctrl.empty() ? nullptr : ctrl.data());
  std::vector<double> f(static_cast<size_t>(s.nv()));
  for (int i = 0; i < s.nv(); ++i)
    f[static_cast<size_t>(i)] =
        bias_only ? s.d.qfrc_bias[i] : s.d.qfrc_actuator[i] + s.d.qfrc_passive[i] - s.d.qfrc_bias[i];
  return f;
}

// Central differences in qvel of forces(), column j in fd[i * nv + j].
std::vector<double> finite_differences(Sim<double>& s, const Keyframe& k, bool bias_only) {
  const int nv = s.nv();
  const double eps = 1e-6;
  std::vector<double> fd(static_cast<size_t>(nv * nv));
  for (int j = 0; j < nv; ++j) {
    std::vector<double> v = k.qvel;
    v[static_cast<size_t>(j)] = k.qvel[static_cast<size_t>(j)] + eps;
    s.set_state(k.qpos, v);
    const std::vector<double> fp = forces(s, k.ctrl, bias_only);
    v[static_cast<size_t>(j)] = k.qvel[static_cast<size_t>(j)] - eps;
    s.set_state(k.qpos, v);
    const std::vector<double> fm = forces(s, k.ctrl, bias_only);
    for (int i = 0; i < nv; ++i)
      fd[static_cast<size_t>(i * nv + j)] = (fp[static_cast<size_t>(i)] - fm[static_cast<size_t>(i)]) / (2 * eps);
  }
  s.set_state(k.qpos, k.qvel);
  forces(s, k.ctrl, bias_only);
  return fd;
}

// i and j on one ancestor chain (MuJoCo's D pattern).
bool same_chain(const ModelView<double>& m, int i, int j) {
  for (int a = i; a >= 0; a = m.dof_parentid[a])
    if (a == j) return true;
  for (int a = j; a >= 0; a = m.dof_parentid[a])
    if (a == i) return true;
  return false;
}

// d qfrc_bias / d qvel (rne_velocity_derivative, which subtracts it) equals the central difference of
// qfrc_bias in qvel on every entry: the bias is quadratic in qvel, so the difference is exact but for
// rounding (measured: worst 1.5e-8 on the spinning bodies, whose largest bias is ~400, 5.6e-8 of
// entries up to 33 on the humanoid), and entries off the
// shared-chain pattern are zero in both. The derivative is not symmetric (Coriolis).
TEST(Implicit, RneVelocityDerivativeMatchesFiniteDifferences) {
  for (const char* file : kFiles) {
    const Model model = load_mjcf(mjcf_data(file));
    Sim<double> s(model);
    const int nv = s.nv();
    const Keyframe k = moving_key(model);
    const std::vector<double> fd = finite_differences(s, k, true);
    std::vector<double> D(static_cast<size_t>(nv * nv), 0.0);
    std::vector<double> dvel(static_cast<size_t>(6 * model.nbody * nv)), dacc(dvel.size());
    rne_velocity_derivative(s.m(), s.d, D.data(), dvel.data(), dacc.data());
    double worst = 0, scale = 1, asymmetry = 0;
    int first = -1;
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) {
        const size_t ij = static_cast<size_t>(i * nv + j), ji = static_cast<size_t>(j * nv + i);
        const double err = std::abs(-D[ij] - fd[ij]);
        if (err > worst) worst = err, first = static_cast<int>(ij);
        scale = std::max(scale, std::abs(fd[ij]));
        asymmetry = std::max(asymmetry, std::abs(D[ij] - D[ji]));
        if (!same_chain(s.m(), i, j)) {
          EXPECT_EQ(D[ij], 0.0) << file << " (" << i << ", " << j << ")";
        }
      }
    EXPECT_LT(worst, 1e-7 * scale) << file << ": worst at (" << first / nv << ", " << first % nv << ")";
    EXPECT_GT(asymmetry, 1e-2 * scale) << file << ": the Coriolis terms are not symmetric";
  }
}

// implicit's qDeriv (actuator, passive and bias terms) equals the central difference of
// qfrc_actuator + qfrc_passive - qfrc_bias on the shared-chain pattern and is zero off it (where the
// humanoid's knee tendon couples two legs: MuJoCo drops that, its fd entry is 5). MuJoCo 3.17's own
// qDeriv after mj_step on the same keyframes agrees with the same differences to 5e-8 (measured).
TEST(Implicit, VelocityDerivativeMatchesFiniteDifferences) {
  for (const char* file : kFiles) {
    const Model model = load_mjcf(mjcf_data(file));
    Sim<double> s(model);
    const int nv = s.nv();
    const Keyframe k = moving_key(model);
    const std::vector<double> fd = finite_differences(s, k, false);
    implicit_velocity_derivative(s.m(), s.d, k.ctrl.empty() ? nullptr : k.ctrl.data());
    const std::vector<double> D = s.get(s.d.qDeriv, nv * nv);
    double worst = 0, scale = 1;
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) {
        const size_t ij = static_cast<size_t>(i * nv + j);
        if (!same_chain(s.m(), i, j)) {
          EXPECT_EQ(D[ij], 0.0) << file << " (" << i << ", " << j << ")";
          continue;
        }
        worst = std::max(worst, std::abs(D[ij] - fd[ij]));
        scale = std::max(scale, std::abs(fd[ij]));
      }
    EXPECT_LT(worst, 1e-7 * scale) << file;
  }
}

// factor_lu and solve_lu: x solves A x = f for A = M (kept pattern) - h qDeriv, the matrix
// implicit_acceleration builds (rebuilt densely here from qM and qDeriv), to rounding.
TEST(Implicit, LuSolvesTheImplicitMatrix) {
  for (const char* file : kFiles) {
    const Model model = load_mjcf(mjcf_data(file));
    Sim<double> s(model);
    const int nv = s.nv();
    const Keyframe k = moving_key(model);
    s.set_state(k.qpos, k.qvel);
    physics_forward(s.m(), s.d, k.ctrl.empty() ? nullptr : k.ctrl.data(), 0.0);
    implicit_acceleration(s.m(), s.d, k.ctrl.empty() ? nullptr : k.ctrl.data());
    const double h = s.m().timestep;
    std::vector<double> A(static_cast<size_t>(nv * nv), 0.0);
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) {
        if (!same_chain(s.m(), i, j)) continue;
        const int lo = std::max(i, j), hi = std::min(i, j);  // qM keeps (descendant, ancestor)
        const double mij = lo == hi || !s.m().dof_simple[lo] ? s.d.qM[lo * nv + hi] : 0.0;
        A[static_cast<size_t>(i * nv + j)] = mij - h * s.d.qDeriv[i * nv + j];
      }
    double worst = 0, scale = 1;
    for (int i = 0; i < nv; ++i) {
      const double f = s.d.qfrc_passive[i] - s.d.qfrc_bias[i] + s.d.qfrc_applied[i] + s.d.qfrc_actuator[i] +
                       s.d.qfrc_constraint[i];
      double ax = 0;
      for (int j = 0; j < nv; ++j) ax += A[static_cast<size_t>(i * nv + j)] * s.d.qacc[j];
      worst = std::max(worst, std::abs(ax - f));
      scale = std::max(scale, std::abs(f));
    }
    EXPECT_LT(worst, 1e-12 * scale) << file;  // measured: at most 1.8e-13 of forces up to 412
  }
}

// The thin box of test_implicitfast.cpp tumbling about its intermediate axis (20 rad/s, h = 0.01, no
// gravity): explicit Euler blows up; implicit, with the gyroscopic derivative in its LU (no separate
// free-body solve), never gains kinetic energy, and damps the tumble as MuJoCo 3.17 does on the same
// model: 6.0268507 J at the start, at most 6.0268459 J, 1.481738829484 J after 500 steps (measured;
// ours to 1e-12 of it in double).
TEST(Implicit, GyroscopicDerivativeKeepsTumblingBounded) {
  const std::string xml =
      "<mujoco><option timestep='0.01' gravity='0 0 0' integrator='implicit'/><worldbody><body><freejoint/>"
      "<geom type='box' size='.3 .1 .02' mass='1' contype='0' conaffinity='0'/></body></worldbody></mujoco>";
  const Model model = parse_mjcf(xml, "tumbler.xml");
  Sim<double> s(model);
  const double* I = model.body_inertia.data() + 3;
  const double w0[3] = {0.1, 20, 0.1};
  for (int k = 0; k < 3; ++k) s.d.qvel[3 + k] = w0[k];
  auto energy = [&] {
    double e = 0;
    for (int k = 0; k < 3; ++k) e += 0.5 * s.d.qvel[k] * s.d.qvel[k] * model.body_mass[1];
    for (int k = 0; k < 3; ++k) e += 0.5 * I[k] * s.d.qvel[3 + k] * s.d.qvel[3 + k];
    return e;
  };
  const double e0 = energy();
  double most = 0;
  for (int k = 0; k < 500; ++k) {
    physics_step(s.m(), s.d, static_cast<const double*>(nullptr), 1, nullptr);
    const double e = energy();
    most = std::isfinite(e) ? std::max(most, e) : 1e300;
  }
  EXPECT_LE(most, e0 * (1 + 1e-12)) << "initial " << e0;
  EXPECT_NEAR(energy(), 1.481738829484, 1e-9);
}

// Float (the envs' scalar) follows double under implicit on the humanoid-like tree for 100 steps from
// its moving keyframe with its ctrl held (measured: 1.5e-5 apart at the end, of qvel up to 40).
TEST(Implicit, FloatFollowsDouble) {
  const Model model = load_mjcf(mjcf_data("implicit/humanoid_tendon.xml"));
  const Keyframe k = moving_key(model);
  Sim<double> sd(model);
  Sim<float> sf(model);
  sd.set_state(k.qpos, k.qvel);
  sf.set_state(k.qpos, k.qvel);
  const std::vector<float> ctrl_f(k.ctrl.begin(), k.ctrl.end());
  for (int step = 0; step < 100; ++step) {
    physics_step(sd.m(), sd.d, k.ctrl.data(), 1, nullptr);
    physics_step(sf.m(), sf.d, ctrl_f.data(), 1, nullptr);
  }
  double worst = 0, scale = 1;
  for (int i = 0; i < model.nv; ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(sf.d.qvel[i]) - sd.d.qvel[i]));
    scale = std::max(scale, std::abs(sd.d.qvel[i]));
  }
  EXPECT_LT(worst, 1e-5 * scale);
}

}  // namespace
}  // namespace rlt
