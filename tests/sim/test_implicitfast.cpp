// MuJoCo 3's implicitfast integrator (sim/physics_step.h) beyond joint transmissions: the velocity
// derivative of tendon damping, tendon actuators and fluid forces (smooth_velocity_derivative)
// against finite differences of the forces it differentiates, and the stability it buys against
// explicit Euler (stiff tendon damping; a free body tumbling about its unstable axis, whose
// gyroscopic derivative implicitfast takes in its own 6x6 solve). (Trajectories against MuJoCo
// itself: the mujoco_peer_implicitfast_* ctest tests on the same files.)
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

// qfrc_actuator + qfrc_passive at the sim's state with ctrl held (the forces qDeriv differentiates).
std::vector<double> smooth_velocity_forces(Sim<double>& s, const std::vector<double>& ctrl) {
  smooth_forces(s.m(), s.d);
  tendon_forward(s.m(), s.d);
  actuator_forces(s.m(), s.d, ctrl.empty() ? nullptr : ctrl.data());
  std::vector<double> f(static_cast<size_t>(s.nv()));
  for (int i = 0; i < s.nv(); ++i) f[static_cast<size_t>(i)] = s.d.qfrc_actuator[i] + s.d.qfrc_passive[i];
  return f;
}

// At each file's moving keyframe, qDeriv on its pattern (j an ancestor-or-self of i) equals the central
// difference of qfrc_actuator + qfrc_passive in qvel: its terms are linear in qvel (dampers, servos'
// kv, affine gains) or |v| v (fluid drag, smooth away from 0; no body's velocity there is 0), so the
// central difference is exact but for rounding (measured: worst 1.5e-9 against entries up to 13).
TEST(ImplicitFast, VelocityDerivativeMatchesFiniteDifferences) {
  for (const char* file :
       {"implicitfast/tendon_damping.xml", "implicitfast/tendon_actuators.xml", "implicitfast/fluid.xml"}) {
    const Model model = load_mjcf(mjcf_data(file));
    Sim<double> s(model);
    const int nv = s.nv(), key = model.key_id("moving");
    ASSERT_GE(key, 0) << file;
    const std::vector<double> qpos(model.key_qpos.begin() + key * s.nq(), model.key_qpos.begin() + (key + 1) * s.nq());
    std::vector<double> qvel(model.key_qvel.begin() + key * nv, model.key_qvel.begin() + (key + 1) * nv);
    std::vector<double> ctrl(model.key_ctrl.begin() + key * model.nu, model.key_ctrl.begin() + (key + 1) * model.nu);
    s.set_state(qpos, qvel);
    smooth_velocity_forces(s, ctrl);
    smooth_velocity_derivative(s.m(), s.d, ctrl.empty() ? nullptr : ctrl.data());
    const std::vector<double> D = s.get(s.d.qDeriv, nv * nv);
    double worst = 0, scale = 1;
    int pairs = 0, offdiag = 0;
    const double eps = 1e-6;
    for (int j = 0; j < nv; ++j) {
      std::vector<double> v = qvel;
      v[static_cast<size_t>(j)] = qvel[static_cast<size_t>(j)] + eps;
      s.set_state(qpos, v);
      const std::vector<double> fp = smooth_velocity_forces(s, ctrl);
      v[static_cast<size_t>(j)] = qvel[static_cast<size_t>(j)] - eps;
      s.set_state(qpos, v);
      const std::vector<double> fm = smooth_velocity_forces(s, ctrl);
      for (int i = j; i < nv; ++i) {
        bool kept = false;
        for (int a = i; a >= 0 && !kept; a = s.m().dof_parentid[a]) kept = a == j;
        if (!kept) continue;
        const double fd = (fp[static_cast<size_t>(i)] - fm[static_cast<size_t>(i)]) / (2 * eps);
        const double got = D[static_cast<size_t>(i * nv + j)];
        worst = std::max(worst, std::abs(got - fd));
        scale = std::max(scale, std::abs(fd));
        ++pairs;
        offdiag += i != j && std::abs(fd) > 1e-3 ? 1 : 0;
      }
    }
    EXPECT_LT(worst, 1e-7 * scale) << file << ": worst |qDeriv - finite difference| over " << pairs << " entries";
    EXPECT_GT(offdiag, 3) << file << ": the coupling terms are what this checks";
  }
}

// A two-link arm whose fixed tendon (both hinges) has damping 200 N m s: with h = 0.01 explicit
// Euler (MuJoCo's: tendon damping stays explicit under eulerdamp) overshoots and diverges;
// implicitfast damps the tendon's motion out (measured: 4.4e-4 rad/s left of 3 after 2 s).
TEST(ImplicitFast, StableUnderStiffTendonDamping) {
  for (const char* integrator : {"Euler", "implicitfast"}) {
    const std::string xml =
        std::string("<mujoco><option timestep='0.01' gravity='0 0 0' integrator='") + integrator +
        "'/><worldbody><body><joint name='a' type='hinge' axis='0 1 0'/>"
        "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' mass='0.5' contype='0' conaffinity='0'/>"
        "<body pos='0.3 0 0'><joint name='b' type='hinge' axis='0 1 0'/>"
        "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' mass='0.5' contype='0' conaffinity='0'/>"
        "</body></body></worldbody><tendon><fixed damping='200'><joint joint='a' coef='1'/>"
        "<joint joint='b' coef='1'/></fixed></tendon></mujoco>";
    Sim<double> s(parse_mjcf(xml, "stiff_tendon.xml"));
    s.d.qvel[0] = 1, s.d.qvel[1] = 2;
    for (int k = 0; k < 200; ++k) physics_step(s.m(), s.d, static_cast<const double*>(nullptr), 1, nullptr);
    const double rate = s.d.qvel[0] + s.d.qvel[1];  // the tendon's velocity
    if (std::string(integrator) == "Euler") {
      EXPECT_FALSE(std::abs(rate) < 10) << "expected explicit Euler to diverge";
    } else {
      EXPECT_LT(std::abs(rate), 1e-3);  // from 3 (what remains: the arm's Coriolis forces along the tendon)
      EXPECT_TRUE(std::isfinite(s.d.qvel[0]) && std::abs(s.d.qvel[0]) < 10);
    }
  }
}

// A thin box tumbling about its intermediate axis (20 rad/s, h = 0.01), no gravity: explicit Euler
// pumps energy into the gyroscopic instability and blows up; implicitfast, with the free body's
// gyroscopic derivative in its 6x6 solve (MuJoCo's mjd_freeMhat), never gains kinetic energy
// (MuJoCo 3.17 on the same model: at most 6.026846 J from 6.026851 J over 500 steps).
TEST(ImplicitFast, FreeBodyGyroscopicDerivativeKeepsTumblingBounded) {
  for (const char* integrator : {"Euler", "implicitfast"}) {
    const std::string xml = std::string("<mujoco><option timestep='0.01' gravity='0 0 0' integrator='") + integrator +
                            "'/><worldbody><body><freejoint/><geom type='box' size='.3 .1 .02' mass='1' contype='0' "
                            "conaffinity='0'/></body></worldbody></mujoco>";
    const Model model = parse_mjcf(xml, "tumbler.xml");
    Sim<double> s(model);
    EXPECT_EQ(s.m().body_freebody[1], 1);
    const double* I = model.body_inertia.data() + 3;
    const double w0[3] = {0.1, 20, 0.1};
    for (int k = 0; k < 3; ++k) s.d.qvel[3 + k] = w0[k];
    auto energy = [&] {  // the box's frame is its principal frame
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
    if (std::string(integrator) == "Euler") {
      EXPECT_GT(most, 10 * e0) << "expected explicit Euler to blow up";
    } else {
      EXPECT_LE(most, e0 * (1 + 1e-12)) << "initial " << e0;
      EXPECT_TRUE(std::isfinite(energy()));
    }
  }
}

}  // namespace
}  // namespace rlt
