// MuJoCo's muscle actuators (sim/actuators.h muscle_gain, muscle_bias, muscle_dynamics; the compiler's
// <muscle>, general muscle types and actuator_lengthrange, sim/mjcf_defaults.cpp,
// sim/mjcf_lengthrange.cpp): the curves' analytic values, the velocity derivative against finite
// differences, the compiled parameters against MuJoCo 3.17's, and the refusals. (Trajectories against
// MuJoCo itself: the mujoco_peer_muscle_* ctest tests.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <algorithm>
#include <vector>

#include "sim/actuators.h"
#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/mjcf_test_util.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {

using testing_util::mjcf_data;
using testing_util::mjcf_error_of;

// MuJoCo's <muscle> defaults: range 0.75 1.05, force -1, scale 200, lmin 0.5, lmax 1.6, vmax 1.5,
// fpmax 1.3, fvmax 1.2.
const double kDefaults[10] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2, 0};

TEST(Muscle, ForceLengthCurve) {
  const double lmin = 0.5, lmax = 1.6, a = 0.75, b = 1.3;  // a, b: the midpoints (lmin + 1) / 2, (1 + lmax) / 2
  EXPECT_EQ(muscle_gain_length(0.49, lmin, lmax), 0.0);
  EXPECT_EQ(muscle_gain_length(lmin, lmin, lmax), 0.0);
  EXPECT_DOUBLE_EQ(muscle_gain_length(a, lmin, lmax), 0.5);
  EXPECT_DOUBLE_EQ(muscle_gain_length(1.0, lmin, lmax), 1.0);
  EXPECT_DOUBLE_EQ(muscle_gain_length(b, lmin, lmax), 0.5);
  EXPECT_NEAR(muscle_gain_length(lmax, lmin, lmax), 0.0, 1e-15);
  EXPECT_EQ(muscle_gain_length(1.61, lmin, lmax), 0.0);
  // half-quadratic: a quarter of the way from lmin to a gives 0.5 (1/2)^2
  EXPECT_DOUBLE_EQ(muscle_gain_length(lmin + 0.5 * (a - lmin), lmin, lmax), 0.125);
}

TEST(Muscle, GainAndBiasAtKnownPoints) {
  // lengthrange (0, 0.3) on range (0.75, 1.05): L0 = 1, L = 0.75 + length; force = 100 given
  double prm[10];
  for (int k = 0; k < 10; ++k) prm[k] = kDefaults[k];
  prm[2] = 100;
  const double lr[2] = {0, 0.3};
  // optimal length L = 1 (length 0.25), at rest: FL = 1, FV = 1 -> -force
  EXPECT_NEAR(muscle_gain(0.25, 0.0, lr, 1.0, prm), -100, 1e-12);
  // shortening at V = -1 (velocity -L0 vmax = -1.5): no force; V = -0.5: FV = 0.25
  EXPECT_NEAR(muscle_gain(0.25, -1.5, lr, 1.0, prm), 0, 1e-12);
  EXPECT_NEAR(muscle_gain(0.25, -0.75, lr, 1.0, prm), -25, 1e-12);
  // lengthening beyond V = fvmax - 1 = 0.2: FV = fvmax
  EXPECT_NEAR(muscle_gain(0.25, 1.5, lr, 1.0, prm), -120, 1e-12);
  // force < 0: scale / acc0 (200 / 4 = 50)
  prm[2] = -1;
  EXPECT_NEAR(muscle_gain(0.25, 0.0, lr, 4.0, prm), -50, 1e-12);
  prm[2] = 100;
  // passive: 0 up to L = 1, -force fpmax / 2 at b = 1.3, linear beyond with slope force fpmax / (b - 1)
  EXPECT_EQ(muscle_bias(0.25, lr, 1.0, prm), 0.0);
  EXPECT_NEAR(muscle_bias(0.55, lr, 1.0, prm), -100 * 1.3 * 0.5, 1e-12);
  EXPECT_NEAR(muscle_bias(0.85, lr, 1.0, prm), -100 * 1.3 * (0.5 + 1.0), 1e-12);
}

TEST(Muscle, VelocityDerivativeMatchesFiniteDifferences) {
  double prm[10];
  for (int k = 0; k < 10; ++k) prm[k] = kDefaults[k];
  const double lr[2] = {-0.4, 0.7}, acc0 = 12.5, h = 1e-7;
  for (double length : {-0.3, 0.1, 0.4, 0.65}) {
    for (double velocity : {-5.0, -1.2, -0.3, 0.05, 0.4, 3.0}) {
      const double fd =
          (muscle_gain(length, velocity + h, lr, acc0, prm) - muscle_gain(length, velocity - h, lr, acc0, prm)) /
          (2 * h);
      const double d = muscle_gain(length, velocity, lr, acc0, prm, true);
      EXPECT_NEAR(d, fd, 1e-6 * (1 + std::abs(fd))) << "length " << length << " velocity " << velocity;
    }
  }
}

TEST(Muscle, ActivationDynamics) {
  const double hard[3] = {0.01, 0.04, 0};
  // activating from act 0.2 toward 0.9: tau = 0.01 (0.5 + 1.5 * 0.2) = 0.008
  EXPECT_NEAR(muscle_dynamics(0.9, 0.2, hard), 0.7 / 0.008, 1e-9);
  // deactivating from 0.6 toward 0.1: tau = 0.04 / (0.5 + 0.9) = 0.04 / 1.4
  EXPECT_NEAR(muscle_dynamics(0.1, 0.6, hard), -0.5 / (0.04 / 1.4), 1e-9);
  // ctrl clipped to [0, 1]
  EXPECT_EQ(muscle_dynamics(3.0, 0.2, hard), muscle_dynamics(1.0, 0.2, hard));
  // tausmooth: at dctrl = 0 the sigmoid is 1/2, tau the mean of the two; beyond width / 2 a hard switch
  const double smooth[3] = {0.01, 0.04, 0.4};
  const double act = 0.5, ta = 0.01 * 1.25, td = 0.04 / 1.25;
  EXPECT_NEAR(muscle_dynamics(0.5 + 1e-9, act, smooth) * (0.5 * (ta + td)), 1e-9, 1e-15);
  EXPECT_NEAR(muscle_dynamics(0.75, act, smooth), 0.25 / ta, 1e-9);
  EXPECT_NEAR(muscle_dynamics(0.25, act, smooth), -0.25 / td, 1e-9);
}

std::string arm(const std::string& compiler, const std::string& actuators, const std::string& option = "") {
  return "<mujoco><compiler angle=\"radian\">" + compiler + "</compiler><option>" + option +
         "</option><worldbody><body><joint name=\"s\" axis=\"0 1 0\" range=\"-1.2 1.4\"/>"
         "<geom type=\"capsule\" size=\".04\" fromto=\"0 0 0 .3 0 0\"/><body pos=\".3 0 0\">"
         "<joint name=\"e\" axis=\"0 1 0\" range=\"-0.2 2.2\"/><geom type=\"capsule\" size=\".03\" "
         "fromto=\"0 0 0 .25 0 0\"/></body></body></worldbody><actuator>" +
         actuators + "</actuator></mujoco>";
}

// MuJoCo 3.17's compiled values for these elements (mujoco.MjModel.from_xml_string).
TEST(Muscle, CompilesAsMuJoCo) {
  const Model m =
      parse_mjcf(arm("<lengthrange uselimit=\"true\"/>",
                     "<muscle joint=\"s\"/><muscle joint=\"e\" lengthrange=\"0.1 0.5\" timeconst=\"0.02 0.03\" "
                     "tausmooth=\"0.1\" force=\"7\"/><muscle joint=\"e\"/>"),
                 "arm.xml");
  ASSERT_EQ(m.nu, 3);
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(m.actuator_gainprm[k], kDefaults[k]) << k;
    EXPECT_EQ(m.actuator_biasprm[k], kDefaults[k]) << k;
  }
  EXPECT_EQ(m.actuator_gainprm[10 + 2], 7);
  EXPECT_EQ(m.actuator_biasprm[10 + 2], 7);
  const double dynprm[9] = {0.01, 0.04, 0, 0.02, 0.03, 0.1, 0.01, 0.04, 0};
  for (int k = 0; k < 9; ++k) EXPECT_EQ(m.actuator_dynprm[k], dynprm[k]) << k;
  for (int u = 0; u < 3; ++u) {
    EXPECT_EQ(m.actuator_dyntype[u], kDynMuscle);
    EXPECT_EQ(m.actuator_gaintype[u], kGainMuscle);
    EXPECT_EQ(m.actuator_biastype[u], kBiasMuscle);
  }
  // lengthrange: the shoulder's range (uselimit), the element's own (useexisting), and for the third
  // MuJoCo 3.17 reads actuator_trnid[2], the second actuator's joint (the elbow here, as its own)
  const double lr[6] = {-1.2, 1.4, 0.1, 0.5, -0.2, 2.2};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(m.actuator_lengthrange[k], lr[k]) << k;
  // acc0 = |M^-1 e_dof| at qpos0
  EXPECT_NEAR(m.actuator_acc0[0], 34.094077135392, 1e-9);
}

TEST(Muscle, Refusals) {
  auto refused = [](const std::string& xml, const char* what) {
    const std::string e = mjcf_error_of(xml, "bad.xml");
    EXPECT_NE(e.find(what), std::string::npos) << "error: " << e;
    EXPECT_NE(e.find("bad.xml:"), std::string::npos) << "error: " << e;
  };
  refused(arm("", "<muscle joint=\"s\" lmin=\"1.1\" lengthrange=\"0 1\"/>"), "lmin<1<lmax required in muscle");
  refused(arm("", "<muscle joint=\"s\" range=\"1 0.5\" lengthrange=\"0 1\"/>"), "range[0]<range[1] required in muscle");
  refused(arm("", "<muscle joint=\"s\" tausmooth=\"-1\"/>"), "tausmooth cannot be negative");
  refused(arm("", "<muscle tendon=\"x\" joint=\"s\"/>"), "give one of");
  refused(arm("", "<general joint=\"s\" dyntype=\"user\"/>"), "dyntype");
  refused(arm("", "<general joint=\"s\" dynprm=\"1 0 0 2\"/>"), "first 3 parameters");
  refused("<mujoco><default><muscle tausmooth=\"0.1\"/></default><worldbody/></mujoco>", "tausmooth");
  refused(arm("<lengthrange uselimit=\"true\"/>", "<muscle joint=\"s\"/>", "<flag limit=\"disable\"/>"), "uselimit");
  refused(arm("", "<muscle joint=\"s\"/>", "<flag limit=\"disable\"/>"), "lengthrange simulation");
  refused(arm("<lengthrange bogus=\"1\"/>", "<muscle joint=\"s\" lengthrange=\"0 1\"/>"), "bogus");
  // MuJoCo's convergence check: 0.1 s of simulation does not settle on the limit
  refused(arm("<lengthrange inttotal=\"0.1\" interval=\"0.05\"/>", "<muscle joint=\"s\"/>"), "did not converge");
}

// The single-source muscle path in float (what the CUDA executor runs) against double: both tendon
// muscles and the implicitfast file's three, full activation swings.
TEST(Muscle, FloatFollowsDouble) {
  for (const char* file : {"muscle/tendon.xml", "muscle/defaults_implicitfast.xml"}) {
    const Model model = load_mjcf(mjcf_data(file));
    test::Sim<double> sd(model);
    test::Sim<float> sf(model);
    double worst = 0;
    for (int k = 0; k < 500; ++k) {
      std::vector<double> ctrl(static_cast<size_t>(model.nu));
      for (int u = 0; u < model.nu; ++u) ctrl[static_cast<size_t>(u)] = (k / 100 + u) % 2 ? 0.9 : 0.1;
      const std::vector<float> ctrlf(ctrl.begin(), ctrl.end());
      physics_step(sd.m(), sd.d, ctrl.data(), 1, nullptr);
      physics_step(sf.m(), sf.d, ctrlf.data(), 1, nullptr);
      for (int i = 0; i < sd.nq(); ++i) worst = std::max(worst, std::abs(double(sf.d.qpos[i]) - sd.d.qpos[i]));
    }
    EXPECT_GT(std::abs(sd.d.qpos[0]), 1e-3) << file << ": the muscles move the arm";
    EXPECT_LT(worst, 1e-4) << file;  // float rounding over 500 steps (measured 1.6e-6 and 2.4e-7)
    std::printf("%s: worst |qpos float - double| %.3g\n", file, worst);
  }
}

}  // namespace
}  // namespace rlt
