// Actuator dynamics and integrators (sim/actuators.h, sim/physics_step.h): physical properties of
// MuJoCo 3's actuator types and of its Euler, RK4 and implicitfast integrators, on small MJCF models.
// (Trajectories against MuJoCo itself: the mujoco_peer_act_* ctest tests.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/mjcf.h"
#include "sim/physics_step.h"
#include "tests/sim/test_dynamics_util.h"

namespace rlt {
namespace {
using test::Sim;

// A pendulum: one hinge about y, a 1 kg point-like sphere 0.5 m below it (no contacts), and the
// given option and actuator elements.
std::string pendulum(const std::string& option, const std::string& actuators, const std::string& joint_attrs = "") {
  return "<mujoco><compiler autolimits=\"true\"/><option " + option +
         "/><worldbody><body pos=\"0 0 1\"><joint name=\"j\" type=\"hinge\" axis=\"0 1 0\" " + joint_attrs +
         "/><geom type=\"sphere\" size=\"0.05\" pos=\"0 0 -0.5\" mass=\"1\" contype=\"0\" conaffinity=\"0\"/>"
         "</body></worldbody><actuator>" +
         actuators + "</actuator></mujoco>";
}

void run(Sim<double>& s, const std::vector<double>& ctrl, int steps) {
  for (int k = 0; k < steps; ++k) physics_step(s.m(), s.d, ctrl.empty() ? nullptr : ctrl.data(), 1, nullptr);
}

TEST(Actuators, PositionServoSettlesAtItsTarget) {
  for (const char* integrator : {"Euler", "RK4", "implicitfast"}) {
    const Model model = parse_mjcf(pendulum("gravity=\"0 0 0\" integrator=\"" + std::string(integrator) + "\"",
                                            "<position joint=\"j\" kp=\"20\" kv=\"4\" ctrlrange=\"-1 1\"/>"),
                                   "servo.xml");
    Sim<double> s(model);
    run(s, {0.5}, 3000);  // 6 s, time constants ~0.1 s
    EXPECT_NEAR(s.d.qpos[0], 0.5, 1e-6) << integrator;
    EXPECT_NEAR(s.d.qvel[0], 0.0, 1e-6) << integrator;
    // ctrl is clamped to ctrlrange: a target of 3 goes to 1.
    run(s, {3.0}, 3000);
    EXPECT_NEAR(s.d.qpos[0], 1.0, 1e-6) << integrator;
  }
}

TEST(Actuators, FilterFollowsExponential) {
  const double tau = 0.1, h = 0.002;
  for (const char* dyn : {"filter", "filterexact"}) {
    const Model model = parse_mjcf(pendulum("gravity=\"0 0 0\"", "<general joint=\"j\" dyntype=\"" + std::string(dyn) +
                                                                     "\" dynprm=\"0.1\" gainprm=\"0\"/>"),
                                   "filter.xml");
    Sim<double> s(model);
    double worst = 0;
    for (int n = 1; n <= 500; ++n) {
      run(s, {1.0}, 1);
      const double exact = 1 - std::exp(-n * h / tau);
      worst = std::max(worst, std::abs(s.d.act[0] - exact));
      if (std::string(dyn) == "filter") {
        ASSERT_NEAR(s.d.act[0], 1 - std::pow(1 - h / tau, n), 1e-12);  // forward Euler of act' = (u - act) / tau
      }
    }
    if (std::string(dyn) == "filterexact") {
      EXPECT_LT(worst, 1e-12);
    } else {
      EXPECT_LT(worst, 0.5 * h / tau);  // first order in h / tau
    }
  }
}

TEST(Actuators, IntVelocityIntegratesCtrlWithinActrange) {
  const Model model =
      parse_mjcf(pendulum("gravity=\"0 0 0\"",
                          "<intvelocity joint=\"j\" kp=\"50\" kv=\"5\" actrange=\"-0.3 0.3\" ctrlrange=\"-1 1\"/>"),
                 "intvelocity.xml");
  Sim<double> s(model);
  run(s, {0.5}, 100);  // act = 0.5 * 0.2 s
  EXPECT_NEAR(s.d.act[0], 0.1, 1e-12);
  run(s, {0.5}, 1000);  // clamped at actrange[1]; the joint follows it
  EXPECT_DOUBLE_EQ(s.d.act[0], 0.3);
  EXPECT_NEAR(s.d.qpos[0], 0.3, 1e-4);
}

TEST(Actuators, DamperForceIsMinusKvCtrlVelocity) {
  const Model model =
      parse_mjcf(pendulum("gravity=\"0 0 0\"", "<damper joint=\"j\" kv=\"2\" ctrlrange=\"0 1\"/>"), "damper.xml");
  Sim<double> s(model);
  s.d.qvel[0] = 3;
  const std::vector<double> ctrl{0.25};
  actuator_forces(s.m(), s.d, ctrl.data());
  EXPECT_DOUBLE_EQ(s.d.actuator_force[0], -2 * 0.25 * 3);
}

// Total energy of an undamped pendulum swinging from 1 rad for 10 s at h = 0.01: RK4 keeps it far
// better than (semi-implicit) Euler.
TEST(Integrators, Rk4EnergyDriftBelowEuler) {
  double drift[2];
  int i = 0;
  for (const char* integrator : {"Euler", "RK4"}) {
    const Model model =
        parse_mjcf(pendulum("timestep=\"0.01\" integrator=\"" + std::string(integrator) + "\"", ""), "pendulum.xml");
    Sim<double> s(model);
    s.d.qpos[0] = 1.0;
    auto energy = [&] {
      smooth_forces(s.m(), s.d);
      return kinetic_energy(s.m(), s.d) + potential_energy(s.m(), s.d);
    };
    const double e0 = energy();
    double worst = 0;
    for (int k = 0; k < 1000; ++k) {
      run(s, {}, 1);
      worst = std::max(worst, std::abs(energy() - e0));
    }
    drift[i++] = worst;
  }
  EXPECT_LT(drift[1], 1e-3 * drift[0]) << "Euler " << drift[0] << ", RK4 " << drift[1];
}

// A stiff velocity servo (kv h / I = 40) on the pendulum: explicit Euler diverges, implicitfast
// (M - h dforce/dqvel) stays bounded and settles.
TEST(Integrators, ImplicitFastStableUnderStiffVelocityServo) {
  for (const char* integrator : {"Euler", "implicitfast"}) {
    const Model model =
        parse_mjcf(pendulum("timestep=\"0.01\" gravity=\"0 0 0\" integrator=\"" + std::string(integrator) + "\"",
                            "<velocity joint=\"j\" kv=\"1000\" ctrlrange=\"-1 1\"/>"),
                   "stiff.xml");
    Sim<double> s(model);
    run(s, {0.5}, 200);
    if (std::string(integrator) == "Euler") {
      EXPECT_FALSE(std::abs(s.d.qvel[0]) < 10) << "expected explicit Euler to diverge";
    } else {
      EXPECT_NEAR(s.d.qvel[0], 0.5, 1e-9);
    }
  }
}

TEST(MjcfActuators, RefusesWhatIsNotModelled) {
  auto refuses = [](const std::string& act, const char* what) {
    try {
      parse_mjcf(pendulum("", act), "bad.xml");
      ADD_FAILURE() << "accepted " << act;
    } catch (const MjcfError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refuses("<general joint=\"j\" dyntype=\"muscle\"/>", "dyntype");
  refuses("<general joint=\"j\" gainprm=\"1 0 0 2\"/>", "first 3 parameters");
  refuses("<position joint=\"j\" kv=\"1\" dampratio=\"1\"/>", "kv and dampratio cannot both be defined");
  refuses("<motor tendon=\"t\"/>", "unknown tendon \"t\"");
  refuses("<position joint=\"j\" inheritrange=\"1\"/>", "no range");
  try {
    parse_mjcf(pendulum("integrator=\"implicit\"", ""), "bad.xml");
    ADD_FAILURE() << "accepted implicit";
  } catch (const MjcfError& e) {
    EXPECT_NE(std::string(e.what()).find("implicit"), std::string::npos);
  }
}

}  // namespace
}  // namespace rlt
